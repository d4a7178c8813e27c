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

/** The folders of a git dir whose files git writes through a link: reflogs, rerere's images, a sequencer's and a rebase's state. */
export const WRITTEN_THROUGH = ['logs', 'rr-cache', 'sequencer', 'rebase-merge', 'rebase-apply']

/** Folders watched in all; one more, there at the launch or made by the session, ends it (git makes a few, one per `/` in a branch's name). */
const FOLDER_LIMIT = 2_000

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
  const cannot = (why: string): void => reactions.endFor(`${why}, and the session was ended: a git you ran in the project meanwhile could have written through a link the session made there`)
  /** Watches `dir` unless the same folder is watched there already; false when it cannot be. */
  const arm = (dir: string, onEvent: (name: string) => void): boolean => {
    const identity = identityOf(dir)
    if (identity === undefined || watched.get(dir)?.identity === identity) return identity !== undefined
    watched.get(dir)?.watcher.close()
    watched.delete(dir)
    if (watched.size >= FOLDER_LIMIT) return (cannot(`more than ${FOLDER_LIMIT} folders where git writes through links (${dir}) could not all be watched`), false)
    try {
      const watcher = fs.watch(dir, { persistent: false, encoding: 'buffer' }, (_event, name) => name !== null && named(dir, name, onEvent))
      watcher.on('error', () => watcher.close())
      watched.set(dir, { watcher, identity, onEvent })
      return true
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (!['ENOENT', 'ENOTDIR'].includes(code)) cannot(`${dir} could not be watched (${code}${code === 'ENOSPC' ? ': your inotify watches are used up; raise fs.inotify.max_user_watches' : ''})`)
      return false
    }
  }
  /** An event's name, when it is UTF-8 (a name that is not could not be moved aside by it). */
  const named = (dir: string, name: Buffer, onEvent: (name: string) => void): void => {
    const text = name.toString('utf8')
    if (Buffer.from(text, 'utf8').equals(name)) onEvent(text)
    else cannot(`a name that is not UTF-8 appeared in ${dir}`)
  }
  /** A folder in a written-through one: a link there is planted; one new there is looked through, links of any age too (they came with it). */
  const below = (dir: string): void => {
    const before = watched.get(dir)?.identity
    if (arm(dir, name => look(path.join(dir, name))) && watched.get(dir)?.identity !== before) listing(dir, cannot).forEach(name => look(path.join(dir, name)))
  }
  const look = (p: string): void => {
    const kind = kindOf(p)
    if (kind === 'planted') reactions.plant(p)
    else if (kind === 'dir') below(p)
  }
  const atTop = (gitDir: string) => (name: string): void => {
    const p = path.join(gitDir, name)
    if (name === 'HEAD' || keep.has(p)) return
    if (WRITTEN_THROUGH.includes(name)) look(p)
    // Made during the session: the user's own links there (hooks, info, objects on another disk) stay.
    else if (kindOf(p) === 'planted' && (fs.lstatSync(p, { throwIfNoEntry: false })?.ctimeMs ?? 0) >= startedMs) reactions.plant(p)
  }
  for (const gitDir of gitDirs) {
    arm(gitDir, atTop(gitDir))
    for (const name of WRITTEN_THROUGH) subfolders(path.join(gitDir, name), dir => (below(dir), watched.has(dir)))
  }
  return {
    poll(): void {
      // At a git dir's top, a name of the user's that is not UTF-8 ends nothing (one the session makes there does, by its event).
      for (const [dir, { onEvent }] of [...watched]) listing(dir, gitDirs.includes(dir) ? () => {} : cannot).forEach(onEvent)
    },
    close(): void {
      for (const { watcher } of watched.values()) watcher.close()
      watched.clear()
    },
  }
}

/** What an event's name is now: a link, FIFO, socket or device (planted), a folder, or anything else. */
function kindOf(p: string): 'planted' | 'dir' | 'other' {
  const st = fs.lstatSync(p, { throwIfNoEntry: false })
  if (st === undefined || st.isFile()) return 'other'
  return st.isDirectory() ? 'dir' : 'planted'
}

function identityOf(dir: string): string | undefined {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false })
  return st?.isDirectory() === true ? `${st.dev}:${st.ino}` : undefined
}

/** A folder's names; one that is not UTF-8 is told to `cannot`. */
function listing(dir: string, cannot: (why: string) => void): string[] {
  let names: Buffer[]
  try {
    names = fs.readdirSync(dir, { encoding: 'buffer' })
  } catch {
    return []
  }
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
