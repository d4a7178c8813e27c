// Reading and writing tier trees on disk for tier-sync.ts: never through a symlink the agent could
// have planted, never blocking on a FIFO, bounded in size. The shared tier's top-level entries may
// be the user's own symlinks (a CLAUDE.md kept with their dotfiles), so those alone are followed.
import { sha256Hex } from '../sha256.js'
import { inPinnedDir, randomHex } from '../host/fs.js'
import fs from 'node:fs'
import path from 'node:path'
import type { TierNode } from '../sandbox/tier-merge.js'
import { inlineSafe } from '../cli/terminal-safe.js'

/** The largest file of a tier that is copied; a larger one is left where it is, with a warning. */
export const TIER_FILE_LIMIT = 16 << 20
/** At most this many files of one tree are read (an agent can create millions in its copy). */
export const TIER_FILES_LIMIT = 10_000
/**
 * At most this many bytes of one tree are held in memory: 10,000 sparse files of 16 MB cost the
 * agent no disk and would cost the launcher 160 GB.
 */
export const TIER_BYTES_LIMIT = 64 << 20

export type DiskNode = TierNode & { mode?: number }

/**
 * Every file and symlink under the named entries of `root`, keyed by path relative to `root`;
 * undefined when they are more than TIER_FILES_LIMIT files and folders or TIER_BYTES_LIMIT bytes
 * (a tree read in part would make every file left out look removed). Each folder is reached from
 * its parent's descriptor, never through a symlink: a session running meanwhile that swaps a folder
 * for a link cannot make the host read a file outside (red team, round 90: --proposals showed a
 * host file as the project's proposal, 6 of 20). Folders count toward the limit: millions of empty
 * ones held every --proposals.
 * @param followTop follow a symlink that is itself a top-level entry (the host's shared tier only)
 */
export function readTree(root: string, entries: readonly string[], followTop: boolean, warnings: string[]): Map<string, DiskNode> | undefined {
  const tree = new Map<string, DiskNode>()
  const seen = { entries: 0, bytes: 0, full: false }
  const walk = (at: string, rel: string, follow: boolean): void => {
    if (seen.full) return
    if (++seen.entries > TIER_FILES_LIMIT || seen.bytes > TIER_BYTES_LIMIT) {
      warnings.push(`${inlineSafe(root)}: the shared entries hold more than ${TIER_FILES_LIMIT} files and folders or ${TIER_BYTES_LIMIT >> 20} MB; claudebox leaves them as they are (no copies updated, no proposals) until they are smaller`)
      seen.full = true
      return
    }
    const [here, shown] = [`${at}/${path.basename(rel)}`, inlineSafe(path.join(root, rel))]
    let st: fs.Stats
    try {
      st = follow ? fs.statSync(here) : fs.lstatSync(here)
    } catch {
      return
    }
    if (st.isDirectory() && rel === path.basename(rel) && /\.(json|md)$/.test(rel)) warnings.push(`${shown} is a directory where a file belongs; left out of the shared tier`)
    else if (st.isDirectory()) inPinnedDir(here, inner => readdirSorted(inner).forEach(name => walk(inner, path.join(rel, name), false)), follow)
    else if (st.isSymbolicLink()) tree.set(rel, { kind: 'symlink', target: fs.readlinkSync(here) })
    else if (!st.isFile()) warnings.push(`${shown} is neither a file nor a directory; left out of the shared tier`)
    else if (st.size > TIER_FILE_LIMIT) warnings.push(`${shown} is larger than ${TIER_FILE_LIMIT >> 20} MB; left out of the shared tier`)
    else {
      const node = readFileNode(here, rel, follow)
      if (node !== undefined) tree.set(rel, node)
      seen.bytes += node?.kind === 'file' ? (node.data?.length ?? 0) : 0
    }
  }
  inPinnedDir(root, at => entries.forEach(entry => walk(at, entry, followTop)), true)
  return seen.full ? undefined : tree
}

function readdirSorted(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort()
  } catch {
    return []
  }
}

function readFileNode(file: string, rel: string, follow: boolean): DiskNode | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (follow ? 0 : fs.constants.O_NOFOLLOW))
  } catch {
    return undefined
  }
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile() || st.size > TIER_FILE_LIMIT) return undefined
    const data = fs.readFileSync(fd)
    // Never writable for group or others where it is copied or promoted to (round 90: a session's 0666
    // file became a group-writable shared one).
    const node: DiskNode = { kind: 'file', sha256: sha256Hex(data), data, mode: st.mode & 0o755 }
    if (rel.endsWith('.json')) node.json = parseJson(data.toString('utf8'))
    return node
  } finally {
    fs.closeSync(fd)
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** Fingerprint of the entries as they are now (names, kinds, sizes, times, inodes): unchanged means no rereading. */
export function treePrint(root: string, entries: readonly string[]): string {
  const parts: string[] = []
  const walk = (rel: string, follow: boolean): void => {
    try {
      const st = follow ? fs.statSync(path.join(root, rel)) : fs.lstatSync(path.join(root, rel))
      parts.push(`${rel}\0${st.mode}\0${st.size}\0${st.mtimeMs}\0${st.ino}\n`)
      if (st.isDirectory()) for (const name of readdirSorted(path.join(root, rel))) walk(path.join(rel, name), false)
    } catch {
      parts.push(`${rel}\0missing\n`)
    }
  }
  for (const entry of entries) walk(entry, true)
  return sha256Hex(parts.join(''))
}

/**
 * The directory that will hold `rel` under `root`, created where missing; undefined when a
 * component on the way is anything but a real directory (an agent's symlink is never followed).
 */
export function safeParent(root: string, rel: string): string | undefined {
  let dir = root
  for (const part of path.dirname(rel).split(path.sep).filter(p => p !== '.' && p !== '')) {
    dir = path.join(dir, part)
    try {
      if (!fs.lstatSync(dir).isDirectory()) return undefined
    } catch {
      try {
        fs.mkdirSync(dir, { mode: 0o700 })
      } catch {
        return undefined
      }
    }
  }
  return dir
}

/** Puts `node` at root/rel by temp file + rename (a rename replaces a symlink, never follows it). */
export function writeNode(root: string, rel: string, node: DiskNode): boolean {
  const dir = safeParent(root, rel)
  if (dir === undefined) return false
  const target = path.join(dir, path.basename(rel))
  const temp = path.join(dir, `.${path.basename(rel)}.claudebox-${randomHex(4)}`)
  try {
    if (node.kind === 'symlink') fs.symlinkSync(node.target, temp)
    else fs.writeFileSync(temp, node.data ?? '', { mode: (node.mode ?? 0o600) | 0o600, flag: 'wx' })
    fs.renameSync(temp, target)
    return true
  } catch {
    fs.rmSync(temp, { force: true })
    return false
  }
}

/** Removes root/rel when it is a file or symlink reached through real directories only. */
export function removeNode(root: string, rel: string): void {
  const dir = safeParent(root, rel)
  if (dir === undefined) return
  const target = path.join(dir, path.basename(rel))
  try {
    if (!fs.lstatSync(target).isDirectory()) fs.unlinkSync(target)
  } catch {
    // already gone
  }
}
