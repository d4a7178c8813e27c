// During the session: a gitlink the session puts in an index makes the host's `git status` at the
// top enter that folder's `.git` and run its config (red team, round 84: 3 of 3, and nothing was
// reported once the session took both out again before its end); one in a submodule's index too,
// through the submodule's status (round 86). At each write of the index of each repository checked
// out in the project, its gitlinks are listed, by git as git reads the index (gitlink-look.ts, index-git.ts),
// and the `.git` of each that was no submodule at the launch and is none of the user's
// (nested-search.ts usersOwnNested: it, or what git takes from it, changed during the session, or
// a session's end reported it) becomes a name the git watch keeps missing: moved aside now and
// whenever it appears, reported, counted. That leaves the watch's window of milliseconds. A nested
// repository the user had, unchanged, is never moved. An index whose gitlinks the watch cannot
// keep that way ends the session, and the index is moved aside: a gitlink named oddly (`./sub`, `sub/`, `x/../sub`: git enters those too;
// round 87, 3 of 3 and silent once undone), not UTF-8, deeper than DEEPEST folders, or more than
// MAX_WATCHED (round 86).
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind } from './fs.js'
import { gitlinksNow } from './gitlink-look.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import type { GitWatchSpec } from '../types.js'

/** Gitlink folders watched at most, in all: each costs inotify watches and a look at every poll. */
const MAX_WATCHED = 256
/** Folders deep a gitlink may be: the poll walks each of its folders (round 87: 1,900 deep kept the launcher busy). */
const DEEPEST = 64
/** How often what git runs from each gitlink taken for the user's is looked at again. */
const RECHECK_MS = 200
/** The first look waits this long: a git run while the sandbox starts would slow every launch (the index's writes start it earlier). */
const FIRST_LOOK_MS = 100

type Spec = NonNullable<GitWatchSpec['gitlinks']>
interface Acts {
  /** Makes a gitlink's `.git` (or an index) a name the watch keeps missing (moved aside now and whenever it appears), watched from the work tree down. */
  forbid: (p: string, workTree: string) => void
  /** Ends the session, saying why. */
  endFor: (why: string) => void
}

type Repo = Spec['repos'][number]

/** A nested repository of the user's: its git dir, and what git runs from it as it was then (nested-repos.ts runsDigest). */
export interface UsersRepo {
  gitDir: string | undefined
  runs: string
}

/** Whether a gitlink's `.git` is a nested repository of the user's, left where it is; whether a session's end reported it; its git dir and what git runs from it now (nested-search.ts usersOwnNested). */
export interface Judge {
  usersOwn(dotGit: string): UsersRepo | undefined
  reported(dotGit: string): boolean
  runsNow(dotGit: string): UsersRepo | undefined
}

/** The gitlinks' `.git` the watch took for the user's, with what git ran from each then. */
export type Known = ReadonlyMap<string, string>

export function watchGitlinks(spec: Spec, acts: Acts, judge: Judge): { stop(): void; known: Known } {
  const state: ScanState = { launchKnown: new Set(spec.known), known: new Map(), trees: new Map(), forbidden: new Set<string>(), stopped: false, watches: [] }
  // A repository of the user's that a gitlink makes git enter is watched too: git status enters
  // the gitlinks of its index in turn (red team, round 128: one staged in a nested clone's index).
  const watch = (repo: Repo, nested = true): void => void state.watches.push(watchIndex(repo, () => scanIndex(repo, state, acts, judge, watch), nested ? () => recheckKnown(state, acts, judge) : undefined))
  spec.repos.forEach(repo => watch(repo, false))
  // What git runs from each taken for the user's, looked at again at every poll (round 129: its
  // config written once taken, the host's git status ran it for the rest of the session).
  const poll = setInterval(() => recheckKnown(state, acts, judge), RECHECK_MS).unref()
  return {
    /** Never moved as long as what git runs from them is as it was (the end's check looks again). */
    known: state.known,
    stop(): void {
      state.stopped = true
      clearInterval(poll)
      state.watches.forEach(w => w.stop())
    },
  }
}

/** Each `.git` taken for the user's from which git would now run anything else, or that a session's end reported since: moved aside, as a new one is. */
function recheckKnown(state: ScanState, acts: Acts, judge: Judge): void {
  for (const [dotGit, runs] of state.known) {
    if (state.stopped) return
    if (!judge.reported(dotGit) && judge.runsNow(dotGit)?.runs === runs) continue
    state.known.delete(dotGit)
    state.forbidden.add(dotGit)
    acts.forbid(dotGit, state.trees.get(dotGit) ?? path.dirname(path.dirname(dotGit)))
  }
}

interface ScanState {
  launchKnown: ReadonlySet<string>
  known: Map<string, string>
  /** The work tree of the index each was taken from. */
  trees: Map<string, string>
  forbidden: Set<string>
  stopped: boolean
  watches: { stop(): void }[]
}

