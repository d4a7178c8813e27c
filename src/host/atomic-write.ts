// The one way claudebox replaces a file of its own: a new temp file beside it, then rename(2), so
// a reader sees the old content or the new, never a half-written file; the temp goes on failure.
import { randomHex, removeFile } from './fs.js'
import fs from 'node:fs'

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
