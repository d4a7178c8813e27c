// During and after a session: what the agent did to git that mounts cannot prevent. A commondir
// planted in a git dir is moved aside the moment it appears (the user's shell prompt may run git
// on the host meanwhile); after the session, a HEAD git no longer accepts, new submodule or
// worktree git dirs, and new or changed nested `.git` entries in the working tree are reported.
import fs from 'node:fs'
import path from 'node:path'
import { changedSince, isEmptyDir, lstatKind, namesUpTo, O_PATH, randomHex } from './fs.js'
import { guardHeads, headIsValid, type HeadGuard } from './head-guard.js'
import type { ModeGuard } from './mode-guard.js'
import { checkInProgress } from './in-progress.js'
import { checkIndexes } from './index-entries.js'
import { configReader, userGitConfigs } from './git-configs.js'
import { isCommondirPlaceholder } from './git-dirs.js'
import { watchGitlinks } from './gitlink-watch.js'
import { resolveChain } from './link-targets.js'
import { outOfOthersReach } from './out-of-reach.js'
import { folderCache, listFolder, type EntryKind, type FolderCache, type Listing } from './folder-cache.js'
import { describeNested, MAGIC, namedCommonDir, nestedGitDirOnly, nestedRecord, type Configured, type NestedRecord, type NestedRepo } from './nested-repos.js'
import { debug } from '../cli/log.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { isWithin, isWithinAny } from '../state/instance.js'
import type { GitWatchSpec } from '../types.js'

/** How many times a session may plant one forbidden name before it is ended (git init alone makes .git two or three times). */
const REPLANT_LIMIT = 10
/** How often the forbidden names are looked at besides inotify's events. */
const POLL_MS = 200
/** How many folders (and names searched for) the after-session search for nested `.git` looks at, at most. */
const SCAN_LIMIT = 300_000
/** Entries of git dirs looked at for FIFOs and sockets at the session's end, in all. */
const SWEEP_LIMIT = 200_000
/** Paths one warning names, at most (each up to PATH_MAX, escaped: a few MB in all). */
const REPORTED = 1024
/** Nested repositories looked into at the session's end, at most; the others are reported as they are found. */
const MAX_DESCRIBED = 512

export interface GitWatch {
  /** Looks once now, as every 200 ms: what the session planted meanwhile is moved aside (before a stop: run.ts). */
  sweep(): void
  /** Stops watching and returns the warnings for the user (empty when nothing happened). */
  finish(): string[]
}

/**
 * `startedMs`: when the session began; what changed since counts as its doing. Earlier than now
 * only for a session whose launcher was killed before its end (commands/unfinished.ts).
 */
export function startGitWatch(spec: GitWatchSpec, end: () => void = () => {}, startedMs = Date.now()): GitWatch {
  const moved: string[] = []
  const reported = new Set<string>()
  const [movedPaths, glimpsed] = [new Set<string>(), new Set<string>()]
  const replants = endings(end)
  const { endFor } = replants
  const away = awayFromTheSession(spec.quarantineDir)
  const quarantine = quarantineIn(spec, away, { moved, reported, movedPaths }, replants.again)
  const listings = new Map(spec.gitDirs.flatMap(dir => ['modules', 'worktrees'].map(sub => [path.join(dir, sub), gitDirNames(path.join(dir, sub))] as const)))
  const heads = guardHeads(spec.gitDirs, spec.workTrees, spec.ways, dir => replants.again(path.join(dir, 'HEAD')))
  const watch = watchDuringSession(spec, { quarantine, heads, glimpse: p => glimpsed.add(p), endFor }, startedMs)
  const report = (nestedDirs: string[], folders: FolderCache, wide: Buffer[]): string[] => {
    const warnings = replants.said()
    if (moved.length > 0) warnings.push(`the session created files that the host's git or tools would take config, hooks or code from; moved aside (look at them with ls and cat, not with git, which would take one for a repository; then delete them): ${named(moved)}`)
    const gone = [...glimpsed].filter(p => !movedPaths.has(p))
    if (gone.length > 0) warnings.push(`the session made, and removed again before the launcher could move them aside, files the host's git would take config, hooks or a repository from: ${named(gone.map(inlineSafe))}; a git the host ran in this project at that moment could have taken them: look at what it ran`)
    const movedBefore = moved.length
    warnings.push(...brokenHeads(spec.gitDirs), ...newGitDirs(listings), ...nestedInAll(spec, startedMs, quarantine, nestedDirs, folders, { trees: spec.workTrees, guard: heads.modes, wide }))
    if (moved.length > movedBefore) warnings.push(`the session left files git reads in the work tree as FIFOs or sockets (git would hang on them), or a .git that leads through /proc or /dev or by a path that is not UTF-8 (where git goes from it cannot be known), or a .git or commondir that leads out of the project or to nothing yet (another local user could make what it names); moved aside: ${named(moved.slice(movedBefore))}`)
    return warnings.map(w => `WARNING: ${w}`)
  }
  return {
    sweep: () => watch.sweep(),
    finish(): string[] {
      watch.stop()
      const warnings: string[] = []
      const step = stepsSaying(warnings)
      // One cache of folders for the sweep and the search below: a git dir's folders unchanged since
      // the last session's end are not listed again (its loose objects' folders are most of them).
      const folders = folderCache(spec.folderCache, keptIn(spec.gitDirs))
      const sweep = { entries: SWEEP_LIMIT }
      step('search of the git dirs for FIFOs', () => spec.gitDirs.forEach(dir => specialFilesIn(dir, sweep, folders, spec.gitDirs).forEach(quarantine)), undefined)
      const nestedDirs: string[] = []
      const wide: Buffer[] = []
      const dirsNow = step('listing of git dirs', () => gitDirsNow(spec.gitDirs), [...spec.gitDirs])
      warnings.push(...reportOrSay(() => report(nestedDirs, folders, wide)))
      // The last look, at every git dir there is now: those the session made (round 63: a
      // submodule's, left 777, was taken as one to keep so from the next launch on) and the nested
      // repositories' found (round 65), and the folders the search found, also when it failed (round 68).
      warnings.push(...step('look at modes', () => lastLook(heads, [...dirsNow, ...nestedDirs], wide), []))
      // Every git dir there is now, nested repositories' too (red team, round 41: a nested
      // repository's index wrote ../.git/config at the host's git checkout . there).
      const gitDirs = [...new Set([...dirsNow, ...nestedDirs])]
      const movedBefore = moved.length
      // The nested ones' too (red team, round 45: a FIFO in a nested git dir), every one within the
      // one budget (round 50: past 64, a FIFO info/exclude stayed unnamed).
      const nested = gitDirs.filter(dir => !spec.gitDirs.includes(dir))
      step('search of nested git dirs for FIFOs', () => nested.forEach(dir => specialFilesIn(dir, sweep, folders, spec.gitDirs).forEach(quarantine)), undefined)
      step('folder cache', () => folders.save(), undefined)
      if (sweep.entries < 0) warnings.push(`WARNING: the search for FIFOs and sockets in git dirs (git hangs on them) stopped after ${SWEEP_LIMIT} entries; git dirs it may not have finished: ${[...spec.gitDirs, ...nested].slice(-3).map(inlineSafe).join(', ')}, ...: look for them there (find <dir> -type p -o -type s) before you run git`)
      const later = [...step('check of operations in progress', () => checkInProgress(gitDirs, quarantine), []), ...step('check of the indexes', () => indexChecks(gitDirs, quarantine, heads), [])]
      if (moved.length > movedBefore) warnings.push(`WARNING: moved aside at the session's end (look at them with ls and cat, not with git): ${named(moved.slice(movedBefore))}`)
      away.close()
      return [...warnings, ...later]
    },
  }
}