/** One look at a repository's index: each new gitlink's `.git` forbidden, or the index condemned. */
async function scanIndex(repo: Repo, state: ScanState, acts: Acts, judge: Judge, watch: (repo: Repo, nested?: boolean) => void): Promise<void> {
  const { gitlinks, bad, irregular } = await gitlinksNow(repo.gitDir)
  if (state.stopped) return
  const unkept = irregular ? 'an index, or a shared part of one (sharedindex.*), that is no regular file, or whose records of where its entries lie (EOIE, IEOT) do not match them' : bad.length > 0 ? 'an entry git would refuse to add (a path with ., .. or an empty part: a gitlink named so is entered all the same)' : undefined
  for (const link of unkept === undefined ? gitlinks : []) {
    const name = link.toString('utf8')
    const dotGit = path.join(repo.workTree, name, '.git')
    if (state.launchKnown.has(dotGit) || state.known.has(dotGit) || state.forbidden.has(dotGit)) continue
    const users = judge.usersOwn(dotGit)
    if (users !== undefined) {
      state.known.set(dotGit, users.runs)
      state.trees.set(dotGit, repo.workTree)
      if (users.gitDir !== undefined && state.watches.length < MAX_WATCHED) watch({ gitDir: users.gitDir, workTree: path.dirname(dotGit) })
      continue
    }
    const why = !Buffer.from(name).equals(link) ? 'a gitlink whose path is not UTF-8' : name.split('/').length > DEEPEST ? `a gitlink more than ${DEEPEST} folders deep` : state.forbidden.size >= MAX_WATCHED ? `more than ${MAX_WATCHED} gitlinks` : undefined
    if (why !== undefined) return condemn(repo.gitDir, why, acts)
    state.forbidden.add(dotGit)
    acts.forbid(dotGit, repo.workTree)
  }
  if (unkept !== undefined) condemn(repo.gitDir, unkept, acts)
}

/**
 * At the session's end, what the watch does during it, for a gitlink staged as the session ended,
 * before the watch's look (CI: `git add nested` and out, and the .git stayed for the host's git
 * status at the top to enter): the `.git` of each gitlink `repo`'s index lists that was no
 * submodule at the launch and is none of the user's (`judge`), to move aside; also one the watch
 * took for the user's (`known`) that a session's end reported since (round 126: another session of
 * the project, ending meanwhile, reported it), or from which git would now run anything else than
 * then (round 128: its `.git` swapped for one the session made). And whether the index itself must
 * go, for a gitlink whose path is not UTF-8 and whose `.git` is there, made whenever (round 103:
 * that one stayed, 3 of 3; who made it cannot be told: the record of nested repositories keeps
 * UTF-8 paths only). `kept`: the repositories the gitlinks left lead git status into, whose own
 * gitlinks it enters in turn.
 */
export function newGitlinkGits(spec: Spec, repo: Repo, links: readonly Buffer[], judge: Judge, known: Known): { dotGits: string[]; indexGoes: boolean; kept: Repo[] } {
  const [dotGits, kept]: [string[], Repo[]] = [[], []]
  let indexGoes = false
  for (const link of links) {
    const name = link.toString('utf8')
    if (Buffer.from(name).equals(link)) {
      const dotGit = path.join(repo.workTree, name, '.git')
      if (spec.known.includes(dotGit) || lstatKind(dotGit) === 'missing') continue
      const users = known.has(dotGit) ? stillAsTaken(dotGit, known.get(dotGit), judge) : judge.usersOwn(dotGit)
      if (users === undefined) dotGits.push(dotGit)
      else if (users.gitDir !== undefined) kept.push({ gitDir: users.gitDir, workTree: path.dirname(dotGit) })
    } else if (lstatKind(Buffer.concat([Buffer.from(`${repo.workTree}/`), link, Buffer.from('/.git')])) !== 'missing') indexGoes = true
  }
  return { dotGits, indexGoes, kept }
}

/** A gitlink's `.git` the watch took for the user's, as it is now: undefined when reported since, or when git would run anything else from it. */
function stillAsTaken(dotGit: string, runs: string | undefined, judge: Judge): UsersRepo | undefined {
  if (judge.reported(dotGit)) return undefined
  const now = judge.runsNow(dotGit)
  return now?.runs === runs ? now : undefined
}

/** The index goes (now and whenever the session writes one again), and the session ends. */
function condemn(gitDir: string, why: string, acts: Acts): void {
  acts.forbid(path.join(gitDir, 'index'), gitDir)
  acts.endFor(`the session put ${why} in the index of ${inlineSafe(gitDir)}: your git status at the top would enter the repository in such a folder, with its config. The session was ended and the index moved aside (see below): run git reset there to make it anew from HEAD, and look at the folders it named before you run git status`)
}

/** Runs `scan` at each write of the repository's index, one at a time, and once at first; `other` at any other change in its git dir. */
function watchIndex(repo: Spec['repos'][number], scan: () => Promise<void>, other?: () => void): { stop(): void } {
  let [running, again, stopped] = [false, false, false]
  const look = async (): Promise<void> => {
    if (running) return void (again = true)
    running = true
    try {
      do {
        again = false
        await scan()
      } while (again && !stopped)
    } catch {
      // a look that failed (no temp folder, the name gone): the session's end checks the index
    } finally {
      running = false
    }
  }
  let watcher: fs.FSWatcher | undefined
  try {
    watcher = fs.watch(repo.gitDir, { persistent: false }, (_event, name) => {
      if (stopped) return
      if (name === 'index') void look()
      else other?.()
    })
    watcher.on('error', () => watcher?.close())
  } catch {
    // gone or not watchable: the session's end checks the index
  }
  // Gitlinks the index held before (an earlier session's), whose .git may appear later.
  const first = setTimeout(() => void look(), FIRST_LOOK_MS).unref()
  return {
    stop(): void {
      stopped = true
      clearTimeout(first)
      watcher?.close()
    },
  }
}
