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
import { launchError } from '../errors.js'
import { identityOf, O_PATH, openSameFolder, pidScope, processStartTime, readNoFollow, removeFile, safeReaddir } from './fs.js'
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

/**
 * Each placeholder's folder and the placeholder itself (device and inode) as this launch held them:
 * one is removed only while both still are these, never by its path alone (a session of a project
 * holding this one can swap a folder above it for a link to another repository of the user's: red
 * team, round 116, that repository's placeholders were removed, and its session ended or its
 * commondir left writable).
 */
export type HeldPlaceholders = ReadonlyMap<string, { folder: string; self: string }>

/**
 * This session's marker beside each placeholder, then `make` (which makes them), under the lock;
 * what was held: each placeholder in the folder that was there before `make` (one swapped
 * meanwhile for another is none of this launch's, and the launch is refused: bind-fds.ts). A
 * placeholder whose folder is reached through a symlink refuses the launch before anything is
 * made (red team, round 117: a submodule path the session made a link to another repository had
 * that repository's live placeholder taken for this launch's, and removed).
 */
export function holdPlaceholders(claudeboxHome: string, held: Placeholders, make: () => void): HeldPlaceholders {
  const all = [...held.files, ...held.dirs]
  if (all.length === 0) return (make(), new Map())
  const folders = new Map(all.map(p => [p, realFolderIdentity(path.dirname(p))]))
  return locked(claudeboxHome, () => {
    for (const p of all) {
      const dir = markersOf(claudeboxHome, p)
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      fs.writeFileSync(path.join(dir, ownMarker()), `${processStartTime('self') ?? ''}\n`, { mode: 0o600 })
    }
    make()
    return new Map(all.flatMap(p => inFolder(p, folders.get(p), at => [[p, { folder: folders.get(p) ?? '', self: identityOf(fs.lstatSync(at)) }] as const]) ?? []))
  })
}

/**
 * After the session: this session's markers go, and each placeholder no other live session holds,
 * when it is still the one in `kept`; `move` gives where one is now, when the project was moved
 * during the session (the markers keep the path it was made at).
 */
export function releasePlaceholders(claudeboxHome: string, held: Placeholders, kept: HeldPlaceholders, move: (p: string) => string = p => p): void {
  if (held.files.length + held.dirs.length === 0) return
  locked(claudeboxHome, () => {
    // Only what still is the placeholder: anything else there is for the git watch's report.
    for (const file of held.files) release(claudeboxHome, file, () => inHeldFolder(move(file), kept.get(file), at => (isCommondirPlaceholder(at) ? removeFile(at) : undefined)))
    for (const dir of held.dirs) release(claudeboxHome, dir, () => inHeldFolder(move(dir), kept.get(dir), rmdirIfEmpty))
  })
}

/** The folder `dir`'s device and inode, when it is there at its own real path; undefined when it is not there. */
function realFolderIdentity(dir: string): string | undefined {
  let fd: number
  try {
    fd = fs.openSync(dir, O_PATH | fs.constants.O_DIRECTORY)
  } catch {
    return undefined
  }
  try {
    const real = fs.readlinkSync(`/proc/self/fd/${fd}`)
    if (real !== dir) throw launchError(`${dir} leads to ${real}, where claudebox makes a placeholder (a session's sandbox may have put a symlink on its way): look at it, remove it, and rerun`)
    return identityOf(fs.fstatSync(fd))
  } finally {
    fs.closeSync(fd)
  }
}

/** `act` on the placeholder `p` (as `/proc/self/fd/N/name`), when its folder and itself are still those `known` names. */
function inHeldFolder(p: string, known: { folder: string; self: string } | undefined, act: (at: string) => void): void {
  if (known !== undefined) inFolder(p, known.folder, at => (identityOf(fs.lstatSync(at)) === known.self ? act(at) : undefined))
}

/** `act` on `p` (as `/proc/self/fd/N/name`), when its folder is the one `folder` names; undefined when it is not, or `p` is gone. */
function inFolder<T>(p: string, folder: string | undefined, act: (at: string) => T): T | undefined {
  const fd = folder === undefined ? undefined : openSameFolder(path.dirname(p), folder)
  if (fd === undefined) return undefined // gone, or another folder now
  try {
    return act(`/proc/self/fd/${fd}/${path.basename(p)}`)
  } catch {
    return undefined // the placeholder is gone, or was never made
  } finally {
    fs.closeSync(fd)
  }
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

function locked<T>(claudeboxHome: string, step: () => T): T {
  fs.mkdirSync(path.join(claudeboxHome, MARKERS), { recursive: true, mode: 0o700 })
  return withLockSync(path.join(claudeboxHome, `${MARKERS}.lock`), LOCK_STALE_MS, step)
}

const markersOf = (claudeboxHome: string, placeholder: string): string => path.join(claudeboxHome, MARKERS, sha256Hex(placeholder).slice(0, 32))
const ownMarker = (): string => `${process.pid}-${pidScope()}`