/**
 * Runs each step of the session's end on its own: one that throws (a session can make one: round
 * 69, a text past V8's longest string) is said in `warnings`, and the steps after it, the index
 * check last, still run.
 */
function stepsSaying(warnings: string[]): <T>(what: string, run: () => T, none: T) => T {
  return (what, run, none) => {
    const begun = performance.now()
    try {
      return run()
    } catch (error) {
      warnings.push(`WARNING: claudebox's ${what} at the session's end failed (${inlineSafe(String((error as Error).message))}); look for yourself before you run git here`)
      return none
    } finally {
      debug(`${what} at the session's end: ${(performance.now() - begun).toFixed(1)} ms`)
    }
  }
}

/** At most REPORTED of `items`, joined, and how many more (round 69: a list past V8's longest string). */
function named<T>(items: readonly T[], text: (item: T) => string = String): string {
  return items.slice(0, REPORTED).map(text).join(', ') + (items.length > REPORTED ? ` and ${items.length - REPORTED} more` : '')
}

/**
 * What the folder cache keeps besides folders and the names searched for: in git dirs (the
 * launch's, and every `.git` folder) their links, FIFOs, sockets and devices, for the sweep; in a
 * work tree, FIFOs, sockets and devices only (a project's links are many: pnpm makes one for each
 * dependency).
 */
function keptIn(gitDirs: readonly string[]): (dir: string, name: string, kind: EntryKind) => boolean {
  return (dir, name, kind) => SEARCHED_NAMES.has(name) || SPECIAL_KINDS.has(kind) || (kind === 'l' && inGitDir(dir, gitDirs))
}

/** Whether the folder `dir` (latin1) is in a git dir: one of `gitDirs`, or below a folder named .git. */
const inGitDir = (dir: string, gitDirs: readonly string[]): boolean => dir.endsWith('/.git') || dir.includes('/.git/') || isWithinAny(Buffer.from(dir, 'latin1').toString(), gitDirs)

/**
 * Why the session is ended early: a name planted REPLANT_LIMIT times (`again` counts each; each
 * plant is moved within moments, but a git the host runs in that moment could take it: red team,
 * round 29, 613 plants against a host loop of `git status`, one of which ran the session's config),
 * or `endFor` a reason of its own; `said` gives the warning for the report.
 */
function endings(end: () => void): { again: (p: string) => void; endFor: (why: string) => void; said: () => string[] } {
  const planted = new Map<string, number>()
  let ended: string | undefined
  const endFor = (why: string): void => {
    if (ended !== undefined) return
    ended = why
    end()
  }
  const again = (p: string): void => {
    const times = (planted.get(p) ?? 0) + 1
    planted.set(p, times)
    if (times >= REPLANT_LIMIT) endFor(`the session made ${inlineSafe(p)} ${REPLANT_LIMIT} times, each moved aside, and was ended: a git the host ran at the moment of one could have taken it; look at what git ran in this project since (the config of each one moved aside below)`)
  }
  return { again, endFor, said: () => (ended === undefined ? [] : [ended]) }
}

/** The index checks, with the folders of each gitlink an index lists narrowed (round 67), and said. */
function indexChecks(gitDirs: readonly string[], quarantine: (p: string) => void, heads: HeadGuard): string[] {
  const before = heads.modes.narrowed().length
  const warnings = checkIndexes(gitDirs, quarantine, (dir, links) => heads.modes.gitlinks(dir, links))
  const taken = heads.modes.narrowed().slice(before)
  if (taken.length === 0) return warnings
  return [...warnings, `WARNING: other users could write to the folders of a gitlink in an index (your git status at the top enters its .git, there or put there later); taken back: ${named(taken)}`]
}

/** The head guard's last look, and what it took back or put back, in words for the user. */
function lastLook(heads: HeadGuard, gitDirs: readonly string[], folders: readonly Buffer[]): string[] {
  try {
    heads.check(true, gitDirs)
    heads.modes.folders(folders)
  } catch (error) {
    return [`WARNING: the last look at the git dirs' HEADs and modes failed (${inlineSafe((error as Error).message)}); look at them (ls -la) before you run git here`]
  }
  // What was not done first: a report cut short still says it (round 70).
  const narrowed = heads.modes.narrowed().sort((a, b) => Number(!a.startsWith('not ')) - Number(!b.startsWith('not ')))
  const restored = heads.restored()
  return [
    ...(narrowed.length === 0 ? [] : [`other users could write to a git dir or to folders of the project, beyond what your umask gives (a session can make it so; any local user could then replace the config your git runs, or put a .git there for it to take); taken back: ${named(narrowed)}`]),
    ...(restored.length === 0 ? [] : [`the session made a git dir one git rejects (a bad HEAD, or its access taken away: git would then take another folder, with a config the session may have written, for the repository); put back as it was: ${named(restored)}`]),
  ].map(w => `WARNING: ${w}`)
}

