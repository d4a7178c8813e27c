// When sessions ran, for every project of this user: a file git runs from in a nested repository
// (its config, hooks, what its config names) whose change time falls in one of them may be a
// session's, whatever became of it since (red team, round 129: a config written in one session
// into a folder that was no repository yet, renamed into a `.git` in the next, which a rename of
// its folder leaves with its old change time, was staged in a third and taken for the user's).
// Written at each session's end in `$CLAUDEBOX_HOME/nested/sessions.json`, out of every sandbox.
import fs from 'node:fs'
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { lstatKind, readJsonObject } from './fs.js'
import { withLockSync } from './lock.js'

/** Windows kept at most: past it the oldest are joined (a longer window only counts more as a session's). */
const MAX_WINDOWS = 50_000
const MAX_BYTES = 4 << 20
/** The kernel's change times come from a clock that lags the one Date.now() reads by a tick or so. */
const SLACK_MS = 50
const LOCK_STALE_MS = 10_000

type Window = [number, number]

export const sessionTimesFile = (nestedRecord: string): string => path.join(path.dirname(nestedRecord), 'sessions.json')

/**
 * Whether a time falls in a session that has ended, read once. A file that is there but cannot be
 * read puts every time in one (the user removes it to start again; the session's end says so).
 */
export function sessionTimes(file: string): { during(ms: number): boolean; unreadable: boolean } {
  const windows = readWindows(file)
  if (windows === undefined) return { during: () => true, unreadable: true }
  return { during: ms => windows.some(([start, end]) => ms >= start - SLACK_MS && ms <= end + SLACK_MS), unreadable: false }
}

/** This session's window, added under a lock (sessions ending at once each keep the other's); says so when the file cannot be read, and leaves it. */
export function recordSession(file: string, startMs: number, endMs: number): string | undefined {
  let unreadable = false
  try {
    // The first session's end, before any nested repository made the folder (its lock is there).
    if (lstatKind(path.dirname(path.dirname(file))) === 'dir' && lstatKind(path.dirname(file)) === 'missing') fs.mkdirSync(path.dirname(file), { mode: 0o700, recursive: true })
    withLockSync(`${file}.lock`, LOCK_STALE_MS, () => {
      const windows = readWindows(file)
      if (windows === undefined) return void (unreadable = true)
      writeHomeFile(file, JSON.stringify({ windows: joined([...windows, [startMs, endMs]]) }))
    })
  } catch {
    // a read-only home: this session's time is not kept (its warnings said what it made)
  }
  return unreadable ? `claudebox's record of when sessions ran (${file}) cannot be read, so every nested repository a session stages as a gitlink has its .git moved aside; look at what was moved, then remove that file` : undefined
}

/** The windows kept; none without a file; undefined when one is there and cannot be read. */
function readWindows(file: string): Window[] | undefined {
  const saved = readJsonObject(file, MAX_BYTES)?.['windows']
  if (saved === undefined) return lstatKind(file) === 'missing' ? [] : undefined
  if (!Array.isArray(saved) || !saved.every(w => Array.isArray(w) && w.length === 2 && w.every(t => typeof t === 'number'))) return undefined
  return saved as Window[]
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
