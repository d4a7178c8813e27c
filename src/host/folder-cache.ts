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
import path from 'node:path'
import { writeFileAtomic } from './atomic-write.js'
import { lstatKind, readNoFollow } from './fs.js'

/** An entry's kind, one letter: d folder, f file, l symlink, p FIFO, s socket, b and c devices. */
export type EntryKind = 'd' | 'f' | 'l' | 'p' | 's' | 'b' | 'c'

/**
 * Paths and names here are latin1 strings: one character per byte, so a name that is not UTF-8
 * (d\377) keeps its bytes (Buffer.from(path, 'latin1') gives them back), and joining is cheap.
 */
export interface Listing {
  /** How many entries the folder holds (the search's bound counts them). */
  count: number
  /** Its folders, and its other entries whose names `keep` asked for. */
  entries: { name: string; kind: EntryKind }[]
}

export interface FolderCache {
  /** The listing of the folder at `dir` (latin1); throws as readdir does (ENOENT, ENOTDIR, EACCES). */
  list(dir: string): Listing
  /** Writes what this search saw (only that), when it differs from what was kept. */
  save(): void
}

/** A change this recent is not kept (far above the coarse clock's tick). */
const FRESH_MS = 1_000
/** The largest cache read: a damaged or foreign one is read as none. */
const MAX_CACHE_BYTES = 64 << 20

/**
 * A folder cache kept in `file` (undefined: none, every folder is listed). `keep` says which names
 * that are not folders a listing holds. Each folder is kept as one text, its parts split by `/`
 * (no name holds one): device, inode, ctime in ns, the count, then each entry as kind and name.
 */
export function folderCache(file: string | undefined, keep: (name: string) => boolean): FolderCache {
  const kept = file === undefined ? new Map<string, string>() : readKept(file)
  const seen = new Map<string, string>()
  let changed = false
  const freshAfterNs = BigInt(Date.now() - FRESH_MS) * 1_000_000n
  return {
    list(dir: string): Listing {
      const bytes = Buffer.from(dir, 'latin1')
      // The folder itself first, then its entries: a change between the two leaves a newer ctime
      // than the one kept, so the folder is listed again next time.
      const st = fs.lstatSync(bytes, { bigint: true })
      if (!st.isDirectory()) throw Object.assign(new Error(`not a folder: ${dir}`), { code: 'ENOTDIR' })
      const id = `${st.dev}/${st.ino}/${st.ctimeNs}/`
      const before = kept.get(dir)
      if (before?.startsWith(id)) {
        seen.set(dir, before)
        return fromKept(before)
      }
      const listing = listFolder(bytes, keep)
      if (st.ctimeNs < freshAfterNs) {
        seen.set(dir, id + [String(listing.count), ...listing.entries.map(e => e.kind + e.name)].join('/'))
        changed = true
      }
      return listing
    },
    save(): void {
      // Unchanged when every folder kept was seen as it was (one that changes at every session, a
      // folder of the instance's, drops out once and is then neither kept nor written).
      if (file === undefined || (!changed && [...kept.keys()].every(dir => seen.has(dir)))) return
      try {
        const dir = path.dirname(file)
        if (lstatKind(path.dirname(dir)) !== 'dir') return
        if (lstatKind(dir) === 'missing') fs.mkdirSync(dir, { mode: 0o700 })
        if (lstatKind(dir) !== 'dir') return
        writeFileAtomic(file, JSON.stringify(Object.fromEntries(seen)))
      } catch {
        // the next session lists every folder again
      }
    },
  }
}

function readKept(file: string): Map<string, string> {
  try {
    const saved = JSON.parse(readNoFollow(file, MAX_CACHE_BYTES) ?? '{}') as Record<string, unknown>
    return new Map(Object.entries(saved).filter((e): e is [string, string] => typeof e[1] === 'string'))
  } catch {
    return new Map() // damaged: every folder is listed, and the cache written anew
  }
}

function fromKept(text: string): Listing {
  const parts = text.split('/')
  return { count: Number(parts[3]) || 0, entries: parts.slice(4).filter(e => e.length > 1).map(e => ({ kind: e[0] as EntryKind, name: e.slice(1) })) }
}

function listFolder(dir: Buffer, keep: (name: string) => boolean): Listing {
  const all = fs.readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })
  const entries: Listing['entries'] = []
  for (const e of all) {
    const kind = kindOf(e)
    const name = e.name.toString('latin1')
    if (kind === 'd' || keep(name)) entries.push({ name, kind })
  }
  return { count: all.length, entries }
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
