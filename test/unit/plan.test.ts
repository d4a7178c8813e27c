import { describe, expect, test } from 'vitest'
import { instanceId } from '../../src/state/instance.js'
import { GO_GATE, planLaunch, SCOPE_HELPER, sessionSettings } from '../../src/sandbox/plan.js'
import { BWRAP_MAX_ARGS } from '../../src/sandbox/arg-limit.js'
import { ClaudeboxError } from '../../src/errors.js'

/** The gate every sandboxed program waits behind for the launcher's go. */
const GATE = ['/bin/sh', '-c', GO_GATE, 'claudebox-go']
import { DEFAULT_SANDBOX, type SandboxOptions } from '../../src/config/sandbox-options.js'
import { debianFacts, gitProtect, optionArgs } from '../helpers/facts.js'

/** Most tests look at the rest of the plan: the network is open there (the default, allow, has its own tests). */
const OPEN: SandboxOptions = { ...DEFAULT_SANDBOX, network: 'open' }
const request = { claudeArgs: ['-c', 'two words'], sandbox: OPEN }
const shopId = instanceId('/home/ada/src/shop/.git')
const shopInstance = `/home/ada/.claudebox/instances/${shopId}`

describe('planLaunch', () => {
  test('binds the git top-level read-write, not just the current subdirectory', () => {
    const plan = planLaunch(debianFacts(), request)
    expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual(['/home/ada/src/shop', '/home/ada/src/shop'])
    expect(plan.argv).toContain('/home/ada/src/shop')
    expect(optionArgs(plan.argv, '--chdir', 1)).toEqual([['/home/ada/src/shop/web']])
  })

  test('a linked worktree also gets the common git dir read-write', () => {
    const plan = planLaunch(
      debianFacts({
        cwd: '/home/ada/wt/feature',
        git: { topLevel: '/home/ada/wt/feature', gitDir: '/home/ada/src/shop/.git/worktrees/feature', commonDir: '/home/ada/src/shop/.git' },
        gitLayout: {
          kind: 'file',
          worktree: '/home/ada/wt/feature',
          target: '/home/ada/src/shop/.git/worktrees/feature',
          backPointer: '/home/ada/wt/feature/.git',
        },
      }),
      request,
    )
    const binds = optionArgs(plan.argv, '--bind', 2).map(([src]) => src)
    expect(binds).toEqual(expect.arrayContaining(['/home/ada/wt/feature', '/home/ada/src/shop/.git']))
    expect(plan.summary.instanceId).toBe(shopId)
  })

  test('outside git the current directory is the project and the root', () => {
    const plan = planLaunch(debianFacts({ cwd: '/home/ada/notes', git: undefined, gitLayout: { kind: 'none' } }), request)
    expect(plan.summary.projectRoot).toBe('/home/ada/notes')
    expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual(['/home/ada/notes', '/home/ada/notes'])
  })

  test('instance dir is bound at its own path and named by CLAUDE_CONFIG_DIR; ~/.claude points to it', () => {
    const plan = planLaunch(debianFacts(), request)
    expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual([shopInstance, shopInstance])
    expect(plan.env['CLAUDE_CONFIG_DIR']).toBe(shopInstance)
    expect(optionArgs(plan.argv, '--symlink', 2)).toContainEqual([shopInstance, '/home/ada/.claude'])
  })

  test('home is an empty tmpfs mounted before anything under it', () => {
    const argv = planLaunch(debianFacts(), request).argv
    const tmpfsHome = argv.findIndex((w, i) => w === '--tmpfs' && argv[i + 1] === '/home/ada')
    const firstHomeBind = argv.findIndex((w, i) => (w === '--bind' || w === '--ro-bind') && argv[i + 1]?.startsWith('/home/ada/'))
    expect(tmpfsHome).toBeGreaterThan(0)
    expect(firstHomeBind).toBeGreaterThan(tmpfsHome)
  })

  test('system dirs read-only; merged-/usr symlinks recreated; missing ones skipped', () => {
    const argv = planLaunch(debianFacts(), request).argv
    expect(optionArgs(argv, '--ro-bind', 2)).toEqual(expect.arrayContaining([['/usr', '/usr'], ['/etc', '/etc'], ['/opt', '/opt']]))
    expect(optionArgs(argv, '--symlink', 2)).toContainEqual(['usr/bin', '/bin'])
    expect(argv).not.toContain('/lib32')
    expect(argv).not.toContain('/nix/store')
  })

  test('~/.gitconfig read-only when present; Claude installation read-only', () => {
    const claude = {
      found: '/home/ada/.npm-global/bin/claude',
      resolved: '/home/ada/.npm-global/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe',
      installRoot: '/home/ada/.npm-global/lib/node_modules/@anthropic-ai/claude-code',
    }
    const ro = optionArgs(planLaunch(debianFacts({ claude }), request).argv, '--ro-bind', 2).map(([src]) => src)
    expect(ro).toContain('/home/ada/.gitconfig')
    expect(ro).toContain('/home/ada/.npm-global/lib/node_modules/@anthropic-ai/claude-code')
    expect(ro).not.toContain('/home/ada/.npm-global')
    expect(ro).not.toContain('/home/ada/.config/git/config')
  })

  test('installation inside a visible system dir is not bound twice', () => {
    const plan = planLaunch(
      debianFacts({ claude: { found: '/usr/bin/claude', resolved: '/usr/lib/claude/claude', installRoot: '/usr/lib/claude' } }),
      request,
    )
    expect(plan.argv).not.toContain('/usr/lib/claude')
  })

  test('a script install also shows its interpreter installation', () => {
    const plan = planLaunch(
      debianFacts({
        claude: {
          found: '/home/ada/.nvm/versions/node/v20.1.0/bin/claude',
          resolved: '/home/ada/.nvm/versions/node/v20.1.0/lib/node_modules/@anthropic-ai/claude-code/cli.js',
          installRoot: '/home/ada/.nvm/versions/node/v20.1.0/lib/node_modules/@anthropic-ai/claude-code',
          interpreter: { resolved: '/home/ada/.nvm/versions/node/v20.1.0/bin/node', installRoot: '/home/ada/.nvm/versions/node/v20.1.0' },
        },
      }),
      request,
    )
    const ro = optionArgs(plan.argv, '--ro-bind', 2).map(([src]) => src)
    expect(ro).toContain('/home/ada/.nvm/versions/node/v20.1.0')
  })

  test('environment: allowlist only, no value in argv, claudebox variables set', () => {
    const plan = planLaunch(debianFacts({ env: { ...debianFacts().env, ANTHROPIC_CUSTOM_HEADERS: 'X-Org-Key: hdr-secret', ANTHROPIC_BASE_URL: 'https://u:pw-secret@gw.example' } }), request)
    const setenv = plan.env
    expect(setenv).toMatchObject({
      TERM: 'xterm-256color',
      LANG: 'en_US.UTF-8',
      LC_TIME: 'de_DE.UTF-8',
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/ada',
      CLAUDE_CODE_USE_BEDROCK: '0',
      CLAUDE_CONFIG_DIR: shopInstance,
      IS_SANDBOX: '1',
      DISABLE_AUTOUPDATER: '1',
    })
    for (const name of ['SSH_AUTH_SOCK', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'DISPLAY']) {
      expect(setenv).not.toHaveProperty(name)
    }
    expect(plan.env).toMatchObject({ ANTHROPIC_API_KEY: 'sk-ant-secret', ANTHROPIC_CUSTOM_HEADERS: 'X-Org-Key: hdr-secret' })
    expect(plan.argv).not.toContain('--setenv')
    expect(plan.argv.join(' ')).not.toMatch(/secret|xterm|en_US/)
    // --dry-run names the host's values; claudebox's own are literal.
    expect(plan.hostEnv).toEqual(expect.arrayContaining(['ANTHROPIC_API_KEY', 'TERM']))
    expect(plan.hostEnv).not.toContain('CLAUDE_CONFIG_DIR')
    // Without the gateway, the base URL's password stays on the host (round 140).
    expect(plan.env['ANTHROPIC_BASE_URL']).toBe('https://gw.example/')
    expect(plan.warnings).toContainEqual(expect.stringContaining('ANTHROPIC_BASE_URL holds a user name and password'))
  })

  test('variables whose names say they hold a secret stay out, and are named, unless passed with --env; with --network=none the proxy variables too (red team, round 140)', () => {
    // Round 141: plural and joined-up words too.
    const secrets = { CLAUDE_CODE_OAUTH_REFRESH_TOKEN: 'r', CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'p', ANTHROPIC_IDENTITY_TOKEN: 'i', ANTHROPIC_AWS_API_KEY: 'a', ANTHROPIC_WORK_SECRET: 'w', CLAUDE_CODE_SESSION_ACCESS_TOKEN: 's', ANTHROPIC_X_SECRETS: 'x', CLAUDE_CODE_REFRESHTOKEN: 'y', ANTHROPIC_DB_PASSWD: 'z', CLAUDE_CODE_APIKEY: 'k' }
    const env = { ...debianFacts().env, ...secrets, CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8000', HTTPS_PROXY: 'http://u:pw@proxy:3128', https_proxy: 'http://u:pw@proxy:3128', ANTHROPIC_BEDROCK_BASE_URL: 'https://u:pw@bedrock.example/x' }
    const plan = planLaunch(debianFacts({ env }), request)
    for (const name of Object.keys(secrets)) expect(plan.env, name).not.toHaveProperty(name)
    expect(plan.env).toHaveProperty('CLAUDE_CODE_MAX_OUTPUT_TOKENS', '8000')
    expect(plan.env).toHaveProperty('ANTHROPIC_BEDROCK_BASE_URL', 'https://bedrock.example/x')
    expect(plan.warnings).toContainEqual(`kept out of the sandbox, as their names say they hold secrets: ${Object.keys(secrets).sort().join(', ')} (--env NAME passes one)`)
    const asked = planLaunch(debianFacts({ env }), { ...request, sandbox: { ...request.sandbox ?? OPEN, env: ['ANTHROPIC_IDENTITY_TOKEN'] } })
    expect(asked.env).toHaveProperty('ANTHROPIC_IDENTITY_TOKEN', 'i')
    expect(asked.warnings.join('\n')).not.toMatch(/secrets: [^\n]*ANTHROPIC_IDENTITY_TOKEN/)
    const none = planLaunch(debianFacts({ env }), { ...request, sandbox: { ...request.sandbox ?? OPEN, network: 'none' } })
    expect(none.env).not.toHaveProperty('HTTPS_PROXY')
    expect(none.env).not.toHaveProperty('https_proxy')
  })

  test("host paths, commands and an outer Claude session's variables never pass, even under CLAUDE_CODE_", () => {
    const env = { ...debianFacts().env, CLAUDE_CODE_SHELL_PREFIX: '/home/ada/wrap.sh', CLAUDE_CODE_MESSAGING_SOCKET: '/tmp/cc.sock', CLAUDE_CODE_SESSION_ID: 'x', CLAUDE_CODE_EFFORT_LEVEL: 'high' }
    const setenv = planLaunch(debianFacts({ env }), request).env
    expect(setenv).not.toHaveProperty('CLAUDE_CODE_SHELL_PREFIX')
    expect(setenv).not.toHaveProperty('CLAUDE_CODE_MESSAGING_SOCKET')
    expect(setenv).not.toHaveProperty('CLAUDE_CODE_SESSION_ID')
    expect(setenv).toHaveProperty('CLAUDE_CODE_EFFORT_LEVEL', 'high')
  })

  test('claude arguments come last, unchanged and in order', () => {
    const plan = planLaunch(debianFacts(), { claudeArgs: ['--resume', 'abc', '-p', 'a "quoted" text', '--'], sandbox: OPEN })
    const end = plan.argv.indexOf('--')
    // The Landlock scope helper (x64) executes the program itself.
    // Claude Code first gets the settings source that keeps claude.ai connectors and its own sandbox off.
    expect(plan.argv.slice(end)).toEqual(['--', SCOPE_HELPER, ...GATE, '/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe', '--settings', sessionSettings(false), '--resume', 'abc', '-p', 'a "quoted" text', '--'])
    // Another program named by CLAUDEBOX_CLAUDE gets its arguments untouched; --connectors keeps only Claude's own sandbox off.
    const other = planLaunch(debianFacts({ claude: { found: '/opt/wrap/run-agent', resolved: '/opt/wrap/run-agent', installRoot: '/opt/wrap/run-agent' } }), { claudeArgs: ['-x'], sandbox: OPEN })
    expect(other.argv.slice(other.argv.indexOf('--'))).toEqual(['--', SCOPE_HELPER, ...GATE, '/opt/wrap/run-agent', '-x'])
    const on = planLaunch(debianFacts(), { claudeArgs: ['-p', 'x'], sandbox: { ...OPEN, connectors: true } })
    expect(on.argv.slice(on.argv.indexOf('--'))).toEqual(['--', SCOPE_HELPER, ...GATE, '/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe', '--settings', '{"sandbox":{"enabled":false}}', '-p', 'x'])
    expect(JSON.parse(sessionSettings(false))).toEqual({ disableClaudeAiConnectors: true, sandbox: { enabled: false } })
    const theirs = planLaunch(debianFacts(), { claudeArgs: ['--settings', '{}'], sandbox: OPEN })
    expect(theirs.warnings.join('\n')).toContain('your --settings replaces the one claudebox passes')
  })

  test('namespaces: everything unshared but the network, dies with the launcher', () => {
    const argv = planLaunch(debianFacts(), request).argv
    expect(argv.slice(0, 7)).toEqual(['--unshare-all', '--unshare-user', '--disable-userns', '--share-net', '--die-with-parent', '--cap-drop', 'ALL'])
    expect(optionArgs(argv, '--dev', 1)).toEqual([['/dev']])
    expect(optionArgs(argv, '--proc', 1)).toEqual([['/proc']])
    expect(optionArgs(argv, '--tmpfs', 1)).toContainEqual(['/tmp'])
  })

  test('shared sign-in: one credential directory; the account file and the shared entries are never bound', () => {
    const a = planLaunch(debianFacts(), request)
    const b = planLaunch(debianFacts({ cwd: '/home/ada/other', git: undefined, gitLayout: { kind: 'none' } }), request)
    const store = '/home/ada/.claudebox/shared/credentials'
    for (const plan of [a, b]) {
      expect(plan.env['CLAUDE_SECURESTORAGE_CONFIG_DIR']).toBe(store)
      expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual([store, store])
      // Only the credential store and SANDBOX.md (read-only) come from the shared tier.
      const fromShared = plan.argv.filter((arg, i) => arg.startsWith('/home/ada/.claudebox/shared') && plan.argv[i - 1]?.startsWith('--'))
      expect(fromShared.sort()).toEqual(['/home/ada/.claudebox/shared/SANDBOX.md', store])
      expect(optionArgs(plan.argv, '--ro-bind', 2)).toContainEqual(['/home/ada/.claudebox/shared/SANDBOX.md', `${plan.summary.instanceDir}/SANDBOX.md`])
      expect(plan.env['ENABLE_CLAUDEAI_MCP_SERVERS']).toBe('false')
    }
    expect(planLaunch(debianFacts(), { ...request, sandbox: { ...OPEN, connectors: true } }).env['ENABLE_CLAUDEAI_MCP_SERVERS']).toBeUndefined()
    // Every bind source is created first, so bwrap never invents one.
    const created = [...a.mkdirs.map(m => m.path), ...a.files.map(f => f.path)]
    for (const [src] of optionArgs(a.argv, '--bind', 2)) {
      if (src?.startsWith('/home/ada/.claudebox')) expect(created).toContain(src)
    }
  })

  test('mkdirs are 0700 and parents come first; project-root records the canonical root', () => {
    const plan = planLaunch(debianFacts(), request)
    expect(plan.mkdirs.map(m => m.path).slice(0, 7)).toEqual([
      '/home/ada/.claudebox',
      '/home/ada/.claudebox/instances',
      shopInstance,
      `${shopInstance}/claudebox`,
      `${shopInstance}/claudebox/sessions`,
      '/home/ada/.claudebox/shared',
      '/home/ada/.claudebox/shared/credentials',
    ])
    expect(plan.mkdirs.every(m => m.mode === 0o700)).toBe(true)
    expect(plan.files).toContainEqual({ path: `${shopInstance}/project-root`, content: '/home/ada/src/shop/.git\n', mode: 0o600 })
  })

  test.each([
    ['deleted cwd', debianFacts({ cwd: undefined }), 125, /current directory no longer exists/],
    ['no bwrap', debianFacts({ bwrap: undefined }), 125, /bwrap .* not found/],
    ['no claude', debianFacts({ claude: undefined, claudeProblem: 'not-found' }), 127, /claude was not found/],
    ['claude not executable', debianFacts({ claude: undefined, claudeProblem: 'not-executable' }), 126, /cannot be executed/],
    ['instance of another root', debianFacts({ instance: { kind: 'ok', recordedRoot: '/elsewhere/.git' } }), 125, /belongs to \/elsewhere\/.git/],
    ['instance is a symlink', debianFacts({ instance: { kind: 'not-a-directory' } }), 125, /not a directory/],
  ])('%s is a clear error with its own status', (_name, facts, status, message) => {
    expect(() => planLaunch(facts, request)).toThrow(message)
    try {
      planLaunch(facts, request)
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(status)
    }
  })

  test('no git on the machine: warns and uses the current directory', () => {
    const plan = planLaunch(debianFacts({ git: undefined, gitAvailable: false, gitLayout: undefined }), request)
    expect(plan.warnings).toEqual(['git was not found; using the current directory as the project'])
    expect(plan.summary.projectRoot).toBe('/home/ada/src/shop/web')
  })

  test('NixOS: the store and /run/current-system are visible, /etc symlinks into the store resolve', () => {
    const nixos = debianFacts({
      env: { PATH: '/run/wrappers/bin:/home/ada/.nix-profile/bin:/run/current-system/sw/bin', HOME: '/home/ada', TERM: 'xterm' },
      systemPaths: {
        '/usr': { kind: 'dir' },
        '/bin': { kind: 'dir' },
        '/etc': { kind: 'dir' },
        '/nix/store': { kind: 'dir' },
        '/sbin': { kind: 'missing' },
        '/lib': { kind: 'missing' },
        '/lib32': { kind: 'missing' },
        '/lib64': { kind: 'missing' },
        '/libx32': { kind: 'missing' },
        '/opt': { kind: 'missing' },
      },
      runLinks: { '/run/current-system': '/nix/store/abc-nixos-system-25.05' },
      etcLinks: {
        '/etc/resolv.conf': '/run/systemd/resolve/stub-resolv.conf',
        '/etc/hosts': '/nix/store/xyz-etc-hosts',
        '/etc/ssl/certs/ca-certificates.crt': '/nix/store/def-nss-cacert/etc/ssl/certs/ca-bundle.crt',
      },
      claude: {
        found: '/run/current-system/sw/bin/claude',
        resolved: '/nix/store/ghi-claude-code-2.1.330/bin/claude',
        installRoot: '/nix/store/ghi-claude-code-2.1.330/bin/claude',
        interpreter: { resolved: '/nix/store/jkl-bash-5.2/bin/bash', installRoot: '/nix/store/jkl-bash-5.2' },
      },
    })
    const plan = planLaunch(nixos, request)
    const ro = optionArgs(plan.argv, '--ro-bind', 2).map(([src]) => src)
    expect(ro).toEqual(expect.arrayContaining(['/nix/store', '/run/systemd/resolve/stub-resolv.conf']))
    expect(ro).not.toContain('/nix/store/xyz-etc-hosts') // already visible through /nix/store
    expect(ro).not.toContain('/nix/store/ghi-claude-code-2.1.330/bin/claude')
    expect(optionArgs(plan.argv, '--symlink', 2)).toContainEqual(['/nix/store/abc-nixos-system-25.05', '/run/current-system'])
    expect(plan.argv).not.toContain('/run')
    expect(plan.argv.slice(plan.argv.indexOf('--') + 1).slice(0, 6)).toEqual([SCOPE_HELPER, ...GATE, '/nix/store/ghi-claude-code-2.1.330/bin/claude'])
  })

  test('old Claude Code without CLAUDE_SECURESTORAGE_CONFIG_DIR: the shared credential file is bound instead', () => {
    const claude = { found: '/usr/bin/claude', resolved: '/usr/lib/claude/claude', installRoot: '/usr/lib/claude', version: '2.0.14' }
    const plan = planLaunch(debianFacts({ claude }), request)
    expect(plan.summary.credentials.mechanism).toBe('file-bind')
    expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual(['/home/ada/.claudebox/shared/credentials/.credentials.json', `${shopInstance}/.credentials.json`])
    expect(plan.files.map(f => f.path)).toContain('/home/ada/.claudebox/shared/credentials/.credentials.json')
    expect(planLaunch(debianFacts(), request).summary.credentials.mechanism).toBe('store-dir')
  })

  test('opt-ins: --no-network, --ssh-agent, extra binds, --env, --shell, --writable-git-config', () => {
    const facts = debianFacts({
      env: { ...debianFacts().env, SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', FOO: 'bar' },
      paths: {
        '/tmp/ssh-x/agent.1': { real: '/tmp/ssh-x/agent.1', kind: 'socket' },
        '/data/sets': { real: '/data/sets', kind: 'dir' },
        '/home/ada/scratch': { real: '/home/ada/scratch', kind: 'dir' },
      },
    })
    const sandbox: SandboxOptions = {
      ...DEFAULT_SANDBOX,
      network: 'none',
      sshAgent: true,
      roBinds: ['/data/sets'],
      binds: ['/home/ada/scratch'],
      env: ['FOO', 'MODE=fast'],
      shell: true,
      writableGitConfig: true,
      allowDangerousRoot: false,
      confirmFirstLaunch: false,
    }
    const plan = planLaunch(facts, { claudeArgs: [], sandbox })
    expect(plan.argv).not.toContain('--share-net')
    expect(optionArgs(plan.argv, '--bind', 2)).toEqual(expect.arrayContaining([['/tmp/ssh-x/agent.1', '/tmp/ssh-x/agent.1'], ['/home/ada/scratch', '/home/ada/scratch']]))
    expect(optionArgs(plan.argv, '--ro-bind', 2)).toContainEqual(['/data/sets', '/data/sets'])
    expect(plan.env).toMatchObject({ FOO: 'bar', MODE: 'fast' })
    expect(plan.env).toMatchObject({ SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1' }) // a name with AUTH: kept out of argv
    expect(plan.argv.slice(plan.argv.indexOf('--') + 1)).toEqual([SCOPE_HELPER, ...GATE, '/bin/sh'])
    expect(optionArgs(plan.argv, '--ro-bind', 2).map(([s]) => s)).not.toContain('/home/ada/src/shop/.git/config')
    expect(plan.watch).toContain('/home/ada/src/shop/.git/config')
  })

  test.each([
    ['/', /whole file system/],
    ['/home/ada', /home directory/],
    ['/home/ada/.claudebox', /claudebox's state/],
    ['/nope', /does not exist/],
  ])('--bind %s is refused (status 2)', (p, message) => {
    const facts = debianFacts({ paths: { [p]: { real: p === '/nope' ? undefined : p, kind: p === '/nope' ? 'missing' : 'dir' } } })
    const sandbox: SandboxOptions = { ...DEFAULT_SANDBOX, network: 'open', binds: [p] }
    expect(() => planLaunch(facts, { claudeArgs: [], sandbox })).toThrow(message)
  })

  test("--ssh-agent refuses a SSH_AUTH_SOCK that names a claudebox session's socket (another session's proxy)", () => {
    const sock = '/run/user/0/claudebox-net-0badc0de-12-0123456789ab/proxy.sock'
    const facts = debianFacts({ env: { ...debianFacts().env, SSH_AUTH_SOCK: sock }, paths: { [sock]: { real: sock, kind: 'socket' } } })
    expect(() => planLaunch(facts, { claudeArgs: [], sandbox: { ...DEFAULT_SANDBOX, network: 'open', sshAgent: true } })).toThrow(/names a claudebox session's socket/)
  })

  test('a bind named from the current directory (../data, data/) is the directory the probe resolved', () => {
    // debianFacts' cwd is /home/ada/src/shop/web; the probe keys what it found by the resolved path.
    const facts = debianFacts({ paths: { '/home/ada/src/shop/data': { real: '/home/ada/src/shop/data', kind: 'dir' }, '/home/ada/sets': { real: '/srv/sets', kind: 'dir' } } })
    const sandbox: SandboxOptions = { ...DEFAULT_SANDBOX, network: 'open', binds: ['../data'], roBinds: ['/home/ada/sets/'] }
    const plan = planLaunch(facts, { claudeArgs: [], sandbox })
    expect(optionArgs(plan.argv, '--bind', 2)).toContainEqual(['/home/ada/src/shop/data', '/home/ada/src/shop/data'])
    expect(optionArgs(plan.argv, '--ro-bind', 2)).toContainEqual(['/srv/sets', '/srv/sets'])
  })

  test('git config and hooks are read-only by default; a missing hooks dir is created to be protected', () => {
    const plan = planLaunch(debianFacts({ gitProtect: gitProtect({ pinned: ['/home/ada/src/shop/.git'], readOnly: ['/home/ada/src/shop/.git/config'], emptyDirs: ['/home/ada/src/shop/.git/hooks'] }) }), request)
    const ro = optionArgs(plan.argv, '--ro-bind', 2).map(([s]) => s)
    expect(ro).toEqual(expect.arrayContaining(['/home/ada/src/shop/.git/config', '/home/ada/src/shop/.git/hooks']))
    expect(plan.mkdirs.map(m => m.path)).toContain('/home/ada/src/shop/.git/hooks')
    // The read-only binds come after the project's read-write bind, so they win.
    expect(plan.argv.indexOf('/home/ada/src/shop/.git/config')).toBeGreaterThan(plan.argv.indexOf('/home/ada/src/shop'))
  })

  // bwrap's MAX_ARGS (arg-limit.ts): past it bwrap dies before any namespace, and claudebox blamed
  // the machine's user namespaces. The plan is refused first, with where the arguments come from.
  describe('more arguments than bwrap accepts', () => {
    const many = (n: number, dir: string): string[] => Array.from({ length: n }, (_, i) => `${dir}/f${i}`)
    const refusal = (run: () => unknown): ClaudeboxError => {
      try {
        run()
      } catch (error) {
        if (error instanceof ClaudeboxError) return error
        throw error
      }
      throw new Error('the plan was not refused')
    }

    test('the last that fits is planned; one bind more is refused with 125, naming the binds and the next step', () => {
      const fits = planLaunch(debianFacts(), request).argv.length
      const under = Math.floor((BWRAP_MAX_ARGS - fits) / 3)
      const binds = many(under + 1, '/srv/data')
      const facts = debianFacts({ paths: Object.fromEntries(binds.map(p => [p, { kind: 'file' as const, real: p }])) })
      expect(planLaunch(facts, { ...request, sandbox: { ...OPEN, roBinds: binds.slice(0, under) } }).argv.length).toBeLessThanOrEqual(BWRAP_MAX_ARGS)
      const error = refusal(() => planLaunch(facts, { ...request, sandbox: { ...OPEN, roBinds: binds } }))
      expect(error.exitCode).toBe(125)
      expect(error.message).toMatch(new RegExp(`^bwrap accepts at most 9000 arguments and this sandbox needs \\d+: ${3 * binds.length} for ${binds.length} --bind/--ro-bind paths .*; bind one directory that holds those paths instead of each, and rerun$`))
      expect(error.message.split('\n')).toHaveLength(1)
    })

    test("the project's git dirs: the message says so and what would do with fewer", () => {
      const pinned = many(3000, '/home/ada/src/shop/.git/modules')
      const error = refusal(() => planLaunch(debianFacts({ gitProtect: gitProtect({ pinned }) }), request))
      expect(error.exitCode).toBe(125)
      expect(error.message).toMatch(/ 9000 for the project's git dirs and submodules, .*; run claudebox in a checkout with fewer submodules or worktrees \(or with --writable-git-config/)
    })

    test("Claude's own arguments count too (bwrap counts the command's)", () => {
      const error = refusal(() => planLaunch(debianFacts(), { claudeArgs: many(BWRAP_MAX_ARGS, '-x'), sandbox: OPEN }))
      expect(error.message).toMatch(/needs \d+: \d+ for the project's git dirs and submodules, \d+ for the rest; pass Claude fewer arguments \(after --\), and rerun$/)
    })
  })

  test('/proc/sys is read-only and /etc secrets are masked (root inside could read them)', () => {
    const plan = planLaunch(debianFacts(), request)
    expect(optionArgs(plan.argv, '--ro-bind', 2)).toEqual(expect.arrayContaining([['/proc/sys', '/proc/sys'], ['/dev/null', '/etc/shadow']]))
    expect(plan.argv.indexOf('/proc/sys')).toBeGreaterThan(plan.argv.indexOf('--proc'))
  })

  test("with no terminal on stdin, stdout or stderr the launcher's controlling terminal is out of reach (/dev/tty is /dev/null, after --dev); with one the sandbox shares it", () => {
    const argv = planLaunch({ ...debianFacts(), stdioTerminal: false }, request).argv
    const at = argv.indexOf('/dev/tty')
    expect(argv.slice(at - 2, at + 1)).toEqual(['--ro-bind', '/dev/null', '/dev/tty'])
    expect(at).toBeGreaterThan(argv.indexOf('--dev'))
    expect(planLaunch(debianFacts(), request).argv).not.toContain('/dev/tty')
    expect(argv).not.toContain('--new-session')
  })

  test('--hard-links: a filter without the hard-link rule (another program, another file), said in a warning', () => {
    const filterOf = (plan: ReturnType<typeof planLaunch>): string => plan.files.find(f => f.path.includes('/seccomp/'))?.path ?? ''
    const plain = planLaunch(debianFacts(), request)
    const opted = planLaunch(debianFacts(), { ...request, sandbox: { ...(request.sandbox ?? DEFAULT_SANDBOX), hardLinks: true } })
    expect(filterOf(opted)).not.toBe(filterOf(plain))
    expect(opted.warnings.join('\n')).toMatch(/--hard-links: programs inside may make hard links/)
    expect(plain.warnings.join('\n')).not.toMatch(/hard links/)
  })

  test('--io-uring: a filter without the io_uring rule (another program, another file), said in a warning', () => {
    const filterOf = (plan: ReturnType<typeof planLaunch>): string => plan.files.find(f => f.path.includes('/seccomp/'))?.path ?? ''
    const plain = planLaunch(debianFacts(), request)
    const opted = planLaunch(debianFacts(), { ...request, sandbox: { ...(request.sandbox ?? DEFAULT_SANDBOX), ioUring: true } })
    expect(filterOf(opted)).not.toBe(filterOf(plain))
    expect(opted.warnings.join('\n')).toMatch(/--io-uring: programs inside may use io_uring/)
    expect(plain.warnings.join('\n')).not.toMatch(/io_uring/)
  })

  test("for root, the folders of /etc and /opt that others cannot enter show empty, after /etc is bound and after the masked files (one may lie inside), and read-only only after every bind (the project may lie in one: review of round 96)", () => {
    const plan = planLaunch({ ...debianFacts(), etcSecrets: ['/etc/shadow', '/etc/ssl/private/x.key'], rootOnlyDirs: ['/etc/ssl/private', '/opt/app/secrets'] }, request)
    const lastBind = Math.max(plan.argv.lastIndexOf('--bind'), plan.argv.lastIndexOf('--ro-bind'), plan.argv.lastIndexOf('--bind-fd'), plan.argv.lastIndexOf('--ro-bind-fd'))
    for (const dir of ['/etc/ssl/private', '/opt/app/secrets']) {
      const at = plan.argv.indexOf(dir)
      expect(plan.argv[at - 1]).toBe('--tmpfs')
      expect(at).toBeGreaterThan(plan.argv.lastIndexOf('/etc/ssl/private/x.key'))
      expect(at).toBeGreaterThan(plan.argv.indexOf('/etc'))
      const remount = plan.argv.lastIndexOf(dir)
      expect(plan.argv[remount - 1]).toBe('--remount-ro')
      expect(remount).toBeGreaterThan(lastBind)
    }
  })
})
