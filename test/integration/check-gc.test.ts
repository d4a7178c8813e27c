// --check and --gc against a real machine state in a temporary HOME.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { instanceId } from '../../src/state/instance.js'
import { claudebox, FIXTURES, HAVE_BWRAP, inSandbox, landlockScopeSupported, makeRepo, makeWorld, REAL_CLAUDE } from '../helpers/cli.js'

const LANDLOCK_SCOPE = landlockScopeSupported()

describe.skipIf(!HAVE_BWRAP)('--check', () => {
  test('all required checks pass: one line each, exit 0', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const r = await claudebox(world, ['--check'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: REAL_CLAUDE } })
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines.every(line => /^(ok|warn|fail) +[^:]+: /.test(line)), r.stdout).toBe(true)
    // Each line once: no audit repeated under the checks.
    expect(new Set(lines).size).toBe(lines.length)
    expect(r.stdout).toMatch(/^ok +bwrap: .*bubblewrap \d/m)
    expect(r.stdout).toMatch(/^ok +user namespaces: a test sandbox started$/m)
    expect(r.stdout).toMatch(/^ok +claude: .* \(2\.1\.\d+ \(Claude Code\)\)$/m)
    expect(r.stdout).toMatch(/^ok +git: git version/m)
    expect(r.stdout).toContain(`ok   project: ${repo} (git dir ${repo}/.git) -> instance ${instanceId(`${repo}/.git`)}`)
    expect(r.stdout).toMatch(/^warn sign-in: no login yet: run claudebox --login once/m)
    const keyed = await claudebox(world, ['--check'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: REAL_CLAUDE, ANTHROPIC_API_KEY: 'sk-ant-api03-x' } })
    expect(keyed.stdout).toMatch(/^ok +sign-in: kept on the host \(api-key\); the sandbox gets a per-session placeholder/m)
    // The default network is allow (Claude's own hosts); open is a warning, with the name lookup checked.
    expect(r.stdout).toMatch(/^ok +network: allow: no network inside/m)
    expect(r.stdout).toMatch(/^ok +protection: claude\.ai connectors of your account .*: off/m)
    const open = await claudebox(world, ['--check', '--network=open', '--connectors'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: REAL_CLAUDE } })
    expect(open.stdout).toMatch(/^warn network: open: shared with the host/m)
    expect(open.stdout).toMatch(/^ok +name lookup: /m)
    expect(open.stdout).toMatch(/^warn protection: claude\.ai connectors: ON/m)
    expect(r.stdout).toMatch(/^ok +protection: seccomp filter/m)
    expect(r.stdout).toMatch(/^ok +protection: git dirs pinned .*config, hooks, commondir and \.git files read-only/m)
    expect(r.stdout).toMatch(/^ok +read-only inside: \/usr, /m)
    // --json: the same results, for scripts.
    const json = await claudebox(world, ['--check', '--json'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: REAL_CLAUDE } })
    const parsed = JSON.parse(json.stdout) as { passed: boolean; checks: { status: string; name: string; detail: string }[] }
    expect(parsed.passed).toBe(true)
    expect(parsed.checks.length).toBe(lines.length)
    // --check creates nothing.
    expect(fs.existsSync(world.claudeboxHome)).toBe(false)
  })

  test("names the host's sensitive abstract unix sockets while the network is open, and whether the Landlock scope refuses them", async () => {
    const world = makeWorld()
    const server = net.createServer()
    await new Promise<void>(resolve => server.listen(`\0/tmp/.X11-unix/X${process.pid}`, resolve))
    try {
      const r = await claudebox(world, ['--check', '--network=open'], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_CLAUDE: '/bin/true' } })
      const listed = LANDLOCK_SCOPE
        ? `^ok +abstract sockets: the host's are refused inside by a Landlock scope \\(.*@/tmp/.X11-unix/X${process.pid}`
        : `^warn abstract sockets: reachable inside while the network is open: .*@/tmp/.X11-unix/X${process.pid}.*this kernel lacks the Landlock scope`
      expect(r.stdout).toMatch(new RegExp(listed, 'm'))
      const off = await claudebox(world, ['--check', '--no-network'], { cwd: makeRepo(world.home, 'q'), env: { CLAUDEBOX_CLAUDE: '/bin/true' } })
      expect(off.stdout).not.toMatch(/abstract sockets/)
    } finally {
      server.close()
    }
  })

  test('a failing sandbox or a missing claude makes it exit 1', async () => {
    const world = makeWorld()
    const r = await claudebox(world, ['--check'], {
      cwd: makeRepo(world.home, 'p'),
      env: { CLAUDEBOX_BWRAP: path.join(FIXTURES, 'bwrap-no-userns.sh'), CLAUDEBOX_CLAUDE: '/nonexistent/claude' },
    })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/^fail user namespaces: a test sandbox failed: .*; fix: /m)
    expect(r.stdout).toMatch(/^fail claude: CLAUDEBOX_CLAUDE names \/nonexistent\/claude, which does not exist/m)
    // Reported once: the project line does not repeat it, and the protections still show.
    expect(r.stdout.match(/nonexistent/g)?.length).toBe(1)
    expect(r.stdout).toMatch(/^ok +project: /m)
    expect(r.stdout).toMatch(/^ok +protection: seccomp filter/m)
  })

  test('a Claude Code newer than the newest tested release is a warning; the node line says what node >= 22 means here', async () => {
    const world = makeWorld()
    const claude = path.join(world.root, 'bin/claude')
    fs.mkdirSync(path.dirname(claude), { recursive: true })
    fs.writeFileSync(claude, '#!/bin/sh\necho "9.1.0 (Claude Code)"\n', { mode: 0o755 })
    const r = await claudebox(world, ['--check'], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_CLAUDE: claude } })
    expect(r.stdout).toMatch(/^warn claude release: 9\.1\.0 is newer than the newest release claudebox was tested with \(\d+\.\d+\.\d+\); if something breaks, run npm run compat -- 9\.1\.0/m)
    expect(r.stdout).toMatch(/^ok +node: claudebox runs on Node v\d+/m)
    const real = await claudebox(world, ['--check'], { cwd: makeRepo(world.home, 'q'), env: { CLAUDEBOX_CLAUDE: REAL_CLAUDE } })
    expect(real.stdout).not.toContain('claude release')
    expect(real.stdout).toMatch(/^ok +node: .*Claude Code here is a native program and does not run on Node/m)
  })

  test('with the opt-out, an API key in the environment is named as being inside, not "no credentials yet"', async () => {
    const world = makeWorld()
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"secretless": false}')
    const r = await claudebox(world, ['--check'], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_CLAUDE: '/bin/true', ANTHROPIC_API_KEY: 'sk-ant-api03-x' } })
    expect(r.stdout).toMatch(/^warn sign-in: inside the sandbox \("secretless": false\): ANTHROPIC_API_KEY from your environment/m)
    expect(r.stdout).not.toContain('no credentials yet')
  })

  test('in a refused root (your home) the project line fails once and the protections still show; an importable login (an API key) is named, an OAuth one is not (never copied)', async () => {
    const world = makeWorld()
    fs.mkdirSync(path.join(world.home, '.claude'), { recursive: true })
    fs.writeFileSync(path.join(world.home, '.claude/.claude.json'), '{"primaryApiKey":"sk-ant-api03-x"}')
    const r = await claudebox(world, ['--check'], { cwd: world.home, env: { CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: '/nonexistent/bwrap' } })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/^fail bwrap: CLAUDEBOX_BWRAP names \/nonexistent\/bwrap, which does not exist/m)
    expect(r.stdout).toMatch(/^fail project: refusing to make .* writable: it is your home directory/m)
    expect(r.stdout.match(/^fail /gm)?.length).toBe(3) // bwrap, user namespaces (not tested), project
    expect(r.stdout).toMatch(/^ok +protection: seccomp filter/m)
    expect(r.stdout).toContain(`ok   sign-in: not yet: the first launch offers your Claude Code login from ${world.home}/.claude/.claude.json`)
    fs.writeFileSync(path.join(world.home, '.claude/.credentials.json'), '{"claudeAiOauth":{"accessToken":"x"}}')
    const oauth = await claudebox(world, ['--check'], { cwd: world.home, env: { CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: '/nonexistent/bwrap' } })
    expect(oauth.stdout).toContain('warn sign-in: no login yet: run claudebox --login once')
  })

  test('a broken config.json fails its line and the other checks still run, with the built-in options; a bad option on the command line stops there', async () => {
    const world = makeWorld()
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"network": "open",}')
    const repo = makeRepo(world.home, 'p')
    const r = await claudebox(world, ['--check'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/^fail config: .*config\.json: not valid JSON .*; fix it or move it away; the checks below use the built-in options$/m)
    expect(r.stdout.match(/^\w+ +config:/gm)).toHaveLength(1)
    expect(r.stdout).toMatch(/^ok +bwrap: /m)
    expect(r.stdout).toMatch(/^ok +network: allow: /m) // the built-in network, not the file's
    expect(r.stdout).toMatch(/^ok +protection: seccomp filter/m)
    const cli = await claudebox(world, ['--check', '--network=open', '--allow-host', 'example.com'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(cli.exitCode).toBe(1)
    expect(cli.stdout.trim().split('\n')).toHaveLength(1)
    expect(cli.stdout).toMatch(/^fail config: .*not valid JSON/)
  })
})