/**
 * The warnings of `report`, or, when it fails, one that says so: the index and operation checks
 * after it run either way (red team, round 49: a failure there lost every warning and skipped them).
 */
function reportOrSay(report: () => string[]): string[] {
  try {
    return report()
  } catch (error) {
    return [`WARNING: the search for nested git repositories failed (${inlineSafe((error as Error).message)}); look for .git folders and files in the project, and their configs and hooks, before you run git in it`]
  }
}

/**
 * Moves what was planted at `planned` out of the session's reach (moveAside), noting it in `log`;
 * `again` counts the plants of each name.
 */
function quarantineIn(spec: GitWatchSpec, away: Away, log: { moved: string[]; reported: Set<string>; movedPaths: Set<string> }, again: (p: string) => void): (planned: string) => void {
  const { moved, reported } = log
  const placeholders = new Set(spec.placeholders)
  const headPlaceholders = new Set(spec.headPlaceholders)
  return (planned: string): void => {
    // The agent may replace a parent by a symlink, even while this runs: the parent is reached
    // through directory fds opened one component at a time without following a symlink, and the
    // rename names the file through that fd, so nothing outside the project can be moved.
    const parent = openParentNoFollow(planned, spec)
    if (parent === undefined) {
      if (!reported.has(planned) && existsThroughLinks(planned)) {
        moved.push(`${inlineSafe(planned)} (not moved: a folder on its way is now a symlink that leads out of the project, or cannot be opened; fix that before running git here)`)
        reported.add(planned)
      }
      return
    }
    try {
      const name = path.basename(planned)
      const here = `/proc/self/fd/${parent}`
      try {
        withAccess(parent, () => fs.lstatSync(`${here}/${name}`))
      } catch {
        return
      }
      // claudebox's own placeholder (git takes the git dir itself from it): where it belongs.
      if (placeholders.has(planned) && placeholderThere(parent, `${here}/${name}`)) return
      if (headPlaceholders.has(planned) && emptyFolderThere(parent, `${here}/${name}`)) return
      // A random suffix: the agent cannot occupy the name in advance to make the move fail.
      const asideName = `${name}.claudebox-quarantine-${randomHex(6)}`
      const where = moveAside(parent, name, asideName, away)
      if (where !== 'failed') {
        moved.push(`${inlineSafe(planned)} -> ${inlineSafe(path.join(where === 'away' ? spec.quarantineDir : path.dirname(planned), asideName))}`)
        log.movedPaths.add(planned)
        again(planned)
      }
      else if (!reported.has(planned)) {
        moved.push(`${inlineSafe(planned)} (could not be moved aside: remove it before running git here)`)
        reported.add(planned)
      }
    } finally {
      fs.closeSync(parent)
    }
  }
}

/** The quarantine folder, opened when first needed. */
interface Away {
  fd(): number | undefined
  close(): void
}

/**
 * The folder planted files are moved into, out of the session's reach ($CLAUDEBOX_HOME/quarantine/
 * <id>, never bound into a sandbox). In place, the session could rename one back, again and again,
 * until a git the host ran meanwhile took it (red team: a shell loop of `git status` did). Opened
 * once, when first needed; on another file system (EXDEV) files are moved aside in place.
 */
function awayFromTheSession(dir: string): Away {
  let fd: number | undefined | null = null
  return {
    fd() {
      if (fd !== null) return fd
      fd = undefined
      try {
        fs.mkdirSync(dir, { mode: 0o700, recursive: true })
      } catch {
        // there already (a session before), or not possible: then in place
      }
      try {
        fd = fs.openSync(dir, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW)
      } catch {
        fd = undefined
      }
      return fd
    },
    close() {
      if (typeof fd === 'number') fs.closeSync(fd)
    },
  }
}

/**
 * Moves `name` out of the directory open as `dir`: into the quarantine when it can, else aside in
 * place. A folder moved to another folder must itself be writable (its `..` changes): one the
 * session made read-only (chmod 500: as a user the move failed, and it went aside in place, where
 * the session renamed it back, red team round 29) is given write access for that moment.
 */
function moveAside(dir: number, name: string, asideName: string, away: Away): 'away' | 'here' | 'failed' {
  const target = away.fd()
  if (target !== undefined) {
    const into = `/proc/self/fd/${target}/${asideName}`
    if (renameInside(dir, name, into)) return 'away'
    const entry = openEntryNoFollow(dir, name)
    if (entry !== undefined) {
      try {
        withAccess(entry, () => withAccess(dir, () => fs.renameSync(`/proc/self/fd/${dir}/${name}`, into)))
        return 'away'
      } catch {
        // not ours to change: aside in place
      } finally {
        fs.closeSync(entry)
      }
    }
  }
  return renameInside(dir, name, asideName) ? 'here' : 'failed'
}

/** The folder `name` in the directory open as `dir` (O_PATH, never through a symlink); undefined when it is not one. */
function openEntryNoFollow(dir: number, name: string): number | undefined {
  try {
    return withAccess(dir, () => fs.openSync(`/proc/self/fd/${dir}/${name}`, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW))
  } catch {
    return undefined
  }
}

/**
 * Renames `name` to `asideName` in the directory open as `dir`. A directory the session made
 * read-only (chmod a-w: as a user, the rename then failed and the host's git used the planted
 * file) is made writable for the moment of the rename: it is the user's own.
 */
function renameInside(dir: number, name: string, asideName: string): boolean {
  const here = `/proc/self/fd/${dir}`
  try {
    withAccess(dir, () => fs.renameSync(`${here}/${name}`, asideName.startsWith('/') ? asideName : `${here}/${asideName}`))
    return true
  } catch {
    return false
  }
}

/**
 * `op` on the directory open (O_PATH) as `dir`; when the session took the user's access away
 * (chmod 100, 300 or 000 of a folder: as a user the launcher then could neither see nor move what
 * was planted in it, red team), again with it given back for that moment, then the mode restored.
 */
