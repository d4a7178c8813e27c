// Binds pinned just before bwrap starts. The plan checked its binds' paths, but a path in a place a
// running sandbox writes (the project and its git dirs, an instance, a session store: any session
// of the project has them) can be swapped for a symlink between that check and bwrap's mount,
// which follows it (red team: a concurrent session got the host's /proc, or the user's home
// writable through .git/worktrees, into the next one). So each bind whose source lies in such a
// place (and each of the user's own) is opened here (O_PATH, no symlink at its end), the opened
// object must be at the very path the plan meant (the probe's real path: no symlink on its way,
// above the place either), and bwrap binds that descriptor (--ro-bind-fd, --bind-fd). bwrap itself still turns the
// descriptor back into a path for the moment of its mount and checks the result after; a swap in
// that moment is what is left (README).
import fs from 'node:fs'
import path from 'node:path'
import { launchError } from '../errors.js'
import { isWithin } from '../state/instance.js'
import { lstatKind, O_PATH } from './fs.js'
import { openFromPinned, OUTSIDE } from './pinned-roots.js'


const BINDS = new Set(['--bind', '--ro-bind', '--bind-try', '--ro-bind-try'])

export interface Pinning {
  /** The user's --ro-bind/--bind, by the real paths the probe found. */
  userBinds: readonly string[]
  /**
   * The places a sandbox can write (none of them can itself be renamed by one), by the real paths
   * the probe found: never resolved again here, where a folder above one may now be a link (a
   * session of a project holding this one can swap it: red team, round 115, the other repository
   * it led to was pinned, and bound writable as the project).
   */
  writable: readonly string[]
}

/**
 * bwrap's argv from the plan's `groups`, with each bind to pin turned into a bind of a descriptor,
 * which goes to bwrap at the next free numbers of `stdio`; a `-try` bind whose source is missing is
 * left out (bwrap would skip it). The descriptors opened are pushed to `opened` (the caller closes
 * them after the spawn), and where each must be mounted to `mounts` (checked once bwrap has built
 * the sandbox).
 */
export function pinBinds(groups: readonly (readonly string[])[], pinning: Pinning, stdio: unknown[], opened: number[], mounts: PinnedMount[] = []): string[] {
  const users = new Set(pinning.userBinds)
  return groups.flatMap(group => {
    const [option = '', source = '', target = ''] = group
    const expected = BINDS.has(option) && group.length === 3 ? expectedPath(source, target, users, pinning.writable) : undefined
    if (expected === undefined) return [...group]
    if (option.endsWith('-try') && lstatKind(source) === 'missing') return []
    // One descriptor per bind: bwrap closes each once it has used it.
    const fd = openPinned(source, expected)
    opened.push(fd)
    stdio.push(fd)
    mounts.push({ target, readOnly: option.startsWith('--ro'), source, fd })
    return [`${option.replace(/-try$/, '')}-fd`, String(stdio.length - 1), target]
  })
}

/**
 * The writable places that exist now, each open (as a path only) where it really is: one that no
 * longer leads to itself (a folder above it swapped for a link) refuses the launch before the
 * launch writes there what bwrap binds. Those writes then go through these descriptors
 * (placePath), never through the path again: a swap after this look has them made in the place
 * held, or refused, never where the link leads (red team, round 115: another repository of the user's got an empty
 * .git/remotes; round 118: after this look, 2 of 25). The caller closes them (closePlaces). A
 * place the probe saw that cannot be opened now refuses the launch too (round 120: the project
 * moved away for the moment of this look, then a link to another repository put there, had the
 * writes follow it by path, 2 of 15); only those `mayBeMissing` allows (a first launch's state
 * folders) are written by their paths, which then make them.
 */
export function pinPlaces(writable: readonly string[], mayBeMissing: (place: string) => boolean): Map<string, number> {
  const pinned = new Map<string, number>()
  try {
    for (const place of writable.map(p => path.normalize(p))) {
      if (pinned.has(place)) continue
      const fd = openIfThere(place)
      if (fd === undefined && mayBeMissing(place)) continue
      if (fd === undefined) throw launchError(`${place} changed while claudebox started (it cannot be opened now); nothing was written, rerun`)
      pinned.set(place, fd)
      const real = fs.readlinkSync(`/proc/self/fd/${fd}`)
      if (real !== place) throw launchError(`${place} changed while claudebox started (it now leads to ${real}); nothing was written, rerun`)
    }
  } catch (error) {
    closePlaces(pinned)
    throw error
  }
  return pinned
}