describe.skipIf(!HAVE_BWRAP)('--gc', () => {
  test('removes instances whose root is gone, keeps the rest, never follows symlinks', async () => {
    const world = makeWorld()
    const keep = makeRepo(world.home, 'keep')
    const gone = makeRepo(world.home, 'gone')
    for (const repo of [keep, gone]) expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const instances = path.join(world.claudeboxHome, 'instances')
    const goneId = instanceId(`${gone}/.git`)
    // Something valuable outside, reachable only through a symlink planted in the doomed instance.
    const precious = path.join(world.root, 'precious')
    fs.mkdirSync(precious)
    fs.writeFileSync(path.join(precious, 'data'), 'keep me')
    fs.symlinkSync(precious, path.join(instances, goneId, 'link-out'))
    // A hand-made dir, a symlinked "instance", a broken one.
    fs.mkdirSync(path.join(instances, 'not-an-instance'))
    fs.symlinkSync(precious, path.join(instances, 'aaaaaaaaaaaaaaaa'))
    fs.mkdirSync(path.join(instances, 'bbbbbbbbbbbbbbbb'))
    // A sign-in kept for each project, outside its instance: the gone one's goes with it.
    const logins = path.join(world.claudeboxHome, 'logins')
    fs.mkdirSync(logins)
    for (const repo of [keep, gone]) fs.writeFileSync(path.join(logins, `${instanceId(`${repo}/.git`)}.json`), '{}\n')
    fs.rmSync(gone, { recursive: true })

    const dry = await claudebox(world, ['--gc', '--dry-run'], { cwd: world.root })
    expect(dry.exitCode).toBe(0)
    expect(dry.stdout).toBe(`would remove ${goneId} (${gone}/.git)`)
    expect(fs.existsSync(path.join(instances, goneId))).toBe(true)

    const unconfirmed = await claudebox(world, ['--gc'], { cwd: world.root })
    expect(unconfirmed.exitCode).toBe(1)
    expect(unconfirmed.stderr).toMatch(/nothing removed: rerun with --yes/)
    expect(fs.existsSync(path.join(instances, goneId))).toBe(true)

    const r = await claudebox(world, ['--gc', '--yes'], { cwd: world.root })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(`claudebox: removed ${goneId} (${gone}/.git no longer exists)`)
    expect(r.stderr).toMatch(/keeping bbbbbbbbbbbbbbbb: broken/)
    expect(r.stderr).toMatch(/keeping aaaaaaaaaaaaaaaa: not a directory \(symlink\)/)
    expect(r.stderr).toMatch(/keeping not-an-instance: not an instance/)
    expect(fs.readdirSync(instances).sort()).toEqual(['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb', instanceId(`${keep}/.git`), 'not-an-instance'].sort())
    expect(fs.readFileSync(path.join(precious, 'data'), 'utf8')).toBe('keep me')
    expect(fs.readdirSync(logins)).toEqual([`${instanceId(`${keep}/.git`)}.json`])
  })
})
