// Creates the directories and files a launch plan lists, without following symlinks out of
// CLAUDEBOX_HOME (an agent can plant symlinks in its instance dir: flatpak CVE-2024-42472).
import fs from 'node:fs'
import path from 'node:path'
import { launchError } from '../errors.js'
import { inPinnedDir, leftByGoneLaunchers, pidOfOurs, pidScope, processStartTime, removeFile } from '../host/fs.js'
import { lstatKind } from '../host/probe.js'
import { sanitizePath } from './adopt.js'
import { HEARTBEAT_MS, META_FILE, sessionRecordName, SESSIONS_DIR, type InstanceMeta, type SessionRecord } from './registry.js'
import type { FileStep, HostFacts, MkdirStep } from '../types.js'
import { isatty } from 'node:tty'

export function applyMkdirs(steps: readonly MkdirStep[], claudeboxHome: string, at: (p: string) => string = p => p): void {
  for (const step of steps) {
    // Made by an earlier launch, mostly: looked at first (an EEXIST costs an exception, ~20 µs).
    if (existingDir(step.path, claudeboxHome)) continue
    // Only what is written goes by `at` (a swap that has this look see a folder elsewhere has nothing written).
    const where = at(step.path)
    try {
      fs.mkdirSync(where, { mode: step.mode })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' && where === step.path && step.path !== path.dirname(step.path)) {
        // The plan lists parents first, except CLAUDEBOX_HOME's own parents.
        fs.mkdirSync(path.dirname(step.path), { recursive: true, mode: 0o700 })
        applyMkdirs([step], claudeboxHome, at)
        continue
      }
      if (code !== 'EEXIST') throw stateError(step.path, error)
    }
    // The state dir itself may be a symlink the user made; nothing below it may be one.
    const st = step.path === claudeboxHome ? fs.statSync(where) : fs.lstatSync(where)
    if (!st.isDirectory()) {
      throw launchError(`${step.path} should be a directory but is a ${st.isSymbolicLink() ? 'symlink' : 'file'}; move it away and rerun`)
    }
  }
}

/** Whether `dir` is a directory already (the state dir through a symlink the user made; nothing below it). */
function existingDir(dir: string, claudeboxHome: string): boolean {
  try {
    return (dir === claudeboxHome ? fs.statSync(dir, { throwIfNoEntry: false }) : fs.lstatSync(dir, { throwIfNoEntry: false }))?.isDirectory() === true
  } catch {
    return false // mkdir and the check after it say what is wrong
  }
}

/**
 * Creates each file only if it does not exist: temp file + link(2), which never replaces, so two
 * launches at once both succeed. Files marked `replace` (written only by claudebox) are rewritten
 * with temp file + rename when their content differs. `at` names the path each write goes through
 * (a launch: the folder reached from a pinned descriptor, bind-fds.ts placePath); what is only
 * looked at, and every message, goes by the file's own path.
 */
export function applyFiles(steps: readonly FileStep[], at: (p: string) => string = p => p): void {
  const cleaned = new Set<string>()
  for (const step of steps) {
    if (step.replace ? sameContent(step.path, step.content) : step.exact ? sameContent(step.path, step.content) : isRegularFile(step.path)) continue // the common case: created by an earlier launch
    const where = at(step.path)
    const temp = path.join(path.dirname(where), `${tempPrefix(step.path)}${process.pid}-${pidScope()}.${Math.random().toString(16).slice(2)}`)
    try {
      fs.mkdirSync(path.dirname(where), { recursive: true, mode: 0o700 })
      const dir = path.dirname(where)
      if (!cleaned.has(dir)) removeGoneTemps(dir)
      cleaned.add(dir)
      fs.writeFileSync(temp, step.content, { mode: step.mode, flag: 'wx' })
      if (step.replace) fs.renameSync(temp, where)
      else {
        try {
          fs.linkSync(temp, where)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        }
      }
    } catch (error) {
      throw stateError(step.path, error)
    } finally {
      removeFile(temp)
    }
    const st = fs.lstatSync(where)
    if (!st.isFile()) throw launchError(`${step.path} should be a regular file but is not; move it away and rerun`)
    // Made meanwhile by someone else (a session of this project running beside the launch): bwrap would bind theirs.
    if (step.exact && !sameContent(where, step.content)) throw launchError(`${step.path} appeared while claudebox started, with other content than claudebox's; look at it (cat, not git), move it away, then rerun`)
  }
}

function tempPrefix(file: string): string {
  return `.${path.basename(file)}.tmp.`
}

/**
 * Removes the temp files that launchers killed with SIGKILL while writing in `dir` left (a first
 * launch killed at the wrong moment leaves one beside a missing project-root). Only names of our
 * own pattern, only regular files, only of launchers that are gone; one look per directory.
 */
function removeGoneTemps(dir: string): void {
  // This pid namespace's only (red team, round 53: another's pids are not ours), or an older version's unscoped name.
  for (const name of leftByGoneLaunchers(dir, entry => pidOfOurs(entry, /^\..+\.tmp\.(\d+)-([0-9a-f]{8}|unknown)\.[0-9a-f]*$/, /^\..+\.tmp\.(\d+)\.[0-9a-f]*$/))) {
    const temp = path.join(dir, name)
    if (isRegularFile(temp)) removeFile(temp)
  }
}

function isRegularFile(file: string): boolean {
  try {
    return fs.lstatSync(file).isFile()
  } catch {
    return false
  }
}

function sameContent(file: string, content: string | Uint8Array): boolean {
  try {
    const st = fs.lstatSync(file)
    return st.isFile() && Buffer.from(content).equals(fs.readFileSync(file))
  } catch {
    return false
  }
}

