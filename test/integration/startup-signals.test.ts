// The sandbox runs its program only on the launcher's go (plan.ts GO_FD), given once the session
// is recorded and its servers listen. A signal that reaches the launcher first, even in the
// milliseconds right after bwrap is spawned, abandons the launch: the program never runs
// unsupervised, nothing is left running. And the sandbox holds none of the launcher's descriptors.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, FIXTURES, HAVE_BWRAP, makeRepo, makeWorld, requiredTool, type World } from '../helpers/cli.js'

const HAVE_CC = requiredTool('cc', ['--version'], 'a C compiler (cc) for the tracer fixture')

/** Processes whose command line names `marker` (what a launch under the test's HOME left running). */
function leftRunning(marker: string): string[] {
  return fs.readdirSync('/proc').filter(pid => /^\d+$/.test(pid)).flatMap(pid => {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
      return cmdline.includes(marker) ? [`${pid} ${cmdline.slice(0, 120)}`] : []
    } catch {
      return []
    }
  })
}

/** A process's state letter (R, S, T ...), or undefined once it is gone. */
function stateOf(pid: number | undefined): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0]
  } catch {
    return undefined
  }
}

/**
 * Runs `script` (by /bin/sh) in a fresh project, with the launcher in a process group of its own
 * (the session signals its group, which must not be the test runner's): once the launcher is
 * stopped, `holdMs` later nothing of the session may have made `after-stop`; then the whole job
 * is continued, as the shell's fg does, and the session ends well, having made it.
 */
/**
 * `file args` in a session of its own (a sandbox's kill(0, SIGTSTP) reaches the launcher's whole
 * process group: never the test runner's), with CLAUDEBOX_CLAUDE=/bin/sh and debug lines; what it
 * wrote so far, and its end.
 */
