// During and after a session: what the agent did to git that mounts cannot prevent. During it,
// the names the host's git must not find (a .git at the top of a folder that is no repository, a
// missing include, the .git of a new gitlink) are moved aside the moment they appear
// (quarantine.ts), each HEAD is kept one git accepts, and the read-only placeholders must stay;
// after it, in order, FIFOs in git dirs, new git dirs, nested repositories (nested-search.ts),
// modes, operations in progress and indexes are looked at, and what was found is reported.
import fs from 'node:fs'
import path from 'node:path'
import { entryIdentity, isEmptyDir, lstatKind, namesUpTo } from './fs.js'
import { guardHeads, headIsValid, type HeadGuard } from './head-guard.js'
import { checkInProgress } from './in-progress.js'
import { checkIndexes, gitlinksOf } from './index-entries.js'
import { isCommondirPlaceholder } from './git-dirs.js'
import { newGitlinkGits, watchGitlinks, type Known } from './gitlink-watch.js'
import { folderCache, type FolderCache } from './folder-cache.js'
import { holdFolder } from './held-folder.js'
import { keptIn, nestedInAll, fifosAndLinksIn, usersOwnNested } from './nested-search.js'
import { markReported, reportedFile } from './reported-repos.js'
import { recordSession, sessionTimes, sessionTimesFile } from './session-times.js'
import { watchWriteThrough } from './write-through-watch.js'
import { awayFromTheSession, quarantineIn } from './quarantine.js'
import { identitiesNow, pinRoots, rootsOf, type WatchRoots } from './pinned-roots.js'
import { named } from './report-list.js'
import { debug, nowMs } from '../cli/log.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { isWithin } from '../state/instance.js'
import type { GitWatchSpec } from '../types.js'

/** How many times a session may plant one forbidden name before it is ended (git init alone makes .git two or three times). */
const REPLANT_LIMIT = 10
/** How often the forbidden names are looked at besides inotify's events. */
const POLL_MS = 200
/** Entries of git dirs looked at for FIFOs and sockets at the session's end, in all. */
const SWEEP_LIMIT = 200_000

export interface GitWatch {
  /** Looks once now, as every 200 ms: what the session planted meanwhile is moved aside (before a stop: run.ts). */
  sweep(): void
  /** Stops watching and returns the warnings for the user (empty when nothing happened). */
  finish(): string[]
  /** Whether the project's top folder was moved or removed during the session, where it is now, and what it is (held-folder.ts); asked after finish. */
  moved(): Whereabouts | undefined
  /** Why the watch ended the session, if it has: asked while the watch starts, before the program may run (its end then cannot reach a sandbox not yet built). */
  endedFor(): string | undefined
}

/**
 * `startedMs`: when the session began; what changed since counts as its doing. Earlier than now
 * only for a session whose launcher was killed before its end (commands/unfinished.ts), or for the
 * checks where a moved project went (launch.ts). `roots`: what the watch may change things in, as
 * bwrap was given it (run.ts), or, where a moved project went, the folder it was alone (a session
 * of a project holding it can swap a folder above the new path for a link: red team, rounds 114
 * and 115); by default the spec's folders as they are now.
 */
