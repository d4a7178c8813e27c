// claudebox's stdout a pipe (relayed by the launcher: inherited-fds.ts) to a reader that does not
// read, as in `claudebox ... | (sleep 1000)`. The program ends and bwrap with it, but the launcher
// still holds output for the reader. A signal then (SIGTERM from `timeout`) was taken for one to
// forward to the gone program and ignored: only SIGKILL ended the launcher. Now it drops what is
// pending, cleans up, and ends by that signal; a signal the running program got ends it too once
// output still waits 2 s after bwrap's end. A reader that reads, however slowly, still gets it all.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { BIN, HAVE_BWRAP, instancePath, makeRepo, makeWorld, type World } from '../helpers/cli.js'

/** Processes whose command line names `marker` (what a launch under the test's HOME left running). */
function leftRunning(marker: string): string[] {
  return fs.readdirSync('/proc').filter(pid => /^\d+$/.test(pid) && Number(pid) !== process.pid).flatMap(pid => {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
      return cmdline.includes(marker) ? [`${pid} ${cmdline.slice(0, 120)}`] : []
    } catch {
      return []
    }
  })
}

/** The launcher's children (bwrap while it runs). */
const childrenOf = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
  } catch {
    return ''
  }
}

/** Whether process `pid` has `fifo` as its stdin. */
const readsFifo = (pid: number, fifo: string): boolean => {
  try {
    return fs.readlinkSync(`/proc/${pid}/fd/0`) === fifo
  } catch {
    return false
  }
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
  }
}

interface Launch {
  child: ChildProcess
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>
  stderr: () => string
  project: string
  /** The FIFO claudebox's stdout writes to; held open for reading (and never read) by the test. */
  fifo: string
  heldReader: number
}

/**
 * claudebox with stdout a FIFO that the test holds open and does not read. `pipeSize`: the FIFO
 * holds only that much (F_SETPIPE_SZ), so that what the program wrote waits in the launcher.
 */
function launchStalled(world: World, script: string, pipeSize?: number): Launch {
  const project = makeRepo(world.home, 'p')
  const fifo = path.join(world.root, 'out.fifo')
  execFileSync('mkfifo', [fifo])
  // Read and write: opens at once, and keeps a reader on the FIFO that never reads.
  const heldReader = fs.openSync(fifo, 'r+')
  if (pipeSize !== undefined) execFileSync('python3', ['-c', `import fcntl, os; fcntl.fcntl(os.open(${JSON.stringify(fifo)}, os.O_RDWR), 1031, ${pipeSize})`])
  const writer = fs.openSync(fifo, 'w')
  const child = spawn(process.execPath, [BIN, '--', '-c', script], {
    cwd: project,
    env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_DEBUG: '1' },
    stdio: ['ignore', writer, 'pipe'],
  })
  fs.closeSync(writer)
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(resolve => child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })))
  return { child, ended, stderr: () => stderr, project, fifo, heldReader }
}

/** Ends the launch whatever happened, so that a failed test leaves nothing behind. */
async function finish(launch: Launch): Promise<void> {
  if (launch.child.exitCode === null && launch.child.signalCode === null) launch.child.kill('SIGKILL')
  await launch.ended
  fs.closeSync(launch.heldReader)
}

/** The launcher's end, or undefined when it still runs `ms` later. */
const endWithin = (launch: Launch, ms: number): Promise<Awaited<Launch['ended']> | undefined> => Promise.race([launch.ended, sleep(ms).then(() => undefined)])

/** Cleaned up as usual: no session record, nothing running. */
function cleanedUp(world: World, launch: Launch): void {
  const sessions = path.join(instancePath(world, path.join(launch.project, '.git')), 'claudebox/sessions')
  expect(fs.readdirSync(sessions).filter(name => name.endsWith('.json'))).toEqual([])
  expect(leftRunning(world.root)).toEqual([])
}

// The program's `yes` fills every pipe on the way and is killed: the program ends, bwrap with it,
// and bwrap's pipe is still full. The marker is in the project, the one place outside it writes.
const FILL_AND_END = 'yes & sleep 1; kill $!; wait; touch program-ended'
// With a FIFO of one page, all of this waits in the launcher's memory: bwrap's pipe is at its end.
// Less than the launcher's buffer (16 KiB) takes before it stops reading: with 40,000 bytes the
// rest could stay in bwrap's pipe, and the session then never ended (flaky in CI as uid 1001).
const IN_THE_LAUNCHER = 'head -c 12000 /dev/zero; touch program-ended'