function detached(world: World, project: string, file: string, args: string[]): { child: ChildProcess; out: { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(file, args, { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_DEBUG: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const out = { stdout: '', stderr: '' }
  child.stdout?.on('data', (chunk: Buffer) => void (out.stdout += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => void (out.stderr += chunk.toString()))
  return { child, out, exited: new Promise(resolve => child.on('close', resolve)) }
}

async function stopAndResume(script: string, holdMs: number, prepare: (project: string) => void = () => {}): Promise<void> {
  const world = makeWorld()
  const project = makeRepo(world.home, 'p')
  prepare(project)
  const { child, out, exited } = detached(world, project, process.execPath, [BIN, '--', '-c', script])
  try {
    for (const end = Date.now() + 20_000; stateOf(child.pid) !== 'T'; await sleep(20)) if (Date.now() > end) throw new Error(`the launcher never stopped: ${out.stderr}`)
    await sleep(holdMs)
    expect(fs.existsSync(path.join(project, 'after-stop')), `the session ran on while the launcher was stopped: ${out.stderr}`).toBe(false)
    process.kill(-(child.pid ?? 0), 'SIGCONT')
    expect(await exited, out.stderr).toBe(0)
    expect(fs.existsSync(path.join(project, 'after-stop'))).toBe(true)
  } finally {
    if (stateOf(child.pid) !== undefined) process.kill(-(child.pid ?? 0), 'SIGKILL')
  }
}

describe.skipIf(!HAVE_BWRAP)('signals while the sandbox starts', () => {
  test.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s as soon as bwrap is spawned: the program never runs, nothing is left', async signal => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const marker = path.join(world.root, 'program-ran')
    // Python polls without sleeping (a JavaScript timer is too slow for the window right after the
    // fork) and signals the launcher the moment its child is bwrap.
    const race = [
      'import os, signal, subprocess, sys, time',
      'p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
      'f = "/proc/%d/task/%d/children" % (p.pid, p.pid)',
      'deadline = time.time() + 20',
      'def bwrap_started():',
      '    for kid in open(f).read().split():',
      '        try:',
      '            if b"bwrap" in open("/proc/%s/cmdline" % kid, "rb").read().split(b"\\0")[0]: return True',
      '        except OSError: pass',
      '    return False',
      'while time.time() < deadline and p.poll() is None:',
      '    try:',
      '        if bwrap_started(): break',
      '    except OSError: break',
      'p.send_signal(getattr(signal, sys.argv[1]))',
      'print(p.wait())',
    ].join('\n')
    for (let attempt = 0; attempt < 4; attempt++) {
      const run = spawnSync('python3', ['-c', race, signal, process.execPath, BIN, '--', '-c', `sleep 0.5; touch ${marker}`], { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
      expect(run.stdout.trim(), run.stderr).not.toBe('0')
      await sleep(800)
      expect(fs.existsSync(marker), `attempt ${attempt}: the program ran`).toBe(false)
      expect(leftRunning(world.root)).toEqual([])
    }
  }, 60_000)

  // After the go but before bwrap has reported the sandbox's init: a signal then went to bwrap
  // itself, and a bwrap killed that early can leave its sandbox running (seen under load in CI: the
  // launcher waited for ever on the pipes the sandbox held, and the program ran unsupervised). The
  // fixture's bwrap reports 2 s late and, killed, leaves the real bwrap behind, as that race did.
  test('SIGTERM after the go, before bwrap reports the sandbox: it reaches the program, nothing is left', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const marker = path.join(world.root, 'program-ran')
    const lateBwrap = path.resolve('test/fixtures/bwrap-late-info.py')
    const child = spawn(process.execPath, [BIN, '--network=open', '--', '-c', `sleep 2; touch ${marker}`], {
      cwd: project,
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_BWRAP: lateBwrap, CLAUDEBOX_DEBUG: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    const exited = new Promise<number | null>(resolve => child.on('close', resolve))
    child.stderr.on('data', (chunk: Buffer) => {
      const before = stderr
      stderr += chunk.toString()
      if (!before.includes('go given') && stderr.includes('go given to the sandbox')) child.kill('SIGTERM')
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    const status = await exited
    clearTimeout(timer)
    expect(status, stderr).toBe(143)
    await sleep(2500)
    expect(fs.existsSync(marker), 'the program ran to its end').toBe(false)
    expect(leftRunning(world.root)).toEqual([])
    expect(stderr).toMatch(/forwarding SIGTERM to \d+\n/)
  }, 40_000)

  test("a stop (SIGTSTP: the session can make any key the terminal's suspend character) while git is checked after the session: ignored, the checks and their warnings run to the end (red team, round 75: the launcher stopped before them and the shell's git status ran what the session planted)", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const child = spawn(process.execPath, [BIN, '--', '-c', 'git init -q nested && mkdir -p many && cd many && seq 20000 | xargs mkdir'], {
      cwd: project,
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_DEBUG: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let [stderr, stopped] = ['', false]
    const exited = new Promise<number | null>(resolve => child.on('close', resolve))
    child.stderr.on('data', (chunk: Buffer) => {
      const before = stderr
      stderr += chunk.toString()
      if (before.includes('signals held') || !stderr.includes('signals held')) return
      child.kill('SIGTSTP')
      // Stopped (the state in /proc), the launcher would never end: note it and let it go on.
      setTimeout(() => {
        stopped = stateOf(child.pid) === 'T'
        child.kill('SIGCONT')
      }, 200)
    })
    // Only a launcher that never ends is killed: the checks over 20,000 folders took 18 s on a loaded machine.
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000)
    const status = await exited
    clearTimeout(timer)
    expect(stopped).toBe(false)
    expect(status, stderr).toBe(0)
    expect(stderr).toContain('the session created or changed nested git repositories')
  }, 120_000)

  test("a session that stops its process group (kill -s TSTP 0, as Claude Code's Ctrl-Z does) and ignores the stop itself: the launcher stops every process of the sandbox before it stops, and at fg the session goes on (red team, round 76: it ran on unwatched while the shell's git status ran what it planted)", async () => {
    // The session acts five seconds after its stop: the launcher's handler comes a few milliseconds after the
    // signal, and may wait up to 3 s for a process in a system call it cannot leave at once (a loaded machine).
    await stopAndResume("trap '' TSTP; kill -s TSTP 0; sleep 5; touch after-stop", 5500)
  }, 40_000)

  test.runIf(HAVE_CC)("a stop while a tracer inside resumes the process it traces at every stop: the launcher stops only once that process is seen stopped too (red team, round 77: it ran on while the launcher was stopped)", async () => {
    // Past the 2 s after which the traced process, running, makes its file.
    await stopAndResume("trap '' TSTP; ./.tracer after-stop 2000 300 & sleep 0.3; kill -s TSTP 0; wait", 3000, project =>
      execFileSync('cc', ['-O1', '-o', path.join(project, '.tracer'), path.join(FIXTURES, 'tracer.c')]),
    )
  }, 40_000)

  test("a stop while a process of the session runs a thread after its main thread has exited (its /proc state then reads Z): that thread is stopped too before the launcher stops (red team, round 78: it ran on and planted)", async () => {
    // The main thread leaves by the exit system call (60 on x86_64, 93 on aarch64), its process and the other thread stay.
    const python = [
      'import ctypes, os, signal, threading, time',
      'signal.signal(signal.SIGTSTP, signal.SIG_IGN)',
      "threading.Thread(target=lambda: (time.sleep(2), open('after-stop', 'w'))).start()",
      "ctypes.CDLL(None).syscall(93 if os.uname().machine == 'aarch64' else 60, 0)",
    ].join('\n')
    // Past the 2 s after which the thread, running, makes its file.
    await stopAndResume("trap '' TSTP; python3 .leader.py & sleep 0.5; kill -s TSTP 0; sleep 4", 3000, project => fs.writeFileSync(path.join(project, '.leader.py'), `${python}\n`))
  }, 40_000)

  // What the kernel would wake while the launcher is stopped. SIGCONT resumes a stopped process
  // however it was stopped (red team, round 79: it resumed and planted while the launcher was
  // stopped). SIGKILL ends one, and a process group its death leaves orphaned with stopped members
  // gets SIGCONT from the kernel (round 80: a child in a session of its own planted so); this timer
  // would fire only after the test, it is there that counts. A session leader whose own terminal
  // hangs up gets SIGHUP and SIGCONT (round 81: the pty's master was left to the kernel's garbage
  // collector of unix sockets, which closed it when the host next released a socket).
  const TIMER = (signal: string, times: string): string[] => [
    'import ctypes, signal, struct',
    'libc = ctypes.CDLL(None, use_errno=True)',
    `event = ctypes.create_string_buffer(struct.pack('QiI', 0, ${signal}, 0) + bytes(48))`,
    'timer = ctypes.c_void_p()',
    'assert libc.timer_create(1, event, ctypes.byref(timer)) == 0',
    `assert libc.timer_settime(timer, 0, ctypes.create_string_buffer(struct.pack('qqqq', ${times})), None) == 0`,
  ]
  const OWN_TERMINAL = ['import fcntl, os, termios', 'os.setsid()', 'master, slave = os.openpty()', 'fcntl.ioctl(slave, termios.TIOCSCTTY, 0)', "assert open('/proc/self/stat').read().split(') ')[1].split()[4] != '0'"]
  test.each([
    ['holds a timer that sends it SIGCONT', TIMER('signal.SIGCONT', '0, 300_000_000, 0, 300_000_000')],
    ['holds a timer that sends it SIGKILL', TIMER('signal.SIGKILL', '0, 0, 60, 0')],
    ['leads a session of its own with a terminal of its own', OWN_TERMINAL],
  ])('a stop while a process of the session %s: refused, the launcher does not stop and the whole session goes on watched, the shell that stopped itself too', async (_what, setUp) => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const python = ['import signal, time', 'signal.signal(signal.SIGCONT, lambda *a: None)', 'signal.signal(signal.SIGTSTP, signal.SIG_IGN)', ...setUp, "open('set-up', 'w')", 'time.sleep(4)'].join('\n')
    fs.writeFileSync(path.join(project, '.wake.py'), `${python}\n`)
    const { child, out, exited } = detached(world, project, process.execPath, [BIN, '--', '-c', 'python3 .wake.py & while [ ! -e set-up ]; do sleep 0.05; done; kill -s TSTP 0; wait; echo done'])
    let everStopped = false
    try {
      for (const end = Date.now() + 15_000; stateOf(child.pid) !== undefined && Date.now() < end; await sleep(20)) everStopped ||= stateOf(child.pid) === 'T'
      if (everStopped) process.kill(-(child.pid ?? 0), 'SIGCONT')
      expect(everStopped, out.stderr).toBe(false)
      expect(await exited, out.stderr).toBe(0)
      expect(out.stdout.trim()).toBe('done')
      expect(out.stderr).toMatch(/SIGTSTP refused: processes of the sandbox the kernel may wake/)
    } finally {
      if (stateOf(child.pid) !== undefined) process.kill(-(child.pid ?? 0), 'SIGKILL')
    }
  }, 40_000)

  test("a stop the session keeps busy (a one-shot SIGCONT timer every millisecond) while it plants a .git at the top of a folder that is no repository: refused at once, and the git watch moves what it planted aside meanwhile (red team, round 81: the launcher's loop held the watch for its whole 10 s, and a git run then took the plant)", async () => {
    const world = makeWorld()
    const project = path.join(world.home, 'plain')
    fs.mkdirSync(project, { recursive: true })
    // 3,000 timers from 300 ms on, a millisecond apart; the stop at 350 ms, the plant at 650 ms,
    // and at 1,650 ms the session itself looks whether the plant is still there.
    const python = [
      'import ctypes, os, signal, struct, time',
      'signal.signal(signal.SIGTSTP, signal.SIG_IGN)',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'class timespec(ctypes.Structure): _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]',
      'now = timespec(); libc.clock_gettime(1, ctypes.byref(now)); start = now.s * 10**9 + now.ns + 300 * 10**6',
      "event = ctypes.create_string_buffer(struct.pack('QiI', 0, signal.SIGCONT, 0) + bytes(48))",
      'for i in range(3000):',
      '    timer = ctypes.c_void_p()',
      '    assert libc.timer_create(1, event, ctypes.byref(timer)) == 0',
      '    at = start + i * 10**6',
      "    libc.timer_settime(timer, 1, ctypes.create_string_buffer(struct.pack('qqqq', 0, 0, at // 10**9, at % 10**9)), None)",
      "open('dotgit.tmp', 'w').write('gitdir: elsewhere\\n')",
      'time.sleep(0.35); os.kill(0, signal.SIGTSTP); time.sleep(0.3)',
      "os.rename('dotgit.tmp', '.git'); time.sleep(1)",
      "open('plant-after-1s', 'w').write('there' if os.path.lexists('.git') else 'gone')",
    ].join('\n')
    fs.writeFileSync(path.join(project, '.spin.py'), `${python}\n`)
    // As a job of a shell with job control, as in a terminal: its process group is not orphaned, so
    // the group's SIGTSTP stops bwrap by default (a refused stop continued only the sandbox, and
    // the launcher waited for the stopped bwrap for ever).
    const { child, out, exited } = detached(world, project, 'bash', ['-c', 'set -m; "$0" "$1" -- -c "python3 .spin.py"', process.execPath, BIN])
    const timer = setTimeout(() => process.kill(-(child.pid ?? 0), 'SIGKILL'), 25_000)
    try {
      expect(await exited, out.stderr).toBe(0)
    } finally {
      clearTimeout(timer)
    }
    expect(out.stderr).toMatch(/SIGTSTP refused/)
    expect(fs.readFileSync(path.join(project, 'plant-after-1s'), 'utf8')).toBe('gone')
    expect(out.stderr).toMatch(/moved aside[^\n]*plain\/\.git -> /)
  }, 40_000)

  test.each(['allow', 'none', 'open'])('--network=%s: the sandbox holds no descriptor of the launcher', async network => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const r = await claudebox(world, [`--network=${network}`, '--', '-c', 'ls /proc/self/fd'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    // 0-2 and ls's own directory handle (3); nothing from the launcher's range (4 and up).
    expect(r.stdout.split('\n').map(Number).filter(fd => fd >= 4 && fd < 64)).toEqual([])
  })
})