export function startGitWatch(spec: GitWatchSpec, end: () => void = () => {}, startedMs = Date.now(), roots?: WatchRoots): GitWatch {
  const [moved, reported, movedPaths, glimpsed]: [string[], Set<string>, Set<string>, Set<string>] = [[], new Set(), new Set(), new Set()]
  const project = whereabouts(spec.workTrees[0] ?? '/', roots?.top)
  const replants = endings(end, project.reword)
  const away = awayFromTheSession(spec.quarantineDir)
  const pinned = pinRoots(roots?.identities ?? identitiesNow(rootsOf(spec)))
  const quarantine = quarantineIn(spec, away, { moved, reported, movedPaths }, replants.again, pinned)
  const listings = new Map(spec.gitDirs.flatMap(dir => ['modules', 'worktrees'].map(sub => [path.join(dir, sub), gitDirNames(path.join(dir, sub))] as const)))
  const heads = guardHeads(spec.gitDirs, spec.workTrees, spec.ways, dir => replants.again(path.join(dir, 'HEAD')), pinned)
  const watch = watchDuringSession(spec, { quarantine, heads, glimpse: p => glimpsed.add(p), endFor: replants.endFor, here: () => project.moved() === undefined }, startedMs)
  const duringSession = (): string[] => sessionWarnings(replants.said(), moved, [...glimpsed].filter(p => !movedPaths.has(p)))
  const report = (nestedDirs: string[], folders: FolderCache, wide: Buffer[], marked: Buffer[]): string[] => {
    const warnings = duringSession()
    const movedBefore = moved.length
    warnings.push(...brokenHeads(spec.gitDirs), ...newGitDirs(listings), ...nestedInAll(spec, startedMs, quarantine, nestedDirs, folders, { trees: spec.workTrees, guard: heads.modes, wide }, marked, watch.knownGitlinks()))
    if (moved.length > movedBefore) warnings.push(`the session left files git reads in the work tree as FIFOs or sockets (git would hang on them), or a .git that leads through /proc or /dev or by a path that is not UTF-8 (where git goes from it cannot be known), or a .git or commondir that leads out of the project or to nothing yet (another local user could make what it names); moved aside: ${named(moved.slice(movedBefore))}`)
    return warnings.map(w => `WARNING: ${w}`)
  }
  return {
    sweep: () => watch.sweep(),
    moved: () => project.moved(),
    endedFor: () => replants.said()[0],
    finish(): string[] {
      watch.stop()
      project.close()
      // Moved: the launch makes the checks where the project went (launch.ts); by the old paths, nothing.
      if (project.moved() !== undefined) return (away.close(), duringSession().map(w => `WARNING: ${w}`))
      const warnings: string[] = []
      const step = stepsSaying(warnings)
      // One cache of folders for the sweep and the search below: a git dir's folders unchanged since
      // the last session's end are not listed again (its loose objects' folders are most of them).
      const folders = folderCache(spec.folderCache, keptIn(spec.gitDirs))
      const sweep = { entries: SWEEP_LIMIT }
      step('search of the git dirs for FIFOs and links', () => spec.gitDirs.forEach(dir => fifosAndLinksIn(dir, sweep, folders, spec.gitDirs, startedMs, heads.modes).forEach(quarantine)), undefined)
      const nestedDirs: string[] = []
      const [wide, marked]: [Buffer[], Buffer[]] = [[], []]
      const dirsNow = step('listing of git dirs', () => gitDirsNow(spec.gitDirs), [...spec.gitDirs])
      warnings.push(...reportOrSay(() => report(nestedDirs, folders, wide, marked)))
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
      step('search of nested git dirs for FIFOs and links', () => sweepNested(spec, nested, { sweep, folders, startedMs, modes: heads.modes }).forEach(quarantine), undefined)
      step('folder cache', () => folders.save(), undefined)
      if (sweep.entries < 0) warnings.push(`WARNING: the search for FIFOs, sockets and links in git dirs (git hangs on them, and writes through links) stopped after ${SWEEP_LIMIT} entries, and the folders of each where git writes through links were moved aside whole; git dirs it may not have finished: ${[...spec.gitDirs, ...nested].slice(-3).map(inlineSafe).join(', ')}, ...: look for them there (find <dir> -type p -o -type s -o -type l) before you run git`)
      const later = [...step('check of operations in progress', () => checkInProgress(gitDirs, quarantine), []), ...step('check of the indexes', () => indexChecks(gitDirs, quarantine, heads, spec, { startedMs, known: watch.knownGitlinks(), marked }), [])]
      if (moved.length > movedBefore) warnings.push(`WARNING: moved aside at the session's end (look at them with ls and cat, not with git): ${named(moved.slice(movedBefore))}`)
      const full = step('marks of the nested repositories made or changed', () => markMade(spec, marked, startedMs), undefined)
      away.close()
      return [...warnings, ...later, ...(full === undefined ? [] : [`WARNING: ${full}`])]
    },
  }
}

