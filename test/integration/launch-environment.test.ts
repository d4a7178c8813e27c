// The launch environment claudebox refuses (a home it cannot use, a path with a newline) and the
// limits it sets on the sandbox; the real CLI, real bwrap and real git, as root and as a user.
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { probeCgroups } from '../../src/host/probe.js'
import { removeCgroups } from '../../src/host/cgroups.js'
import { BIN, claudebox, git, HAVE_BWRAP, inSandbox, instancePath, IS_ROOT, makeRepo, makeWorld, REPO, tempDir } from '../helpers/cli.js'

/** Every path under `dir` (to prove a refused launch created nothing). */
function tree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()
}

describe.skipIf(!HAVE_BWRAP)('a home claudebox cannot use', () => {
  const cases: [string, (root: string) => string][] = [
    ['/', () => '/'],
    ['missing', root => path.join(root, 'gone')],
    ['a file', root => {
      fs.writeFileSync(path.join(root, 'file'), '')
      return path.join(root, 'file')
    }],
    // Another user's: for root a directory given away, for a user a directory of root's.
    ['not owned', root => {
      if (!IS_ROOT) return '/usr/share'
      fs.mkdirSync(path.join(root, 'theirs'))
      fs.chownSync(path.join(root, 'theirs'), 65534, 65534)
      return path.join(root, 'theirs')
    }],
  ]
  test.each(cases)('HOME %s and no CLAUDEBOX_HOME: refused with 125, naming CLAUDEBOX_HOME, nothing created', async (_name, makeHome) => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const home = makeHome(world.root)
    const before = tree(world.root)
    const existedAtRoot = fs.existsSync('/.claudebox')
    const r = await claudebox(world, ['--', '-c', 'echo ran'], { cwd: repo, env: { HOME: home, CLAUDEBOX_HOME: undefined, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^claudebox: cannot keep claudebox's state in your home \(HOME=.*\): it .*; set CLAUDEBOX_HOME to a directory of your own/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(tree(world.root)).toEqual(before)
    expect(fs.existsSync('/.claudebox')).toBe(existedAtRoot)
  })

  test('HOME=/ with CLAUDEBOX_HOME set: refused, the empty home inside would hide the system', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const r = await claudebox(world, ['--', '-c', 'echo ran'], { cwd: repo, env: { HOME: '/', CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toMatch(/^claudebox: HOME=\/ cannot be the sandbox's home: it is \/, .*; set HOME to your home directory$/)
    expect(fs.existsSync(world.claudeboxHome)).toBe(false)
  })
})

describe.skipIf(!HAVE_BWRAP)('claudebox inside claudebox', () => {
  test('refused with 125 and one line saying why, never an internal error; with CLAUDEBOX unset the launch still fails cleanly', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const inner = `CLAUDEBOX_CLAUDE=/bin/sh ${process.execPath} ${BIN} -- -c 'echo NESTED'`
    const r = await claudebox(world, ['--ro-bind', REPO, '--', '-c', `${inner}; echo "status=$?"; env -u CLAUDEBOX ${inner}; echo "status=$?"`], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).not.toContain('NESTED')
    expect(r.stdout.match(/status=125/g)?.length).toBe(2)
    expect(r.stderr).toContain('claudebox: this is already inside a claudebox sandbox, which forbids nested ones (no user namespaces inside); run claudebox on the host')
    expect(r.stderr).not.toContain('internal error')
  })
})

describe.skipIf(!HAVE_BWRAP)('a project path with a newline', () => {
  test('a plain directory: refused with 125, the path escaped in the message', async () => {
    const world = makeWorld()
    const dir = path.join(world.home, 'a\nb')
    fs.mkdirSync(dir, { recursive: true })
    const r = await inSandbox(world, dir, 'echo ran')
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toBe(`claudebox: the project path ${JSON.stringify(dir)} (or its git dir) contains a newline, which claudebox does not support; rename the directory and rerun`)
    expect(fs.existsSync(world.claudeboxHome)).toBe(false)
  })

  test("a repository named to split git's output into other paths: refused, never misread", async () => {
    const world = makeWorld()
    const decoy = makeRepo(world.root, 'decoy')
    // git prints "<root>/x", "<decoy>", then the real git dirs: read line by line, the project
    // would look like <root>/x with its git dir in the decoy.
    const repo = makeRepo(world.root, `x\n${decoy}`)
    const r = await inSandbox(world, repo, 'echo ran')
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toContain(`the project path ${JSON.stringify(repo)} (or its git dir) contains a newline`)
    expect(fs.existsSync(world.claudeboxHome)).toBe(false)
    expect(git(decoy, 'status', '--porcelain')).toBe('')
  })

  test('a linked worktree whose repository path has a newline: refused too', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'm\nn')
    const wt = path.join(tempDir(), 'wt')
    git(repo, 'worktree', 'add', '-q', '-b', 'feature', wt)
    const r = await inSandbox(world, wt, 'echo ran')
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toContain(`the project path ${JSON.stringify(wt)} (or its git dir) contains a newline`)
  })
})

/** Starts `count` children that sleep, inside; prints how many started and how many were refused. */
const FORK_LOOP = `
import os, sys, time
started = refused = 0
kids = []
for i in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
    started += 1
print(f"{started} {refused}")
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
`

describe.skipIf(!HAVE_BWRAP)('resource limits', () => {
  test('a fork loop inside stops at --pids-limit, for root too (a pids cgroup) and for a user (RLIMIT_NPROC)', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    fs.writeFileSync(path.join(repo, 'fork.py'), FORK_LOOP)
    const r = await claudebox(world, ['--pids-limit', '40', '--', '-c', 'python3 fork.py 90'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    const [started, refused] = r.stdout.split(' ').map(Number)
    expect(started).toBeGreaterThan(0)
    expect(started).toBeLessThan(40)
    expect((started ?? 0) + (refused ?? 0)).toBe(90)
  })

  test("on a kernel without /proc/PID/task/TID/children the program is still put under the limit (red team: it ran outside the cgroup, unlimited)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    fs.writeFileSync(path.join(repo, 'fork.py'), FORK_LOOP)
    // As on a kernel built without CONFIG_PROC_CHILDREN: those files are not there for the launcher.
    const hide = path.join(world.root, 'no-children.cjs')
    fs.writeFileSync(
      hide,
      `const fs = require('node:fs'); const [read, exists] = [fs.readFileSync, fs.existsSync]; const hidden = p => typeof p === 'string' && /^\\/proc\\/[^/]+\\/task\\/\\d+\\/children$/.test(p)
fs.readFileSync = function (p, ...rest) { if (hidden(p)) throw Object.assign(new Error('ENOENT: ' + p), { code: 'ENOENT' }); return read.call(this, p, ...rest) }
fs.existsSync = function (p) { return hidden(p) ? false : exists.call(this, p) }`,
    )
    const r = await execa(process.execPath, ['-r', hide, BIN, '--pids-limit', '40', '--', '-c', 'python3 fork.py 90; grep -c claudebox- /proc/self/cgroup || true'], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 30_000 })
    expect(r.exitCode, r.stderr).toBe(0)
    const [counts = '', inCgroup] = r.stdout.split('\n')
    const [started, refused] = counts.split(' ').map(Number)
    expect(started).toBeGreaterThan(0)
    expect(started).toBeLessThan(40)
    expect((started ?? 0) + (refused ?? 0)).toBe(90)
    // Root's limit is its pids cgroup: the program is in it. A user's is RLIMIT_NPROC, no cgroup.
    if (IS_ROOT && probeCgroups()?.dirs.pids !== undefined) expect(inCgroup).toBe('1')
  })

  test('--pids-limit and "pidsLimit" above what a pids cgroup takes are refused at once (status 2), not at the launch', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const cli = await claudebox(world, ['--pids-limit', '5000000', '--', '-c', 'echo ran'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(cli.exitCode).toBe(2)
    expect(cli.stdout).toBe('')
    expect(cli.stderr).toMatch(/--pids-limit 5000000: give a whole number of processes up to 4194304/)
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), JSON.stringify({ pidsLimit: 5_000_000 }))
    const config = await claudebox(world, ['--', '-c', 'echo ran'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(config.exitCode).toBe(2)
    expect(config.stdout).toBe('')
    expect(config.stderr).toMatch(/"pidsLimit" must be a whole number of processes up to 4194304/)
  })

  test("cgroups left by SIGKILLed launchers: one still holding a process does not stop a later launcher with its pid, an empty one whose launcher is gone is removed (root's pids cgroup)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    // The shell makes claudebox-<its pid>, as a killed launcher left it (in CI here: with a sandbox
    // init that outlived its bwrap), puts a process in it, then becomes the launcher (same pid). A
    // user without a pids cgroup of its own launches the same way, without one.
    const parent = probeCgroups()?.dirs.pids
    const left = path.join(world.root, 'left-pid')
    const stale = IS_ROOT && parent !== undefined ? `mkdir ${parent}/claudebox-$$ && { sleep 60 </dev/null >/dev/null 2>&1 & echo $! > ${left}; } && cat ${left} > ${parent}/claudebox-$$/cgroup.procs && ` : ''
    if (IS_ROOT && process.env['CI']) expect(stale).not.toBe('')
    const script = `${stale}exec "${process.execPath}" "${BIN}" -- -c 'echo RAN'`
    // And an empty one whose launcher is gone (a pid no process has now): the launch removes it.
    const gone = execFileSync('sh', ['-c', 'sh -c "echo \\$\\$"'], { encoding: 'utf8' }).trim()
    const empty = parent === undefined ? undefined : path.join(parent, `claudebox-${gone}-zz`)
    if (IS_ROOT && empty !== undefined && !fs.existsSync(`/proc/${gone}`)) fs.mkdirSync(empty)
    const r = await execa('sh', ['-c', script], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 30_000 })
    if (fs.existsSync(left)) {
      const pid = Number(fs.readFileSync(left, 'utf8'))
      const cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      process.kill(pid, 'SIGKILL')
      expect(cgroup).toMatch(/claudebox-\d+\n/)
      const dir = path.join(parent as string, `claudebox-${/claudebox-(\d+)\n/.exec(cgroup)?.[1]}`)
      for (let attempt = 0; attempt < 50 && fs.existsSync(dir); attempt++) {
        try {
          fs.rmdirSync(dir)
        } catch {
          await new Promise(resolve => setTimeout(resolve, 20))
        }
      }
    }
    if (empty !== undefined && IS_ROOT) expect(fs.existsSync(empty), 'the empty cgroup of a launcher that is gone').toBe(false)
    expect(r.stderr).not.toMatch(/EEXIST|EBUSY/)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('RAN')
  })

  test("the limits' cgroup (cgroups.ts): during the session the sandbox is in it, the program and what it started too, never the launcher, with the exact limit; a launch that stops before bwrap leaves no cgroup (root's pids cgroup)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const parent = probeCgroups()?.dirs.pids
    if (IS_ROOT && process.env['CI']) expect(parent).toBeDefined()
    // Other tests launch meanwhile: only the cgroups named after this test's launchers count.
    const ours = (pid: number | undefined): string[] => (parent === undefined ? [] : fs.readdirSync(parent).filter(name => name.startsWith(`claudebox-${pid}-`)))
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }
    const child = execa(process.execPath, [BIN, '--pids-limit', '50', '--', '-c', 'sleep 30 & for i in $(seq 1000); do [ "$(cat /proc/$!/comm)" = sleep ] && break; done; echo started; read _; kill $!'], { cwd: repo, env, extendEnv: false, reject: false, timeout: 30_000, stdin: 'pipe' })
    await new Promise<void>(resolve => child.stdout?.once('data', () => resolve()))
    const launcherCgroup = fs.readFileSync(`/proc/${child.pid}/cgroup`, 'utf8')
    const during = ours(child.pid)
    const inside = during.map(name => fs.readFileSync(path.join(parent as string, name, 'cgroup.procs'), 'utf8').trim().split('\n').map(Number))
    const limits = during.map(name => fs.readFileSync(path.join(parent as string, name, 'pids.max'), 'utf8').trim())
    const commands = (inside[0] ?? []).map(pid => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' '))
    child.stdin?.end('\n')
    const r = await child
    expect(r.exitCode, String(r.stderr)).toBe(0)
    expect(launcherCgroup).toBe(fs.readFileSync('/proc/self/cgroup', 'utf8'))
    if (IS_ROOT && parent !== undefined) {
      expect(during).toHaveLength(1)
      expect(limits).toEqual(['50'])
      expect(inside[0]).not.toContain(child.pid)
      // bwrap and the sandbox's init (a bwrap too), the network bridge, the program and its sleep
      expect(commands.filter(command => command.startsWith('/usr/bin/bwrap '))).toHaveLength(2)
      expect(inside[0]).toHaveLength(5)
      expect(commands).toContain('sleep 30')
      expect(commands.some(command => command.includes('-c sleep 30 & for i in'))).toBe(true)
    }
    // Stopped after the join started, before bwrap (its session store cannot be made): no cgroup left.
    fs.rmSync(path.join(world.claudeboxHome, 'session-stores'), { recursive: true, force: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'session-stores'), '')
    const stopped = execa(process.execPath, [BIN, '--', '-c', 'echo ran'], { cwd: repo, env, extendEnv: false, reject: false, timeout: 30_000 })
    const failed = await stopped
    expect(failed.exitCode, String(failed.stderr)).toBe(125)
    expect(failed.stdout).toBe('')
    expect(ours(stopped.pid)).toEqual([])
  })

  test("a launcher in another pid namespace leaves a live launch's cgroup alone while that one prepares (red team, round 52: it took it for a gone launcher's and removed it, and the launch failed)", async () => {
    const parent = probeCgroups()?.dirs.pids
    if (IS_ROOT && process.env['CI']) expect(parent).toBeDefined()
    if (!IS_ROOT || parent === undefined) return // a user has no pids cgroup to share
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    // A slow preparation (5,000 files of the shared tier copied in): the cgroup is made, and empty, meanwhile.
    const big = path.join(world.claudeboxHome, 'shared/skills/big')
    fs.mkdirSync(big, { recursive: true })
    for (let i = 0; i < 5000; i++) fs.writeFileSync(path.join(big, `f${i}.md`), 'x')
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }
    const slow = execa(process.execPath, [BIN, '--', '-c', 'echo RAN'], { cwd: repo, env, extendEnv: false, reject: false, timeout: 45_000 })
    const ours = (): string[] => fs.readdirSync(parent).filter(name => name.startsWith(`claudebox-${slow.pid}-`))
    for (let i = 0; i < 2000 && ours().length === 0 && slow.exitCode === null; i++) await new Promise(resolve => setTimeout(resolve, 2))
    expect(ours()).toHaveLength(1)
    // A whole launch in a pid namespace of its own (its /proc has none of the host's pids), whose clean-up runs meanwhile.
    const other = makeWorld()
    const otherRepo = makeRepo(other.root, 'q')
    const nested = await execa('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, BIN, '--', '-c', 'echo NESTED'], { cwd: otherRepo, env: { ...other.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 30_000 })
    expect(nested.stdout, nested.stderr).toBe('NESTED')
    expect(slow.exitCode).toBeNull() // still preparing: the test proves nothing otherwise
    const r = await slow
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('RAN')
  })

  test("two sessions of one project whose launchers have the same pid (each pid 1 in a pid namespace of its own) have stores and records of their own: the first to end leaves the other's (red team, rounds 53 and 54)", async () => {
    if (!IS_ROOT) return // a pid namespace of one's own takes root here (a user gets none: no unshare of pids)
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }
    const stores = path.join(world.claudeboxHome, 'session-stores')
    const launch = (script: string) => execa('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, BIN, '--', '-c', script], { cwd: repo, env, extendEnv: false, reject: false, timeout: 30_000 })
    // The first one's program waits for a file the test makes once the second has ended.
    const go = path.join(repo, 'go') // the project: what the sandbox sees of the host
    const first = launch(`echo started; for i in $(seq 200); do [ -e ${go} ] && break; sleep 0.05; done; echo ended`)
    await new Promise<void>(resolve => first.stdout?.once('data', () => resolve()))
    const during = fs.readdirSync(stores)
    expect(during).toHaveLength(1)
    const [instance = ''] = fs.readdirSync(path.join(world.claudeboxHome, 'instances'))
    const records = path.join(world.claudeboxHome, 'instances', instance, 'claudebox/sessions')
    expect(fs.readdirSync(records)).toHaveLength(1)
    const second = await launch('echo second')
    expect(second.stdout, second.stderr).toBe('second')
    expect(fs.existsSync(path.join(stores, during[0] as string)), "the first session's store, once the second has ended").toBe(true)
    // Its record too (red team, round 54: the second took it for its own stale one and removed it).
    expect(fs.readdirSync(records), "the first session's record, once the second has ended").toHaveLength(1)
    fs.writeFileSync(go, '')
    const r = await first
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('started\nended')
  })

  test("a /proc of another pid namespace (unshare --pid without --mount-proc) is refused with the fix, nothing runs (red team, round 53: every pid claudebox looked up there named another process)", async () => {
    if (!IS_ROOT) return // a pid namespace of one's own takes root here
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const r = await execa('unshare', ['--pid', '--fork', process.execPath, BIN, '--', '-c', 'echo RAN'], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 30_000 })
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^claudebox: the \/proc mounted here belongs to another pid namespace .*; mount a \/proc for this one \(unshare --mount-proc\) and rerun$/)
  })

  test("a SIGTERM while the launcher prepares, once it has made the limits' cgroup: it removes it, dies of the signal, nothing ran (root's pids cgroup)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const parent = probeCgroups()?.dirs.pids
    if (IS_ROOT && process.env['CI']) expect(parent).toBeDefined()
    // Copying 5,000 files of the shared tier into the instance makes the preparation take 0.3 to 7 s
    // (machines differ): the signal is handled once it is done, so execa must not SIGKILL meanwhile.
    const big = path.join(world.claudeboxHome, 'shared/skills/big')
    fs.mkdirSync(big, { recursive: true })
    for (let i = 0; i < 5000; i++) fs.writeFileSync(path.join(big, `f${i}.md`), 'x')
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }
    const child = execa(process.execPath, [BIN, '--', '-c', `touch ${world.root}/ran`], { cwd: repo, env, extendEnv: false, reject: false, timeout: 45_000, forceKillAfterDelay: 40_000 })
    const ours = (): string[] => (parent === undefined ? [] : fs.readdirSync(parent).filter(name => name.startsWith(`claudebox-${child.pid}-`)))
    // Root: as soon as its cgroup is there; a user (no cgroup) 100 ms in, as well within the preparation.
    const joins = IS_ROOT && parent !== undefined
    for (let i = 0; i < (joins ? 2000 : 50) && ours().length === 0 && child.exitCode === null; i++) await new Promise(resolve => setTimeout(resolve, 2))
    if (joins) expect(ours()).toHaveLength(1)
    child.kill('SIGTERM')
    const r = await child
    expect(r.signal ?? r.exitCode, String(r.stderr)).toBeOneOf(['SIGTERM', 143])
    expect(fs.existsSync(path.join(world.root, 'ran'))).toBe(false)
    expect(ours()).toEqual([])
  })

  test("what is still in a limits' cgroup after bwrap's end is killed and the cgroup goes (an orphaned sandbox init kept one for ever; root's pids cgroup)", async () => {
    const parent = probeCgroups()?.dirs.pids
    if (IS_ROOT && process.env['CI']) expect(parent).toBeDefined()
    if (parent === undefined) return // a user without a pids cgroup of its own has none to leave behind
    const dir = path.join(parent, `claudebox-test-${process.pid}-${Date.now()}`)
    fs.mkdirSync(dir)
    const orphan = execa('sleep', ['60'], { reject: false })
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(orphan.pid))
    const started = Date.now()
    await removeCgroups([{ dir }])
    expect(fs.existsSync(dir)).toBe(false)
    expect(Date.now() - started).toBeLessThan(1000)
    expect((await orphan).signal).toBe('SIGKILL')
  })

  test('by default every sandbox has a process limit, and --dry-run and --check say which', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    const how = IS_ROOT ? 'pids cgroup' : "RLIMIT_NPROC in the sandbox's user namespace"
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env })
    expect(dry.stdout).toContain(`# limit: processes: at most 4096 inside (${how})\n`)
    const check = await claudebox(world, ['--check'], { cwd: repo, env })
    expect(check.stdout).toContain(`ok   limit: processes: at most 4096 inside (${how})\n`)
    if (!IS_ROOT) {
      const r = await inSandbox(world, repo, 'grep "^Max processes" /proc/self/limits')
      expect(r.stdout).toMatch(/^Max processes +4096 +4096 +processes/)
    }
  })

  test('--memory-limit: enforced where a memory cgroup can be used, else refused with 125 and nothing started', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    // Writes 256 MiB (a bytearray of zeros would not touch its pages).
    const grow = `python3 -c "b = b'x' * (256 << 20); print(len(b))"`
    const r = await claudebox(world, ['--memory-limit', '64M', '--', '-c', grow], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    if (probeCgroups()?.dirs.memory !== undefined) {
      expect(r.stdout).toBe('')
      expect(r.exitCode).toBe(137) // the kernel's OOM killer, inside the sandbox's cgroup
      const unlimited = await claudebox(world, ['--', '-c', grow], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
      expect(unlimited.stdout).toBe(String(256 << 20))
    } else {
      expect(r.exitCode).toBe(125)
      expect(r.stderr).toMatch(/^claudebox: --memory-limit cannot be enforced here: no memory cgroup .*; remove the option to launch without it$/)
      expect(r.stdout).toBe('')
    }
  })

  test('--cpu-limit: the quota is written where a cpu cgroup can be used, else refused with 125', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.root, 'p')
    const script = 'touch ready; i=0; while [ ! -e done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done'
    const session = claudebox(world, ['--cpu-limit', '0.5', '--', '-c', script], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    const parent = probeCgroups()?.dirs.cpu
    if (parent === undefined) {
      const r = await session
      expect(r.exitCode).toBe(125)
      expect(r.stderr).toMatch(/^claudebox: --cpu-limit cannot be enforced here: no cpu cgroup /)
      return
    }
    for (let i = 0; i < 600 && !fs.existsSync(path.join(repo, 'ready')); i++) await new Promise(resolve => setTimeout(resolve, 100))
    const children = fs.readdirSync(parent).filter(name => name.startsWith('claudebox-'))
    const quotas = children.map(name => {
      const dir = path.join(parent, name)
      return fs.existsSync(path.join(dir, 'cpu.max')) ? fs.readFileSync(path.join(dir, 'cpu.max'), 'utf8').trim() : fs.readFileSync(path.join(dir, 'cpu.cfs_quota_us'), 'utf8').trim()
    })
    fs.writeFileSync(path.join(repo, 'done'), '')
    expect((await session).exitCode).toBe(0)
    expect(quotas.some(q => q === '50000' || q === '50000 100000')).toBe(true)
    // Removed after the session.
    expect(fs.readdirSync(parent).filter(name => children.includes(name))).toEqual([])
  })
})

