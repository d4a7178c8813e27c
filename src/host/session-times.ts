// When sessions ran, for every project of this user: a file git runs from in a nested repository
// (its config, hooks, what its config names), or a git dir, whose change or birth time falls in one
// of them may be a session's, whatever became of it since (red team, round 129: a config written in one session
// into a folder that was no repository yet, renamed into a `.git` in the next, which a rename of
// its folder leaves with its old change time, was staged in a third and taken for the user's).
// Written at each session's end in `$CLAUDEBOX_HOME/nested/sessions`, out of every sandbox.
import fs from 'node:fs'
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { lstatKind, readNoFollow } from './fs.js'
import { withLockSync } from './lock.js'

/** Past this size the file is rewritten with overlapping windows joined; past MAX_WINDOWS the oldest are joined (a longer window only counts more as a session's). */
const COMPACT_AT = 256 << 10
const MAX_WINDOWS = 20_000
const MAX_BYTES = 4 << 20
/** The kernel's change times come from a clock that lags the one Date.now() reads by a tick or so. */
const SLACK_MS = 50
const LOCK_STALE_MS = 10_000

type Window = [number, number]

export const sessionTimesFile = (nestedRecord: string): string => path.join(path.dirname(nestedRecord), 'sessions')

/**
 * Whether a time falls in a session that has ended, read once. A file that is there but cannot be
 * read, or holds a line that is no window, puts every time in one (the user removes it to start again).
 */
export function sessionTimes(file: string): { during(ms: number): boolean } {
  const windows = readWindows(file)
  if (windows === undefined) return { during: () => true }
  return { during: ms => windows.some(([start, end]) => ms >= start - SLACK_MS && ms <= end + SLACK_MS) }
}

/**
 * This session's window, one line appended (no lock, no read: a session's end pays ~0.1 ms); the
 * file is rewritten, joined, under a lock once it has grown past COMPACT_AT. Says so when it has
 * grown past what is read.
 */
export function recordSession(file: string, startMs: number, endMs: number): string | undefined {
  let size = 0
  try {
    // The first session's end, before any nested repository made the folder.
    if (lstatKind(path.dirname(path.dirname(file))) === 'dir' && lstatKind(path.dirname(file)) === 'missing') fs.mkdirSync(path.dirname(file), { mode: 0o700, recursive: true })
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600)
    try {
      fs.writeSync(fd, `${Math.floor(startMs)} ${Math.ceil(endMs)}\n`)
      size = fs.fstatSync(fd).size
    } finally {
      fs.closeSync(fd)
    }
    if (size > COMPACT_AT) withLockSync(`${file}.lock`, LOCK_STALE_MS, () => compact(file))
  } catch {
    // a read-only home: this session's time is not kept (its warnings said what it made)
  }
  return size > MAX_BYTES ? `claudebox's record of when sessions ran (${file}) is larger than it reads, so every nested repository a session stages as a gitlink has its .git moved aside; look at what was moved, then remove that file` : undefined
}

/** The windows kept, one `start end` line each; none without a file; undefined when one is there and cannot be read. */
function readWindows(file: string): Window[] | undefined {
  const text = readNoFollow(file, MAX_BYTES)
  if (text === undefined) return lstatKind(file) === 'missing' ? [] : undefined
  const windows: Window[] = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    const match = /^(\d+) (\d+)$/.exec(line)
    if (match === null) return undefined
    windows.push([Number(match[1]), Number(match[2])])
  }
  return windows
}

/** Rewritten whole (a temp file renamed over it), overlapping windows joined; a file that cannot be read is left. */
function compact(file: string): void {
  const windows = readWindows(file)
  if (windows === undefined || windows.length === 0) return
  writeHomeFile(file, joined(windows).map(([start, end]) => `${start} ${end}\n`).join(''))
}

/** Sorted, overlapping ones joined, and past MAX_WINDOWS the oldest. */
function joined(windows: Window[]): Window[] {
  const out: Window[] = []
  for (const [start, end] of [...windows].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1]
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end)
    else out.push([start, end])
  }
  // The oldest joined into one: the times between them then count as a session's too.
  const excess = out.length - MAX_WINDOWS
  if (excess > 0) out.splice(0, excess + 1, [(out[0] as Window)[0], (out[excess] as Window)[1]])
  return out
}
