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
 * Marks kept at most. None is ever dropped: a renamed `.git` keeps its identity but not its path,
 * so no mark can be told to be of a gone one (red team, round 128: a repository renamed, then
 * 20,001 marks made, had its mark dropped as gone; round 127: pushed out by age). A file that holds
 * this many, or cannot be read (damaged, past MAX_BYTES), marks every `.git`, and is never
 * rewritten (round 128: one made past 64 MiB was replaced by the new marks alone): the user is
 * told, and removes it once they have looked at what was moved aside.
 */
const MAX_KEPT = 20_000
const MAX_BYTES = 16 << 20
/** The path kept with a mark is only for the user to read: long ones are cut (round 128: paths of 3,900 bytes grew the file past MAX_BYTES). */
const MAX_PATH = 512
const LOCK_STALE_MS = 10_000

/** A mark: when it was made, and the `.git` it was made for. */
type Mark = [number, string]

/** The marks' file beside the instances' records of nested repositories. */
export const reportedFile = (nestedRecord: string): string => path.join(path.dirname(nestedRecord), 'reported.json')

/**
 * Whether the `.git` at `entry` is one a session's end marked; read anew each time (another
 * session's end may have marked it meanwhile). A file that is there but cannot be read, or is full, marks all.
 */
export function reportedBefore(file: string, entry: string): boolean {
  const id = entryIdentity(entry)
  if (id === undefined) return false
  const marks = readJsonObject(file, MAX_BYTES)
  return isFull(marks, file) || Array.isArray(marks?.[id])
}

/**
 * Marks the entries' identities, under a lock: two sessions ending at once each keep the other's.
 * After the record's save, which makes the folder. Says so, at every session's end, when the file
 * marks every `.git` (full, or unreadable), and leaves it as it is.
 */
export function markReported(file: string, entries: readonly (string | Buffer)[]): string | undefined {
  const marks = entries.flatMap(entry => {
    const id = entryIdentity(entry)
    return id === undefined ? [] : [[id, entry.toString().slice(0, MAX_PATH)] as const]
  })
  if (lstatKind(path.dirname(file)) !== 'dir') return undefined
  if (marks.length === 0) return isFull(readJsonObject(file, MAX_BYTES), file) ? fullSaid(file) : undefined
  let full = false
  try {
    withLockSync(`${file}.lock`, LOCK_STALE_MS, () => {
      const kept = readJsonObject(file, MAX_BYTES)
      full = isFull(kept, file)
      if (full) return
      const now = Date.now()
      const all = kept ?? {}
      for (const [id, entry] of marks) all[id] = [now, entry] satisfies Mark
      writeHomeFile(file, JSON.stringify(all))
    })
  } catch {
    // a read-only home: this session's repositories stay unmarked (its warnings said them)
  }
  return full ? fullSaid(file) : undefined
}

/** A file that marks every `.git`: one there that cannot be read, or of MAX_KEPT marks. */
const isFull = (kept: Record<string, unknown> | undefined, file: string): boolean => (kept === undefined ? lstatKind(file) !== 'missing' : Object.keys(kept).length >= MAX_KEPT)

const fullSaid = (file: string): string => `claudebox's marks of the nested repositories sessions made (${file}) are full or cannot be read, so every nested repository a session stages as a gitlink has its .git moved aside; look at what was moved, then remove that file`
