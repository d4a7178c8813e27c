// An exclusive lock file beside a host file that several launchers read, change and write back
// (the shared account file, the OAuth store): without it two sessions ending together each write
// their own change over the file the other read, and one change is lost. The lock files live in
// $CLAUDEBOX_HOME, which no sandbox sees. A lock older than `staleMs` was left by a launcher that
// died holding it and is taken over.
import fs from 'node:fs'

export type Release = () => void

/** The lock, or undefined while another holds it (a stale one is removed first). */
function tryLock(file: string, staleMs: number): Release | undefined {
  try {
    fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
    return () => fs.rmSync(file, { force: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    if (Date.now() - (mtimeOf(file) ?? Date.now()) > staleMs) fs.rmSync(file, { force: true })
    return undefined
  }
}

const POLL_MS = 20

/** Runs `step` holding the lock; waits for it synchronously (a holder keeps it for milliseconds). */
export function withLockSync<T>(file: string, staleMs: number, step: () => T): T {
  let release = tryLock(file, staleMs)
  while (release === undefined) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, POLL_MS)
    release = tryLock(file, staleMs)
  }
  try {
    return step()
  } finally {
    release()
  }
}

/** Waits for the lock without blocking the event loop (its holder may be waiting on the network). */
export async function takeLock(file: string, staleMs: number): Promise<Release> {
  for (;;) {
    const release = tryLock(file, staleMs)
    if (release !== undefined) return release
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return undefined
  }
}
