// The user's --ro-bind and --bind, pinned just before bwrap starts. The plan checked their real
// paths (sandbox/policy.ts bindRefusal), but a path in a place a running sandbox writes (a directory
// of the project) can be swapped for a symlink between that check and bwrap's mount, which follows
// it (red team: a concurrent session of the project got the host's /proc into the next one, and
// with it other sessions' keys). So each is opened here (O_PATH, no symlink at its end), the opened
// object's path is checked to be the planned one, and bwrap binds that descriptor (--ro-bind-fd).
import fs from 'node:fs'
import { launchError } from '../errors.js'

/** Linux's O_PATH (the same on x86_64 and arm64): a descriptor that only names the object. */
const O_PATH = 0o10000000

/**
 * `argv` with each user bind (`--ro-bind REAL REAL`, `--bind REAL REAL`) turned into a bind of a
 * descriptor, which goes to bwrap at the next free numbers of `stdio`; the descriptors opened
 * are pushed to `opened` (the caller closes them after the spawn).
 */
export function pinUserBinds(argv: readonly string[], userBinds: readonly string[], stdio: unknown[], opened: number[]): string[] {
  const pinned = [...argv]
  const wanted = new Set(userBinds)
  // bwrap's own options end at the first "--"; what follows is the program's.
  const end = pinned.indexOf('--') === -1 ? pinned.length : pinned.indexOf('--')
  for (let i = 0; i + 2 < end; i++) {
    const [option, source, target] = [pinned[i], pinned[i + 1] ?? '', pinned[i + 2]]
    if ((option !== '--ro-bind' && option !== '--bind') || !wanted.has(source) || target !== source) continue
    // One descriptor per bind: bwrap closes each once it has used it.
    const fd = openPinned(source)
    opened.push(fd)
    pinned[i] = `${option}-fd`
    pinned[i + 1] = String(stdio.length)
    stdio.push(fd)
  }
  return pinned
}

/** A descriptor of what is at `real` now, when that is still `real` itself (no symlink anywhere on the way). */
function openPinned(real: string): number {
  let fd: number
  try {
    fd = fs.openSync(real, O_PATH | fs.constants.O_NOFOLLOW)
  } catch (error) {
    throw launchError(`${real} changed while claudebox started (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was bound, rerun`)
  }
  // With O_PATH, O_NOFOLLOW opens a symlink itself rather than failing: that is a change too.
  const now = fs.fstatSync(fd).isSymbolicLink() ? `a symlink, to ${fs.readlinkSync(real)}` : fs.readlinkSync(`/proc/self/fd/${fd}`)
  if (now === real) return fd
  fs.closeSync(fd)
  throw launchError(`${real} changed while claudebox started (it now leads to ${now}); nothing was bound, rerun`)
}
