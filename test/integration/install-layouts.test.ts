// Claude Code installed the ways users install it, in a temporary home, with the real binary
// linked into place: each must run inside the sandbox, and only its installation may be visible.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld, REAL_CLAUDE, type World } from '../helpers/cli.js'

const REAL_BINARY = fs.realpathSync(REAL_CLAUDE)
const PACKAGE_DIR = path.resolve(path.dirname(REAL_BINARY), '..')
const VERSION = (JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version

/** Hard link (fast, same inode) or copy when across file systems. */
function place(source: string, target: string, mode = 0o755): void {
  fs.mkdirSync(path.dirname(target), { recursive: true })
  try {
    fs.linkSync(source, target)
  } catch {
    fs.copyFileSync(source, target)
  }
  fs.chmodSync(target, mode)
}

function link(target: string, linkPath: string): void {
  fs.mkdirSync(path.dirname(linkPath), { recursive: true })
  fs.symlinkSync(target, linkPath)
}

/** An npm package tree: @anthropic-ai/claude-code (and its platform package) under `modules`. */
function npmPackage(modules: string, options: { script: boolean }): string {
  const pkg = path.join(modules, '@anthropic-ai/claude-code')
  place(path.join(PACKAGE_DIR, 'package.json'), path.join(pkg, 'package.json'), 0o644)
  if (!options.script) {
    place(REAL_BINARY, path.join(pkg, 'bin/claude.exe'))
    return path.join(pkg, 'bin/claude.exe')
  }
  // Without its postinstall step the package runs through cli-wrapper.cjs (a node script), which
  // finds the binary in the sibling platform package.
  place(path.join(PACKAGE_DIR, 'cli-wrapper.cjs'), path.join(pkg, 'cli-wrapper.cjs'))
  const platform = path.join(modules, '@anthropic-ai', `claude-code-linux-${process.arch}`)
  const platformSource = path.join(path.dirname(PACKAGE_DIR), `claude-code-linux-${process.arch}`)
  place(path.join(platformSource, 'package.json'), path.join(platform, 'package.json'), 0o644)
  place(REAL_BINARY, path.join(platform, 'claude'))
  return path.join(pkg, 'cli-wrapper.cjs')
}

interface Layout {
  /** Builds the layout in `home`; returns the PATH entries to put first and the install dir. */
  build: (world: World) => { pathDirs: string[]; visible: string }
}

const layouts: Record<string, Layout> = {
  'npm global, native binary': {
    build: ({ home }) => {
      const prefix = path.join(home, '.npm-global')
      link(npmPackage(path.join(prefix, 'lib/node_modules'), { script: false }), path.join(prefix, 'bin/claude'))
      return { pathDirs: [path.join(prefix, 'bin')], visible: path.join(prefix, 'lib/node_modules/@anthropic-ai') }
    },
  },
  'npm global under nvm, run by node (script)': {
    build: ({ home }) => {
      const prefix = path.join(home, '.nvm/versions/node/v20.20.2')
      place(process.execPath, path.join(prefix, 'bin/node'))
      link(path.relative(path.join(prefix, 'bin'), npmPackage(path.join(prefix, 'lib/node_modules'), { script: true })), path.join(prefix, 'bin/claude'))
      return { pathDirs: [path.join(prefix, 'bin')], visible: prefix }
    },
  },
  'native installer (~/.local/bin -> ~/.local/share/claude/versions)': {
    build: ({ home }) => {
      const binary = path.join(home, `.local/share/claude/versions/${VERSION}`)
      place(REAL_BINARY, binary)
      link(binary, path.join(home, '.local/bin/claude'))
      return { pathDirs: [path.join(home, '.local/bin')], visible: binary }
    },
  },
  'Homebrew on Linux': {
    build: ({ home }) => {
      const brew = path.join(home, '.linuxbrew')
      const cellar = path.join(brew, `Cellar/claude-code/${VERSION}/libexec/lib/node_modules`)
      link(npmPackage(cellar, { script: false }), path.join(brew, 'bin/claude'))
      return { pathDirs: [path.join(brew, 'bin')], visible: path.join(cellar, '@anthropic-ai') }
    },
  },
  'asdf shim': {
    build: ({ home }) => {
      const real = path.join(home, `.asdf/installs/claude/${VERSION}/bin/claude`)
      place(REAL_BINARY, real)
      const shims = path.join(home, '.asdf/shims')
      fs.mkdirSync(shims, { recursive: true })
      fs.writeFileSync(path.join(shims, 'claude'), '#!/bin/sh\nexec asdf exec claude "$@"\n', { mode: 0o755 })
      // The manager itself: only `asdf which claude` is needed, outside the sandbox.
      const tool = path.join(home, '.asdf/bin')
      fs.mkdirSync(tool, { recursive: true })
      fs.writeFileSync(path.join(tool, 'asdf'), `#!/bin/sh\n[ "$1 $2" = "which claude" ] && echo '${real}'\n`, { mode: 0o755 })
      return { pathDirs: [shims, tool], visible: real }
    },
  },
}

describe.skipIf(!HAVE_BWRAP)('Claude Code install layouts', () => {
  test.each(Object.keys(layouts))('%s: runs inside, and only its installation is visible', async name => {
    const world = makeWorld()
    const { pathDirs, visible } = (layouts[name] as Layout).build(world)
    const env = { PATH: [...pathDirs, '/usr/local/bin', '/usr/bin', '/bin'].join(':') }
    const repo = makeRepo(world.home, 'p')
    const r = await claudebox(world, ['--', '--version'], { cwd: repo, env })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${VERSION} (Claude Code)`)
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env })
    const roBinds = [...dry.stdout.matchAll(/--ro-bind (\S+) \1/g)].map(m => m[1])
    expect(roBinds).toContain(visible)
    expect(roBinds).not.toContain(world.home)
    for (const bound of roBinds) expect(bound === world.home || world.home.startsWith(`${bound ?? ''}/`)).toBe(false)
  })
})

describe.skipIf(!HAVE_BWRAP)('a claude in the project (node_modules/.bin on PATH)', () => {
  test("runs, by the node on PATH outside the project, which alone of the host is shown for it: the session may have written that claude (red team, round 106)", async () => {
    const world = makeWorld()
    const prefix = path.join(world.home, '.nvm/versions/node/v20.20.2')
    place(process.execPath, path.join(prefix, 'bin/node'))
    const repo = makeRepo(world.home, 'p')
    const wrapper = npmPackage(path.join(repo, 'node_modules'), { script: true })
    link(path.relative(path.join(repo, 'node_modules/.bin'), wrapper), path.join(repo, 'node_modules/.bin/claude'))
    const env = { PATH: [path.join(repo, 'node_modules/.bin'), path.join(prefix, 'bin'), '/usr/local/bin', '/usr/bin', '/bin'].join(':') }
    const r = await claudebox(world, ['--', '--version'], { cwd: repo, env })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${VERSION} (Claude Code)`)
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env })
    const roBinds = [...dry.stdout.matchAll(/--ro-bind (\S+) \1/g)].map(m => m[1])
    expect(roBinds).toContain(prefix)
    // ~/.gitconfig is shown to every session; nothing else of the home but that node.
    expect(roBinds.filter(p => p !== undefined && p.startsWith(`${world.home}/`) && !p.startsWith(`${repo}/`) && !p.startsWith(`${world.claudeboxHome}/`))).toEqual([path.join(world.home, '.gitconfig'), prefix])
  })
})

