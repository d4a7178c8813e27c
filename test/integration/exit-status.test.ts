// Exit statuses and signals: fixture programs inside a real sandbox, and each launch failure.
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, FIXTURES, HAVE_BWRAP, inSandbox, instancePath, IS_ROOT, makeRepo, makeWorld, noticeGiven, tempDir } from '../helpers/cli.js'

describe.skipIf(!HAVE_BWRAP)('exit status', () => {
  test.each([0, 1, 3, 77, 255])("claude's status %i passes through", async status => {
    const world = makeWorld()
    const r = await inSandbox(world, makeRepo(world.home, 'p'), `exit ${status}`)
    expect(r.exitCode).toBe(status)
  })

  test.each([
    ['TERM', 143],
    ['KILL', 137],
    ['SEGV', 139],
  ])('a program killed by SIG%s inside gives %i', async (signal, status) => {
    const world = makeWorld()
    const r = await inSandbox(world, makeRepo(world.home, 'p'), `kill -${signal} $$`)
    expect(r.exitCode).toBe(status)
  })

  test.each(['TERM', 'HUP', 'INT', 'QUIT'] as const)('SIG%s sent to claudebox reaches the program inside, which can exit cleanly', async signal => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const fixture = path.join(world.root, 'trap-signals.sh')
    fs.copyFileSync(path.join(FIXTURES, 'trap-signals.sh'), fixture)
    const child = execa('node', [BIN, 'got-signal'], {
      cwd: repo,
      env: { ...world.env, CLAUDEBOX_CLAUDE: fixture },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 20_000,
    })
    // The program writes `ready` once it has installed its traps.
    await new Promise<void>(resolve => child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()))
    child.kill(`SIG${signal}`)
    const r = await child
    expect(r.exitCode).toBe(42)
    expect(fs.readFileSync(path.join(repo, 'got-signal'), 'utf8')).toBe(`${signal}\n`)
  })
})

