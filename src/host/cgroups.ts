// The cgroups of bwrap's limits (sandbox/limits.ts plans them, host/probe.ts finds their parents).
// They are made before bwrap starts; bwrap, the sandbox's init and its gate are moved into them
// once the gate says the sandbox is built, then the limits are written, then the go (nothing of
// the program runs earlier, and all it starts is inside). The launcher itself never joins them:
// they never count it, and a small memory limit cannot kill it.
// Moving is the slow part: the kernel's first move of a process into a cgroup, after a quiet
// while, waits for an RCU grace period (5-20 ms measured here, as root), and moves soon after one
// are quick. So the launcher makes that first move when it makes the cgroups, a move of itself to
// where it already is (a no-op that takes the same lock), on a thread of libuv's pool: the wait
// passes while the launch is prepared and bwrap builds the sandbox, and the real moves are quick.
import fs from 'node:fs'
import path from 'node:path'
import { ENDING_SIGNALS, launchError } from '../errors.js'
import type { CgroupStep } from '../sandbox/limits.js'
import { killQuietly, leftByGoneLaunchers, pidOfOurs, pidScope, processStartTime } from './fs.js'

export interface Cgroup {
  parent: string
  dir: string
  files: CgroupStep['files']
}

/**
 * Cgroups made for a launch: `take()` hands them to run.ts (which spawns bwrap, moves the sandbox
 * in, writes the limits and at the end removes them); `abandon()` is for a launch that stops
 * before bwrap (they go). Whichever comes first owns them; the other does nothing. Until then a
 * signal that ends the launcher (its default) first removes them.
 */
export interface CgroupsMade {
  take(): Made
  abandon(): Promise<void>
}

/** The cgroups, and the first move (settled: done or failed). */
export interface Made {
  cgroups: Cgroup[]
  warm: Promise<void>
}

/** Creates claudebox-<pid>-<time>-<scope> in each parent (createCgroups), and starts the first move (see above). */
export function makeCgroups(steps: readonly CgroupStep[]): CgroupsMade {
  let owned = false
  let cgroups: Cgroup[] = []
  let warm: Promise<void> = Promise.resolve()
  // A signal whose default ends the launcher: the cgroups go, then that default. Listened for
  // before the first cgroup exists: one that came between would leave it behind.
  const ending = (signal: NodeJS.Signals): void => {
    release()
    owned = true
    void removeMade({ cgroups, warm }).finally(() => {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    })
  }
  const release = (): void => {
    for (const signal of ENDING_SIGNALS) process.off(signal, ending)
  }
  if (steps.length > 0) for (const signal of ENDING_SIGNALS) process.on(signal, ending)
  try {
    cgroups = createCgroups(steps)
  } catch (error) {
    release()
    throw error
  }
  warm = warmUp(cgroups)
  return {
    take: () => {
      owned = true
      release()
      return { cgroups, warm }
    },
    abandon: async () => {
      if (owned) return
      owned = true
      release()
      await removeMade({ cgroups, warm })
    },
  }
}

const WITHOUT = 'set "pidsLimit": 0 in config.json (or drop --memory-limit/--cpu-limit) to launch without them'

/** The first move: the launcher to where it is. A failure costs only speed (the real moves report theirs). */
function warmUp(cgroups: readonly Cgroup[]): Promise<void> {
  const first = cgroups[0]
  if (first === undefined) return Promise.resolve()
  try {
    return writeSoon(path.join(first.parent, 'cgroup.procs'), String(process.pid)).catch(() => {})
  } catch {
    return Promise.resolve() // not opened: the real moves say why
  }
}

/** A process as first seen: its pid, and its start time, which tells it from a later one with that pid. */
export interface Seen {
  pid: number
  startTime: string | undefined
}

/**
 * The sandbox's processes (before the go: bwrap, its init and the gate) into each cgroup, after
 * the first move (while that one waits, the kernel holds the lock every cgroup change takes). Each
 * is checked to be the process first seen just before its move: a pid freed meanwhile and taken by
 * a host process would put that one under the limits, and the cleanup kills what is inside.
 */
export async function moveInto({ cgroups, warm }: Made, sandbox: readonly Seen[]): Promise<void> {
  await warm
  try {
    for (const { dir } of cgroups) {
      for (const { pid, startTime } of sandbox) {
        if (startTime === undefined || processStartTime(pid) !== startTime) throw new Error(`process ${pid} of the sandbox is gone`)
        await writeSoon(path.join(dir, 'cgroup.procs'), String(pid))
      }
    }
  } catch (error) {
    throw launchError(`cannot start the sandbox in the cgroups of its limits: ${(error as Error).message}; ${WITHOUT}`)
  }
}

