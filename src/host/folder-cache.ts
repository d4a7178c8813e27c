// What the search for nested repositories at a session's end saw in each folder, kept between
// sessions: that search lists every folder of the project (and of the instance), ~0.2 s at the end
// of every session for a project of 40,000 files, most of them never touched. Kept in
// $CLAUDEBOX_HOME/cache/folders-<instance id>.json, which no sandbox sees.
//
// A folder is listed again unless its device, inode and change time (ns) are the ones kept: making,
// removing or renaming an entry in a folder, or changing its mode, sets its ctime to the current
// time, and no process can set a ctime back (utimensat sets only atime and mtime; the clock needs
// CAP_SYS_TIME). ctime has the kernel's coarse clock (a few ms), so a folder changed less than
// FRESH_MS before it was looked at is not kept: a change after that look cannot get the same ctime.
import fs from 'node:fs'
import { writeHomeFile } from './atomic-write.js'
import { readJsonObject } from './fs.js'

/** An entry's kind, one letter: d folder, f file, l symlink, p FIFO, s socket, b and c devices. */
export type EntryKind = 'd' | 'f' | 'l' | 'p' | 's' | 'b' | 'c'

/**
 * Paths and names here are latin1 strings: one character per byte, so a name that is not UTF-8
 * (d\377) keeps its bytes (Buffer.from(path, 'latin1') gives them back), and joining is cheap.
 */
export interface Listing {
  /** Its folders, and the entries `keep` asked for: each its kind's letter, then its name. */
  entries: string[]
  /** The folder's mode and change time (ms), as it was looked at now. */
  mode?: number
  changedMs?: number
}

export interface FolderCache {
  /** The listing of the folder at `dir` (latin1); throws as readdir does (ENOENT, ENOTDIR, EACCES). */
  list(dir: string): Listing
  /** Writes what this search saw (only that), when it differs from what was kept. */
  save(): void
}

/**
 * The cache's format, kept under the empty name (no folder has it): a cache of another format (one
 * that kept only some names, without the symlinks and FIFOs the sweep of git dirs looks for) is none.
 */
const FORMAT_KEY = ''
const FORMAT = 'folders 2: folders, entries asked for by folder, name and kind'
/** A change this recent is not kept (far above the coarse clock's tick, and the ~0.2 µs a ctime in ms keeps). */
const FRESH_MS = 1_000
/** The largest cache read: a damaged or foreign one is read as none. */
const MAX_CACHE_BYTES = 64 << 20
// eslint-disable-next-line no-control-regex -- every byte outside ASCII, the control ones being ASCII
const NOT_ASCII = /[^\x00-\x7f]/

/**
 * A folder cache kept in `file` (undefined: none, every folder is listed). A listing holds the
 * folders and the entries `keep` asks for (given the folder, the name and the kind). Each folder
 * is kept as one text, its parts split by `/` (no name holds one): device, inode, ctime in ms,
 * then the entries.
 */
export function folderCache(file: string | undefined, keep: (dir: string, name: string, kind: EntryKind) => boolean): FolderCache {
  // A damaged cache, or one of another format, is none: every folder is listed, and the cache written anew.
  const read = (file === undefined ? undefined : readJsonObject(file, MAX_CACHE_BYTES)) ?? {}
  const kept = read[FORMAT_KEY] === FORMAT ? read : {}
  const seen = new Map<string, string>([[FORMAT_KEY, FORMAT]])
  let changed = false
  const freshAfterMs = Date.now() - FRESH_MS
  return {
    list(dir: string): Listing {
      // A path of ASCII is the same text in latin1 and in UTF-8: no Buffer for it.
      const at = NOT_ASCII.test(dir) ? Buffer.from(dir, 'latin1') : dir
      // The folder itself first, then its entries: a change between the two leaves a newer ctime
      // than the one kept, so the folder is listed again next time.
      const st = fs.lstatSync(at)
      if (!st.isDirectory()) throw Object.assign(new Error(`not a folder: ${dir}`), { code: 'ENOTDIR' })
      const id = `${st.dev}/${st.ino}/${st.ctimeMs}/`
      const before = dir === FORMAT_KEY ? undefined : kept[dir]
      if (typeof before === 'string' && before.startsWith(id)) {
        seen.set(dir, before)
        // An empty folder's text ends at its id.
        return { entries: before.split('/').slice(3).filter(entry => entry !== ''), mode: st.mode, changedMs: st.ctimeMs }
      }
      const listing = { ...listFolder(at, (name, kind) => keep(dir, name, kind)), mode: st.mode, changedMs: st.ctimeMs }
      if (st.ctimeMs < freshAfterMs && Number.isSafeInteger(st.ino)) {
        seen.set(dir, id + listing.entries.join('/'))
        changed = true
      }
      return listing
    },
    save(): void {
      // Unchanged when every folder kept was seen as it was (one that changes at every session
      // drops out once and is then neither kept nor written).
      if (file === undefined || (!changed && Object.keys(kept).every(dir => seen.has(dir)))) return
      // Never larger than is read back (round 69: 360,000 links of long names made a text past V8's
      // longest string): none is written then, and every folder is listed next time.
      let size = 0
      for (const [dir, text] of seen) size += dir.length + text.length
      if (size > MAX_CACHE_BYTES / 6) return
      writeHomeFile(file, JSON.stringify(Object.fromEntries(seen)))
    },
  }
}

/** The listing of `dir`: its folders and the entries `keep` asks for, read now (a link at `dir` itself is followed). */
export function listFolder(dir: string | Buffer, keep: (name: string, kind: EntryKind) => boolean): Listing {
  const entries: string[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const kind = kindOf(e)
    const name = e.name.toString('latin1')
    if (kind === 'd' || keep(name, kind)) entries.push(kind + name)
  }
  return { entries }
}

function kindOf(e: fs.Dirent<Buffer>): EntryKind {
  if (e.isDirectory()) return 'd'
  if (e.isSymbolicLink()) return 'l'
  if (e.isFIFO()) return 'p'
  if (e.isSocket()) return 's'
  if (e.isBlockDevice()) return 'b'
  if (e.isCharacterDevice()) return 'c'
  return 'f'
}
