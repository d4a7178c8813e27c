// Guards the shared JSON files that several sessions write (read-modify-write of one
// .claude.json has corrupted it for users: anthropics/claude-code#28922, #2810). Before a launch a
// corrupt file is set aside under a timestamped name (never deleted) and restored from Claude
// Code's own backups or from claudebox's last good copies; a good file is copied, bounded.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { openDirNoFollow } from '../host/fs.js'
import { readNoFollow } from '../host/probe.js'

/** How many last good copies of each file are kept. */
export const GOOD_COPIES = 5
/** How many corrupt copies of each file are set aside at most (the oldest, first, are kept). */
export const CORRUPT_COPIES = 5
/**
 * The largest shared JSON file claudebox reads, validates or copies: the sandbox can write it, so
 * its size is the agent's choice (a 500 MB .claude.json once cost 16 s and 1.5 GB per launch).
 */
export const JSON_LIMIT = 64 << 20
/** How long to wait before judging a file that does not parse (a writer may be mid-write). */
const SETTLE_MS = 150

export type GuardResult =
  | { kind: 'ok' }
  | { kind: 'missing' }
  | { kind: 'too-large'; size: number }
  | { kind: 'restored'; from: string; setAside: string | undefined }
  | { kind: 'set-aside'; setAside: string | undefined }

/** What the guard would find, without writing anything (for --dry-run). */
export function inspectJson(file: string): 'missing' | 'valid' | 'corrupt' | 'too-large' {
  const size = regularFileSize(file)
  if (size === undefined) return 'missing'
  if (size > JSON_LIMIT) return 'too-large'
  const text = readNoFollow(file, JSON_LIMIT)
  return text === undefined ? 'missing' : isValidJson(text) ? 'valid' : 'corrupt'
}

/**
 * @param backups directories holding Claude's backups of this file (`<name>.backup.<ms>`)
 * @param goodDir where claudebox keeps its last good copies
 */
export function guardJson(file: string, backups: readonly string[], goodDir: string, now: Date): GuardResult {
  const name = path.basename(file)
  // Unchanged since it was last found valid (same inode, size, mtime): skip reading it. The file
  // can be large (a 101 MB .claude.json is on record, anthropics/claude-code#2810).
  if (unchangedSinceValid(file, goodDir)) return { kind: 'ok' }
  const size = regularFileSize(file)
  if (size === undefined) return { kind: 'missing' }
  if (size > JSON_LIMIT) return { kind: 'too-large', size }
  let text = readNoFollow(file, JSON_LIMIT)
  if (text === undefined) return { kind: 'missing' }
  if (!isValidJson(text)) {
    // A running session may be in the middle of rewriting it in place: look again before judging.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SETTLE_MS)
    text = readNoFollow(file, JSON_LIMIT)
    // Replaced meanwhile by something that is not a regular file (a symlink the agent swapped in):
    // left alone, and nothing of it is copied or read.
    if (text === undefined) return { kind: 'missing' }
  }
  if (isValidJson(text)) {
    keepGoodCopy(goodDir, name, text, now)
    markValid(file, goodDir)
    return { kind: 'ok' }
  }
  // Copied aside and rewritten in place, never renamed: running sessions have this very file
  // (its inode) bound into their sandboxes and must keep sharing it.
  const setAside = setAsideCopy(file, text, now)
  const restored = restoreNewestCopy(file, [...backups.map(dir => ({ dir, prefix: `${name}.backup.` })), { dir: goodDir, prefix: `${name}.` }])
  if (restored !== undefined) return { kind: 'restored', from: restored, setAside }
  overwriteInPlace(file, '{}\n')
  return { kind: 'set-aside', setAside }
}

/**
 * The newest valid copy wins, whoever made it: Claude's own backups or claudebox's good copies;
 * written over `file`, and its path returned. Each folder is opened once, without following a
 * link, and its files are listed and read through that descriptor: Claude's backups/ sits in the
 * instance, which a running session of the project writes (red team, round 35: `backups` swapped
 * for a symlink between the check and the reads, with renameat2, had the host copy another
 * folder's `.claude.json.backup.*` (the user's own ~/.claude, another project's instance) into the
 * sandbox's .claude.json).
 */