/** What the watch did, and saw, during the session, in words for the user. */
function sessionWarnings(ended: string[], moved: readonly string[], gone: readonly string[]): string[] {
  const warnings = [...ended]
  if (moved.length > 0) warnings.push(`the session created files that the host's git or tools would take config, hooks or code from; moved aside into claudebox's quarantine (look at them with ls and cat, not with git, which would take one for a repository; a nested repository's .git of yours goes back with mv, after a look at its config and hooks; delete the rest): ${named(moved)}`)
  if (gone.length > 0) warnings.push(`the session made, and removed again before the launcher could move them aside, files the host's git would take config, hooks or a repository from: ${named(gone.map(inlineSafe))}; a git the host ran in this project at that moment could have taken them: look at what it ran`)
  return warnings
}

/**
 * Runs each step of the session's end on its own: one that throws (a session can make one: round
 * 69, a text past V8's longest string) is said in `warnings`, and the steps after it, the index
 * check last, still run.
 */
function stepsSaying(warnings: string[]): <T>(what: string, run: () => T, none: T) => T {
  return (what, run, none) => {
    const begun = nowMs()
    try {
      return run()
    } catch (error) {
      warnings.push(`WARNING: claudebox's ${what} at the session's end failed (${inlineSafe(String((error as Error).message))}); look for yourself before you run git here`)
      return none
    } finally {
      debug(`${what} at the session's end: ${(nowMs() - begun).toFixed(1)} ms`)
    }
  }
}


/**
 * Why the session is ended early: a name planted REPLANT_LIMIT times (`again` counts each; each
 * plant is moved within moments, but a git the host runs in that moment could take it: red team,
 * round 29, 613 plants against a host loop of `git status`, one of which ran the session's config),
 * or `endFor` a reason of its own; `said` gives the warning for the report.
 */
function endings(end: () => void, reword: (why: string) => string): { again: (p: string) => void; endFor: (why: string) => void; said: () => string[] } {
  const planted = new Map<string, number>()
  let ended: string | undefined
  const endFor = (why: string): void => {
    if (ended !== undefined) return
    ended = reword(why)
    end()
  }
  const again = (p: string): void => {
    const times = (planted.get(p) ?? 0) + 1
    planted.set(p, times)
    if (times >= REPLANT_LIMIT) endFor(`the session made ${inlineSafe(p)} ${REPLANT_LIMIT} times, each moved aside, and was ended: a git the host ran at the moment of one could have taken it; look at what git ran in this project since (the config of each one moved aside below)`)
  }
  return { again, endFor, said: () => (ended === undefined ? [] : [ended]) }
}

/**
 * The project's top folder, held while the session runs (held-folder.ts): whether it went, and
 * where, decided at the first ask once it has; the reason given for ending the session then says so.
 */
function whereabouts(top: string, fd?: number): { moved: () => Whereabouts | undefined; reword: (why: string) => string; close: () => void } {
  const held = holdFolder(top, fd)
  let found: Whereabouts | undefined
  const withIdentity = (now: { to?: string } | undefined): Whereabouts | undefined => (now === undefined || held.identity === undefined ? now : { ...now, identity: held.identity })
  const moved = (): Whereabouts | undefined => (found ??= withIdentity(held.moved()))
  return {
    moved,
    reword: why => {
      const now = moved()
      return now === undefined ? why : movedWords(top, now.to)
    },
    // Where it is at the end, not where it first went: moved again, or back (round 108).
    close: () => {
      found = withIdentity(held.moved())
      held.close()
    },
  }
}

/** Where a moved project is now (`to`, none when removed), and the folder it is (its device and inode). */
type Whereabouts = { to?: string; identity?: string }

