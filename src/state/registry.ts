// Live sessions: each launch records itself in its instance (`claudebox/sessions/<pid>-<scope>.json`,
// bound read-only inside the sandbox, so the agent cannot forge or remove records). Pure rules
// here; host/probe.ts reads the records and the process table.

/** The directory, inside an instance, that holds claudebox's own state (Claude Code does not use it). */
export const OWN_DIR = 'claudebox'
/**
 * In $CLAUDEBOX_HOME, per instance id: what the git watch moved out of the project (host/git-watch.ts).
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
export const SESSIONS_DIR = 'claudebox/sessions'
export const META_FILE = 'claudebox/meta.json'
/** Size and conversation count of the instance, written when a session ends (for --list). */
export const USAGE_FILE = 'claudebox/usage.json'

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
  /** The boot it was written in (fs.ts bootId) and the machine (fs.ts machineTag); absent in older records. */
  boot?: string
  machine?: string
}

/** What the probe saw of a recorded session's process right now. */
export interface SessionProbe {
  /** Start time of the process now holding the pid, or undefined when no process has it. */
  startTime: string | undefined
  ttyExists: boolean
}

/** Where records are read: this launcher's pid namespace (fs.ts pidScope), boot (bootId, bootStarted) and machine (machineTag). */
export interface RecordReader {
  scope: string
  boot: string | undefined
  machine: string | undefined
  /** When this boot began (ms since the epoch); read only for a record of another boot of this machine. */
  readonly bootStarted: number | undefined
}

/**
 * How a record is told live or stale here: one of an earlier boot of this machine is stale (every
 * process of that boot is gone: a machine that crashed or lost power with a session running; red
 * team, round 55), and it must have started before this boot began (two kernels that share a
 * machine id and a host name are not told apart otherwise; round 56). One of another pid
 * namespace (a container sharing the home, another host on a shared home) cannot be checked here,
 * so it counts as live. One of ours is checked by its pid (isLive). Records without a scope, a
 * boot or a machine come from older versions. When in doubt a record counts as live: a live one
 * taken for stale would let --gc remove what its session is using.
 */
export function recordKind(record: SessionRecord, reader: RecordReader): 'earlier boot' | 'foreign' | 'ours' {
  if (ofEarlierBoot(record, reader)) return 'earlier boot'
  if (record.scope !== undefined && record.scope !== reader.scope) return 'foreign'
  return 'ours'
}

function ofEarlierBoot(record: SessionRecord, reader: RecordReader): boolean {
  if (record.machine === undefined || record.machine !== reader.machine) return false
  if (record.boot === undefined || reader.boot === undefined || record.boot === reader.boot) return false
  const started = Date.parse(record.started)
  const bootStarted = reader.bootStarted
  return bootStarted !== undefined && Number.isFinite(started) && started < bootStarted
}

/**
 * A record is stale when its process is gone, when the pid now belongs to another program (the
 * start time differs), or when its terminal no longer exists.
 */
export function isLive(record: SessionRecord, probe: SessionProbe): boolean {
  if (probe.startTime === undefined || probe.startTime !== record.startTime) return false
  return record.tty === undefined || probe.ttyExists
}

export function parseRecord(text: string): SessionRecord | undefined {
  try {
    const data = JSON.parse(text) as Partial<SessionRecord>
    if (typeof data.pid !== 'number' || typeof data.startTime !== 'string' || typeof data.cwd !== 'string') return undefined
    return data as SessionRecord
  } catch {
    return undefined
  }
}

/** Instance metadata claudebox records at creation, for GC (mount check) and the --adopt hint. */
export interface InstanceMeta {
  /** st_dev of the project root's directory when the instance was created. */
  rootDevice: number
  /** The directory name of the project and its git remote, to recognise it after a move. */
  name: string
  remote?: string
}
