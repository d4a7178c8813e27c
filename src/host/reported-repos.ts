// The nested repositories a session's end reported (made or changed during a session, or past the
// search's bound), by the device and inode of their `.git`, for every project of this user: the
// gitlink watch never takes one of them for the user's when a later session stages it (red team,
// round 126: a repository one session made was staged by the next after the project was renamed,
// which gives it a new instance and record, or from the project around it, whose record never held
// it, or past the 512 repositories a record holds; each had its fsmonitor run by the host's git
// status). The identity survives a rename of the project or of the repository; a copy is new, and
// its change time is then the copy's. Kept out of every sandbox, in `$CLAUDEBOX_HOME/nested/`.
import fs from 'node:fs'
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { lstatKind, readJsonObject } from './fs.js'
import { withLockSync } from './lock.js'

/** Identities kept at most (the most recently reported): ~40 bytes each. */
const MAX_KEPT = 20_000
const LOCK_STALE_MS = 10_000

/** The marks' file beside the instances' records of nested repositories. */
export const reportedFile = (nestedRecord: string): string => path.join(path.dirname(nestedRecord), 'reported.json')

/** `entry`'s device and inode, never through a link; undefined when it cannot be looked at. */
export function identityOf(entry: string | Buffer): string | undefined {
  try {
    const st = fs.lstatSync(entry)
    return `${st.dev}:${st.ino}`
  } catch {
    return undefined
  }
}

/** Whether the `.git` at `entry` is one a session's end reported; read anew each time (another session's end may have marked it meanwhile). */
export function reportedBefore(file: string, entry: string): boolean {
  const id = identityOf(entry)
  return id !== undefined && typeof readJsonObject(file, 4 << 20)?.[id] === 'number'
}

/** Marks the entries' identities, under a lock: two sessions ending at once each keep the other's. After the record's save, which makes the folder. */
export function markReported(file: string, entries: readonly (string | Buffer)[]): void {
  const ids = entries.map(identityOf).filter((id): id is string => id !== undefined)
  if (ids.length === 0 || lstatKind(path.dirname(file)) !== 'dir') return
  try {
    withLockSync(`${file}.lock`, LOCK_STALE_MS, () => {
      const kept = readJsonObject(file, 4 << 20) ?? {}
      const now = Date.now()
      for (const id of ids) kept[id] = now
      const newest = Object.entries(kept)
        .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
        .sort((a, b) => b[1] - a[1])
        .slice(0, MAX_KEPT)
      writeHomeFile(file, JSON.stringify(Object.fromEntries(newest)))
    })
  } catch {
    // a read-only home: this session's repositories stay unmarked (its warnings said them)
  }
}