export function closePlaces(pinned: ReadonlyMap<string, number>): void {
  for (const fd of pinned.values()) fs.closeSync(fd)
}

/** A descriptor of `place`; none when it cannot be opened. */
function openIfThere(place: string): number | undefined {
  try {
    return fs.openSync(place, O_PATH)
  } catch {
    return undefined
  }
}

/**
 * The path through which the launch writes `p`: below a pinned place, its folder reached from the
 * place's descriptor one name at a time without following a symlink (opened as a path only and
 * pushed to `opened`, for the caller to close), then `p`'s own name; `p` itself elsewhere. A folder
 * on the way that is no longer one (a link swapped in) refuses the launch.
 */
export function placePath(pinned: ReadonlyMap<string, number>, p: string, opened: number[]): string {
  const folder = path.dirname(p)
  const fd = openFromPinned(pinned, folder)
  if (fd === OUTSIDE) return p
  if (fd === undefined) throw launchError(`${folder} changed while claudebox started (a folder on its way is a link or missing now); nothing was written there, rerun`)
  opened.push(fd)
  return `/proc/self/fd/${fd}/${path.basename(p)}`
}

/** Where `source` must really be, when it is to be pinned: the user's bind as probed, or itself below a writable place. */
function expectedPath(source: string, target: string, users: ReadonlySet<string>, writable: readonly string[]): string | undefined {
  if (users.has(source) && target === source) return source
  return writable.some(root => isWithin(source, root)) ? path.normalize(source) : undefined
}

/** A descriptor of what is at `source` now, when that is `expected` itself (no symlink at its end, none swapped in above). */
function openPinned(source: string, expected: string): number {
  const changed = (what: string): Error => launchError(`${source} changed while claudebox started (${what}); nothing was bound, rerun`)
  let fd: number
  try {
    fd = fs.openSync(source, O_PATH | fs.constants.O_NOFOLLOW)
  } catch (error) {
    throw changed((error as NodeJS.ErrnoException).code ?? (error as Error).message)
  }
  // With O_PATH, O_NOFOLLOW opens a symlink itself rather than failing: that is a change too.
  if (fs.fstatSync(fd).isSymbolicLink()) {
    fs.closeSync(fd)
    throw launchError(`${source} is a symlink now, where claudebox binds a directory or file (a session's sandbox may have put it there): look at it, remove it, and rerun`)
  }
  const now = fs.readlinkSync(`/proc/self/fd/${fd}`)
  if (now === expected) return fd
  fs.closeSync(fd)
  throw changed(`it now leads to ${now}`)
}

/**
 * A bind given to bwrap as a descriptor: where it must be mounted inside, and whether read-only;
 * its source and the descriptor (open until bwrap has been spawned).
 */
export interface PinnedMount {
  target: string
  readOnly: boolean
  source: string
  fd: number
}

/**
 * What is wrong with the sandbox's mounts, once bwrap has built it: each pinned bind must be a
 * mount at its own target, read-only where planned. bwrap 0.8 turns a descriptor back into a path
 * for its mount and only checks that the target then holds the descriptor's object, so a target
 * swapped for a symlink and back for that moment put the mount elsewhere (red team, round 11).
 * Undefined when all is well.
 */
export function mountsProblem(mountinfo: string, pinned: readonly Pick<PinnedMount, 'target' | 'readOnly'>[]): string | undefined {
  const top = new Map<string, boolean>() // mount point -> read-only, of the last (uppermost) mount there
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ')
    const point = fields[4]
    const options = fields[5]
    if (point === undefined || options === undefined) continue
    top.set(unescapeMountPath(point), options.split(',').includes('ro'))
  }
  for (const { target, readOnly } of pinned) {
    const ro = top.get(target)
    if (ro === undefined) return `${target} is not mounted where planned`
    if (readOnly && !ro) return `${target} is mounted writable where it should be read-only`
  }
  return undefined
}

/** The kernel writes space, tab, newline and backslash in mountinfo paths as octal escapes. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
}