export function restoreNewestCopy(file: string, folders: readonly { dir: string; prefix: string }[]): string | undefined {
  const open = folders.flatMap(folder => {
    const fd = openDirNoFollow(folder.dir) // missing, or a symlink: no copies from it
    return fd === undefined ? [] : [{ ...folder, fd }]
  })
  try {
    const candidates = open
      .flatMap(({ dir, prefix, fd }) => namesIn(`/proc/self/fd/${fd}`, prefix).map(f => ({ shown: path.join(dir, f), at: `/proc/self/fd/${fd}/${f}` })))
      .sort((a, b) => mtime(b.at) - mtime(a.at))
    for (const candidate of candidates) {
      const content = readNoFollow(candidate.at, JSON_LIMIT)
      if (content !== undefined && isValidJson(content)) {
        overwriteInPlace(file, content)
        return candidate.shown
      }
    }
    return undefined
  } finally {
    for (const { fd } of open) fs.closeSync(fd)
  }
}


/**
 * Rewrites the file's own inode (sessions may have it open), never through a symlink: a project's
 * .claude.json sits where its sandbox can write.
 */
function overwriteInPlace(file: string, content: string): void {
  // O_NONBLOCK: a FIFO swapped in cannot hold the launcher (no reader: ENXIO).
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK, 0o600)
  try {
    if (!fs.fstatSync(fd).isFile()) return
    fs.ftruncateSync(fd)
    fs.writeFileSync(fd, content)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * A copy of the corrupt file beside it, unless CORRUPT_COPIES are there already (bounded). It is
 * the text read through O_NOFOLLOW, written anew: opening the file again by name could follow a
 * symlink swapped in meanwhile and copy whatever it points at where the sandbox can read it.
 */
function setAsideCopy(file: string, text: string, now: Date): string | undefined {
  const prefix = `${path.basename(file)}.corrupt-`
  if (fs.readdirSync(path.dirname(file)).filter(name => name.startsWith(prefix)).length >= CORRUPT_COPIES) return undefined
  const setAside = `${file}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`
  fs.writeFileSync(setAside, text, { flag: 'wx', mode: 0o600 })
  return setAside
}

function regularFileSize(file: string): number | undefined {
  try {
    const st = fs.lstatSync(file)
    return st.isFile() ? st.size : undefined
  } catch {
    return undefined
  }
}

function mtime(file: string): number {
  try {
    return fs.lstatSync(file).mtimeMs
  } catch {
    return 0
  }
}

/** After a session: remember the shared file as Claude left it, if it is valid. */
export function rememberGood(file: string, goodDir: string, now: Date): void {
  if (unchangedSinceValid(file, goodDir)) return
  const text = readNoFollow(file, JSON_LIMIT)
  if (text !== undefined && isValidJson(text)) {
    keepGoodCopy(goodDir, path.basename(file), text, now)
    markValid(file, goodDir)
  }
}

function isValidJson(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null
  } catch {
    return false
  }
}

/** Newest first: names end in a sortable timestamp. Never through a symlink. */
function listSorted(dir: string, prefix: string): string[] {
  try {
    return fs.lstatSync(dir).isDirectory() ? namesIn(dir, prefix) : []
  } catch {
    return []
  }
}

function namesIn(dir: string, prefix: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter(f => f.startsWith(prefix))
      .sort((a, b) => Number(b.slice(prefix.length).replace(/\D/g, '')) - Number(a.slice(prefix.length).replace(/\D/g, '')))
  } catch {
    return []
  }
}

function keepGoodCopy(goodDir: string, name: string, text: string, now: Date): void {
  fs.mkdirSync(goodDir, { recursive: true, mode: 0o700 })
  const copies = listSorted(goodDir, `${name}.`)
  const newest = copies[0]
  if (newest === undefined || readNoFollow(path.join(goodDir, newest), JSON_LIMIT) !== text) {
    // A full disk must not leave a truncated "good" copy that a later restore would trust.
    writeFileAtomic(path.join(goodDir, `${name}.${now.getTime()}`), text)
    for (const old of listSorted(goodDir, `${name}.`).slice(GOOD_COPIES)) fs.rmSync(path.join(goodDir, old), { force: true })
  }
}

/** Identity of a file's current content, cheaply: inode, size and mtime. */
function fileStamp(file: string): string | undefined {
  try {
    const st = fs.lstatSync(file)
    return st.isFile() ? `${st.ino}:${st.size}:${st.mtimeMs}` : undefined
  } catch {
    return undefined
  }
}

/** Where the stamp of the last valid state of `file` is kept. */
const validMarker = (file: string, goodDir: string): string => path.join(goodDir, `.${path.basename(file)}.valid`)

/** Remembers that `file` was valid as it is now, so the next guard can skip reading it. */
function markValid(file: string, goodDir: string): void {
  const stamp = fileStamp(file)
  if (stamp !== undefined) writeFileAtomic(validMarker(file, goodDir), stamp)
}

function unchangedSinceValid(file: string, goodDir: string): boolean {
  const stamp = fileStamp(file)
  return stamp !== undefined && readNoFollow(validMarker(file, goodDir)) === stamp
}
