// Reads the instances directory for --list, --gc and --adopt, never following symlinks.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { inPinnedDir, pidScope, processStartTime } from '../host/fs.js'
import { readNoFollow } from '../host/probe.js'
import type { ScannedEntry } from './gc.js'
import { INSTANCE_ID, PROJECT_ROOT_FILE, validProjectRoot } from './instance.js'
import { isLive, META_FILE, parseRecord, recordKind, SESSIONS_DIR, type InstanceMeta, type SessionRecord } from './registry.js'

/** The entries of the instances directory; none when it does not exist yet. */
function instanceDirents(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** What --gc and --adopt need of each entry: its kind, recorded root, root state, live sessions. */
export function scanInstances(dir: string): ScannedEntry[] {
  return instanceDirents(dir).map(dirent => scanOne(dir, dirent))
}

/**
 * scanInstances plus last use, size and conversation count. An instance with no session since the
 * last --list comes from that --list's cache (the instance only changes while a session runs);
 * one used since is measured here, within a budget. Walking every instance instead costs about two
 * seconds for 10,000 of them on this file system (a readdir is ~12 µs from Node, and du or find
 * are no faster), against "well under a second" for --list. Sessions measure nothing when they
 * end: that walk grows with the instance (~10 ms per 1,000 files) and made every exit wait.
 */
export function scanWithDetails(dir: string, measureBudgetMs = MEASURE_BUDGET_MS): ScannedEntry[] {
  const cache = readListCache(dir)
  const measured: Record<string, CachedInstance> = {}
  const deadline = Date.now() + measureBudgetMs
  const entries = instanceDirents(dir).map(
    dirent => fromCache(dir, dirent, cache[dirent.name]) ?? (Date.now() < deadline ? scanDetailed(dir, dirent, measured) : scanOne(dir, dirent)),
  )
  // Instances used since the last --list, or a lost cache: measured within the budget and
  // remembered, so each --list stays under a second and the next ones catch up.
  if (Object.keys(measured).length > 0) saveListCache(dir, { ...cache, ...measured })
  return entries
}

/**
 * How long one --list spends measuring instances it has no record of (walking 10,000 takes about
 * 2.5 s here): the rest show their size and conversations as unknown until a later --list.
 */
export const MEASURE_BUDGET_MS = 200

function saveListCache(instances: string, cache: Record<string, CachedInstance>): void {
  try {
    writeFileAtomic(listCachePath(instances), JSON.stringify(cache))
  } catch {
    // a read-only or full state dir: --list still answered; the next one measures again
  }
}

/** What --list needs of an instance, cached in one file by --list itself; an instance used since is measured again. */
export interface CachedInstance extends Usage {
  root: string
  /** When it was last used (ms). */
  ended?: number
  /** mtime of claudebox/sessions when it was measured with no session: unchanged since means still no session. */
  sessionsMtime?: number
  /** meta.json's rootDevice, for the mount check of a root that is gone. */
  rootDevice?: number
}

const listCachePath = (instances: string): string => path.join(path.dirname(instances), 'list-cache.json')

function readListCache(instances: string): Record<string, CachedInstance> {
  try {
    // About 150 bytes an instance: 64 MiB holds far more instances than anyone keeps.
    const cache = JSON.parse(readNoFollow(listCachePath(instances), 64 << 20) ?? '{}') as unknown
    return typeof cache === 'object' && cache !== null ? (cache as Record<string, CachedInstance>) : {}
  } catch {
    return {}
  }
}

/**
 * The fast path of --list: an instance whose sessions directory has not changed since a session
 * ended with none left (same mtime) has had no session since, so its cached root, size and
 * conversations still hold; only the root's state is looked at again. Reading two files per
 * instance instead took about 0.9 s for 10,000 instances here (~20 µs an open).
 */
function fromCache(dir: string, dirent: fs.Dirent, cached: CachedInstance | undefined): ScannedEntry | undefined {
  if (cached === undefined || cached.sessionsMtime === undefined || !dirent.isDirectory() || !INSTANCE_ID.test(dirent.name)) return undefined
  const instance = path.join(dir, dirent.name)
  if (sessionsMtime(instance) !== cached.sessionsMtime) return undefined
  const state = rootState(cached.root, cached.rootDevice === undefined ? readMeta(instance) : { rootDevice: cached.rootDevice, name: '' })
  const entry: ScannedEntry = { name: dirent.name, kind: 'dir', recordedRoot: cached.root, rootState: state, liveSessions: 0, size: cached.size, conversations: cached.conversations }
  if (cached.ended !== undefined) entry.lastUsed = cached.ended
  return entry
}

function scanDetailed(dir: string, dirent: fs.Dirent, remember: Record<string, CachedInstance>): ScannedEntry {
  const entry = scanOne(dir, dirent)
  if (entry.kind !== 'dir' || entry.name.startsWith('.trash-')) return entry
  const instance = path.join(dir, entry.name)
  const sessions = sessionsMtime(instance)
  const measured = measureUsage(instance)
  entry.size = measured.size
  entry.conversations = measured.conversations
  const used = entry.liveSessions > 0 ? Date.now() : lastUsed(instance)
  if (used !== undefined) entry.lastUsed = used
  // Only a quiet instance is remembered: a live session may still change it.
  if (entry.liveSessions === 0 && entry.recordedRoot !== undefined && INSTANCE_ID.test(entry.name) && sessions !== undefined) {
    const rootDevice = readMeta(instance)?.rootDevice
    remember[entry.name] = { root: entry.recordedRoot, size: measured.size, conversations: measured.conversations, sessionsMtime: sessions, ...(used === undefined ? {} : { ended: used }), ...(rootDevice === undefined ? {} : { rootDevice }) }
  }
  return entry
}

export interface Usage {
  size: number
  conversations: number
}

/** Folders below the instance measured at most (each open one holds a descriptor). */
const MAX_DEPTH = 64

/**
 * Bytes in the instance and its Claude transcripts (projects/<folder>/<uuid>.jsonl); never follows
 * symlinks. Each folder is opened without following a link and read through that descriptor: a
 * session of the project running meanwhile swapped a folder with a link to / between the check and
 * the read (renameat2; red team, round 36), and --list walked the whole machine for 30 s.
 */
export function measureUsage(instance: string): Usage {
  const usage: Usage = { size: 0, conversations: 0 }
  const walk = (dir: string, depth: number, inProjects: boolean): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const p = `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) inPinnedDir(p, at => walk(at, depth + 1, depth === 0 && entry.name === 'projects' ? true : inProjects && depth === 1))
      } else {
        try {
          usage.size += fs.lstatSync(p).size
        } catch {
          continue
        }
        if (inProjects && depth === 2 && entry.isFile() && entry.name.endsWith('.jsonl')) usage.conversations++
      }
    }
  }
  inPinnedDir(instance, at => walk(at, 0, false))
  return usage
}

/** @param emptySessionsMtime the sessions dir's mtime when it was last seen empty, if known */
function scanOne(dir: string, dirent: fs.Dirent): ScannedEntry {
  const kind = dirent.isSymbolicLink() ? 'symlink' : dirent.isDirectory() ? 'dir' : 'other'
  const entry: ScannedEntry = { name: dirent.name, kind, recordedRoot: undefined, rootState: undefined, liveSessions: 0 }
  if (kind !== 'dir' || dirent.name.startsWith('.trash-')) return entry
  const instance = path.join(dir, dirent.name)
  entry.recordedRoot = validProjectRoot(readNoFollow(path.join(instance, PROJECT_ROOT_FILE)))
  if (entry.recordedRoot !== undefined) entry.rootState = rootState(entry.recordedRoot, readMeta(instance))
  entry.liveSessions = liveSessions(instance)
  return entry
}

export function sessionsMtime(instance: string): number | undefined {
  try {
    return fs.lstatSync(path.join(instance, SESSIONS_DIR)).mtimeMs
  } catch {
    return undefined
  }
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
  // The root (or, in an older record, its parent) was on meta.rootDevice; walk up to the first ancestor that exists now.
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
  return sessionRecords(instance).live
}

/** A record whose launcher is gone without removing it: killed, or the machine stopped. */
export interface GoneRecord {
  file: string
  record: SessionRecord
}

/** When a gone record's session began; 0 when its record does not say (it may have begun at any time). */
export function goneStartMs(gone: GoneRecord): number {
  const time = Date.parse(gone.record.started)
  return Number.isFinite(time) ? time : 0
}

/** The gone record whose session began first. */
export function firstGone(gone: readonly GoneRecord[]): GoneRecord | undefined {
  return [...gone].sort((a, b) => goneStartMs(a) - goneStartMs(b))[0]
}

/**
 * An instance's session records: those live, and those whose launcher is surely gone (its pid no
 * longer the process that wrote it, or another pid namespace's whose heartbeat stopped).
 */
export function sessionRecords(instance: string): { live: SessionRecord[]; gone: GoneRecord[] } {
  const dir = path.join(instance, SESSIONS_DIR)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return { live: [], gone: [] }
  }
  const [live, gone]: [SessionRecord[], GoneRecord[]] = [[], []]
  const [scope, now] = [pidScope(), Date.now()]
  for (const name of names) {
    const file = path.join(dir, name)
    const record = parseRecord(readNoFollow(file) ?? '')
    if (record === undefined) continue
    // Another pid namespace's, still beating, counts as live: the instance is kept and its shared state left alone (README, "Known limits").
    const kind = recordKind(record, scope, now, () => fs.lstatSync(file, { throwIfNoEntry: false })?.mtimeMs)
    const startTime = kind === 'ours' ? processStartTime(record.pid) : undefined
    if (kind === 'foreign' || (kind === 'ours' && isLive(record, { startTime }))) live.push(record)
    else if (kind === 'gone' || startTime !== record.startTime) gone.push({ file, record })
  }
  return { live, gone }
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
