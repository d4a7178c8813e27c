// During a session: a link, FIFO or socket made where git writes through what it finds (a git dir's
// own files, and its logs/, rr-cache/, sequencer/, rebase-merge/ and rebase-apply/) is moved aside
// the moment it appears, not only by the sweep at the session's end: a git the host runs meanwhile
// (an IDE's commit) appends its reflog line through a link in logs/ to wherever it leads, outside
// the project too (red team, round 136: 5 of 5). inotify tells at once, and every folder watched is
// looked through again at each of the git watch's polls (200 ms), for events the kernel dropped
// (round 141: a queue flooded past 16,384 events). A plant timed to the host's git by the
// microsecond can still come first; each one counts toward the session's end (git-watch.ts).
import fs from 'node:fs'
import path from 'node:path'
import { identityOf } from './fs.js'

/** The folders of a git dir whose files git writes through a link: reflogs, rerere's images, a sequencer's and a rebase's state. */
export const WRITTEN_THROUGH = ['logs', 'rr-cache', 'sequencer', 'rebase-merge', 'rebase-apply']

/**
 * Watched below, whole: those, and refs/, where git writes a branch's file through a linked folder
 * (round 142: refs/heads a link to ~/.config, and your commit made ~/.config/main). Of objects/,
 * its top: objects/00 a link to a folder outside had your commit write its objects there.
 */
const WATCHED_BELOW = [...WRITTEN_THROUGH, 'refs']

/** Folders watched in all; one more, there at the launch or made by the session, ends it (git makes a few, one per `/` in a branch's name). */
const FOLDER_LIMIT = 2_000
/** Names in one watched folder; more end the session (round 142: 400,000 files made each poll take 1 to 2 s, and a link went unseen that long). */
const ENTRY_LIMIT = 20_000

export interface WriteThroughReactions {
  /** Moves a planted name aside (quarantine.ts), counting it toward the session's end. */
  plant: (p: string) => void
  endFor: (why: string) => void
}

interface Watched {
  watcher: fs.FSWatcher
  /** The folder's device and inode when it was watched: another folder at that name is watched anew. */
  identity: string
  onEvent: (name: string) => void
}

/**
 * Watches each git dir's own files and the folders below it where git writes through links.
 * `keep`: links claudebox guards itself (a git dir's config leading to the user's dotfiles), and
 * HEAD, which the head guard keeps one git accepts (head-guard.ts); at a git dir's top, only a link
 * made since `startedMs` is moved, below it any. What cannot be watched (the
 * user's inotify watches used up, by the session too: round 141; a name that is not UTF-8, which
 * could not be moved by its name; more than FOLDER_LIMIT folders) ends the session.
 */
export function watchWriteThrough(gitDirs: readonly string[], keep: ReadonlySet<string>, startedMs: number, reactions: WriteThroughReactions): { poll(): void; close(): void } {
  const watched = new Map<string, Watched>()
  const guard = guardOf(gitDirs, reactions.endFor)
  const arm = (dir: string, onEvent: (name: string) => void): boolean => watchFolder(watched, dir, onEvent, guard)
  /** A folder in a written-through one: a link there is planted; one new there is looked through, links of any age too (they came with it). */
  const below = (dir: string): void => {
    const before = watched.get(dir)?.identity
    if (arm(dir, name => look(path.join(dir, name))) && watched.get(dir)?.identity !== before) listing(dir, guard.cannot).forEach(name => look(path.join(dir, name)))
  }
  const look = (p: string, descend = true): void => {
    const kind = kindOf(p)
    if (kind === 'planted') reactions.plant(p)
    else if (kind === 'dir' && descend) below(p)
  }
  const atTop = (gitDir: string) => (name: string): void => {
    const p = path.join(gitDir, name)
    if (name === 'HEAD' || keep.has(p)) return
    if (WATCHED_BELOW.includes(name)) look(p)
    // Made during the session: the user's own links there (hooks, info, objects on another disk) stay.
    else if (kindOf(p) === 'planted' && (statOf(p)?.ctimeMs ?? 0) >= startedMs) reactions.plant(p)
  }
  guard.guarded(() => {
    for (const gitDir of gitDirs) {
      arm(gitDir, atTop(gitDir))
      for (const name of WATCHED_BELOW) subfolders(path.join(gitDir, name), dir => (below(dir), watched.has(dir)))
      arm(path.join(gitDir, 'objects'), name => look(path.join(gitDir, 'objects', name), false))
    }
  })
  return {
    poll(): void {
      // At a git dir's top, a name of the user's that is not UTF-8 ends nothing (one the session makes there does, by its event).
      guard.guarded(() => {
        for (const [dir, { onEvent }] of [...watched]) listing(dir, gitDirs.includes(dir) ? () => {} : guard.cannot).forEach(onEvent)
      })
    },
    close(): void {
      for (const { watcher } of watched.values()) watcher.close()
      watched.clear()
    },
  }
}

