// Small reads of the file system that never follow a symlink, never block and never throw where a
// planted file could make them: shared by the probes and everything that reads claudebox's state.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { nodeCrypto, sha256Hex } from '../sha256.js'
import type { PathKind } from '../types.js'

/**
 * Removes a file; one that is already gone is fine (fs.rmSync(p, { force: true }) for a file,
 * without its JavaScript walk: ~0.15 ms a call, seven calls a launch).
 */
export function removeFile(p: string): void {
  try {
    fs.unlinkSync(p)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** The JSON object in `file`, read without following a symlink; undefined when missing, larger than `limit`, damaged or no object. */
export function readJsonObject(file: string, limit?: number): Record<string, unknown> | undefined {
  try {
    const saved = JSON.parse(readNoFollow(file, limit) ?? 'null') as unknown
    return typeof saved === 'object' && saved !== null && !Array.isArray(saved) ? (saved as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** The names in `dir`, read one at a time while `budget` lasts (each name spends one); none when it cannot be opened. */
export function namesUpTo(dir: string, budget: { entries: number }): string[] {
  const names: string[] = []
  let handle: fs.Dir
  try {
    handle = fs.opendirSync(dir)
  } catch {
    return names
  }
  try {
    for (let e = budget.entries > 0 ? handle.readSync() : null; e !== null; e = budget.entries > 0 ? handle.readSync() : null) {
      budget.entries--
      names.push(e.name)
    }
  } finally {
    handle.closeSync()
  }
  return names
}

/** A folder opened without following a link (a symlink or no folder: undefined), to be used through /proc/self/fd. */
export function openDirNoFollow(dir: string): number | undefined {
  return openDir(dir, fs.constants.O_NOFOLLOW)
}

function openDir(dir: string, flags = 0): number | undefined {
  try {
    return fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | flags)
  } catch {
    return undefined
  }
}

/**
 * Runs `use` with a path naming `dir` as it was when opened (/proc/self/fd/N), opened without
 * following a link: names below it stay in that folder however a sandbox renames or swaps it
 * meanwhile. Undefined when it is missing, a symlink or no folder. `followLink`: `dir` itself may
 * be a link (one of the user's own, such as a shared entry kept with their dotfiles).
 */
export function inPinnedDir<T>(dir: string, use: (at: string) => T, followLink = false): T | undefined {
  const fd = followLink ? openDir(dir) : openDirNoFollow(dir)
  if (fd === undefined) return undefined
  try {
    return use(`/proc/self/fd/${fd}`)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Removes a directory and what is in it, never following a symlink; a missing one is fine. One of
 * files only (a session's credential store) is emptied by hand: fs.rmSync's recursive walk is
 * JavaScript (~1 ms), used only when there are directories inside.
 */
export function removeDir(dir: string): void {
  // A folder replaced by a link is not followed: what the link leads to is not ours to empty (red
  // team, round 89: a login folder swapped for a link to ~/.ssh).
  if (lstatKind(dir) === 'symlink') return
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  if (!entries.some(e => e.isDirectory())) {
    for (const e of entries) removeFile(`${dir}/${e.name}`)
    try {
      return void fs.rmdirSync(dir)
    } catch {
      // something appeared meanwhile: the walk below takes it
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
}

/** The real path reached from `base` by `text` (as git and the kernel walk it), or undefined. */
export function realPathOrUndefined(base: string, text: string): string | undefined {
  try {
    return realPathFrom(base, text)
  } catch {
    return undefined
  }
}

/**
 * The real path the kernel, and git, reach from `base` by `text`: one name at a time, each symlink
 * followed before a `..` after it. Node's JavaScript `fs.realpathSync` and `path.resolve` take
 * `link/..` as text and can end elsewhere (red team, round 43), so the whole of `src/` resolves
 * with the native one. Throws as realpath does (ENOENT, ELOOP).
 */
export function realPathFrom(base: string, text: string): string {
  return fs.realpathSync.native(text.startsWith('/') ? text : `${base}/${text}`)
}

/** Linux's O_PATH (the same on x86_64 and arm64): a descriptor that only names a file or folder. */
export const O_PATH = 0o10000000

/** What `p` itself is (a symlink is never followed); 'missing' when it cannot be looked at. */
export function lstatKind(p: string | Buffer): PathKind {
  try {
    // A missing path answers undefined rather than an exception (~20 µs each, ~60 a launch).
    const st = fs.lstatSync(p, { throwIfNoEntry: false })
    if (st === undefined) return 'missing'
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'file'
  } catch {
    return 'missing'
  }
}

/**
 * Where the launcher makes its temporary folders on the host (the empty git dirs of its index runs,
 * the Landlock probe's helper): the host's /tmp, which no sandbox sees (each has a /tmp of its own,
 * and /tmp is never a project or a bind); never TMPDIR, which may be a folder of the project, where
 * a session could put a config for git to read or swap the helper --check then runs (red team,
 * round 101: 3 of 3).
 */
export function hostTempDir(): string {
  return isDir('/tmp') ? '/tmp' : os.tmpdir()
}

/** Whether `p` is a directory, through symlinks (git and the temp dir are found that way); false when it cannot be looked at. */
export function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** Whether the entry at `p` changed (made, renamed, rewritten) since `sinceMs`; true when it cannot be looked at. */
export function changedSince(p: string | Buffer, sinceMs: number): boolean {
  try {
    return fs.lstatSync(p).ctimeMs >= sinceMs
  } catch {
    return true
  }
}

/** Whether `dir` is a directory with no entries, never through a symlink; false when it cannot be read. */
export function isEmptyDir(dir: string): boolean {
  try {
    return fs.lstatSync(dir).isDirectory() && fs.readdirSync(dir).length === 0
  } catch {
    return false
  }
}

/** A directory's names; none when it cannot be read. */
export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch {
    return []
  }
}

/**
 * The names in `dir` of what launchers killed with SIGKILL left: those `pidOf` reads a launcher's
 * pid from, when that launcher is gone (not this one, and no /proc entry for it).
 */
export function leftByGoneLaunchers(dir: string, pidOf: (name: string) => string | undefined): string[] {
  return safeReaddir(dir).filter(name => {
    const pid = pidOf(name)
    return pid !== undefined && Number(pid) !== process.pid && !fs.existsSync(`/proc/${pid}`)
  })
}

/**
 * Which pids a pid names: this boot of this machine and this pid namespace (a container sharing
 * the home or the cgroups, another host on an NFS home have their own). What a gone launcher left
 * (leftByGoneLaunchers) is recognised only within its scope. 'unknown' when unreadable: never
 * cleaned by another launcher.
 */
let scope: string | undefined
export function pidScope(): string {
  if (scope !== undefined) return scope
  try {
    scope = sha256Hex(`${fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${fs.statSync('/proc/self/ns/pid').ino}`).slice(0, 8)
  } catch {
    scope = 'unknown'
  }
  return scope
}

/**
 * The pid in the name of something a launcher left, when that launcher was of this pid namespace
 * (for leftByGoneLaunchers): `scoped` captures the pid, then the scope; `older` the pid alone, in
 * names older claudebox versions gave. Never one of another scope, nor of 'unknown'.
 */
export function pidOfOurs(name: string, scoped: RegExp, older: RegExp): string | undefined {
  const match = scoped.exec(name)
  if (match === null) return older.exec(name)?.[1]
  return match[2] !== 'unknown' && match[2] === pidScope() ? match[1] : undefined
}

/**
 * Whether /proc is this process's pid namespace's: under `unshare --pid --fork` without
 * `--mount-proc` it is the parent namespace's, and every pid claudebox looks up there (the
 * sandbox's init and its children, gone launchers) would name another process (red team, round 53).
 * True when /proc cannot be read at all: the checks that need it say so themselves.
 */
export function procIsOurs(): boolean {
  try {
    return fs.readlinkSync('/proc/self') === String(process.pid)
  } catch {
    return true
  }
}

/** The most readNoFollow reads: claudebox's own small records, written where the sandbox could reach. */
export const SMALL_FILE_LIMIT = 1 << 20

/**
 * `use` on a regular file opened without following a symlink (O_NOFOLLOW) and without blocking on
 * a FIFO the agent planted (O_NONBLOCK, then the regular-file check); undefined when it is absent,
 * unreadable or not a regular file, or when `use` throws.
 */
function withRegularFile<T>(file: string, use: (fd: number, st: fs.Stats) => T | undefined): T | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const st = fs.fstatSync(fd)
    return st.isFile() ? use(fd, st) : undefined
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}

/** A regular file's text (withRegularFile); undefined too when it is larger than `limit` bytes. */
export function readNoFollow(file: string, limit = SMALL_FILE_LIMIT): string | undefined {
  return withRegularFile(file, (fd, st) => (st.size > limit ? undefined : readToEnd(fd, st.size, limit)?.toString('utf8').replace(/\n$/, '')))
}

/** The first `limit` bytes of a regular file (withRegularFile), as text. */
export function readHeadNoFollow(file: string, limit: number): string | undefined {
  return withRegularFile(file, fd => {
    const buffer = Buffer.alloc(limit)
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, limit, 0)).toString('utf8')
  })
}

/**
 * The bytes of an open regular file: one read when it is the size fstat said (a short read of a
 * regular file is its end; --list reads 10,000 of these), more while it keeps growing, up to `limit`.
 */
function readToEnd(fd: number, size: number, limit: number): Buffer | undefined {
  let buffer = Buffer.alloc(Math.min(size, limit) + 1)
  let length = 0
  for (;;) {
    const got = fs.readSync(fd, buffer, length, buffer.length - length, null)
    length += got
    if (got === 0 || length < buffer.length) return buffer.subarray(0, length)
    if (buffer.length > limit) return undefined // grew past the limit meanwhile: unreadable
    const bigger = Buffer.alloc(Math.min(buffer.length * 2, limit + 1))
    buffer.copy(bigger)
    buffer = bigger
  }
}

/** Reads config.json; undefined when there is none. */
export function readConfigText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/** A process's start time in clock ticks (/proc/self/stat field 22), to tell a reused pid. */
export function processStartTime(pid: number | 'self'): string | undefined {
  return statFields(pid)?.[19]
}

/**
 * Whether every thread of a process is stopped (T; t, under a tracer) or gone (Z, X): its main
 * thread's state alone is not the process's (red team, round 78: a main thread that exited, or
 * that its own child traced, showed Z or t while another thread ran). True once it is gone.
 */
export function processStopped(pid: number): boolean {
  let tasks: string[]
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return true
  }
  return tasks.every(tid => {
    const task = `${pid}/task/${tid}`
    return countsAsStopped(statFields(task)?.[0] ?? 'X', () => ({ wchan: readWchan(task), stopPending: stopPending(task) }))
  })
}

/**
 * Whether a thread in `state` (its /proc letter) counts as stopped: T, t, or gone (Z, X); or D in
 * a vfork's wait with SIGSTOP pending. That parent waits until its child execs or exits, which a
 * stopped child never does (CI: one stayed D 10 s), and it stops before it runs its own code again.
 * No other D counts: what a thread does when it leaves D is not known (red team, round 80: an
 * io_uring worker in a long fsync, counted as stopped, then created .git/commondir from its linked
 * requests). The vfork wait is inlined in kernel_clone, which /proc/PID/task/TID/wchan names.
 */
export function countsAsStopped(state: string, details: () => { wchan: string | undefined; stopPending: boolean }): boolean {
  if (STOPPED_OR_GONE.has(state)) return true
  if (state !== 'D') return false
  const { wchan, stopPending } = details()
  return wchan === 'kernel_clone' && stopPending
}

/** Where a thread sleeps in the kernel (/proc/PID/task/TID/wchan), undefined when it cannot be read. */
function readWchan(task: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${task}/wchan`, 'utf8')
  } catch {
    return undefined
  }
}

/** Whether SIGSTOP waits for a thread (/proc/PID/task/TID/status: its own or its process's pending signals). */
function stopPending(task: string): boolean {
  try {
    const status = fs.readFileSync(`/proc/${task}/status`, 'utf8')
    return [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some(m => (BigInt(`0x${m[1]}`) & SIGSTOP_BIT) !== 0n)
  } catch {
    return false
  }
}
const SIGSTOP_BIT = 1n << 18n

/** The state letter of each thread of a process (X for one gone meanwhile); none once it is gone. */
export function taskStates(pid: number): string[] {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).map(tid => statFields(`${pid}/task/${tid}`)?.[0] ?? 'X')
  } catch {
    return []
  }
}
const STOPPED_OR_GONE = new Set(['T', 't', 'Z', 'X'])

/**
 * Whether a process holds a POSIX timer that sends SIGCONT or SIGKILL (/proc/PID/timers: "signal:
 * 18/..." or "9/"), the two signals that act on a stopped process: SIGCONT resumes it (red team,
 * round 79); SIGKILL ends it, and a process group that its death leaves orphaned with stopped
 * members gets SIGCONT from the kernel (round 80: a child in a session of its own planted while
 * claudebox was stopped). One that cannot be read counts.
 */
export function holdsWakingTimer(pid: number): boolean {
  try {
    return /^signal: (?:9|18)\//m.test(fs.readFileSync(`/proc/${pid}/timers`, 'utf8'))
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/**
 * Whether a process leads a session of its own that has a controlling terminal (/proc/PID/stat:
 * session = its pid, tty_nr not 0). When that terminal hangs up, the kernel sends the leader
 * SIGHUP and SIGCONT, stopped or not (red team, round 81: a session inside made a pty its terminal
 * and left the pty's master to the kernel's garbage collector of unix sockets, which closed it when
 * any process on the host next released a socket; the leader ran and planted). The sandbox's
 * processes otherwise share the user's session and lead none.
 */
export function leadsSessionWithTerminal(pid: number): boolean {
  const fields = statFields(pid)
  return fields !== undefined && fields[3] === String(pid) && fields[4] !== '0'
}

/**
 * Whether the launcher runs in the background of the terminal it has (/proc/self/stat: its
 * process group is not the terminal's foreground one). A write there may bring SIGTTOU then.
 */
export function inBackgroundOfTerminal(): boolean {
  const [, , pgrp, , tty, foreground] = statFields('self') ?? []
  return tty !== undefined && tty !== '0' && foreground !== '-1' && foreground !== pgrp
}

/**
 * Which of stdin, stdout and stderr is this process's controlling terminal (/proc/self/stat's
 * tty_nr against the descriptor's device), the first one; undefined when none is.
 */
export function controllingTerminalOnStdio(): number | undefined {
  const tty = Number(statFields('self')?.[4] ?? 0)
  if (!(tty > 0)) return undefined
  return [0, 1, 2].find(fd => {
    try {
      const st = fs.fstatSync(fd)
      return st.isCharacterDevice() && st.rdev === tty
    } catch {
      return false
    }
  })
}

/** /proc/PID/stat's fields after the command name (which may hold spaces and parentheses): state first. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/**
 * `bytes` random bytes from the kernel, in hex: names that must not be guessed, the session's
 * placeholder. /dev/urandom rather than node:crypto, which costs ~3 ms to load at every launch;
 * node:crypto where /dev/urandom cannot be read to the end (missing, or not the kernel's).
 */
export function randomHex(bytes: number): string {
  try {
    return readUrandom(bytes).toString('hex')
  } catch {
    return nodeCrypto().randomBytes(bytes).toString('hex')
  }
}

function readUrandom(bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes)
  const fd = fs.openSync('/dev/urandom', fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  try {
    for (let got = 0; got < bytes; ) {
      const n = fs.readSync(fd, buffer, got, bytes - got, null)
      if (n === 0) throw new Error('/dev/urandom ended')
      got += n
    }
    return buffer
  } finally {
    fs.closeSync(fd)
  }
}

/** Pids of a process's direct children, of all its threads (Linux /proc), empty when it is gone; `atMost` of them. */
export function childrenOf(pid: number, atMost = Infinity): number[] {
  if (!hasChildrenFiles()) return childrenByParent(pid, atMost)
  return childrenListed(pid).pids
}

/** A process's children from its threads' children files; `whole` is false when one could not be read but was there. */
function childrenListed(pid: number): { pids: number[]; whole: boolean } {
  let whole = true
  const gone = (error: unknown): boolean => ['ENOENT', 'ESRCH'].includes((error as NodeJS.ErrnoException).code ?? '')
  let tasks: string[]
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`)
  } catch (error) {
    return { pids: [], whole: gone(error) }
  }
  const pids = tasks.flatMap(task => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
    } catch (error) {
      whole &&= gone(error)
      return []
    }
  })
  return { pids, whole }
}

