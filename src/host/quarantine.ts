// Moving aside what a session planted where the host's git would take it: out of the session's
// reach, into the instance's quarantine ($CLAUDEBOX_HOME/quarantine/<id>), reached through folder
// descriptors that never follow a symlink, so nothing outside the project can be moved.
import fs from 'node:fs'
import path from 'node:path'
import { O_PATH, randomHex } from './fs.js'
import type { PinnedRoots } from './pinned-roots.js'
import { isCommondirPlaceholder } from './git-dirs.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import type { GitWatchSpec } from '../types.js'

/**
 * Moves what was planted at `planned` out of the session's reach (moveAside), noting it in `log`;
 * `again` counts the plants of each name. Only inside the folders of `roots`.
 */
export function quarantineIn(spec: GitWatchSpec, away: Away, log: { moved: string[]; reported: Set<string>; movedPaths: Set<string> }, again: (p: string) => void, roots: PinnedRoots): (planned: string) => void {
  const { moved, reported } = log
  const placeholders = new Set(spec.placeholders)
  const headPlaceholders = new Set(spec.headPlaceholders)
  return (planned: string): void => {
    // The agent may replace a parent by a symlink, even while this runs: the parent is reached
    // through directory fds opened one component at a time without following a symlink, and the
    // rename names the file through that fd, so nothing outside the project can be moved.
    const parent = openParentNoFollow(planned, roots)
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
export interface Away {
  fd(): number | undefined
  close(): void
}

/**
 * The folder planted files are moved into, out of the session's reach ($CLAUDEBOX_HOME/quarantine/
 * <id>, never bound into a sandbox). In place, the session could rename one back, again and again,
 * until a git the host ran meanwhile took it (red team: a shell loop of `git status` did). Opened
 * once, when first needed; on another file system (EXDEV) files are moved aside in place.
 */
export function awayFromTheSession(dir: string): Away {
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
 * A directory fd of `p`'s parent, reached from the root that holds it (as it was when the watch
 * began: a session of a project that holds this one can swap the path for a link to another
 * repository of the user's; red team, round 113: its .git was moved into this project's
 * quarantine, 1 to 3 of 14), one component at a time, never through a symlink (a component that
 * is one ends the walk: undefined).
 */
function openParentNoFollow(p: string, roots: PinnedRoots): number | undefined {
  const root = roots.root(path.dirname(p))
  if (root === undefined) return undefined
  let fd = root.fd
  for (const part of path.relative(root.path, path.dirname(p)).split(path.sep).filter(Boolean)) {
    let next: number
    try {
      const parent = fd
      // O_PATH: a folder the session made unreadable (chmod 300) is still opened.
      next = withAccess(parent, () => fs.openSync(`/proc/self/fd/${parent}/${part}`, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW))
    } catch {
      fs.closeSync(fd)
      return undefined
    }
    fs.closeSync(fd)
    fd = next
  }
  return fd
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