/**
 * The write is one request to libuv's pool, started now (fs.promises.writeFile would open, write
 * and close in three, each waiting for the launcher's busy main thread to hand it on).
 */
function writeSoon(file: string, text: string): Promise<void> {
  const fd = fs.openSync(file, 'w')
  return new Promise((resolve, reject) =>
    fs.write(fd, text, error => {
      fs.closeSync(fd)
      if (error) reject(error)
      else resolve()
    }),
  )
}

/**
 * The cgroups go, once the first move has settled: while it waits, the kernel holds the lock every
 * cgroup change takes, and the rmdir would wait for it on the main thread.
 */
export async function removeMade({ cgroups, warm }: Made): Promise<void> {
  await warm
  await removeCgroups(cgroups)
}

/** The limits, once the sandbox is in the cgroups. A failure is claudebox's, status 125. */
export function writeLimits(cgroups: readonly Cgroup[]): void {
  for (const { dir, files } of cgroups) {
    try {
      for (const [name, value] of files) fs.writeFileSync(path.join(dir, name), value)
    } catch (error) {
      throw launchError(`cannot set the limits in the cgroup ${dir}: ${(error as Error).message}; ${WITHOUT}`)
    }
  }
}

/**
 * claudebox-<pid>-<time>-<scope>: the time makes the name this launch's own. A SIGKILLed launcher
 * leaves its cgroup, sometimes with processes in it (seen: a sandbox init whose bwrap died before
 * --die-with-parent was in force), and a later launcher with the same pid must not trip over it.
 * The scope (fs.ts pidScope) says where the pid means something: launchers in other pid
 * namespaces share the cgroups, and their pids are not ours.
 */
function createCgroups(steps: readonly CgroupStep[]): Cgroup[] {
  const created: Cgroup[] = []
  for (const step of steps) {
    const dir = path.join(step.parent, `claudebox-${process.pid}-${Date.now().toString(36)}-${pidScope()}`)
    try {
      fs.mkdirSync(dir)
    } catch (error) {
      void removeCgroups(created)
      throw launchError(`cannot create the cgroup ${dir} for the limits: ${(error as Error).message}; ${WITHOUT}`)
    }
    created.push({ parent: step.parent, dir, files: step.files })
  }
  return created
}

/**
 * Removes the cgroups. When bwrap has exited, the rest of its pid namespace is being killed by the
 * kernel and the rmdir fails (EBUSY) until the last one is reaped: retry a little (bounded). What
 * is still inside after 100 ms is killed: only bwrap's processes are ever in them (seen: a sandbox
 * init whose bwrap died of a Ctrl-C before --die-with-parent was in force, waiting for ever).
 */
export async function removeCgroups(cgroups: readonly { dir: string }[]): Promise<void> {
  for (const { dir } of cgroups) {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        fs.rmdirSync(dir)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EBUSY') break
        if (attempt === 10) killInside(dir)
        await new Promise(resolve => setTimeout(resolve, 10))
      }
    }
  }
  removeLeftCgroups(cgroups.map(({ dir }) => path.dirname(dir)))
}

/** SIGKILL to what is in the cgroup, but never the launcher (which never joins; should it be there, it stays). */
function killInside(dir: string): void {
  let pids: number[]
  try {
    pids = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
  } catch {
    return
  }
  for (const pid of pids) if (pid !== process.pid && stillIn(pid, dir)) killQuietly(pid, 'SIGKILL')
}

/** Whether `pid` is (still) in the cgroup `dir`: a pid that left it and was taken anew is not killed. */
function stillIn(pid: number, dir: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').some(line => line.endsWith(`/${path.basename(dir)}`))
  } catch {
    return false
  }
}

/**
 * Cgroups that launchers killed with SIGKILL left beside ours go once their launcher is gone: ours
 * from this pid namespace, and those older claudebox versions named claudebox-<pid>-<time> and
 * claudebox-<pid>. Never one from another pid namespace (red team, round 52: a launcher in a
 * container took a live launch's cgroup, still empty while the launch prepared, for a gone one's;
 * that launch then failed). rmdir removes only an empty cgroup: nothing that still runs is touched.
 */
function removeLeftCgroups(parents: readonly string[]): void {
  for (const parent of new Set(parents)) {
    for (const name of leftByGoneLaunchers(parent, entry => pidOfOurs(entry, /^claudebox-(\d+)-[0-9a-z]+-([0-9a-f]{8}|unknown)$/, /^claudebox-(\d+)(?:-[0-9a-z]+)?$/))) {
      try {
        fs.rmdirSync(path.join(parent, name))
      } catch {
        // not empty (something of that session still runs), or already gone
      }
    }
  }
}
