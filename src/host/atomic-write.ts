// The one way claudebox replaces a file of its own: a new temp file beside it, then rename(2), so
// a reader sees the old content or the new, never a half-written file; the temp goes on failure.
import { lstatKind, randomHex, removeFile } from './fs.js'
import fs from 'node:fs'
import path from 'node:path'

export function writeFileAtomic(file: string, content: string | Uint8Array, mode = 0o600): void {
  const temp = `${file}.tmp.${process.pid}.${randomHex(4)}`
  try {
    fs.writeFileSync(temp, content, { mode, flag: 'wx' })
    fs.renameSync(temp, file)
  } catch (error) {
    removeFile(temp)
    throw error
  }
}

/**
 * Writes `file`, in a folder of claudebox's home (`$CLAUDEBOX_HOME/cache`, `nested`), making that
 * folder when it is missing and never writing through a symlink in its place. A failure (a
 * read-only home, a full disk) is swallowed: what such a file keeps is made anew next time.
 */
export function writeHomeFile(file: string, content: string): void {
  const dir = path.dirname(file)
  try {
    if (lstatKind(path.dirname(dir)) !== 'dir') return
    if (lstatKind(dir) === 'missing') fs.mkdirSync(dir, { mode: 0o700 })
    if (lstatKind(dir) === 'dir') writeFileAtomic(file, content)
  } catch {
    // made anew next time
  }
}
