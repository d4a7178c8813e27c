// Descriptors the launcher inherited from its parent would pass through bwrap into the sandbox:
// bwrap and Node's spawn close only their own. A parent shell's `exec 30<~/secrets`, or a pipe an
// IDE or terminal leaks, then sits in the sandbox, and one on a directory outside opens every file
// under it (/proc/self/fd/30/...), read and write, past every mount. Node opens all of its own
// descriptors close-on-exec, so those without the flag are exactly the inherited ones: closed
// before bwrap starts. (A make jobserver's pipes go too: a make inside then runs without them.)
import fs from 'node:fs'
import { isatty } from 'node:tty'
import { launchError } from '../errors.js'

/** O_CLOEXEC and O_PATH as /proc/<pid>/fdinfo's octal "flags:" shows them. */
const O_CLOEXEC = 0o2000000
const O_PATH = 0o10000000

/** Closes every descriptor above stderr that is not close-on-exec; returns their numbers. */
export function closeInheritedFds(): number[] {
  let names: string[]
  try {
    names = fs.readdirSync('/proc/self/fdinfo')
  } catch (error) {
    throw launchError(`cannot read /proc/self/fdinfo (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) to keep inherited descriptors out of the sandbox; mount /proc and rerun`)
  }
  const closed: number[] = []
  for (const name of names) {
    const fd = Number(name)
    if (!(fd > 2) || inheritable(fd) !== true) continue
    fs.closeSync(fd)
    closed.push(fd)
  }
  return closed
}

/** How one of stdin, stdout and stderr reaches the sandbox (sandboxStdio). */
export type StdioWay = 'inherit' | 'relay' | 'null'

/**
 * stdin, stdout and stderr. A terminal and /dev/null (and its kin) go in as they are. Everything
 * else goes in as a pipe the launcher relays, because the sandbox could open it anew or use it
 * against the host: through /proc/self/fd/0 it opens a file in any mode the file allows
 * (`claudebox -p ... < ~/notes.md` would let it rewrite the notes, `>> log` read the log's earlier
 * lines); a pipe reopened for writing feeds the host shell's next `read` (`... | while read f; do
 * claudebox ...`), one reopened for reading takes what other writers send the consumer; a TCP
 * socket can be connected anew, from the host's network, even with --network=none. A directory or
 * an O_PATH handle is no I/O but a way out (/proc/self/fd/0/... opens every file under it):
 * /dev/null takes its place. `merged`: stdout and stderr are the same file or pipe (`2>&1`), so the
 * program's stderr joins its stdout inside, in order.
 */
export function sandboxStdio(): { ways: StdioWay[]; merged: boolean } {
  const stats = [0, 1, 2].map(fd => {
    try {
      return fs.fstatSync(fd)
    } catch {
      return undefined
    }
  })
  const ways = stats.map((st, fd): StdioWay => {
    if (st === undefined) return 'inherit'
    const flags = fdFlags(fd)
    if (st.isDirectory() || (flags !== undefined && (flags & O_PATH) !== 0)) return 'null'
    return isatty(fd) || memoryDevice(st) ? 'inherit' : 'relay'
  })
  const [out, err] = [stats[1], stats[2]]
  const merged = ways[1] === 'relay' && ways[2] === 'relay' && out !== undefined && err !== undefined && out.dev === err.dev && out.ino === err.ino
  return { ways, merged }
}

/**
 * /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom (major 1): opened anew they are what
 * the sandbox's own /dev has. `< /dev/null` is common and needs no relay.
 */
function memoryDevice(st: fs.Stats): boolean {
  const [major, minor] = [(st.rdev >> 8) & 0xfff, (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00)]
  return st.isCharacterDevice() && major === 1 && [3, 5, 7, 8, 9].includes(minor)
}

/** Whether the descriptor survives an exec; undefined when it is gone (the directory's own). */
function inheritable(fd: number): boolean | undefined {
  const flags = fdFlags(fd)
  return flags === undefined ? undefined : (flags & O_CLOEXEC) === 0
}

/** The descriptor's flags (fdinfo), undefined when it is gone. */
function fdFlags(fd: number): number | undefined {
  let info: string
  try {
    info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
  } catch {
    return undefined
  }
  const flags = /^flags:\s+([0-7]+)$/m.exec(info)?.[1]
  return flags === undefined ? undefined : parseInt(flags, 8)
}