function withAccess<T>(dir: number, op: () => T): T {
  try {
    return op()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error
  }
  const here = `/proc/self/fd/${dir}`
  const mode = fs.statSync(here).mode & 0o7777
  fs.chmodSync(here, mode | 0o700)
  try {
    return op()
  } finally {
    fs.chmodSync(here, mode)
  }
}

/** Whether `file` (in the folder open as `parent`) is claudebox's commondir placeholder, read with the user's access given back if the session took it. */
function placeholderThere(parent: number, file: string): boolean {
  try {
    return withAccess(parent, () => {
      fs.closeSync(fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK))
      return isCommondirPlaceholder(file)
    })
  } catch {
    return false
  }
}

/** Whether `dir` (in the folder open as `parent`) is an empty folder, never a link: a HEAD placeholder as made. */
function emptyFolderThere(parent: number, dir: string): boolean {
  try {
    return withAccess(parent, () => fs.lstatSync(dir).isDirectory() && fs.readdirSync(dir).length === 0)
  } catch {
    return false
  }
}

/**
 * Looks at the forbidden names and the guarded links at each inotify event and every POLL_MS (a
 * flood of other events can overflow the inotify queue and drop the one that matters). A guarded
 * link replaced by anything else (a real hooks dir, a link elsewhere) is moved aside; one only
 * removed stays removed: nothing runs from it.
 */
interface Reactions {
  quarantine: (p: string) => void
  heads: HeadGuard
  /** A watched name seen missing at its event: made and removed again before the look. */
  glimpse: (p: string) => void
  /** Ends the session, saying why in the report. */
  endFor: (why: string) => void
}

function watchDuringSession(spec: GitWatchSpec, { quarantine, heads, glimpse, endFor }: Reactions, startedMs: number): { sweep(): void; stop(): void } {
  const texts = new Map(spec.links.map(l => [l.path, l.text]))
  const placeholders = placeholderCheck(spec, endFor)
  const check = (p: string): void => {
    const text = texts.get(p)
    if (text === undefined) quarantine(p)
    else if (lstatKind(p) !== 'missing' && readLink(p) !== text) quarantine(p)
  }
  // An event on a name that must stay missing, which is missing again when looked at: the session
  // made it and removed it in the meantime (round 84: planted for a few milliseconds, timed to a
  // host git, and gone before the end, it left no report). A guarded link only removed is no harm.
  const onEvent = (p: string): void => {
    check(p)
    if (placeholders.covers(p)) placeholders.look()
    else if (!texts.has(p) && lstatKind(p) === 'missing') glimpse(p)
  }
  const watched = [...spec.forbidden, ...texts.keys()]
  // Each HEAD at each event on it, not only at the poll: a HEAD git rejects makes git take the
  // folder above for the repository (round 84: swapped in for 10 ms, timed to a host git commit).
  const watchers = [...watchForbidden(watched, onEvent), ...watchForbidden(spec.gitDirs.map(dir => path.join(dir, 'HEAD')), () => heads.headsNow(true))]
  const armed = new Map<string, fs.FSWatcher[]>()
  const forbid = (dotGit: string, workTree: string): void => {
    watched.push(dotGit)
    armGitlink(dotGit, workTree, armed, onEvent)
    check(dotGit)
  }
  const gitlinks = spec.gitlinks === undefined ? undefined : watchGitlinks(spec.gitlinks, { forbid, endFor }, startedMs)
  const each = (): void => {
    watched.forEach(check)
    heads.check()
  }
  const poll = watched.length === 0 && spec.gitDirs.length === 0 ? undefined : setInterval(() => (each(), placeholders.look()), POLL_MS).unref()
  return {
    sweep: each,
    stop(): void {
      gitlinks?.stop()
      for (const w of [...watchers, ...[...armed.values()].flat()]) w.close()
      clearInterval(poll)
      each()
    },
  }
}

/**
 * A gitlink's folder watched for a `.git`, and each folder on the way to it from its work tree for
 * the next one down: when one is made, removed or replaced (whose new inode a watch would miss),
 * it is all watched anew and looked at (red team, round 86: a gitlink staged before its folder
 * existed was watched by the 200 ms poll alone, and a .git held there for 30 ms when the host's git
 * status began won 8 of 9, unreported; round 88: the same two folders deep, 8 of 9).
 */
function armGitlink(dotGit: string, workTree: string, armed: Map<string, fs.FSWatcher[]>, onEvent: (p: string) => void): void {
  armed.get(dotGit)?.forEach(w => w.close())
  const rearm = (): void => {
    armGitlink(dotGit, workTree, armed, onEvent)
    onEvent(dotGit)
  }
  const onTheWay: string[] = []
  for (let folder = path.dirname(dotGit); isWithin(folder, workTree) && folder !== workTree; folder = path.dirname(folder)) onTheWay.push(folder)
  armed.set(dotGit, [...watchForbidden([dotGit], onEvent), ...watchForbidden(onTheWay, rearm)])
}

/**
 * The placeholders bound read-only for the session (sandbox/git-guard.ts) must stay what they are:
 * removed or replaced on the host (git clean -fdx, git stash -u take an empty folder at the top),
 * the kernel detaches the sandbox's mount, and the name is the session's again (red team, round 86:
 * then a plant timed to a host commit won 7 of 9). The session is ended.
 */
function placeholderCheck(spec: GitWatchSpec, endFor: (why: string) => void): { covers(p: string): boolean; look(): void } {
  const all = new Set([...spec.placeholders, ...spec.headPlaceholders])
  return {
    covers: p => all.has(p),
    look(): void {
      const gone = spec.placeholders.find(p => !isCommondirPlaceholder(p)) ?? spec.headPlaceholders.find(p => !isEmptyDir(p))
      if (gone === undefined) return
      endFor(`${inlineSafe(gone)}, a placeholder claudebox bound read-only for the session, was removed or replaced outside it (git clean -fdx or git stash -u on the host take an empty folder), which gave the name back to the session: a git run there could take what the session put in its place, so the session was ended; start it again`)
    },
  }
}

/**
 * A directory fd of `p`'s parent, reached from the working tree or the git dir that holds it, one
 * component at a time, never through a symlink (a component that is one ends the walk: undefined).
 */