/** Why a session whose project was moved or removed under it was ended: the watch guards paths that name nothing now. */
function movedWords(top: string, to: string | undefined): string {
  const ended = `claudebox guards its git folders by their paths, so the session was ended`
  if (to !== undefined) return `the project folder ${inlineSafe(top)} was moved to ${inlineSafe(to)} while the session ran; ${ended}; the checks after the session were made at ${inlineSafe(to)}: start claudebox again there`
  // Removed, or copied to another file system and removed: what the session left cannot be found from here.
  return `the project folder ${inlineSafe(top)} was removed, or moved to another file system, while the session ran; ${ended}, and its checks after the session could not be made: wherever the project is now, look at its .git folders (config, hooks, git ls-files) before you run git there`
}

/** After the index checks (this session's own marks are for the next sessions' gitlink watch): the nested repositories what git runs in changed during it, marked for every project. */
function markMade(spec: GitWatchSpec, marked: readonly Buffer[], startedMs: number): string | undefined {
  if (spec.nestedRecord === undefined) return undefined
  const problems = [markReported(reportedFile(spec.nestedRecord), marked), recordSession(sessionTimesFile(spec.nestedRecord), startedMs, Date.now())]
  return problems.filter(p => p !== undefined).join('; ') || undefined
}

/**
 * The index checks, with the folders of each gitlink an index lists narrowed (round 67), and said;
 * a new gitlink's `.git` the watch had no time to move aside moved now (gitlink-watch.ts), in each
 * repository checked out in the project and, down from them, in each one of the user's that a
 * gitlink left makes git status enter (round 128).
 */
function indexChecks(gitDirs: readonly string[], quarantine: (p: string) => void, heads: HeadGuard, spec: GitWatchSpec, gitlinksSeen: { startedMs: number; known: Known; marked: readonly Buffer[] }): string[] {
  const before = heads.modes.narrowed().length
  const linksOf = new Map<string, Buffer[]>()
  const warnings = checkIndexes(gitDirs, quarantine, (dir, links) => {
    linksOf.set(dir, links)
    heads.modes.gitlinks(dir, links)
  })
  if (spec.gitlinks !== undefined) gitlinksEntered(spec, spec.gitlinks, linksOf, quarantine, gitlinksSeen)
  const taken = heads.modes.narrowed().slice(before)
  if (taken.length === 0) return warnings
  return [...warnings, `WARNING: other users could write to the folders of a gitlink in an index (your git status at the top enters its .git, there or put there later); taken back: ${named(taken)}`]
}

/**
 * From each repository checked out in the project, the gitlinks git status enters: each `.git`
 * none of the user's moved aside, and the indexes of those kept looked into in turn (their
 * gitlinks as the checks read them, or read now: one past the checks' bound too).
 */
function gitlinksEntered(spec: GitWatchSpec, links: NonNullable<GitWatchSpec['gitlinks']>, linksOf: ReadonlyMap<string, Buffer[]>, quarantine: (p: string) => void, seen: { startedMs: number; known: Known; marked: readonly Buffer[] }): void {
  // This session's own marks count too (red team, round 127: a config changed after the watch took the gitlink for the user's).
  const markedNow = new Set(seen.marked.map(entryIdentity).filter((id): id is string => id !== undefined))
  const judge = usersOwnNested(spec, seen.startedMs)
  const reported = (dotGit: string): boolean => judge.reported(dotGit) || markedNow.has(entryIdentity(dotGit) ?? '')
  const queue = [...links.repos]
  const done = new Set<string>()
  for (let repo = queue.shift(); repo !== undefined; repo = queue.shift()) {
    if (done.has(repo.gitDir)) continue
    done.add(repo.gitDir)
    // Past the bound, what git status would enter there is not read: the index goes (staged changes with it, into the quarantine).
    if (done.size > MAX_ENTERED) {
      if (lstatKind(path.join(repo.gitDir, 'index')) !== 'missing') quarantine(path.join(repo.gitDir, 'index'))
      continue
    }
    const listed = linksOf.get(repo.gitDir) ?? gitlinksOf(repo.gitDir)
    if (listed === undefined) {
      quarantine(path.join(repo.gitDir, 'index')) // git cannot read it: what it would enter cannot be told
      continue
    }
    const fresh = newGitlinkGits(links, repo, listed, { ...judge, reported }, seen.known)
    fresh.dotGits.forEach(quarantine)
    if (fresh.indexGoes) quarantine(path.join(repo.gitDir, 'index'))
    queue.push(...fresh.kept)
  }
}