interface Guard {
  /** Ends the session, saying what could not be watched. */
  cannot: (why: string) => void
  /** Runs a reaction; whatever goes wrong in it ends the session, never the launcher, whose checks after the session must run (round 142). */
  guarded: (react: () => void) => void
}

function guardOf(gitDirs: readonly string[], endFor: (why: string) => void): Guard {
  const cannot = (why: string): void => endFor(`${why}, and the session was ended: a git you ran in the project meanwhile could have written through a link the session made there`)
  return {
    cannot,
    guarded: react => {
      try {
        react()
      } catch (error) {
        cannot(`the watch of ${gitDirs.join(', ')} failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
      }
    },
  }
}

/** Watches `dir` unless the same folder is watched there already; false when it cannot be (past FOLDER_LIMIT, or the watch fails: the session is ended). */
function watchFolder(watched: Map<string, Watched>, dir: string, onEvent: (name: string) => void, guard: Guard): boolean {
  const identity = unlinkedFolderIdentity(dir)
  if (identity === undefined || watched.get(dir)?.identity === identity) return identity !== undefined
  watched.get(dir)?.watcher.close()
  watched.delete(dir)
  if (watched.size >= FOLDER_LIMIT) return (guard.cannot(`more than ${FOLDER_LIMIT} folders where git writes through links (${dir}) could not all be watched`), false)
  try {
    const watcher = fs.watch(dir, { persistent: false, encoding: 'buffer' }, (_event, name) => name !== null && guard.guarded(() => named(dir, name, onEvent, guard)))
    watcher.on('error', () => watcher.close())
    watched.set(dir, { watcher, identity, onEvent })
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? ''
    if (!['ENOENT', 'ENOTDIR'].includes(code)) guard.cannot(`${dir} could not be watched (${code}${code === 'ENOSPC' ? ': your inotify watches are used up; raise fs.inotify.max_user_watches' : ''})`)
    return false
  }
}

/** An event's name, when it is UTF-8 (a name that is not could not be moved aside by it). */
function named(dir: string, name: Buffer, onEvent: (name: string) => void, guard: Guard): void {
  const text = name.toString('utf8')
  if (Buffer.from(text, 'utf8').equals(name)) onEvent(text)
  else guard.cannot(`a name that is not UTF-8 appeared in ${dir}`)
}

/** What an event's name is now: a link, FIFO, socket or device (planted), a folder, or anything else. */
function kindOf(p: string): 'planted' | 'dir' | 'other' {
  const st = statOf(p)
  if (st === undefined || st.isFile()) return 'other'
  return st.isDirectory() ? 'dir' : 'planted'
}

/** A folder's device and inode, never through a link (fs.ts folderIdentity follows one). */
function unlinkedFolderIdentity(dir: string): string | undefined {
  const st = statOf(dir)
  return st?.isDirectory() === true ? identityOf(st) : undefined
}

/**
 * What is at `p`, never throwing: a name too long (a chain of long folder names renamed in), a
 * folder closed to the user, would otherwise end the launcher and every check after the session
 * with it (red team, round 142: ENAMETOOLONG; `chmod 600 .git/logs/refs`, whose own event names it).
 */
function statOf(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/**
 * A folder's names other than plain files' (the kernel tells their kind with the listing: no stat
 * for each of a folder's many reflogs or loose refs at every poll); one that is not UTF-8, or more
 * than ENTRY_LIMIT names, is told to `cannot`.
 */
function listing(dir: string, cannot: (why: string) => void): string[] {
  let entries: fs.Dirent<Buffer>[]
  try {
    entries = fs.readdirSync(dir, { encoding: 'buffer', withFileTypes: true })
  } catch {
    return []
  }
  if (entries.length > ENTRY_LIMIT) cannot(`more than ${ENTRY_LIMIT} names in ${dir}, where git writes through links, could not be looked at in time`)
  const names = entries.filter(entry => !entry.isFile()).map(entry => entry.name)
  const texts = names.map(name => name.toString('utf8'))
  if (texts.some((text, i) => !Buffer.from(text, 'utf8').equals(names[i] as Buffer))) cannot(`a name that is not UTF-8 appeared in ${dir}`)
  return texts
}

/** `dir` and every folder below it, each handed to `each` until it answers false (the user's reflogs: a few folders, one per `/` in a branch's name). */
function subfolders(dir: string, each: (dir: string) => boolean): boolean {
  if (kindOf(dir) !== 'dir') return true
  if (!each(dir)) return false
  for (const entry of readdirKinds(dir)) if (entry.isDirectory() && !subfolders(path.join(dir, entry.name), each)) return false
  return true
}

function readdirKinds(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
}