function openParentNoFollow(p: string, spec: GitWatchSpec): number | undefined {
  const root = [...spec.workTrees, ...spec.gitDirs].filter(r => path.dirname(p) === r || p.startsWith(`${r}/`)).sort((a, b) => b.length - a.length)[0]
  if (root === undefined) return undefined
  const { O_DIRECTORY, O_NOFOLLOW } = fs.constants
  let fd: number
  try {
    // O_PATH: a folder the session made unreadable (chmod 300) is still opened.
    fd = fs.openSync(root, O_PATH | O_DIRECTORY)
  } catch {
    return undefined
  }
  for (const part of path.relative(root, path.dirname(p)).split(path.sep).filter(Boolean)) {
    let next: number
    try {
      const parent = fd
      next = withAccess(parent, () => fs.openSync(`/proc/self/fd/${parent}/${part}`, O_PATH | O_DIRECTORY | O_NOFOLLOW))
    } catch {
      fs.closeSync(fd)
      return undefined
    }
    fs.closeSync(fd)
    fd = next
  }
  return fd
}

function readLink(p: string): string | undefined {
  try {
    return fs.readlinkSync(p)
  } catch {
    return undefined
  }
}

/** Whether `p` exists when its parents are followed (a symlinked parent leading elsewhere). */
function existsThroughLinks(p: string): boolean {
  try {
    fs.statSync(p)
    return true
  } catch {
    return false
  }
}

function watchForbidden(forbidden: readonly string[], quarantine: (p: string) => void): fs.FSWatcher[] {
  const byDir = new Map<string, Set<string>>()
  for (const p of forbidden) byDir.set(path.dirname(p), (byDir.get(path.dirname(p)) ?? new Set()).add(path.basename(p)))
  const watchers: fs.FSWatcher[] = []
  for (const [dir, names] of byDir) {
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (name !== null && names.has(name)) quarantine(path.join(dir, name))
      })
      watcher.on('error', () => watcher.close())
      watchers.push(watcher)
    } catch {
      // The dir vanished or cannot be watched: the check after the session still runs.
    }
  }
  return watchers
}

/** A HEAD git does not accept makes git skip this repository and use one further up. */
function brokenHeads(gitDirs: readonly string[]): string[] {
  return gitDirs
    .filter(dir => !headIsValid(dir))
    .map(dir => `${inlineSafe(dir)}/HEAD is one git rejects (gone, not a file, junk, or a symlink out of refs/): git no longer sees this repository and may take another folder for it; restore it before running git here (e.g. echo 'ref: refs/heads/main' > ${inlineSafe(dir)}/HEAD)`)
}

function newGitDirs(listings: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out: string[] = []
  for (const [dir, before] of listings) {
    const added = [...gitDirNames(dir)].filter(name => !before.has(name))
    if (added.length > 0) out.push(`new git dirs appeared in ${dir}: ${added.map(inlineSafe).join(', ')}; their config and hooks run when git uses them: inspect them`)
  }
  return out
}

/**
 * The git dirs there are when the session ends: those of the launch and the linked worktrees' and
 * submodules' the session made below them (red team, round 40: a `git worktree add` inside, whose
 * index then wrote `../.git/config` at the host's `git checkout .`, was never looked at). At most 256.
 */
function gitDirsNow(known: readonly string[]): string[] {
  const all = [...known]
  // One budget of entries for every holder (red team, round 48: a chain of 254 module git dirs, each
  // `worktrees` a link to a folder of 250,000 files, held the session's end 202 s).
  const budget = { entries: 20_000 }
  for (let i = 0; i < all.length && all.length < 256; i++) {
    for (const holder of ['worktrees', 'modules'].map(sub => path.join(all[i] as string, sub))) {
      for (const name of gitDirNames(holder, budget)) if (!all.includes(path.join(holder, name))) all.push(path.join(holder, name))
    }
  }
  return all.slice(0, 256)
}

/** Git dirs below `holder` (modules/ or worktrees/) by name, names of several parts included (vendor/x). */
function gitDirNames(holder: string, budget = { entries: 10_000 }): Set<string> {
  const names = new Set<string>()
  const walk = (dir: string, depth: number): void => {
    // Never through a link (the next launch refuses a linked holder), and one entry at a time.
    if (lstatKind(dir) !== 'dir') return
    for (const name of namesUpTo(dir, budget)) {
      const p = path.join(dir, name)
      if (lstatKind(p) !== 'dir') continue
      const head = lstatKind(path.join(p, 'HEAD'))
      if (head === 'file' || head === 'symlink') names.add(path.relative(holder, p))
      else if (depth < 40) walk(p, depth + 1) // a name of several parts (red team: vendor/y went unseen)
    }
  }
  walk(holder, 0)
  return names
}

/** Files git opens in every folder of the work tree: a FIFO there hangs the host's git (red team). */
const READ_BY_GIT = new Set(['.gitignore', '.gitattributes', '.gitmodules', '.mailmap'])
/** A FIFO, socket or device: git blocks on, or cannot read, what it expects to be a file. */
const SPECIAL_KINDS = new Set<EntryKind>(['p', 's', 'b', 'c'])
/** The names the nested-repository search looks at besides folders: a `.git`, what git reads in every folder, what makes a folder a git dir. */
const SEARCHED_NAMES = new Set(['.git', ...READ_BY_GIT, 'HEAD', 'commondir', 'objects', 'refs'])

/**
 * A `.git` file or directory created in a subdirectory, or a nested repository whose config or
 * hooks changed, runs its own config for git started there (a shell prompt does) and, registered as
 * a gitlink, for `git status` at the top. The tree is searched without following symlinks.
 */