/**
 * Whether this kernel has /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, which minimal kernels
 * leave out). Without it, reading none there made the sandbox's program look childless, and the
 * limits' move left it out of its cgroup (red team, round 51).
 */
let childrenFiles: boolean | undefined
const hasChildrenFiles = (): boolean => (childrenFiles ??= fs.existsSync(`/proc/self/task/${process.pid}/children`))

/**
 * The processes whose parent is `pid`, from every process's stat, up to `atMost` of them: slower
 * (a read of every process's stat, ~0.05 ms each here), for kernels without children files.
 */
function childrenByParent(pid: number, atMost: number): number[] {
  const out: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (out.length >= atMost) break
    // The parent's pid is the field after the state; a process gone meanwhile has none.
    if (/^\d+$/.test(name) && Number(statFields(name)?.[1]) === pid) out.push(Number(name))
  }
  return out
}

/** Every process's children, from one read of every process's stat (kernels without children files). */
function childrenByParents(): Map<number, number[]> {
  const children = new Map<number, number[]>()
  for (const name of fs.readdirSync('/proc')) {
    const parent = /^\d+$/.test(name) ? Number(statFields(name)?.[1]) : NaN
    if (Number.isNaN(parent)) continue
    const siblings = children.get(parent) ?? []
    siblings.push(Number(name))
    children.set(parent, siblings)
  }
  return children
}