/** A file-system failure on claudebox's state as a one-line launch error naming the place and the fix. */
export function stateError(p: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code
  const dir = path.dirname(p)
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return launchError(`cannot write in ${dir} (${code}); make it writable (chmod u+w, or chown it to you) or set CLAUDEBOX_HOME to a directory you own`)
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') return launchError(`cannot write in ${dir}: the disk is full (${code}); free some space and rerun`)
  return launchError(`cannot create ${p}: ${(error as Error).message}`)
}


/**
 * Records this launch in its instance; returns the function that removes the record. Written
 * with O_EXCL|O_NOFOLLOW: nothing in the instance can redirect the write. Its time is refreshed
 * every `heartbeatMs` while the session runs: launchers of other pid namespaces, which cannot
 * check our pid, tell a live session from a gone one by it (registry.ts recordKind).
 */
export function registerSession(instance: string, cwd: string, version: string, kept: Pick<SessionRecord, 'watched' | 'guarded'> = {}, heartbeatMs = HEARTBEAT_MS): () => void {
  // The pid namespace in the name: a launcher in a container sharing this home may have our pid
  // (red team, round 54: it took this record for its own stale one and removed it).
  const file = path.join(instance, SESSIONS_DIR, sessionRecordName(process.pid, pidScope()))
  const record: SessionRecord = { pid: process.pid, startTime: processStartTime('self') ?? '', cwd, version, started: new Date().toISOString(), scope: pidScope(), heartbeat: true, ...kept }
  if (isatty(0)) {
    try {
      record.tty = fs.readlinkSync('/proc/self/fd/0')
    } catch {
      // no tty name: the pid and start time still identify the session
    }
  }
  const pane = process.env['TMUX_PANE']
  if (pane) record.tmuxPane = pane
  try {
    removeFile(file) // a stale record of an earlier process with our pid
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600)
    try {
      fs.writeSync(fd, `${JSON.stringify(record)}\n`)
    } finally {
      fs.closeSync(fd)
    }
  } catch (error) {
    removeFile(file) // never an empty record (a full disk)
    throw stateError(file, error)
  }
  const beat = setInterval(() => {
    try {
      const now = new Date()
      fs.lutimesSync(file, now, now)
    } catch {
      // gone (the session ends) or a full quota: the next beat tries again
    }
  }, heartbeatMs).unref()
  return () => {
    clearInterval(beat)
    removeFile(file)
  }
}

/** Writes claudebox/meta.json once: the root's device (for GC's mount check), name and remote. */
export function recordInstanceMeta(instance: string, facts: HostFacts): void {
  const file = path.join(instance, META_FILE)
  const root = facts.git?.commonDir ?? facts.cwd
  if (root === undefined) return
  const top = facts.git?.topLevel ?? root
  try {
    fs.lstatSync(file)
    return
  } catch {
    // not recorded yet
  }
  // The root's own device: a project at the top of a drive whose mount point goes at unplug (as
  // udisks does) was taken for removed by the device of the folder above it (red team, round 94).
  let rootDevice: number
  try {
    rootDevice = fs.statSync(root).dev
  } catch {
    // Removed while the launch ran (this runs beside bwrap): the reason, not an internal error (flaky in CI).
    throw launchError(`the sandbox could not start: ${root} no longer exists (removed while claudebox started); cd into your project and rerun`)
  }
  const meta: InstanceMeta = { rootDevice, name: path.basename(top) }
  if (facts.gitRemote) meta.remote = facts.gitRemote
  applyFiles([{ path: file, content: `${JSON.stringify(meta)}\n`, mode: 0o600 }])
}

/**
 * Claude Code looks a conversation up under projects/<sanitized cwd>/. One started in another
 * worktree of the same repository lives under that worktree's folder: hard-link it into this
 * one, so `--resume ID` finds it and both names see what Claude appends. The agent writes in
 * projects/, during another session of this project too: each folder is opened once without
 * following a link and used through that descriptor, so a symlink swapped in between a check and
 * the link cannot lead this step out of the instance (red team, round 35), neither to read a
 * transcript from elsewhere nor to put a link elsewhere.
 */
export function linkResumedTranscript(instance: string, cwd: string, id: string): void {
  if (!/^[0-9a-zA-Z-]+$/.test(id)) return
  const name = `${id}.jsonl`
  inPinnedDir(path.join(instance, 'projects'), projects => {
    const here = `${projects}/${sanitizePath(cwd)}`
    const hereKind = lstatKind(here)
    if (hereKind !== 'missing' && (hereKind !== 'dir' || lstatKind(`${here}/${name}`) !== 'missing')) return
    for (const folder of fs.readdirSync(projects)) {
      const linked = inPinnedDir(`${projects}/${folder}`, from => {
        if (!isRegularFile(`${from}/${name}`)) return false
        if (lstatKind(here) === 'missing') makeDir(here)
        inPinnedDir(here, to => lstatKind(`${to}/${name}`) === 'missing' && fs.linkSync(`${from}/${name}`, `${to}/${name}`))
        return true
      })
      if (linked === true) return
    }
  })
}

/** A folder; one made meanwhile is fine (whatever it is, inPinnedDir takes it only if it is a folder). */
function makeDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
  } catch {
    // made meanwhile
  }
}

/**
 * Undoes a first launch that failed half-way (a full disk): removes the instance's directories
 * bottom-up, only while they are empty, so nothing anyone wrote is touched.
 */
export function removeEmptyInstance(instance: string): void {
  const removeIfEmpty = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) removeIfEmpty(path.join(dir, entry.name))
    }
    try {
      fs.rmdirSync(dir)
    } catch {
      // not empty: something is in it, keep it
    }
  }
  try {
    if (fs.lstatSync(instance).isDirectory()) removeIfEmpty(instance)
  } catch {
    // gone already
  }
}
