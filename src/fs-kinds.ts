// Two small looks at the file system that never follow a symlink or throw: shared by the probes.
import fs from 'node:fs'
import type { PathKind } from './types.js'

/** What `p` itself is (a symlink is never followed); 'missing' when it cannot be looked at. */
export function lstatKind(p: string): PathKind {
  try {
    const st = fs.lstatSync(p)
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'file'
  } catch {
    return 'missing'
  }
}

/** A directory's names; none when it cannot be read. */
export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
}