/** Repositories whose gitlinks are looked at, at most, at a session's end. */
const MAX_ENTERED = 256

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
  const begun = nowMs()
  try {
    return report()
  } catch (error) {
    return [`WARNING: the search for nested git repositories failed (${inlineSafe((error as Error).message)}); look for .git folders and files in the project, and their configs and hooks, before you run git in it`]
  } finally {
    debug(`search of nested git repositories at the session's end: ${(nowMs() - begun).toFixed(1)} ms`)
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
  /** Whether the project is still where it was (held-folder.ts). */
  here: () => boolean
}

function watchDuringSession(spec: GitWatchSpec, { quarantine, heads, glimpse, endFor, here }: Reactions, startedMs: number): { sweep(): void; stop(): void; knownGitlinks(): Known } {
  // Once the project has moved, its old paths may name what the user made there (a new repository,
  // a link to another): nothing is done by them, and the session is ended (red team, round 107: a
  // repository the user made at the old path had its .git moved into the quarantine, 3 of 3).
  const only = <A extends unknown[]>(act: (...args: A) => void) => (...args: A): void => (here() ? act(...args) : endFor(''))
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
  const onEvent = only((p: string): void => {
    check(p)
    if (placeholders.covers(p)) placeholders.look()
    else if (!texts.has(p) && lstatKind(p) === 'missing') glimpse(p)
  })
  const watched = [...spec.forbidden, ...texts.keys()]
  // Each HEAD at each event on it, not only at the poll: a HEAD git rejects makes git take the
  // folder above for the repository (round 84: swapped in for 10 ms, timed to a host git commit).
  const watchers = [...watchForbidden(watched, onEvent), ...watchForbidden(spec.gitDirs.map(dir => path.join(dir, 'HEAD')), only(() => heads.headsNow(true)))]
  const writtenThrough = watchWriteThrough(spec.gitDirs, new Set(texts.keys()), startedMs, { plant: only(quarantine), endFor })
  const armed = new Map<string, fs.FSWatcher[]>()
  const forbid = only((dotGit: string, workTree: string): void => {
    watched.push(dotGit)
    armGitlink(dotGit, workTree, armed, onEvent)
    check(dotGit)
  })
  const gitlinks = spec.gitlinks === undefined ? undefined : watchGitlinks(spec.gitlinks, { forbid, endFor }, usersOwnNested(spec, startedMs))
  const each = only((): void => {
    watched.forEach(check)
    heads.check()
    writtenThrough.poll()
  })
  const poll = watched.length === 0 && spec.gitDirs.length === 0 ? undefined : setInterval(() => (each(), placeholders.look()), POLL_MS).unref()
  return {
    sweep: each,
    knownGitlinks: () => gitlinks?.known ?? new Map(),
    stop(): void {
      gitlinks?.stop()
      writtenThrough.close()
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


function readLink(p: string): string | undefined {
  try {
    return fs.readlinkSync(p)
  } catch {
    return undefined
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

/** What to move aside in nested git dirs, within the sweep's budget: links made during this session or an earlier one (a nested git dir can be renamed into place with them: round 139). */
function sweepNested(spec: GitWatchSpec, nested: readonly string[], { sweep, folders, startedMs, modes }: { sweep: { entries: number }; folders: FolderCache; startedMs: number; modes: HeadGuard['modes'] }): string[] {
  const file = spec.nestedRecord === undefined ? undefined : sessionTimesFile(spec.nestedRecord)
  // Read at the first link that asks, not at every end.
  let times: ReturnType<typeof sessionTimes> | undefined
  const earlier = (ms: number): boolean => file !== undefined && (times ??= sessionTimes(file)).during(ms)
  return nested.flatMap(dir => fifosAndLinksIn(dir, sweep, folders, spec.gitDirs, startedMs, modes, earlier))
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