describe('launch failures', () => {
  test('no bwrap: 125 and one clear line', async () => {
    const world = makeWorld()
    const r = await claudebox(world, [], { cwd: world.root, env: { CLAUDEBOX_CLAUDE: '/bin/true', PATH: '/nonexistent' } })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toMatch(/^claudebox: bwrap \(bubblewrap\) was not found.*install it/)
    expect(r.stderr.split('\n')).toHaveLength(1)
  })

  test('bwrap cannot create namespaces: 125 and a pointer to --check', async () => {
    const world = makeWorld()
    const r = await claudebox(world, [], {
      cwd: makeRepo(world.home, 'p'),
      env: { CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: path.join(FIXTURES, 'bwrap-no-userns.sh') },
    })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toContain('bwrap: No permissions to create new namespace')
    expect(r.stderr).toMatch(/claudebox: bwrap could not create the sandbox .*claudebox --check/)
  })

  // bwrap refuses more than its MAX_ARGS (9000) arguments before it makes any namespace, and
  // claudebox took that for refused user namespaces (or printed bwrap's own puzzle). Now the plan
  // is refused first: 125, what the arguments are for and the next step; nothing created or run.
  test.skipIf(!HAVE_BWRAP)('more arguments than bwrap accepts (thousands of --ro-bind): 125 and the cause, nothing started or left', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const data = path.join(world.root, 'data')
    fs.mkdirSync(data)
    const binds = Array.from({ length: 3000 }, (_, i) => path.join(data, `f${i}`))
    for (const file of binds) fs.writeFileSync(file, '')
    // bwrap as the launch would run it, with a note that it was run.
    const ran = path.join(world.root, 'bwrap-ran')
    const bwrap = path.join(world.root, 'bwrap')
    fs.writeFileSync(bwrap, `#!/bin/sh\necho "$#" >> '${ran}'\nexec bwrap "$@"\n`, { mode: 0o755 })
    const r = await claudebox(world, [...binds.flatMap(file => ['--ro-bind', file]), '--', '-c', 'touch program-ran'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_BWRAP: bwrap } })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toMatch(/^claudebox: bwrap accepts at most 9000 arguments and this sandbox needs \d+: 9000 for 3000 --bind\/--ro-bind paths .*; bind one directory that holds those paths instead of each, and rerun$/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(fs.existsSync(ran), 'bwrap ran').toBe(false)
    expect(fs.existsSync(path.join(repo, 'program-ran'))).toBe(false)
    // A first launch: no instance was made (nor anything else under the state dir but what setup reads).
    expect(fs.existsSync(instancePath(world, path.join(repo, '.git')))).toBe(false)
  }, 60_000)

  test('no claude: 127', async () => {
    const world = makeWorld()
    const r = await claudebox(world, [], { cwd: world.root, env: { PATH: '/nonexistent', CLAUDEBOX_BWRAP: '/usr/bin/bwrap' } })
    expect(r.exitCode).toBe(127)
    expect(r.stderr).toMatch(/^claudebox: claude was not found on PATH; install Claude Code/)
  })

  test('CLAUDEBOX_CLAUDE or CLAUDEBOX_BWRAP naming a missing program: the message names the variable', async () => {
    const world = makeWorld()
    const claude = await claudebox(world, [], { cwd: world.root, env: { CLAUDEBOX_CLAUDE: '/nonexistent/claude' } })
    expect(claude.exitCode).toBe(127)
    expect(claude.stderr).toMatch(/^claudebox: CLAUDEBOX_CLAUDE names \/nonexistent\/claude, which does not exist/)
    const bwrap = await claudebox(world, [], { cwd: world.root, env: { CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: '/nonexistent/bwrap' } })
    expect(bwrap.exitCode).toBe(125)
    expect(bwrap.stderr).toMatch(/^claudebox: CLAUDEBOX_BWRAP names \/nonexistent\/bwrap, which does not exist/)
  })

  test('claude not executable: 126', async () => {
    const world = makeWorld()
    const bin = path.join(world.root, 'bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'claude'), '#!/bin/sh\n', { mode: 0o644 })
    const r = await claudebox(world, [], { cwd: world.root, env: { PATH: `${bin}:/usr/bin:/bin` } })
    expect(r.exitCode).toBe(126)
    expect(r.stderr).toMatch(/cannot be executed/)
  })

  test.skipIf(!HAVE_BWRAP)('no git: the current directory is the project, with a warning', async () => {
    const world = makeWorld()
    const bin = path.join(world.root, 'bin')
    fs.mkdirSync(bin)
    for (const tool of ['bwrap', 'sh', 'printf']) {
      const found = ['/usr/bin', '/bin'].map(d => path.join(d, tool)).find(p => fs.existsSync(p))
      if (found) fs.symlinkSync(found, path.join(bin, tool))
    }
    const repo = makeRepo(world.home, 'p')
    fs.mkdirSync(path.join(repo, 'sub'))
    noticeGiven(world)
    const r = await claudebox(world, ['--', '-c', 'printf %s "$PWD"'], { cwd: path.join(repo, 'sub'), env: { PATH: bin, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toBe('claudebox: git was not found; using the current directory as the project')
    expect(r.stdout).toBe(path.join(repo, 'sub'))
  })

  test.skipIf(!HAVE_BWRAP)('no git, and a .git in the folder: 125, saying git was not found (it blamed the .git: round 109)', async () => {
    const world = makeWorld()
    const bin = path.join(world.root, 'bin')
    fs.mkdirSync(bin)
    for (const tool of ['bwrap', 'sh']) {
      const found = ['/usr/bin', '/bin'].map(d => path.join(d, tool)).find(p => fs.existsSync(p))
      if (found) fs.symlinkSync(found, path.join(bin, tool))
    }
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    const r = await claudebox(world, ['--', '-c', 'true'], { cwd: repo, env: { PATH: bin, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toContain(`${repo}/.git is there, and git was not found on PATH: claudebox needs git to guard a repository`)
  })

  test('current directory deleted: 125', async () => {
    const world = makeWorld()
    const gone = path.join(world.root, 'gone')
    fs.mkdirSync(gone)
    const r = await execa('sh', ['-c', `cd '${gone}' && rmdir '${gone}' && exec node '${BIN}'`], {
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/true' },
      extendEnv: false,
      reject: false,
    })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toMatch(/current directory no longer exists/)
  })

  test('a current directory whose name is not UTF-8: 125, saying so (not that it no longer exists)', async () => {
    const world = makeWorld()
    const bytes = Buffer.concat([Buffer.from(`${world.root}/bad`), Buffer.from([0xff])])
    fs.mkdirSync(bytes)
    const r = await execa('sh', ['-c', `cd "$(printf '${world.root}/bad\\377')" && exec node '${BIN}'`], {
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/true' },
      extendEnv: false,
      reject: false,
    })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toMatch(/current directory's path is not UTF-8 \(.*bad\uFFFD\).*rename the folder to a UTF-8 name/)
    expect(r.stderr).not.toMatch(/no longer exists/)
  })

  test.skipIf(!HAVE_BWRAP)('CLAUDEBOX_HOME not writable: 125, nothing half-written', async () => {
    const world = makeWorld()
    const locked = path.join(world.root, 'locked')
    fs.mkdirSync(locked, { mode: 0o500 })
    // Root ignores permission bits, so as root the state dir sits below a regular file instead.
    if (IS_ROOT) fs.writeFileSync(path.join(locked, 'file'), '')
    const claudeboxHome = IS_ROOT ? path.join(locked, 'file', 'state') : path.join(locked, 'state')
    const r = await claudebox(world, [], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_HOME: claudeboxHome, CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toMatch(/^claudebox: cannot (write|create) /)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  test('usage errors: 2', async () => {
    const world = makeWorld()
    const r = await claudebox(world, ['--check', '--gc'], { cwd: world.root })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^claudebox: option '--check' cannot be used with option '--gc'; see claudebox --help$/)
    const rel = await claudebox(world, ['--dry-run'], { cwd: world.root, env: { CLAUDEBOX_HOME: 'relative' } })
    expect(rel.exitCode).toBe(2)
  })

  // The cases of each file are unit tests (test/unit/config-file.test.ts); this shows that a refusal
  // reaches the user: one line naming the file and the key, status 2, nothing started.
  test('a config.json or .claudebox.json it cannot read: 2, naming the file and the key', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    fs.writeFileSync(path.join(repo, '.claudebox.json'), '{"netwrok": false}')
    const project = await claudebox(world, ['--', '-c', 'echo ran'], { cwd: repo, env })
    expect(project.exitCode).toBe(2)
    expect(project.stdout).toBe('')
    expect(project.stderr).toMatch(new RegExp(`^claudebox: ${repo}/\\.claudebox\\.json: unknown key "netwrok"; did you mean "network"\\?[^\\n]*$`))
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"network": "no"}')
    const config = await claudebox(world, ['--', '-c', 'echo ran'], { cwd: repo, env })
    expect(config.exitCode).toBe(2)
    expect(config.stdout).toBe('')
    expect(config.stderr).toBe(`claudebox: ${world.claudeboxHome}/config.json: "network" must be one of "open", "none", "allow"`)
  })

  test('--help and --version describe claudebox on stdout', async () => {
    const world = makeWorld()
    const tmp = tempDir()
    const help = await claudebox(world, ['--help'], { cwd: tmp })
    expect(help.exitCode).toBe(0)
    expect(help.stdout).toMatch(/^Usage: claudebox/)
    expect(help.stdout).toContain('--dry-run')
    const version = await claudebox(world, ['--version'], { cwd: tmp })
    expect(version.stdout).toMatch(/^claudebox \d+\.\d+\.\d+$/)
  })
})
