// The folders a session's end may change things in (its work trees, git dirs and the folders on the
// way to them), told apart from whatever their paths lead to by then: a session of a project that
// holds this one can swap a folder above them for a link to another repository of the user's
// (red team, rounds 113 and 114: HEADs, modes and write bits were changed there).
import fs from 'node:fs'
import path from 'node:path'
import { folderIdentity, identityOf, O_PATH } from './fs.js'
import { isWithin } from '../state/instance.js'

export interface PinnedRoots {
  /**
   * `p` (a root or a path below one), opened as a path only: its root if that is still the folder
   * it was (by device and inode), then each name below it without following a symlink. Undefined
   * when `p` is in no root, its root is now another folder, or a name on the way is not a folder.
   */
  open(p: string, kind?: 'folder' | 'any'): number | undefined
}

/**
 * The roots as they are now (one missing now is judged by its path later), or, for the checks where
 * a moved project went, only the folder the project was (`topIdentity`, held by the launcher since
 * the launch: its path at the end is the session's to swap): the first of `roots`, and what lies below it.
 */
export function pinRoots(roots: readonly string[], topIdentity?: string): PinnedRoots {
  const identities = new Map<string, string | undefined>(topIdentity === undefined ? roots.map(r => [r, folderIdentity(r)]) : roots.slice(0, 1).map(r => [r, topIdentity]))
  const known = [...identities.keys()].sort((a, b) => b.length - a.length)
  return {
    open(p, kind = 'folder') {
      const root = known.find(r => isWithin(p, r))
      if (root === undefined) return undefined
      const names = path.relative(root, p).split('/').filter(Boolean)
      let fd = openRoot(root, identities.get(root))
      for (const [i, name] of names.entries()) {
        if (fd === undefined) return undefined
        const last = i === names.length - 1
        fd = openIn(fd, name, last && kind === 'any' ? 0 : fs.constants.O_DIRECTORY)
      }
      return fd
    },
  }
}

/** The root folder, when it is the one `identity` names. */
function openRoot(root: string, identity: string | undefined): number | undefined {
  let fd: number
  try {
    fd = fs.openSync(root, O_PATH | fs.constants.O_DIRECTORY)
  } catch {
    return undefined
  }
  if (identity === undefined || identity === identityOf(fs.fstatSync(fd))) return fd
  fs.closeSync(fd)
  return undefined
}

/** `name` in the folder open as `dir` (closed), never through a symlink. */
function openIn(dir: number, name: string, flags: number): number | undefined {
  try {
    return fs.openSync(`/proc/self/fd/${dir}/${name}`, O_PATH | fs.constants.O_NOFOLLOW | flags)
  } catch {
    return undefined
  } finally {
    fs.closeSync(dir)
  }
}
