// The folders a session's watch and end may change things in (its work trees, git dirs and the
// folders on the way to them), told apart from whatever their paths lead to by then: a session of a
// project that holds this one can swap a folder above them for a link to another repository of the
// user's (red team, rounds 113 to 115: HEADs, modes and write bits were changed there, files moved
// into the quarantine). Each is known by its device and inode, taken from what bwrap was given.
import fs from 'node:fs'
import path from 'node:path'
import { folderIdentity, identityOf, O_PATH, openSameFolder } from './fs.js'
import { isWithin } from '../state/instance.js'

/** Each root's device and inode (fs.ts identityOf); undefined for one missing when taken (judged by its path). */
export type RootIdentities = ReadonlyMap<string, string | undefined>

/** The folders a git watch may act in, and the project's top as bwrap was given it (held-folder.ts). */
export interface WatchRoots {
  identities: RootIdentities
  /** A descriptor of the top, which the watch takes over. */
  top?: number | undefined
}

export interface PinnedRoots {
  /** The deepest root `p` is at or below, opened as a path only, when it is still the folder it was. */
  root(p: string): { path: string; fd: number } | undefined
  /**
   * `p` (a root or a path below one), opened as a path only: its root (see `root`), then each name
   * below it without following a symlink. Undefined when `p` is in no root, its root is now another
   * folder, or a name on the way is not a folder.
   */
  open(p: string, kind?: 'folder' | 'any'): number | undefined
}

/** The folders a git watch may act in: its work trees, git dirs and the folders on the way to them. */
export const rootsOf = (spec: { workTrees: readonly string[]; gitDirs: readonly string[]; ways: readonly string[] }): string[] => [...spec.workTrees, ...spec.gitDirs, ...spec.ways]

/** The roots as they are now, by their paths: for checks with nothing better to go by (tests, a launcher killed before its end). */
export function identitiesNow(roots: readonly string[]): RootIdentities {
  return new Map(roots.map(r => [r, folderIdentity(r)]))
}

/**
 * The roots as bwrap was given them (run.ts, before the spawn): each reached from the deepest of
 * the `pinned` descriptors (bind-fds.ts: the binds' sources, checked to be at their real paths)
 * without following a symlink; one in none of them, by its path then.
 */
export function identitiesPinned(roots: readonly string[], pinned: ReadonlyMap<string, number>): RootIdentities {
  return new Map(roots.map(root => {
    const fd = openFromPinned(pinned, root)
    if (fd === OUTSIDE) return [root, folderIdentity(root)]
    // Not a folder below what bwrap was given, by that way: nothing is done there.
    if (fd === undefined) return [root, UNREACHABLE]
    try {
      return [root, identityOf(fs.fstatSync(fd))]
    } finally {
      fs.closeSync(fd)
    }
  }))
}

/** What openFromPinned says of a path in none of the pinned folders. */
export const OUTSIDE = 'outside'

/**
 * The folder `p`, reached from the deepest of the `pinned` descriptors holding it one name at a
 * time without following a symlink: a descriptor of its own (as a path only, for the caller to
 * close); undefined when a name on the way is no folder, OUTSIDE when no pinned folder holds `p`.
 */
export function openFromPinned(pinned: ReadonlyMap<string, number>, p: string): number | undefined | typeof OUTSIDE {
  const source = [...pinned.keys()].sort((a, b) => b.length - a.length).find(s => isWithin(p, s))
  return source === undefined ? OUTSIDE : descend(dupOf(pinned.get(source)), path.relative(source, p), 'folder')
}

/** The identity of a root that could not be reached from what bwrap was given: no folder has it. */
const UNREACHABLE = 'unreachable'

export function pinRoots(identities: RootIdentities): PinnedRoots {
  const known = [...identities.keys()].sort((a, b) => b.length - a.length)
  const root = (p: string): { path: string; fd: number } | undefined => {
    const at = known.find(r => isWithin(p, r))
    const fd = at === undefined ? undefined : openSameFolder(at, identities.get(at))
    return at === undefined || fd === undefined ? undefined : { path: at, fd }
  }
  return {
    root,
    open(p, kind = 'folder') {
      const found = root(p)
      return found === undefined ? undefined : descend(found.fd, path.relative(found.path, p), kind)
    },
  }
}

/** Down from the folder open as `fd` (closed) along `rel`, never through a symlink; the last name as `kind`. */
function descend(fd: number | undefined, rel: string, kind: 'folder' | 'any'): number | undefined {
  const names = rel.split('/').filter(Boolean)
  for (const [i, name] of names.entries()) {
    if (fd === undefined) return undefined
    fd = openIn(fd, name, i === names.length - 1 && kind === 'any' ? 0 : fs.constants.O_DIRECTORY)
  }
  return fd
}

/** A descriptor of its own for what `fd` names (the caller keeps `fd`). */
function dupOf(fd: number | undefined): number | undefined {
  try {
    return fd === undefined ? undefined : fs.openSync(`/proc/self/fd/${fd}`, O_PATH)
  } catch {
    return undefined
  }
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