describe.skipIf(!HAVE_BWRAP)('state that cannot be written or read: one line saying why and what to do (red team, round 94)', () => {
  test('a full disk while the first launch records a Console login it copies: the reason, never an internal error; the user\'s own login unchanged', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const account = JSON.stringify({ primaryApiKey: 'sk-ant-api03-x', hasCompletedOnboarding: true })
    fs.writeFileSync(path.join(world.home, '.claude.json'), account)
    fs.mkdirSync(world.claudeboxHome)
    // A tmpfs of 256 KiB as claudebox's home, filled up but for a few bytes, in a mount namespace of the test's own.
    const fill = `mount -t tmpfs -o size=256k none '${world.claudeboxHome}' && mkdir -p '${world.claudeboxHome}/shared/credentials' && (head -c 1000000 /dev/zero > '${world.claudeboxHome}/fill' 2>/dev/null; true)`
    const r = await execa('unshare', ['-rm', 'sh', '-c', `${fill} && cd '${repo}' && exec '${process.execPath}' '${BIN}' --yes -- -c true`], { env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toMatch(/^claudebox: could not record your Claude Code login's copy in .* \(ENOSPC\); free some space there or make it writable, and rerun/m)
    expect(r.stderr).not.toContain('internal error')
    expect(fs.readFileSync(path.join(world.home, '.claude.json'), 'utf8')).toBe(account)
  })

  test("CLAUDEBOX_HOME leading into ~/.claude through a link is refused (2), and nothing of ~/.claude moves (red team, round 95: the first launch moved the login out as the bash claudebox's)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const claudeDir = path.join(world.home, '.claude')
    fs.mkdirSync(claudeDir)
    fs.writeFileSync(path.join(claudeDir, '.credentials.json'), '{"claudeAiOauth":{}}')
    fs.writeFileSync(path.join(claudeDir, 'CLAUDE.md'), 'mine\n')
    fs.symlinkSync('.claude', path.join(world.home, 'cblink'))
    const r = await claudebox(world, ['--yes', '--', '-c', 'true'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_HOME: path.join(world.home, 'cblink') } })
    expect(r.exitCode, r.stderr).toBe(2)
    expect(r.stderr).toContain("CLAUDEBOX_HOME must not be Claude Code's own folder")
    expect(fs.readdirSync(claudeDir).sort()).toEqual(['.credentials.json', 'CLAUDE.md'])
  })

  test.skipIf(IS_ROOT)("an instance whose project-root you cannot read (a sudo claudebox's): told to make it yours again, not to move it away with its conversations", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const rootFile = path.join(instancePath(world, `${repo}/.git`), 'project-root')
    fs.chmodSync(rootFile, 0)
    const r = await inSandbox(world, repo, 'echo ran')
    fs.chmodSync(rootFile, 0o600)
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toMatch(/holds a project-root you cannot read \(EACCES; a sudo claudebox leaves root's files\): make the instance yours again \(chown -R\) and rerun/)
  })
})
