// Live sessions: each launch records itself in its instance (`claudebox/sessions/<pid>-<scope>.json`,
// bound read-only inside the sandbox, so the agent cannot forge or remove records). Pure rules
// here; state/apply.ts writes the records and keeps their time fresh, state/scan.ts reads them.

/** The directory, inside an instance, that holds claudebox's own state (Claude Code does not use it). */
export const OWN_DIR = 'claudebox'
/**
 * In $CLAUDEBOX_HOME, per instance id: what the git watch moved out of the project (host/quarantine.ts).
 * Not in the instance, which the session writes: a .git it made there would be the repository of a
 * git the user runs in the quarantine to look (red team, round 29).
 */
export const QUARANTINE_DIR = 'quarantine'
/** In $CLAUDEBOX_HOME, per instance id: what the search for nested repositories saw in each folder (host/folder-cache.ts). */
export const folderCacheFile = (claudeboxHome: string, id: string): string => `${claudeboxHome}/cache/folders-${id}.json`
/**
 * In $CLAUDEBOX_HOME, per instance id: what each nested repository of the project was at its last
 * session's end (host/nested-repos.ts). Not a cache: without it, a change made in one session and
 * completed in the next is reported only by its own session's times.
 */
export const nestedRecordFile = (claudeboxHome: string, id: string): string => `${claudeboxHome}/nested/${id}.json`
/**
 * In $CLAUDEBOX_HOME, per instance id: a login made inside a session of that project, kept for it
 * alone (api-session.ts). Not in the instance, which every later session of the project can read
 * (red team, round 140: its tokens were read by the next session, 4 of 4).
 */
export const projectLoginFile = (claudeboxHome: string, id: string): string => `${claudeboxHome}/logins/${id}.json`
/** Where an older claudebox kept that login, in the instance: moved out at the next launch (launch.ts). */
export const LEGACY_PROJECT_LOGIN = 'claudebox/login.json'
export const SESSIONS_DIR = 'claudebox/sessions'
/** A launcher's session record in SESSIONS_DIR; the pid namespace in the name (state/apply.ts). */
export const sessionRecordName = (pid: number, scope: string): string => `${pid}-${scope}.json`
export const META_FILE = 'claudebox/meta.json'

export interface SessionRecord {
  pid: number
  /** The process start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTime: string
  tty?: string
  tmuxPane?: string
  cwd: string
  version: string
  started: string
  /** The pid namespace the pid is of (fs.ts pidScope); absent in older records. */
  scope?: string
  /** Its launcher refreshes the record's time every HEARTBEAT_MS while the session runs; absent in older records. */
  heartbeat?: boolean
  /**
   * The files that run outside the sandbox as they were when the session started (probe.ts
   * snapshot): compared by the next launch when this launcher never got to (unfinished.ts).
   */
  watched?: Record<string, string>
  /**
   * What the session's git watch guarded (GitWatchSpec): names that must not appear, and links with
   * their texts. The next launch's probe would take one made meanwhile for the user's own.
   */
  guarded?: { forbidden: string[]; links: { path: string; text: string }[] }
}

/** What the probe saw of a recorded session's process right now. */
export interface SessionProbe {
  /** Start time of the process now holding the pid, or undefined when no process has it. */
  startTime: string | undefined
}

/** How often a launcher refreshes its record's time, for launchers that cannot check its pid. */
export const HEARTBEAT_MS = 60_000
/** A record of another pid namespace not refreshed for this long is of a gone launcher. */
export const HEARTBEAT_STALE_MS = 5 * HEARTBEAT_MS

/**
 * How a record is told live or stale here. One of this pid namespace (or of an older version,
 * without a scope) by its pid (isLive). One of another pid namespace or boot (a container sharing
 * the home, another host on a shared home, this machine before a crash), whose pid cannot be
 * checked here, by its launcher's heartbeat: live while the record's time keeps being refreshed,
 * gone once that stopped HEARTBEAT_STALE_MS ago (red team, rounds 55 to 57: by the boot id alone,
 * a crash left records live for good; by the machine id too, another kernel's live session was
 * taken for gone and --gc removed its instance). One without a heartbeat counts as live.
 * `mtimeMs`: the record's time, asked only for another pid namespace's.
 */
export function recordKind(record: SessionRecord, scope: string, now: number, mtimeMs: () => number | undefined): 'gone' | 'foreign' | 'ours' {
  if (record.scope === undefined || record.scope === scope) return 'ours'
  if (record.heartbeat !== true) return 'foreign'
  const time = mtimeMs()
  return time !== undefined && now - time > HEARTBEAT_STALE_MS ? 'gone' : 'foreign'
}

/**
 * A record is stale when its process is gone, or when the pid now belongs to another program (the
 * start time differs). A launcher whose terminal was closed and that runs on (the program ignored
 * the hangup) is live: its sandbox still writes the instance (red team, round 90: counted as
 * gone, the next launch composed the shared tier into the instance under it, and the session
 * swapped a folder for a link the host's writes then followed).
 */
export function isLive(record: SessionRecord, probe: SessionProbe): boolean {
  return probe.startTime !== undefined && probe.startTime === record.startTime
}

export function parseRecord(text: string): SessionRecord | undefined {
  try {
    const data = JSON.parse(text) as Partial<SessionRecord>
    if (typeof data.pid !== 'number' || typeof data.startTime !== 'string' || typeof data.cwd !== 'string') return undefined
    if (data.watched !== undefined && (typeof data.watched !== 'object' || data.watched === null || Object.values(data.watched).some(v => typeof v !== 'string'))) delete data.watched
    if (data.guarded !== undefined && !validGuarded(data.guarded)) delete data.guarded
    return data as SessionRecord
  } catch {
    return undefined
  }
}

function validGuarded(guarded: unknown): boolean {
  const { forbidden, links } = (guarded ?? {}) as { forbidden?: unknown; links?: unknown }
  const isLink = (l: unknown): boolean => typeof (l as { path?: unknown })?.path === 'string' && typeof (l as { text?: unknown })?.text === 'string'
  return Array.isArray(forbidden) && forbidden.every(f => typeof f === 'string') && Array.isArray(links) && links.every(isLink)
}

/** Instance metadata claudebox records at creation, for GC (mount check) and the --adopt hint. */
export interface InstanceMeta {
  /**
   * st_dev of the project root (the git common dir, or the folder) when the instance was created;
   * before round 94, of the folder above it. Either tells an unmounted drive from a removed folder,
   * but the folder above missed a project at the top of a drive whose mount point is gone.
   */
  rootDevice: number
  /** The directory name of the project and its git remote, to recognise it after a move. */
  name: string
  remote?: string
}
