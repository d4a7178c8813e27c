// The cgroups of bwrap's limits (sandbox/limits.ts plans them, host/probe.ts finds their parents).
// bwrap is spawned inside them: the launcher joins them for the moment of the spawn, then leaves.
// Joining is the slow part: the kernel's first migration of a process waits for an RCU grace
// period (12-20 ms measured here, as root), so the launcher joins early, on a thread of libuv's
// pool, while it prepares the launch (launch.ts), and the spawn waits only for what is left of it.
// The limits are written once the launcher has left, before the go (nothing of the program runs
// earlier): they never count the launcher, and a small memory limit cannot kill it.
import fs from 'node:fs'
import path from 'node:path'
import { ENDING_SIGNALS, launchError } from '../errors.js'
import type { CgroupStep } from '../sandbox/limits.js'
import { killQuietly, leftByGoneLaunchers } from './fs.js'

export interface Cgroup {
  parent: string
  dir: string
  files: CgroupStep['files']
}

/**
 * A join under way: `take()` hands it to run.ts (which spawns bwrap, leaves, writes the limits
 * and at the end removes them); `abandon()` is for a launch that stops before bwrap (the launcher
 * leaves and they go). Whichever comes first owns the cgroups; the other does nothing. Until then
 * a signal that ends the launcher (its default) first takes it out and removes them.
 */
export interface CgroupJoin {
  take(): Promise<Cgroup[]>
  abandon(): Promise<void>
}

/**
 * Creates claudebox-<pid>-<time> in each parent and starts moving the launcher into them. While
 * it is inside, the launcher's own allocations count in a memory cgroup (they stay there when it
 * leaves): measured 1.6 MB at the spawn against 1.1 when it joined only for the spawn.
 */
export function joinCgroups(steps: readonly CgroupStep[]): CgroupJoin {
  let [owned, dying] = [false, false]
  let joined: Promise<Cgroup[]> = Promise.resolve([])
  let cgroups: Cgroup[] = []
  // A signal whose default ends the launcher: once the join is through (leaving before it would
  // race it back in), out of the cgroups, which go, then that default. The launch stops at take().
  // Listened for before the first cgroup exists: one that came between would leave it behind.
  const ending = (signal: NodeJS.Signals): void => {
    release()
    ;[owned, dying] = [true, true]
    void joined
      .then(() => leaveAndRemove(cgroups), () => undefined)
      .finally(() => {
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
  joined = moveInto(cgroups).then(
    () => cgroups,
    async (error: unknown) => {
      await leaveAndRemove(cgroups)
      throw launchError(`cannot start bwrap in the cgroups of its limits: ${(error as Error).message}; ${WITHOUT}`)
    },
  )
  joined.catch(() => {}) // reported by take(); an abandoned launch has its own error already
  return {
    take: () => {
      owned = true
      release()
      return dying ? new Promise<never>(() => {}) : joined
    },
    abandon: async () => {
      if (owned) return
      owned = true
      release()
      if (await joined.then(() => true, () => false)) await leaveAndRemove(cgroups)
    },
  }
}

const WITHOUT = 'set "pidsLimit": 0 in config.json (or drop --memory-limit/--cpu-limit) to launch without them'

/**
 * Each write is one request to libuv's pool, started now (fs.promises.writeFile would open, write
 * and close in three, each waiting for the launcher's busy main thread to hand it on). Together:
 * the first migration waits for the grace period, the others come right after it.
 */
async function moveInto(cgroups: readonly Cgroup[]): Promise<void> {
  await Promise.all(cgroups.map(({ dir }) => writeSoon(path.join(dir, 'cgroup.procs'), String(process.pid))))
}

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

/** The limits, once the launcher has left. A failure is claudebox's, status 125. */
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
 * Back to where the launcher was; what it spawned meanwhile stays. Soon after joining this is
 * quick; later it waits for a grace period of its own, which bwrap's start then overlaps.
 */
export async function leaveCgroups(cgroups: readonly Cgroup[]): Promise<void> {
  await Promise.all(cgroups.map(({ parent }) => writeSoon(path.join(parent, 'cgroup.procs'), String(process.pid)))).catch((error: unknown) => {
    throw launchError(`cannot leave the cgroups of bwrap's limits: ${(error as Error).message}; ${WITHOUT}`)
  })
}

/** For a launch that stops before bwrap runs: as far as it goes (its own error says why it stopped). */
export async function leaveAndRemove(cgroups: readonly Cgroup[]): Promise<void> {
  try {
    await leaveCgroups(cgroups)
  } catch {
    // a parent that no longer takes the launcher: the cgroups stay, and go after it has exited
  }
  await removeCgroups(cgroups)
}

/**
 * claudebox-<pid>-<time>: the time makes the name this launch's own. A SIGKILLed launcher leaves
 * its cgroup, sometimes with processes in it (seen: a sandbox init whose bwrap died before
 * --die-with-parent was in force), and a later launcher with the same pid must not trip over it.
 */
function createCgroups(steps: readonly CgroupStep[]): Cgroup[] {
  const created: Cgroup[] = []
  for (const step of steps) {
    const dir = path.join(step.parent, `claudebox-${process.pid}-${Date.now().toString(36)}`)
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

/** SIGKILL to what is in the cgroup, but never the launcher (which a failed leave kept in it). */
function killInside(dir: string): void {
  let pids: number[]
  try {
    pids = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
  } catch {
    return
  }
  for (const pid of pids) if (pid !== process.pid) killQuietly(pid, 'SIGKILL')
}

/**
 * Cgroups that launchers killed with SIGKILL left beside ours (claudebox-<pid>-<time>, the older
 * claudebox-<pid>) go once their launcher is gone. rmdir removes only an empty cgroup: nothing
 * that still runs is touched.
 */
function removeLeftCgroups(parents: readonly string[]): void {
  for (const parent of new Set(parents)) {
    for (const name of leftByGoneLaunchers(parent, entry => /^claudebox-(\d+)(?:-[0-9a-z]+)?$/.exec(entry)?.[1])) {
      try {
        fs.rmdirSync(path.join(parent, name))
      } catch {
        // not empty (something of that session still runs), or already gone
      }
    }
  }
}
