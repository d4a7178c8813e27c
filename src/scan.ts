// Reads the instances directory for --list, --gc and --adopt, never following symlinks.
import fs from 'node:fs'
import path from 'node:path'
import { readNoFollow } from './facts.js'
import type { ScannedEntry } from './gc.js'
import { PROJECT_ROOT_FILE } from './instance.js'
import { isLive, META_FILE, parseRecord, SESSIONS_DIR, type InstanceMeta, type SessionRecord } from './registry.js'
import { processStartTime } from './state.js'

export interface ScanOptions {
  /** Also measure size and count conversations (for --list). */
  details: boolean
}

export function scanInstances(dir: string, options: ScanOptions): ScannedEntry[] {
  let dirents: fs.Dirent[]
  try {
    dirents = fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return dirents.map(dirent => scanOne(dir, dirent, options))
}

function scanOne(dir: string, dirent: fs.Dirent, options: ScanOptions): ScannedEntry {
  const kind = dirent.isSymbolicLink() ? 'symlink' : dirent.isDirectory() ? 'dir' : 'other'
  const entry: ScannedEntry = { name: dirent.name, kind, recordedRoot: undefined, rootState: undefined, liveSessions: 0 }
  if (kind !== 'dir' || dirent.name.startsWith('.trash-')) return entry
  const instance = path.join(dir, dirent.name)
  entry.recordedRoot = readNoFollow(path.join(instance, PROJECT_ROOT_FILE))
  if (entry.recordedRoot !== undefined) entry.rootState = rootState(entry.recordedRoot, readMeta(instance))
  entry.liveSessions = liveSessions(instance)
  if (options.details) {
    const used = lastUsed(instance)
    if (used !== undefined) entry.lastUsed = used
    entry.size = treeSize(instance)
    entry.conversations = countConversations(instance)
  }
  return entry
}

export function readMeta(instance: string): InstanceMeta | undefined {
  const text = readNoFollow(path.join(instance, META_FILE))
  if (text === undefined) return undefined
  try {
    return JSON.parse(text) as InstanceMeta
  } catch {
    return undefined
  }
}

/**
 * 'exists', 'missing' (ENOENT with the first existing ancestor on the recorded device),
 * 'unreachable' (another device: an unmounted drive or share), or the error code.
 */
export function rootState(root: string, meta: InstanceMeta | undefined): string {
  try {
    fs.lstatSync(root)
    return 'exists'
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    if (code !== 'ENOENT') return code
  }
  if (meta === undefined) return 'missing'
  // The root's parent was on meta.rootDevice; walk up to the first ancestor that exists now.
  for (let p = path.dirname(path.dirname(root)); ; p = path.dirname(p)) {
    try {
      const st = fs.statSync(p)
      fs.accessSync(p, fs.constants.R_OK | fs.constants.X_OK)
      return st.dev === meta.rootDevice ? 'missing' : 'unreachable'
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') return 'unreachable'
    }
    if (p === '/') return 'missing'
  }
}

export function liveSessions(instance: string): number {
  return liveSessionRecords(instance).length
}

/** The session records of an instance whose process is still the one that wrote them. */
export function liveSessionRecords(instance: string): SessionRecord[] {
  const dir = path.join(instance, SESSIONS_DIR)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  const live: SessionRecord[] = []
  for (const name of names) {
    const record = parseRecord(readNoFollow(path.join(dir, name)) ?? '')
    if (record === undefined) continue
    if (isLive(record, { startTime: processStartTime(record.pid), ttyExists: record.tty === undefined || fs.existsSync(record.tty) })) live.push(record)
  }
  return live
}

function lastUsed(instance: string): number | undefined {
  let newest: number | undefined
  for (const p of [instance, path.join(instance, SESSIONS_DIR)]) {
    try {
      const mtime = fs.lstatSync(p).mtimeMs
      if (newest === undefined || mtime > newest) newest = mtime
    } catch {
      // absent in instances made by older versions
    }
  }
  return newest
}

/** Bytes in a tree, counting symlinks as themselves (never followed). */
function treeSize(dir: string): number {
  let total = 0
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const entry of entries) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) total += treeSize(p)
    else {
      try {
        total += fs.lstatSync(p).size
      } catch {
        // vanished
      }
    }
  }
  return total
}

/** Claude Code keeps each conversation as projects/<sanitized cwd>/<uuid>.jsonl. */
function countConversations(instance: string): number {
  const projects = path.join(instance, 'projects')
  let count = 0
  let dirs: fs.Dirent[]
  try {
    dirs = fs.readdirSync(projects, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const dir of dirs) {
    if (!dir.isDirectory()) continue
    try {
      count += fs.readdirSync(path.join(projects, dir.name)).filter(name => name.endsWith('.jsonl')).length
    } catch {
      // unreadable: not counted
    }
  }
  return count
}