describe.skipIf(!HAVE_BWRAP)('a reader that does not read', () => {
  test.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s after bwrap has ended while output waits: the launcher drops it, cleans up and ends by the signal', async signal => {
    const world = makeWorld()
    const launch = launchStalled(world, FILL_AND_END)
    try {
      await until('the program to end and bwrap with it', () => fs.existsSync(path.join(launch.project, 'program-ended')) && childrenOf(launch.child.pid ?? 0) === '')
      // Still waiting for the reader (the case under test), then the signal.
      await sleep(300)
      expect(launch.child.exitCode, launch.stderr()).toBe(null)
      expect(launch.stderr()).not.toMatch(/the sandbox has ended/)
      launch.child.kill(signal)
      const sent = Date.now()
      const end = await endWithin(launch, 10_000)
      expect(end, `the launcher was still waiting 10 s after ${signal}:\n${launch.stderr()}`).toBeDefined()
      expect(end?.signal, launch.stderr()).toBe(signal)
      expect((end?.at ?? Infinity) - sent).toBeLessThan(5000)
      expect(launch.stderr()).toMatch(new RegExp(`${signal} after bwrap's end: the launcher ends by it, dropping any output`))
      cleanedUp(world, launch)
    } finally {
      await finish(launch)
    }
  }, 40_000)

  // The launcher has finished the session and only waits for the reader (bin/claudebox.js): its
  // signal handlers are gone, the signal's default ends it. (So it did before: kept as it is.)
  test('SIGTERM once the session is over and its output waits in the launcher: the launcher ends by it', async () => {
    const world = makeWorld()
    const launch = launchStalled(world, IN_THE_LAUNCHER, 4096)
    try {
      await until('the session to end', () => /the bookkeeping after the session is done/.test(launch.stderr()))
      await sleep(300)
      expect(launch.child.exitCode, launch.stderr()).toBe(null)
      launch.child.kill('SIGTERM')
      const end = await endWithin(launch, 10_000)
      expect(end?.signal, launch.stderr()).toBe('SIGTERM')
      cleanedUp(world, launch)
    } finally {
      await finish(launch)
    }
  }, 40_000)

  test('one SIGTERM while the program still runs (`timeout`): it reaches the program, and the launcher ends by it 2 s after bwrap', async () => {
    const world = makeWorld()
    const launch = launchStalled(world, 'yes | head -c 10000000')
    try {
      // The program blocks on the full pipe, as `yes` does behind `| (sleep 1000)`.
      await until('the program to run', () => /go given to the sandbox/.test(launch.stderr()))
      await sleep(500)
      launch.child.kill('SIGTERM')
      const end = await endWithin(launch, 15_000)
      expect(end, `the launcher was still waiting 15 s after SIGTERM:\n${launch.stderr()}`).toBeDefined()
      expect(end?.signal, launch.stderr()).toBe('SIGTERM')
      expect(launch.stderr()).toMatch(/forwarding SIGTERM to \d+/)
      cleanedUp(world, launch)
    } finally {
      await finish(launch)
    }
  }, 40_000)

  test('one SIGTERM that the program handles, its output all in the launcher: the launcher ends by it 2 s after bwrap', async () => {
    const world = makeWorld()
    const launch = launchStalled(world, `trap 'exit 0' TERM; ${IN_THE_LAUNCHER}; sleep 60 & wait`, 4096)
    try {
      await until('the program to write', () => fs.existsSync(path.join(launch.project, 'program-ended')))
      await sleep(500)
      launch.child.kill('SIGTERM')
      const sent = Date.now()
      const end = await endWithin(launch, 15_000)
      expect(end, `the launcher was still waiting 15 s after SIGTERM:\n${launch.stderr()}`).toBeDefined()
      expect(end?.signal, launch.stderr()).toBe('SIGTERM')
      // Not before the grace: a reader that only is slow gets it all meanwhile.
      expect((end?.at ?? 0) - sent).toBeGreaterThanOrEqual(1500)
      cleanedUp(world, launch)
    } finally {
      await finish(launch)
    }
  }, 40_000)
})

describe.skipIf(!HAVE_BWRAP)('a reader that reads gets all of the output', () => {
  /** claudebox's stdout through a FIFO to `wc -c`, which starts reading after `delay` seconds. */
  async function countRead(script: string, delay: number, pipeSize?: number): Promise<{ count: number; code: number | null; stderr: string }> {
    const world = makeWorld()
    const launch = launchStalled(world, script, pipeSize)
    const reader = spawn('sh', ['-c', `exec <"$0"; sleep ${delay}; exec wc -c`, launch.fifo], { stdio: ['ignore', 'pipe', 'inherit'] })
    let counted = ''
    reader.stdout.on('data', (chunk: Buffer) => (counted += chunk.toString()))
    const read = new Promise(resolve => reader.on('close', resolve))
    // Once the reader has the FIFO open, the test's own end can go.
    await until('the reader to open the FIFO', () => readsFifo(reader.pid ?? 0, launch.fifo), 10_000)
    fs.closeSync(launch.heldReader)
    launch.heldReader = fs.openSync('/dev/null', 'r')
    try {
      const end = await launch.ended
      await read
      return { count: Number(counted.trim()), code: end.code, stderr: launch.stderr() }
    } finally {
      await finish(launch)
    }
  }

  test('10 MB read as it comes: every byte', async () => {
    const r = await countRead('yes | head -c 10000000', 0)
    expect(r.code, r.stderr).toBe(0)
    expect(r.count).toBe(10_000_000)
  }, 40_000)

  test('a slow reader, 4 s late (past the 2 s grace), with the program and bwrap long gone: every byte', async () => {
    // A FIFO of one page: the output waits in the launcher and bwrap's pipe, the program ends.
    const r = await countRead('head -c 100000 /dev/zero; touch program-ended', 4, 4096)
    expect(r.code, r.stderr).toBe(0)
    expect(r.count).toBe(100_000)
  }, 40_000)

  test('a slow reader, 4 s late, of more than the pipes hold: every byte', async () => {
    const r = await countRead('yes | head -c 2000000', 4)
    expect(r.code, r.stderr).toBe(0)
    expect(r.count).toBe(2_000_000)
  }, 40_000)
})
