// The placeholders a launch holds names with (sandbox/git-guard.ts): a commondir holding `./` in
// each git dir of the project, an empty HEAD folder at the top of each work tree. Made before bwrap
// binds them read-only; removed when the last session that binds them ends, so the project is as
// the user left it. Which sessions hold one is kept where no sandbox reaches: a marker per session
// in $CLAUDEBOX_HOME/placeholders/<hash of the path>/, made and looked at under one lock. A
// session of another project binds the same file too (a submodule started as a project of its own:
// red team, round 85, whose end freed the name in the top's sandbox), and the kernel detaches a
// mount whose file is removed from another mount namespace. One left behind (a launcher killed) is
// neutral and taken over by the next launch.
import fs from 'node:fs'
import path from 'node:path'
import { sha256Hex } from '../sha256.js'
import { pidScope, processStartTime, readNoFollow, removeFile, safeReaddir } from './fs.js'
import { isCommondirPlaceholder } from './git-dirs.js'
import { withLockSync } from './lock.js'

/** The commondir files and the HEAD folders of one launch. */
export interface Placeholders {
  files: readonly string[]
  dirs: readonly string[]
}

const MARKERS = 'placeholders'
/** A holder of the lock longer than this died holding it (each step is a few file operations). */
const LOCK_STALE_MS = 10_000

/** This session's marker beside each placeholder, then `make` (which makes them), under the lock. */
export function holdPlaceholders(claudeboxHome: string, held: Placeholders, make: () => void): void {
  const all = [...held.files, ...held.dirs]
  if (all.length === 0) return make()
  locked(claudeboxHome, () => {
    for (const p of all) {
      const dir = markersOf(claudeboxHome, p)
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      fs.writeFileSync(path.join(dir, ownMarker()), `${processStartTime('self') ?? ''}\n`, { mode: 0o600 })
    }
    make()
  })
}

/**
 * After the session: this session's markers go, and each placeholder no other live session holds;
 * `move` gives where one is now, when the project was moved during the session (the markers keep
 * the path it was made at).
 */
export function releasePlaceholders(claudeboxHome: string, held: Placeholders, move: (p: string) => string = p => p): void {
  if (held.files.length + held.dirs.length === 0) return
  locked(claudeboxHome, () => {
    // Only what still is the placeholder: anything else there is for the git watch's report.
    for (const file of held.files) release(claudeboxHome, file, () => (isCommondirPlaceholder(move(file)) ? removeFile(move(file)) : undefined))
    for (const dir of held.dirs) release(claudeboxHome, dir, () => rmdirIfEmpty(move(dir)))
  })
}

function release(claudeboxHome: string, placeholder: string, remove: () => void): void {
  const markers = markersOf(claudeboxHome, placeholder)
  removeFile(path.join(markers, ownMarker()))
  if (othersHold(markers)) return
  remove()
  fs.rmSync(markers, { recursive: true, force: true })
}

/** Whether a marker of another session that still runs is there; those of launchers that are gone are removed. */
function othersHold(markers: string): boolean {
  let held = false
  for (const name of safeReaddir(markers)) {
    const match = /^(\d+)-(\w+)$/.exec(name)
    if (match === null) continue
    // Another pid namespace's (a container sharing this home) cannot be told: it holds.
    if (match[2] !== pidScope() || processStartTime(Number(match[1])) === readNoFollow(path.join(markers, name), 64)?.trim()) held = true
    else removeFile(path.join(markers, name))
  }
  return held
}

function rmdirIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir)
  } catch {
    // not empty (then not ours to remove), or gone
  }
}

function locked(claudeboxHome: string, step: () => void): void {
  fs.mkdirSync(path.join(claudeboxHome, MARKERS), { recursive: true, mode: 0o700 })
  withLockSync(path.join(claudeboxHome, `${MARKERS}.lock`), LOCK_STALE_MS, step)
}

const markersOf = (claudeboxHome: string, placeholder: string): string => path.join(claudeboxHome, MARKERS, sha256Hex(placeholder).slice(0, 32))
const ownMarker = (): string => `${process.pid}-${pidScope()}`