function nestedGit(workTree: string, search: NestedSearch, folders: FolderCache, ownTop = true): string[] {
  // Names are bytes: a folder named in something other than UTF-8 (d\377) must still be entered (red team:
  // a string path lost the byte, its repository went unreported); latin1 strings on the way (folder-cache.ts).
  const lists: NestedLists = { found: [], unreadable: [], unchecked: [] }
  const bytes = (latin1: string): Buffer => Buffer.from(latin1, 'latin1')
  const top = Buffer.from(workTree).toString('latin1')
  const stack = [top]
  let seen = 0
  // Only the work trees' folders for their modes: those the session changed (round 68).
  const modes = ownTop && search.modes.trees.includes(workTree) ? search.modes : undefined
  while (stack.length > 0 && seen < SCAN_LIMIT) {
    const dir = stack.pop() as string
    const listing = listedFor(dir, folders, lists, modes, search.sinceMs)
    if (listing === undefined) continue
    // Folders and the names searched for count, not every file, link or FIFO: 300,001 of them in one
    // folder ended the search before a repository, or a folder writable for others, beside them
    // (red team, rounds 50 and 69).
    seen += listing.entries.filter(e => e[0] === 'd' || SEARCHED_NAMES.has(e.slice(1))).length
    // Left writable for others by the session: any local user could make a .git in it, which your
    // git would take (at the top too, for a gitlink there, in the index or a commit: round 68).
    if (modes !== undefined && (listing.changedMs ?? 0) >= search.sinceMs && modes.guard.wider(listing.mode ?? 0)) modes.wide.push(bytes(dir))
    // A folder shaped like a git dir (HEAD, objects/, refs/) is a repository to git run there, or
    // below when a .git is rejected (red team: the top's own config then ran at git status).
    // A folder shaped like a git dir is looked at as a repository of its own unless it is a `.git`
    // (the repository whose .git it is is looked at from that entry; the top's is the project's) or a
    // git dir claudebox knows (the top's, its submodules' and worktrees').
    const own = dir.endsWith('/.git') || search.known.has(bytes(dir).toString())
    if (!own && looksLikeGitDir(dir, listing.entries) && nestedChanged(bytes(dir), bytes(dir).toString(), true, search, lists.unchecked)) lists.found.push(bytes(dir))
    for (const entry of listing.entries) {
      const kind = entry[0] as EntryKind
      const name = entry.slice(1)
      const p = `${dir}/${name}`
      // git opens these through a link too (red team, round 46: `.gitmodules -> fifo` hung git status).
      if (READ_BY_GIT.has(name) && (SPECIAL_KINDS.has(kind) || (kind === 'l' && leadsToSpecial(bytes(p))))) search.moveAside(bytes(p).toString())
      // The project's own .git is not a nested one; the instance has none of its own.
      if (name === '.git' && (!ownTop || dir !== top) && nestedChanged(bytes(p), bytes(dir).toString(), false, search, lists.unchecked)) lists.found.push(bytes(p))
      // Into .git folders too: a repository kept in one and reached by a symlink from the work tree
      // runs its config at git status there (red team, round 47: `tools -> .git/stash/r`).
      if (kind === 'd') stack.push(p)
    }
  }
  return nestedWarnings(workTree, lists, stack.slice(-3).map(bytes))
}

/** What the search found in one tree, for its warnings. */
interface NestedLists {
  found: Buffer[]
  unreadable: Buffer[]
  /** Repositories at paths that are not UTF-8: git's index of them cannot be read here. */
  unchecked: Buffer[]
}

/**
 * The listing of `dir` (latin1), or undefined when it cannot be had. A folder that can be entered
 * but not listed (chmod 111) still lets git reach a .git in it by name: it is reported, or, in a work
 * tree and made so by the session, made readable to you again and listed (round 68).
 */
