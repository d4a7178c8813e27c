// What git read in an index's exact bytes, kept between launches: at a session's end every index
// in the project is read by git (index-entries.ts), ~4 ms a run, at every exit, though the index
// rarely changed. Kept in $CLAUDEBOX_HOME/cache/clean-indexes.json, which no sandbox sees: for each
// git dir, the SHA-256 of what decides git's reading (the index and every shared part beside it,
// the repository's config, which names the object format, and the git that read them) when git
// found no path it would refuse, and the gitlinks it listed. Git reads a copy of those bytes in a
// folder of claudebox's own, with no objects, never the index itself: what is kept is what git made
// of the very bytes hashed, and a session that swaps the index, or its objects folder, meanwhile
// cannot pair bad bytes with a good verdict (red team, round 119). Not kept: an index with sparse
// directories ("sdir"), whose paths git reads from objects the session writes (round 42).
// Only a launch turns it on (useIndexCache); other readers run git each time.
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { readJsonObject } from './fs.js'
import { gitProgram } from './system-programs.js'
import { configBytes, type ConfigBytes } from './index-format.js'

/** Git dirs kept at most (as many as a session's end reads). */
const MAX_KEPT = 64
/**
 * The most bytes hashed and copied for one git dir, and shared parts: beyond them git reads the
 * index itself, every time, as without the cache (an index of ~300,000 files stays under it; a
 * session's thousands of shared parts must not fill /tmp, which may be memory, with copies).
 */
const MAX_BYTES = 32 << 20
const MAX_SHARED = 16
const CHUNK = 1 << 20
/** The sparse index's extension: its folders' paths come from objects, not from the index's bytes. */
const SPARSE = Buffer.from('sdir')

interface Kept {
  digest: string
  gitlinks: string[]
}

let cache: { file: string; kept: Map<string, Kept>; used: Map<string, Kept>; changed: boolean } | undefined

/** Reads the cache of `claudeboxHome` (its real path) for this launch; a missing or damaged one is an empty one. */
export function useIndexCache(claudeboxHome: string): void {
  const file = path.join(claudeboxHome, 'cache', 'clean-indexes.json')
  cache = { file, kept: new Map(), used: new Map(), changed: false }
  const dirs = readJsonObject(file)?.['dirs']
  if (typeof dirs !== 'object' || dirs === null) return
  for (const [gitDir, kept] of Object.entries(dirs)) if (isKept(kept)) cache.kept.set(gitDir, kept)
}

function isKept(kept: unknown): kept is Kept {
  const k = kept as Kept
  return typeof k?.digest === 'string' && Array.isArray(k.gitlinks) && k.gitlinks.every(g => typeof g === 'string' && /^(?:[0-9a-f]{2})+$/.test(g))
}

export const indexCacheOn = (): boolean => cache !== undefined

/** The gitlinks git listed in `gitDir`'s index when it found it clean, if its bytes (`digest`) are the same now. */
export function keptGitlinks(gitDir: string, digest: string): Buffer[] | undefined {
  const kept = cache?.used.get(gitDir) ?? cache?.kept.get(gitDir)
  if (kept === undefined || kept.digest !== digest) return undefined
  cache?.used.set(gitDir, kept)
  return kept.gitlinks.map(hex => Buffer.from(hex, 'hex'))
}

/** Keeps that git found the index of `digest` clean, with these gitlinks. */
export function keepClean(gitDir: string, digest: string, gitlinks: readonly Buffer[]): void {
  if (cache === undefined || cache.used.size >= MAX_KEPT) return
  cache.used.set(gitDir, { digest, gitlinks: gitlinks.map(g => g.toString('hex')) })
  cache.changed = true
}

/**
 * Writes what this launch used first, then what other projects' launches kept, MAX_KEPT in all
 * (the longest unused drop out), when anything was new; unwritten, the next launch runs git again.
 */
export function saveIndexCache(): void {
  if (cache === undefined || !cache.changed) return
  const others = [...cache.kept].filter(([gitDir]) => !cache?.used.has(gitDir))
  writeHomeFile(cache.file, JSON.stringify({ dirs: Object.fromEntries([...cache.used, ...others].slice(0, MAX_KEPT)) }))
  cache.changed = false
}

/**
 * The digest of `gitDir`'s index and shared parts, none read through a symlink (index-git.ts
 * indexFilesRegular: git writes none, round 124), with the git that reads them and the repository's config
 * (`configFile`: the object format git reads them in comes from it, index-format.ts), and that
 * config as read; the index and shared parts copied into `copyTo` when given, the digest then of
 * the bytes written. Undefined when one is no regular file, too large, unreadable, or the index is sparse.
 */
export function indexDigest(gitDir: string, configFile: string, copyTo?: string): { digest: string; config: ConfigBytes } | undefined {
  const git = gitIdentity()
  if (git === undefined) return undefined
  let names: string[]
  try {
    names = fs.readdirSync(gitDir).filter(name => name.startsWith('sharedindex.')).sort()
  } catch {
    return undefined
  }
  if (names.length > MAX_SHARED) return undefined
  const config = configBytes(configFile)
  const budget = { bytes: MAX_BYTES }
  const whole = crypto.createHash('sha256').update(`claudebox-index-v2\0${git}\0`)
  whole.update(config === undefined ? 'unreadable\0' : config === null ? 'none\0' : crypto.createHash('sha256').update(config).digest())
  for (const name of ['index', ...names]) {
    const part = partDigest(path.join(gitDir, name), copyTo === undefined ? undefined : path.join(copyTo, name), budget)
    if (part === undefined) return undefined
    whole.update(`${name}\0`).update(part)
  }
  return { digest: whole.digest('hex'), config }
}

/** The git claudebox runs, as the file it is now: another git may read an index otherwise. */
function gitIdentity(): string | undefined {
  const git = gitProgram()
  const st = git === undefined ? undefined : fs.statSync(git, { throwIfNoEntry: false })
  return st === undefined ? undefined : `${git}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`
}

/** One file's SHA-256, read in chunks without blocking on a FIFO; copied to `copy` when given; undefined when it is not a regular file or holds "sdir". */
function partDigest(file: string, copy: string | undefined, budget: { bytes: number }): Buffer | undefined {
  let fd: number | undefined
  let out: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW)
    const st = fs.fstatSync(fd)
    if (!st.isFile() || st.size > budget.bytes) return undefined
    if (copy !== undefined) out = fs.openSync(copy, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600)
    return readAll(fd, out, budget)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
    if (out !== undefined) fs.closeSync(out)
  }
}

/** The SHA-256 of what `fd` holds, written to `out` too; undefined past the budget's bytes or at a sparse index's mark (also across two chunks). */
function readAll(fd: number, out: number | undefined, budget: { bytes: number }): Buffer | undefined {
  const hash = crypto.createHash('sha256')
  const buffer = Buffer.alloc(CHUNK)
  const keep = SPARSE.length - 1
  let tail = Buffer.alloc(0)
  for (;;) {
    const n = fs.readSync(fd, buffer, 0, CHUNK, null)
    if (n === 0) return hash.digest()
    const read = buffer.subarray(0, n)
    budget.bytes -= n
    if (budget.bytes < 0 || read.includes(SPARSE) || Buffer.concat([tail, read.subarray(0, keep)]).includes(SPARSE)) return undefined
    hash.update(read)
    for (let written = 0; out !== undefined && written < n; ) written += fs.writeSync(out, read, written)
    tail = Buffer.concat([tail, read.subarray(-keep)]).subarray(-keep)
  }
}
