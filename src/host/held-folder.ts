// The project's top folder, held open while the session runs. The git watch and the checks after the
// session name everything by path; a user who renames or moves the project meanwhile (mv, a file
// manager) leaves those paths naming nothing, and the checks would find nothing to check there. The
// held descriptor says where the folder went: the kernel keeps the path of an open directory.
import fs from 'node:fs'
import path from 'node:path'
import { identityOf } from './fs.js'

export interface HeldFolder {
  /** Undefined while the folder is where it was; else where it is now (`to`), when it still is somewhere. */
  moved(): { to?: string } | undefined
  /** Its device and inode (fs.ts identityOf), undefined when it could not be held. */
  readonly identity: string | undefined
  close(): void
}

/** `dir`, or, given `given` (a descriptor of it the caller hands over: the folder bwrap was given), that folder wherever it is. */
export function holdFolder(dir: string, given?: number): HeldFolder {
  let fd = given
  try {
    fd ??= fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
  } catch {
    // Gone already: the launch itself says so (launch.ts failedStart).
  }
  return {
    identity: fd === undefined ? undefined : identityOf(fs.fstatSync(fd)),
    moved: () => (fd === undefined ? undefined : whereNow(dir, fd)),
    close(): void {
      if (fd !== undefined) fs.closeSync(fd)
      fd = undefined
    },
  }
}

function whereNow(dir: string, fd: number): { to?: string } | undefined {
  const held = fs.fstatSync(fd)
  if (sameFolder(dir, held)) return undefined
  let now: string
  try {
    now = fs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return {}
  }
  // A removed folder reads as "<path> (deleted)"; a path the kernel cannot show from here is not absolute.
  return path.isAbsolute(now) && sameFolder(now, held) ? { to: now } : {}
}

function sameFolder(p: string, held: fs.Stats): boolean {
  try {
    const st = fs.lstatSync(p)
    return st.isDirectory() && identityOf(st) === identityOf(held)
  } catch {
    return false
  }
}
