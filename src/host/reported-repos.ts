// The nested repositories whose config, hooks or what their config names a session made or changed
// (past the search's bound: whose `.git` it did), by the device and inode of their `.git`, marked
// at that session's end for every project of this user: the
// gitlink watch never takes one of them for the user's when a later session stages it (red team,
// round 126: a repository one session made was staged by the next after the project was renamed,
// which gives it a new instance and record, or from the project around it, whose record never held
// it, or past the 512 repositories a record holds; each had its fsmonitor run by the host's git
// status). The identity survives a rename of the project or of the repository; a copy is new, and
// its change time is then the copy's. Kept out of every sandbox, in `$CLAUDEBOX_HOME/nested/`.
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { entryIdentity, lstatKind, readJsonObject } from './fs.js'
import { withLockSync } from './lock.js'

/**
 * Marks kept before the ones whose `.git` is gone or another (the path no longer has that identity)
 * are dropped, the oldest first. A mark whose `.git` is still there is never dropped (red team,
 * round 127: 20,001 marks of one session pushed out another's, and its repository was then taken
 * for the user's); the file then grows, and one past what is read counts as marking everything.
 */
const MAX_KEPT = 20_000
const MAX_BYTES = 64 << 20
const LOCK_STALE_MS = 10_000

/** A mark: when it was made, and the `.git` it was made for. */
type Mark = [number, string]

/** The marks' file beside the instances' records of nested repositories. */
export const reportedFile = (nestedRecord: string): string => path.join(path.dirname(nestedRecord), 'reported.json')

/**
 * Whether the `.git` at `entry` is one a session's end marked; read anew each time (another
 * session's end may have marked it meanwhile). A file that is there but cannot be read marks all.
 */
export function reportedBefore(file: string, entry: string): boolean {
  const id = entryIdentity(entry)
  if (id === undefined) return false
  const marks = readJsonObject(file, MAX_BYTES)
  return marks === undefined ? lstatKind(file) !== 'missing' : Array.isArray(marks[id])
}

/** Marks the entries' identities, under a lock: two sessions ending at once each keep the other's. After the record's save, which makes the folder. */
export function markReported(file: string, entries: readonly (string | Buffer)[]): void {
  const marks = entries.flatMap(entry => {
    const id = entryIdentity(entry)
    return id === undefined ? [] : [[id, entry.toString()] as const]
  })
  if (marks.length === 0 || lstatKind(path.dirname(file)) !== 'dir') return
  try {
    withLockSync(`${file}.lock`, LOCK_STALE_MS, () => {
      const kept = readJsonObject(file, MAX_BYTES) ?? {}
      const now = Date.now()
      for (const [id, entry] of marks) kept[id] = [now, entry] satisfies Mark
      writeHomeFile(file, JSON.stringify(Object.fromEntries(trimmed(kept))))
    })
  } catch {
    // a read-only home: this session's repositories stay unmarked (its warnings said them)
  }
}

/** The marks, the newest first; past MAX_KEPT only those whose `.git` is still the one marked. */
function trimmed(kept: Record<string, unknown>): [string, Mark][] {
  const all = Object.entries(kept)
    .filter((entry): entry is [string, Mark] => Array.isArray(entry[1]) && typeof entry[1][0] === 'number' && typeof entry[1][1] === 'string')
    .sort((a, b) => b[1][0] - a[1][0])
  return all.length <= MAX_KEPT ? all : [...all.slice(0, MAX_KEPT), ...all.slice(MAX_KEPT).filter(([id, [, entry]]) => entryIdentity(entry) === id)]
}