/** `signal` to `pid`, when it is still there. */
export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/** A process and everything it started that still runs under it, children first. */
export function processTree(pid: number): number[] {
  return walkTree(pid).pids
}

/**
 * processTree, and whether every listing of children could be read (a process gone meanwhile has
 * none to read): a stop is refused on a tree it may not have seen whole.
 */
export function walkTree(root: number): { pids: number[]; whole: boolean } {
  // A loop, not recursion: a chain of 2,700 processes, one under the other, ran Node out of stack,
  // and the deepest ran on unseen (red team, round 80).
  const found = [root]
  let whole = true
  const children = hasChildrenFiles() ? undefined : childrenByParents()
  for (let i = 0; i < found.length; i++) {
    const listed = children === undefined ? childrenListed(found[i] as number) : { pids: children.get(found[i] as number) ?? [], whole: true }
    whole &&= listed.whole
    found.push(...listed.pids)
  }
  return { pids: found.reverse(), whole }
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
export function resolveExisting(p: string): string {
  return resolveThroughLinks(p, 0)
}

function resolveThroughLinks(p: string, links: number): string {
  try {
    return fs.realpathSync.native(p)
  } catch {
    const parent = path.dirname(p)
    if (parent === p) return p
    const at = path.join(resolveThroughLinks(parent, links), path.basename(p))
    // A link that leads nowhere yet leads where its text says once that is made (red team, round
    // 106: a PATH entry linked to a folder of the project not made yet was not taken for one).
    const text = links < 40 ? readLinkOrUndefined(at) : undefined
    return text === undefined ? at : resolveThroughLinks(path.resolve(path.dirname(at), text), links + 1)
  }
}

function readLinkOrUndefined(p: string): string | undefined {
  try {
    return fs.readlinkSync(p)
  } catch {
    return undefined
  }
}

/** The file system as readSettings sees it (config/settings.ts): real paths, and folders by device and inode. */
export const FILE_VIEW = {
  real: resolveExisting,
  id(p: string): string | undefined {
    try {
      const st = fs.statSync(p)
      return `${st.dev}:${st.ino}`
    } catch {
      return undefined
    }
  },
}

/** $HOME, or the passwd entry's home when HOME is unset or empty (probe.ts homeProblem says if it is usable). */
export function homeDir(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env['HOME']
  return path.resolve(fromEnv !== undefined && fromEnv !== '' ? fromEnv : os.userInfo().homedir)
}

export const identityOf = (st: fs.Stats): string => `${st.dev}:${st.ino}`

/**
 * The folder `p`, opened as a path only, when it is the one `identity` names (none given: whatever
 * `p` leads to); undefined when it is another, or cannot be opened. A session of a project holding
 * this one can swap a path for a link to another repository of the user's (red team, rounds 113 to 116).
 */
export function openSameFolder(p: string, identity: string | undefined): number | undefined {
  let fd: number
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_DIRECTORY)
  } catch {
    return undefined
  }
  if (identity === undefined || identity === identityOf(fs.fstatSync(fd))) return fd
  fs.closeSync(fd)
  return undefined
}

/** The device and inode of `p` itself, never through a link; undefined when it cannot be looked at. */
export function entryIdentity(p: string | Buffer): string | undefined {
  try {
    return identityOf(fs.lstatSync(p))
  } catch {
    return undefined
  }
}

/** A folder's device and inode, to tell it from whatever its path leads to later; undefined when it is not there. */
export function folderIdentity(p: string): string | undefined {
  try {
    const st = fs.statSync(p)
    return st.isDirectory() ? identityOf(st) : undefined
  } catch {
    return undefined
  }
}
