// In-memory host facts for unit tests of the pure planners.
import type { GitProtectFacts, HostFacts } from '../../src/types.js'

export function debianFacts(overrides: Partial<HostFacts> = {}): HostFacts {
  return {
    cwd: '/home/ada/src/shop/web',
    home: '/home/ada',
    uid: 1000,
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/ada',
      TERM: 'xterm-256color',
      LANG: 'en_US.UTF-8',
      LC_TIME: 'de_DE.UTF-8',
      USER: 'ada',
      SSH_AUTH_SOCK: '/run/user/1000/ssh-agent.socket',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      GITHUB_TOKEN: 'ghp_secret',
      DISPLAY: ':0',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      CLAUDE_CODE_USE_BEDROCK: '0',
      CLAUDE_CONFIG_DIR: '/home/ada/.claude-work',
    },
    claudeboxHome: '/home/ada/.claudebox',
    git: { topLevel: '/home/ada/src/shop', gitDir: '/home/ada/src/shop/.git', commonDir: '/home/ada/src/shop/.git' },
    gitAvailable: true,
    claude: {
      found: '/usr/local/bin/claude',
      resolved: '/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe',
      installRoot: '/usr/local/lib/node_modules/@anthropic-ai/claude-code',
      version: '2.1.330',
    },
    bwrap: '/usr/bin/bwrap',
    systemPaths: {
      '/usr': { kind: 'dir' },
      '/bin': { kind: 'symlink', target: 'usr/bin' },
      '/sbin': { kind: 'symlink', target: 'usr/sbin' },
      '/lib': { kind: 'symlink', target: 'usr/lib' },
      '/lib32': { kind: 'missing' },
      '/lib64': { kind: 'symlink', target: 'usr/lib64' },
      '/libx32': { kind: 'missing' },
      '/etc': { kind: 'dir' },
      '/opt': { kind: 'dir' },
      '/nix/store': { kind: 'missing' },
    },
    homeFiles: { '/home/ada/.gitconfig': 'file', '/home/ada/.config/git/config': 'missing' },
    instance: { kind: 'missing' },
    instanceEntries: {},
    sharedKinds: {},
    arch: 'x64',
    paths: {},
    gitProtect: gitProtect({ pinned: ['/home/ada/src/shop/.git'], readOnly: ['/home/ada/src/shop/.git/config', '/home/ada/src/shop/.git/hooks'], forbidden: ['/home/ada/src/shop/.git/commondir'] }),
    gitLayout: { kind: 'dir', worktree: '/home/ada/src/shop' },
    etcLinks: {},
    etcSecrets: ['/etc/shadow'],
    rootOnlyDirs: [],
    launcherFiles: [],
    launcherGit: [],
    stdioTerminal: true,
    runLinks: {},
    ...overrides,
  }
}

/** The words following each occurrence of `option` in argv (e.g. all --bind pairs). */
export function optionArgs(argv: readonly string[], option: string, arity: number): string[][] {
  const found: string[][] = []
  const end = argv.indexOf('--')
  argv.forEach((word, i) => {
    if (word === option && (end === -1 || i < end)) found.push(argv.slice(i + 1, i + 1 + arity))
  })
  return found
}

/** Git protection facts with every list empty unless given. */
export function gitProtect(overrides: Partial<GitProtectFacts> = {}): GitProtectFacts {
  return { pinned: [], workTrees: [], repos: [], gitDirs: [], refusals: [], readOnly: [], emptyDirs: [], emptyConfigs: [], placeholders: [], headPlaceholders: [], forbidden: [], present: [], workTree: [], workTreePins: [], symlinked: [], links: [], ...overrides }
}