function listedFor(dir: string, folders: FolderCache, lists: NestedLists, modes: NestedSearch['modes'] | undefined, sinceMs: number): Listing | undefined {
  for (let again = modes !== undefined; ; again = false) {
    try {
      return folders.list(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (code === 'EACCES' && again && modes?.guard.reopen(Buffer.from(dir, 'latin1'), sinceMs) === true) continue
      if (!['ENOENT', 'ENOTDIR'].includes(code)) lists.unreadable.push(Buffer.from(dir, 'latin1'))
      return undefined
    }
  }
}

/** The warnings of the search of `workTree`; `left`, the folders it did not get to (none when it finished). */
function nestedWarnings(workTree: string, { found, unreadable, unchecked }: NestedLists, left: Buffer[]): string[] {
  // At most REPORTED paths a line (round 68: 40,000 long ones made a string longer than V8's longest).
  const shown = (paths: Buffer[]): string => named(paths, p => inlineSafe(p.toString()))
  const out: string[] = []
  if (found.length > 0) {
    out.push(`the session created or changed nested git repositories, whose config and hooks run when git is used there (or at the top, for a submodule): ${shown(found)}; inspect them (cat <dir>/config, ls <dir>/hooks and the folder its core.hooksPath names) before running git in or above them`)
  }
  if (unreadable.length > 0) {
    out.push(`folders the search for nested git repositories could not list (a repository in them would run its config and hooks unseen): ${shown(unreadable)}; make them readable (chmod u+rx) and look inside before running git here`)
  }
  if (unchecked.length > 0) out.push(`nested git repositories at paths that are not UTF-8, whose index claudebox cannot have git read (git checkout there could write what it lists anywhere): ${shown(unchecked)}; rename them, then run git reset in them before any git checkout`)
  if (left.length > 0) {
    out.push(`the search for nested git repositories stopped after ${SCAN_LIMIT} folders in ${inlineSafe(workTree)}; not searched: ${shown(left)} and more, whose repositories' configs, hooks and indexes were not checked, nor folders left writable for others: look for them (find ${inlineSafe(workTree)} -name .git -o -name HEAD -o -type p -o -type d -perm /022) before you run git there`)
  }
  return out
}

/** A path as text, for git; one that is not UTF-8 is noted in `unchecked` (and its text will not be found). */
function textPath(p: Buffer, unchecked: Buffer[]): string {
  const text = p.toString()
  if (!Buffer.from(text).equals(p)) unchecked.push(p)
  return text
}

/** What the search for nested repositories carries from folder to folder. */
interface NestedSearch {
  sinceMs: number
  moveAside: (p: string) => void
  configured: Configured
  /** Every git dir found, for the index and operation checks. */
  gitDirs: string[]
  /** What each repository was at the last session's end. */
  record: NestedRecord
  /** How many repositories were looked into, and the files still to be looked at for all of them. */
  described: number
  budget: { lines: number }
  /** The git dirs claudebox knows (the top's, its submodules' and worktrees'), not nested repositories. */
  known: Set<string>
  /** Where a nested repository's git dir may be: the work trees, the launch's git dirs, the instance (Claude keeps plugins' clones there). */
  inside: readonly string[]
  /** The user's home, for what a config's `~` names. */
  home: string
  /** The work trees whose folders' modes are looked at, the guard, and the folders it is to narrow. */
  modes: { trees: readonly string[]; guard: ModeGuard; wide: Buffer[] }
}

/**
 * A nested repository at `entry` (its `.git`, or a folder shaped as a git dir) in the work tree
 * `tree`: its git dirs go to the search's (their index and operation files are checked), and
 * whether to report it: what git takes from it differs from the last session's end, or, with no
 * record of it, changed during this session. One that leads where git's own walk cannot be known
 * (through /proc) is moved aside.
 */
function nestedChanged(entry: Buffer, tree: string, isGitDir: boolean, search: NestedSearch, unchecked: Buffer[]): boolean {
  const text = textPath(entry, unchecked)
  // A .git or commondir the session made or changed that leads out of the project, or to nothing
  // yet, is moved aside, past the bound below too (round 70: 88 of 600 went unmoved).
  const out = waysOut(text, isGitDir, search)
  if (out.length > 0 && (changedSince(entry, search.sinceMs) || out.some(p => changedSince(Buffer.from(p), search.sinceMs)))) {
    out.forEach(search.moveAside)
    return true
  }
  // Each costs a few dozen stats: thousands a session made are reported unread, not read for
  // minutes (a folder's own index still counts for the index check's bound and its warning).
  if (search.described++ >= MAX_DESCRIBED) {
    const gitDir = nestedGitDirOnly(text, isGitDir)
    if (gitDir !== undefined) search.gitDirs.push(gitDir)
    return true
  }
  let repo: NestedRepo
  try {
    repo = describeNested(text, tree, isGitDir, search.configured, search.budget)
  } catch {
    return true // not looked into: reported
  }
  // Changed on the way to it (a link re-pointed) during the session, too.
  if (out.length > 0 && repo.newestMs >= search.sinceMs - 1) {
    out.forEach(search.moveAside)
    return true
  }
  search.gitDirs.push(...repo.gitDirs)
  if (repo.magic !== undefined) {
    search.moveAside(repo.magic)
    return true
  }
  const before = search.record.previous(text)
  search.record.keep(text, repo)
  const appeared = search.record.known && before === undefined
  const reported = appeared || (before !== undefined && before !== repo.digest) || repo.newestMs >= search.sinceMs - 1 || repo.unlisted
  // Its configs as git reads them now, whichever file of them changed (round 72: an include file
  // in the work tree, rewritten in a second session, named a program another user made).
  const gitDir = reported ? nestedGitDirOnly(text, isGitDir) : undefined
  if (gitDir !== undefined) configsOut(gitDir, namedCommonDir(gitDir)?.to ?? gitDir, path.dirname(text), search, false).forEach(search.moveAside)
  return reported
}

/**
 * What to move aside where a nested repository leads out of the project (`inside`), or to nothing
 * yet: another local user can make what it names later, and your git then takes it. Its `.git`
 * (round 68: `gitdir: /tmp/x`; one made with --separate-git-dir in the sandbox's own /tmp); its
 * `commondir` (round 70: it named /tmp/x, and git status at the top took that through a gitlink;
 * round 71: a link as commondir); a link among the names git reads there (round 71: config ->
 * /tmp/c); a config the session changed that includes a file, names a hooks folder (round 71) or a
 * program (round 72) outside that another user could make.
 */
function waysOut(entry: string, isGitDir: boolean, search: NestedSearch): string[] {
  const { inside } = search
  const gitDir = nestedGitDirOnly(entry, isGitDir)
  if (gitDir === undefined || !isWithinAny(gitDir, inside)) return [entry]
  const common = namedCommonDir(gitDir)
  if (common !== undefined && (lstatKind(common.file) !== 'file' || common.to === undefined || !isWithinAny(common.to, inside))) return [common.file]
  const dirs = [...new Set([gitDir, common?.to ?? gitDir])]
  const leadsOut = (p: string): boolean => {
    const end = resolveChain(p).end
    return end === undefined || end.kind === 'missing' || !isWithinAny(end.path, inside)
  }
  const links = dirs.flatMap(dir => GIT_READ.map(name => `${dir}/${name}`)).filter(p => lstatKind(p) === 'symlink' && leadsOut(p))
  return [...links, ...configsOut(gitDir, common?.to ?? gitDir, path.dirname(entry), search, true).filter(c => !links.includes(c))]
}

/**
 * A nested repository's configs (its common dir's config, its git dir's config.worktree), as git
 * reads them with their includes from the work tree `tree`, when they make git take a program,
 * hooks or a file from outside the project that another user could make; `changedOnly`, only if
 * one of them changed during the session (a git run each).
 */
function configsOut(gitDir: string, common: string, tree: string, search: NestedSearch, changedOnly: boolean): string[] {
  const configs = [`${common}/config`, `${gitDir}/config.worktree`].filter(c => lstatKind(c) === 'file')
  if (configs.length === 0 || (changedOnly && !configs.some(c => changedSince(Buffer.from(c), search.sinceMs)))) return []
  return configLeadsOut(configs, tree, search) ? configs : []
}

/** The names git reads in a git dir that a link could lead elsewhere from. */
const GIT_READ = ['config', 'config.worktree', 'HEAD', 'hooks', 'objects', 'refs', 'info', 'packed-refs']

/**
 * Whether `configs` (and what they include) make git run a program, take hooks or include a file
 * from outside the project that another local user could make or change (outOfOthersReach): one
 * not there yet, or one they could replace on the way to it (round 72: core.fsmonitor = /tmp/x;
 * round 73: a link of theirs on the way, an `ext::` remote's command, a work tree outside).
 * Programs in folders only root or you can write (/usr/bin) are not.
 */
function configLeadsOut(configs: readonly string[], tree: string, search: NestedSearch): boolean {
  const reader = configReader(search.home)
  const targets = reader.targets(tree, configs)
  // Where each leads, links followed as far as they go (round 72: an include `../settings.inc`, a
  // link in the project to /tmp/x that another user made later).
  const leadsOut = (t: string, entries: boolean): boolean => {
    // Through /proc or /dev a path is another file to git, run from another folder (round 48).
    if (MAGIC.test(t)) return true
    const chain = resolveChain(t)
    const inside = isWithinAny(chain.end?.path ?? t, search.inside) && chain.links.every(link => isWithinAny(link.path, search.inside))
    return !inside && !outOfOthersReach(t, { entries }, chain)
  }
  return reader.refusal !== undefined || targets.some(t => leadsOut(t, true)) || reader.workTrees(configs).some(t => leadsOut(t, false))
}

/** Whether a link leads to a FIFO, socket or device. */
function leadsToSpecial(link: Buffer): boolean {
  try {
    const st = fs.statSync(link)
    return !st.isFile() && !st.isDirectory()
  } catch {
    return false
  }
}

/**
 * FIFOs, sockets and devices anywhere in a git dir (packed-refs, info/exclude, refs/heads/main ...):
 * git reads those files, and would hang on a FIFO at the user's next git status (red team). Its
 * folders come from `folders` (a folder unchanged since the last session's end is not listed), or,
 * for a git dir whose links the cache does not keep (a nested one shaped as a bare repository),
 * are listed now.
 */
function specialFilesIn(gitDir: string, budget: { entries: number }, folders: FolderCache, gitDirs: readonly string[]): string[] {
  const found: string[] = []
  const top = Buffer.from(gitDir).toString('latin1')
  const direct = (dir: string): Listing => listFolder(Buffer.from(dir, 'latin1'), (_name, kind) => kind !== 'f')
  const list = inGitDir(top, gitDirs) ? (dir: string): Listing => folders.list(dir) : direct
  const walk = (dir: string, listing: Listing): void => {
    // The files git opens by name first (HEAD, packed-refs, info/, refs/), objects/ last: a budget
    // spent on loose objects left a FIFO packed-refs in place (red team, round 50).
    const entries = dir === top ? [...listing.entries].sort((a, b) => Number(a === 'dobjects') - Number(b === 'dobjects')) : listing.entries
    for (const entry of entries) {
      if (budget.entries-- <= 0) return
      const kind = entry[0] as EntryKind
      const p = `${dir}/${entry.slice(1)}`
      // git opens them through a link too (red team, round 47: packed-refs -> ../junk/fifo hung git status).
      if (SPECIAL_KINDS.has(kind) || (kind === 'l' && leadsToSpecial(Buffer.from(p, 'latin1')))) found.push(Buffer.from(p, 'latin1').toString())
      // modules/ and worktrees/ hold git dirs of their own, each looked at in turn.
      else if (kind === 'd' && !(dir === top && (entry === 'dmodules' || entry === 'dworktrees'))) listed(p, list)
    }
  }
  const listed = (dir: string, lister: (dir: string) => Listing): void => {
    try {
      walk(dir, lister(dir))
    } catch {
      // gone or unreadable: nothing git could open there either
    }
  }
  listed(top, dir => {
    try {
      return list(dir)
    } catch (error) {
      // A git dir named through a link (a nested .git file's gitdir:) is read through it, as git does.
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error
      return direct(dir)
    }
  })
  return found
}

/**
 * git's is_git_directory: HEAD, and objects and refs it may enter (access X_OK, through symlinks:
 * red team, `objects -> ../.git/objects`), or a commondir naming where they are.
 */
function looksLikeGitDir(dir: string, entries: Listing['entries']): boolean {
  const named = (name: string): string | undefined => entries.find(e => e.slice(1) === name)
  const head = named('HEAD')
  if (head === undefined || head.startsWith('d')) return false
  if (named('commondir') !== undefined) return true
  // git only asks access(X_OK): an executable file, or a link to one, passes (red team, round 26).
  const enterable = (name: string): boolean => {
    if (named(name) === undefined) return false
    try {
      fs.accessSync(Buffer.from(`${dir}/${name}`, 'latin1'), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  return enterable('objects') && enterable('refs')
}

/**
 * The nested-repository search over every work tree, the git dirs outside them and the instance.
 * Only the git dirs the launch protected are the project's own (red team, round 49: one below
 * worktrees/a/b, or past a budget, was taken for known and never looked at, while nothing protected it).
 */
function nestedInAll(spec: GitWatchSpec, sinceMs: number, moveAside: (p: string) => void, gitDirs: string[], folders: FolderCache, modes: NestedSearch['modes']): string[] {
  const known = spec.gitDirs
  const search: NestedSearch = { sinceMs, moveAside, configured: configuredOf(spec.home), gitDirs, record: nestedRecord(spec.nestedRecord), described: 0, budget: { lines: 65_536 }, known: new Set(known), inside: [...spec.workTrees, ...known, spec.instance], home: spec.home, modes }
  // The git dirs outside the work trees too (a --separate-git-dir's, a worktree's in the main .git
  // elsewhere): a repository kept in one is reached through a symlink the same way.
  const outside = known.filter(dir => !isWithinAny(dir, spec.workTrees))
  const tops = outside.filter(dir => !outside.some(top => top !== dir && isWithin(dir, top)))
  const out = [...spec.workTrees, ...tops].flatMap(tree => nestedGit(tree, search, folders))
  // The instance too, its own top included (red team, round 42: a repository made there, reached
  // by a symlink `sub` in the project, ran its fsmonitor at the host's git status in sub), from the
  // same cache: a few of its folders change at every session, the rest (Claude's file history,
  // todos, transcripts of other days) do not, and listing them all cost ~50 ms at every session's
  // end for an instance of 10,000 files.
  out.push(...nestedGit(spec.instance, search, folders, false))
  search.record.save()
  return out
}

/**
 * For a nested repository: the hooksPath folder and include files its configs and the user's name.
 * A reader of its own each, so that its bound on config files is this repository's (red team, round
 * 48: one reader for all spent it on the first 31 of 80); the user's configs are read once, from
 * the launch's cache of what git read in them.
 */
function configuredOf(home: string): Configured {
  return (tree, repoConfigs) => {
    const reader = configReader(home)
    const targets = reader.targets(tree, [...repoConfigs, ...userGitConfigs(home)])
    return { targets, problem: reader.refusal }
  }
}

