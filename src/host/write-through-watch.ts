// During a session: a link, FIFO or socket made where git writes through what it finds (a git dir's
// own files, and its logs/, rr-cache/, sequencer/, rebase-merge/ and rebase-apply/) is moved aside
// the moment it appears, not only by the sweep at the session's end: a git the host runs meanwhile
// (an IDE's commit) appends its reflog line through a link in logs/ to wherever it leads, outside
// the project too (red team, round 136: 5 of 5). inotify tells at once; a plant timed to the host's
// git by the microsecond can still come first, and each one counts toward the session's end (git-watch.ts).
import fs from 'node:fs'
import path from 'node:path'

/** The folders of a git dir whose files git writes through a link: reflogs, rerere's images, a sequencer's and a rebase's state. */
export const WRITTEN_THROUGH = ['logs', 'rr-cache', 'sequencer', 'rebase-merge', 'rebase-apply']

/** Folders watched in all; past it a session that makes more is ended (git makes a few, one per `/` in a branch's name). */
const FOLDER_LIMIT = 2_000

export interface WriteThroughReactions {
  /** Moves a planted name aside (quarantine.ts), counting it toward the session's end. */
  plant: (p: string) => void
  endFor: (why: string) => void
}

/**
 * Watches each git dir's own files and the folders below it where git writes through links.
 * `keep`: links claudebox guards itself (a git dir's config leading to the user's dotfiles), and
 * HEAD, which the head guard keeps one git accepts (head-guard.ts).
 */
export function watchWriteThrough(gitDirs: readonly string[], keep: ReadonlySet<string>, reactions: WriteThroughReactions): { close(): void } {
  const watchers = new Map<string, fs.FSWatcher>()
  /** Watches `dir`, anew when `fresh` (a folder of that name the session made or moved there); false past the limit. */
  const arm = (dir: string, fresh: boolean, onEvent: (name: string) => void): boolean => {
    if (watchers.has(dir) && !fresh) return true
    watchers.get(dir)?.close()
    watchers.delete(dir)
    if (watchers.size >= FOLDER_LIMIT) return false
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => name !== null && onEvent(name))
      watcher.on('error', () => watcher.close())
      watchers.set(dir, watcher)
    } catch {
      // Gone, or no folder: the sweep at the end still looks.
    }
    return true
  }
  /** A folder in a written-through one: a link there is planted; one the session brings is looked through, links of any age too (they came with it). */
  const below = (dir: string, fresh: boolean): boolean => {
    if (!arm(dir, fresh, name => look(path.join(dir, name)))) {
      if (fresh) reactions.endFor(`the session made more than ${FOLDER_LIMIT} folders where git writes through links (${dir}) and was ended: a link made in one would have gone unseen until its end`)
      return false
    }
    if (fresh) for (const name of listing(dir)) look(path.join(dir, name))
    return true
  }
  const look = (p: string): void => {
    const kind = kindOf(p)
    if (kind === 'planted') reactions.plant(p)
    else if (kind === 'dir') below(p, true)
  }
  for (const gitDir of gitDirs) {
    arm(gitDir, false, name => {
      const p = path.join(gitDir, name)
      if (name === 'HEAD' || keep.has(p)) return
      if (WRITTEN_THROUGH.includes(name)) look(p)
      else if (kindOf(p) === 'planted') reactions.plant(p)
    })
    for (const name of WRITTEN_THROUGH) subfolders(path.join(gitDir, name), dir => below(dir, false))
  }
  return {
    close(): void {
      for (const w of watchers.values()) w.close()
      watchers.clear()
    },
  }
}

/** What an event's name is now: a link, FIFO, socket or device (planted), a folder, or anything else. */
function kindOf(p: string): 'planted' | 'dir' | 'other' {
  const st = fs.lstatSync(p, { throwIfNoEntry: false })
  if (st === undefined || st.isFile()) return 'other'
  return st.isDirectory() ? 'dir' : 'planted'
}

function listing(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
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
