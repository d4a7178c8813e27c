// An exclusive lock file beside a host file that several launchers read, change and write back
// (the shared account file, the OAuth store): without it two sessions ending together each write
// their own change over the file the other read, and one change is lost. A lock whose time is more
// than `staleMs` away (older: its launcher died holding it; in the future: planted) is taken over.
//
// Most lock files live where no sandbox reaches. The OAuth store's sits beside it, and with the
// opt-out ("secretless": false) the sandbox has that directory: a lock it keeps making anew must
// not hold a launcher for ever, so nobody waits longer than twice `staleMs` (then the step runs
// unlocked, which the opt-out's sandbox, holding the login itself, could do no worse).
import fs from 'node:fs'
import { readNoFollow } from './fs.js'

export type Release = () => void

const POLL_MS = 20
let taken = 0

/** The lock, or undefined while another holds it (a stale one is moved out of the way first). */
function tryLock(file: string, staleMs: number): Release | undefined {
  const token = `${process.pid}.${++taken}.${Date.now()}`
  try {
    writeNew(file, `${token}\n`)
    // Only our own: a lock taken over meanwhile is the new holder's, never removed by us.
    return () => {
      if (readToken(file) === token) removeUnwalked(file)
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    if (stale(file, staleMs)) takeOver(file, staleMs, token)
    return undefined
  }
}

/**
 * Creates `file` (never one that exists) with `text`. A file made but not written (a full disk) is
 * removed again: an empty lock would hold every later launcher until it turned stale.
 */
function writeNew(file: string, text: string): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600)
  try {
    fs.writeFileSync(fd, text)
  } catch (error) {
    removeUnwalked(file)
    throw error
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * A stale lock is taken away by one waiter at a time: the one that makes `<lock>.takeover`. Two
 * waiters moving it at once lost the lock: the second one moved the first one's successor's fresh
 * lock aside, and in the moment before it put that back a fourth waiter made its own (two holders).
 * A takeover guard left by a waiter that died in those microseconds is itself taken away once stale.
 */
function takeOver(file: string, staleMs: number, token: string): void {
  const guard = `${file}.takeover`
  try {
    writeNew(guard, `${token}\n`)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') removeIfStale(guard, staleMs, token)
    return
  }
  try {
    removeIfStale(file, staleMs, token)
  } finally {
    if (readToken(guard) === token) removeUnwalked(guard)
  }
}

/**
 * Removes `file` if it is still the stale one looked at. It goes by rename to a name of this
 * waiter's own; if what was moved is another file after all (its slow holder let it go and a
 * waiter made a new one in between), it is put back.
 */
function removeIfStale(file: string, staleMs: number, token: string): void {
  const seen = lstatOrUndefined(file)
  if (seen === undefined || !isStale(seen, staleMs)) return
  const aside = `${file}.stale.${token}`
  try {
    fs.renameSync(file, aside)
  } catch {
    return
  }
  const moved = lstatOrUndefined(aside)
  if (moved !== undefined && (moved.ino !== seen.ino || moved.dev !== seen.dev)) {
    try {
      fs.linkSync(aside, file)
    } catch {
      // a newer lock is there already
    }
  }
  removeUnwalked(aside)
}

/**
 * Removes a file, a link or an empty folder; a folder with anything in it stays where it is, in the
 * directory of the sandbox that planted it (the opt-out's sandbox writes the OAuth store's
 * directory). Never walked: a walk by path follows a folder inside swapped for a link meanwhile
 * (red team, round 125: a planted lock of 20,000 names had another launcher's walk empty a folder
 * of the user's, 6 of 6 root, 3 of 3 uid 1001).
 */
function removeUnwalked(p: string): void {
  try {
    fs.unlinkSync(p)
  } catch {
    try {
      fs.rmdirSync(p)
    } catch {
      // a planted folder with something in it, or gone
    }
  }
}

/** Runs `step` holding the lock; waits for it synchronously (a holder keeps it for milliseconds). */
export function withLockSync<T>(file: string, staleMs: number, step: () => T): T {
  const giveUp = Date.now() + 2 * staleMs
  let release = tryLock(file, staleMs)
  while (release === undefined && Date.now() < giveUp) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, POLL_MS)
    release = tryLock(file, staleMs)
  }
  try {
    return step()
  } finally {
    release?.()
  }
}

/** Waits for the lock without blocking the event loop (its holder may be waiting on the network). */
export async function takeLock(file: string, staleMs: number): Promise<Release> {
  for (const giveUp = Date.now() + 2 * staleMs; Date.now() < giveUp; ) {
    const release = tryLock(file, staleMs)
    if (release !== undefined) return release
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
  return () => {}
}

function stale(file: string, staleMs: number): boolean {
  const stats = lstatOrUndefined(file)
  return stats !== undefined && isStale(stats, staleMs)
}

function isStale(stats: fs.Stats, staleMs: number): boolean {
  return Math.abs(Date.now() - stats.mtimeMs) > staleMs
}

function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file)
  } catch {
    return undefined
  }
}

/** The token in a lock; read without following a link or waiting on a FIFO put in its place (the opt-out's sandbox writes the OAuth store's directory). */
function readToken(file: string): string | undefined {
  return readNoFollow(file, 256)?.trim()
}