describe.skipIf(!HAVE_BWRAP)("an interpreter's installation", () => {
  test("a node in ~/.local/bin (its tarball unpacked there) is shown alone, never ~/.local, which holds keyrings and shell history (red team, round 108); an nvm version folder is shown whole", async () => {
    const world = makeWorld()
    const local = path.join(world.home, '.local')
    place(process.execPath, path.join(local, 'bin/node'))
    fs.mkdirSync(path.join(local, 'include/node'), { recursive: true })
    fs.mkdirSync(path.join(local, 'share/keyrings'), { recursive: true })
    fs.writeFileSync(path.join(local, 'share/keyrings/login.keyring'), 'SECRET\n', { mode: 0o600 })
    const prefix = path.join(world.home, '.npm-global')
    link(path.relative(path.join(prefix, 'bin'), npmPackage(path.join(prefix, 'lib/node_modules'), { script: true })), path.join(prefix, 'bin/claude'))
    const repo = makeRepo(world.home, 'p')
    const env = { PATH: [path.join(prefix, 'bin'), path.join(local, 'bin'), '/usr/bin', '/bin'].join(':') }
    const r = await claudebox(world, ['--', '--version'], { cwd: repo, env })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${VERSION} (Claude Code)`)
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env })
    const roBinds = [...dry.stdout.matchAll(/--ro-bind (\S+) \1/g)].map(m => m[1])
    expect(roBinds).toContain(path.join(local, 'bin/node'))
    expect(roBinds).not.toContain(local)
    expect(dry.stdout).not.toContain(path.join(local, 'share'))
  })
})

describe.skipIf(!HAVE_BWRAP)('version-manager lookups', () => {
  test("run outside the project, whose own tool config could run commands", async () => {
    const world = makeWorld()
    const real = path.join(world.home, `.local/share/mise/installs/claude/${VERSION}/bin/claude`)
    place(REAL_BINARY, real)
    const shims = path.join(world.home, '.local/share/mise/shims')
    fs.mkdirSync(shims, { recursive: true })
    fs.writeFileSync(path.join(shims, 'claude'), '#!/bin/sh\nexec mise exec -- claude "$@"\n', { mode: 0o755 })
    const tool = path.join(world.home, '.local/bin')
    fs.mkdirSync(tool, { recursive: true })
    const seen = path.join(world.root, 'mise-cwd')
    // A stand-in for mise that records where it was started and what PWD said.
    fs.writeFileSync(path.join(tool, 'mise'), `#!/bin/sh\necho "$(pwd) \${PWD:-unset}" > '${seen}'\necho '${real}'\n`, { mode: 0o755 })
    const repo = makeRepo(world.home, 'p')
    fs.writeFileSync(path.join(repo, '.mise.toml'), '[hooks]\nenter = "touch /tmp/pwned"\n')
    const r = await claudebox(world, ['--', '--version'], { cwd: repo, env: { PATH: [shims, tool, '/usr/bin', '/bin'].join(':'), PWD: repo } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(fs.readFileSync(seen, 'utf8').trim()).toBe('/ /')
  })
})
