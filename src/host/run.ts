// Runs bwrap in the foreground: stdio inherited, signals delivered to the sandboxed program,
// its exit status passed through.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { isatty } from 'node:tty'
import os from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { ENDING_SIGNALS, EXIT, launchError } from '../errors.js'
import { debug, warn } from '../cli/log.js'
import { closeInheritedFds, sandboxStdio, type StdioWay } from './inherited-fds.js'
import { relayStdio, type Relay } from './stdio-relay.js'
import type { GitWatchSpec, LaunchPlan } from '../types.js'
import { childrenOf, holdsWakingTimer, inBackgroundOfTerminal, killQuietly, leadsSessionWithTerminal, processStartTime, processStopped, processTree, taskStates, walkTree } from './fs.js'
import { mountsProblem, pinBinds, type PinnedMount } from './bind-fds.js'
import { identitiesPinned, rootsOf, type WatchRoots } from './pinned-roots.js'
import { makeCgroups, moveInto, removeMade, writeLimits, type CgroupsMade, type Made, type Seen } from './cgroups.js'

const EXIT_GRACE_MS = 2000

/** The session's exit status, and whether bwrap got as far as starting the sandbox. */
export interface RunResult {
  status: number
  sandboxStarted: boolean
  /** The gate said the sandbox was built (READY_FD): a failure after that is the program's, not bwrap's. */
  built: boolean
  /** bwrap itself died of this signal: the caller re-raises it after cleaning up. */
  signal?: NodeJS.Signals
}

/**
 * Runs bwrap to its end. bwrap builds the sandbox, whose gate waits for the launcher's go (plan.ts
 * GO_FD); `started` runs meanwhile (the launcher's work that overlaps with bwrap's: the session
 * record, the servers). Then the go; if `started` fails, or a signal comes first, the sandbox is
 * killed and its program never runs. Signals are caught from before the spawn: a launcher killed
 * by one in between would leave the sandbox unsupervised.
 */
export async function runForeground(plan: LaunchPlan, started: (end: () => void, roots: WatchRoots) => Promise<void> = async () => {}, made: CgroupsMade = makeCgroups(plan.cgroups), beforeStop: () => void = () => {}): Promise<RunResult> {
  const state: SessionState = { released: false }
  const relay = relaySignals(state)
  const suspend = (signal: NodeJS.Signals): void => suspendSafely(state, beforeStop, signal)
  // These first, then the cgroups' own handlers go: a signal still pending (one that came while the
  // launcher prepared, in code that never yields) reaches these; with no listener between, Node
  // would close the signal's handle and the signal would be lost (red team: the program then ran).
  for (const signal of ENDING_SIGNALS) process.on(signal, relay)
  for (const signal of STOP_SIGNALS) process.on(signal, suspend)
  const cgroups = made.take()
  try {
    return await supervise(plan, started, state, cgroups)
  } finally {
    for (const signal of ENDING_SIGNALS) process.off(signal, relay)
    for (const signal of STOP_SIGNALS) process.off(signal, suspend)
  }
}

/**
 * Signals whose default stops the launcher: Ctrl-Z, and a read or write of the terminal from the
 * background (after `bg`, or `claudebox &`). Each handled one ends in a stop of the launcher (or is
 * ignored, SIGTSTP only): a caught SIGTTOU that returned would have the launcher's own write from
 * the background restarted, and the signal sent again, for ever.
 */
const STOP_SIGNALS = ['SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const

/**
 * A stop of the session (Ctrl-Z; Claude Code suspends itself with kill(0, SIGTSTP), which stops
 * the whole process group, the launcher's): every process of the sandbox is stopped first, and
 * seen stopped, then the git watch looks once more (`beforeStop`; also every 100 ms while the
 * stop waits, and after a stop refused), then the launcher stops, and the
 * shell takes the terminal back; at `fg` the sandbox goes on. A launcher that stopped by default
 * left a session that ignores SIGTSTP running unwatched while the shell's git status ran what it
 * planted (red team, round 76: the terminal's answer to a query, with `stty susp R`, stopped it
 * without a key; round 77: a tracer resumed what was stopped, SIGTTOU in the background). A
 * sandbox that cannot be seen stopped is let go on, all of it (Claude Code, stopped by its own
 * kill(0, SIGTSTP), too), and the launcher does not stop: the stop is refused. Once bwrap has
 * exited, a Ctrl-Z is ignored (the checks after the session come first: then holdSignals), and a
 * background read or write of the terminal stops the launcher as by default.
 */
function suspendSafely(state: SessionState, beforeStop: () => void, signal: NodeJS.Signals): void {
  if (state.exited !== undefined) {
    if (signal !== 'SIGTSTP') process.kill(process.pid, 'SIGSTOP')
    return
  }
  const init = state.sandbox === undefined ? undefined : aliveInit(state.sandbox)
  const sweep = (): void => {
    try {
      beforeStop()
    } catch {
      // the watch's own steps say what failed; the stop goes on
    }
  }
  const { stopped, all, running, wakeable } = init === undefined ? { stopped: [], all: true, running: [], wakeable: false } : stopTree(init, sweep)
  sweep()
  // With `stty tostop`, a debug line written to the terminal from the background brings SIGTTOU,
  // which lands here again, and the write, restarted, brings it again: for ever (red team, round 82).
  const say = (line: string): void => {
    if (!isatty(2) || !inBackgroundOfTerminal()) debug(line)
  }
  if (all) {
    say(`stopped the sandbox (${stopped.length} processes) and the launcher`)
    process.kill(process.pid, 'SIGSTOP')
    // Only to the processes it stopped: a pid freed meanwhile may be a host process's now.
    for (const { pid, startTime } of stopped) if (processStartTime(pid) === startTime) killQuietly(pid, 'SIGCONT')
  } else {
    // Not said on the terminal: from the background, a write there would bring this very signal.
    const why = wakeable ? 'the kernel may wake while claudebox is stopped (a timer that sends SIGCONT or SIGKILL, or a terminal of their own)' : 'kept running after they were stopped'
    say(`${signal} refused: processes of the sandbox ${why} (${running.map(p => `${p} ${taskStates(p).join('')}`).join(', ')})`)
    for (const pid of init === undefined ? [] : processTree(init)) killQuietly(pid, 'SIGCONT')
    // The stop reached the whole process group: bwrap itself, and the rest of a pipeline, stopped
    // by default (round 81: bwrap stayed stopped and the launcher waited for it for ever).
    killQuietly(0, 'SIGCONT')
  }
}

/**
 * SIGSTOP to a process and everything under it, pass after pass, until every thread of each is
 * seen stopped in two passes running (a stopped process forks no more; a tracer that resumed one
 * between its tracee's look and its own is stopped by then, and the tracee is seen running in
 * the next pass and stopped again, for good), or STOP_WAIT_MS went by: then `all` is false.
 */
function stopTree(pid: number, sweep: () => void): { stopped: Seen[]; all: boolean; running: number[]; wakeable: boolean } {
  const stopped = new Map<number, string | undefined>()
  const seen = (): Seen[] => [...stopped].map(([p, startTime]) => ({ pid: p, startTime }))
  let [running, quiet, swept] = [[] as number[], 0, Date.now()]
  for (const end = Date.now() + STOP_WAIT_MS; Date.now() < end; ) {
    const tree = walkTree(pid)
    running = tree.pids.filter(p => !processStopped(p))
    // A tree not seen whole (a listing that could not be read) is never quiet.
    quiet = running.length === 0 && tree.whole ? quiet + 1 : 0
    // What the kernel would wake behind the launcher's back: no stop then. What keeps being woken
    // is looked at in every pass, what is quiet at the end (red team, round 81: 11,000 one-shot
    // SIGCONT timers kept the loop, and the watch with it, busy its whole 10 s).
    const wakeable = (quiet === 2 ? tree.pids : running).filter(p => holdsWakingTimer(p) || leadsSessionWithTerminal(p))
    if (wakeable.length > 0 || quiet === 2) return { stopped: seen(), all: wakeable.length === 0, running: wakeable, wakeable: wakeable.length > 0 }
    for (const p of running) {
      if (!stopped.has(p)) stopped.set(p, processStartTime(p))
      killQuietly(p, 'SIGSTOP')
    }
    // The loop holds the event loop, and the git watch's events with it: its sweep runs meanwhile
    // (round 81: a thread kept in D for seconds, its last call a rename to .git/commondir).
    if (Date.now() - swept >= SWEEP_WHILE_STOPPING_MS) {
      sweep()
      swept = Date.now()
    }
    Atomics.wait(PAUSE, 0, 0, 1) // the signal is taken when the process next runs
  }
  return { stopped: seen(), all: false, running, wakeable: false }
}

/** How often the git watch's sweep runs while a stop waits for the sandbox (its own poll: POLL_MS, 200 ms). */
const SWEEP_WHILE_STOPPING_MS = 100

/**
 * How long stopTree tries, a pass a millisecond: a process in a system call it cannot leave at once
 * (D, seen for 300 ms on a loaded machine), or one the scheduler has not run since its SIGSTOP
 * (3 s were not enough while another test suite ran beside), stops when it next runs. A fork bomb is bounded by the
 * sandbox's process limit.
 */
const STOP_WAIT_MS = 10_000
const PAUSE = new Int32Array(new SharedArrayBuffer(4))

interface SessionState {
  child?: ChildProcess
  sandbox?: Sandbox
  released: boolean
  /** A signal that came before the go: the launch is abandoned with it. */
  early?: NodeJS.Signals
  abort?: () => Promise<void>
  /** The first signal forwarded to the program. */
  forwarded?: NodeJS.Signals
  /** Once bwrap has exited: when, and how a signal then ends the launcher (dropOutput). */
  exited?: { at: number; drop: (signal: NodeJS.Signals) => void }
  /** The signal for which the launcher gave up the output still on its way: it ends by it. */
  dropped?: NodeJS.Signals
  /** Wakes lastOutput's wait, when a signal gives up that output. */
  wake?: () => void
}

async function supervise(plan: LaunchPlan, started: (end: () => void, roots: WatchRoots) => Promise<void>, state: SessionState, made: Made): Promise<RunResult> {
  const { child, ways, merged, mounts, bwrap, roots } = await spawnBwrap(plan, made)
  const relay = relayStdio(child, ways)
  const sandbox = watchInfo(child.stdio[3] as Readable | null | undefined)
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: NodeJS.ErrnoException }>(resolve => {
    child.on('error', error => resolve({ code: null, signal: null, error }))
    child.on('close', (code, signal) => resolve({ code, signal }))
    child.on('exit', () => endPipesLater(child, sandbox, state))
  })
  // Without the go the gate stops the sandbox; its init and bwrap are killed too, so nothing
  // lingers (as uid 1001, a bwrap told SIGINT here was seen to live on, and the launcher with it).
  const abort = async (): Promise<void> => {
    goStream(child, plan)?.destroy()
    await Promise.race([sandbox.reported, ended])
    killInit(sandbox)
    child.kill('SIGKILL')
  }
  Object.assign(state, { child, sandbox, abort })
  // Through a promise: a step that throws at once must be caught like one that rejects (a full
  // disk's session record threw, and the launcher left bwrap waiting at the gate for ever). The
  // sandbox into the cgroups and their limits once it is built, before the go. Then a poll of the
  // event loop, where signals are read: one that came while `started` ran is seen before the go
  // (red team: its checks took 450 ms on a large instance, and the program ran after a Ctrl-C).
  const ready = watchReady(child, plan)
  void ready.then(isReady => debug(isReady ? 'the sandbox is built' : 'bwrap ended without building the sandbox'))
  const limited = ready.then(isReady => limit(made, bwrap, sandbox, isReady))
  const built = ready.then(isReady => (isReady ? checkMounts(sandbox, mounts) : undefined))
  // `end`, for the git watch: the whole sandbox goes (its init, then its pid namespace); bwrap reports it.
  const [failure, placed] = await Promise.all([Promise.resolve().then(() => started(() => killInit(sandbox), roots)).then(() => debug("the launcher's last checks and records are done")), limited, built]).then(
    ([, isPlaced]) => [undefined, isPlaced] as const,
    (error: unknown) => [asError(error), false] as const,
  )
  await afterAPoll()
  // Nothing may run in a sandbox whose proxy or record is missing, or after a signal. One that
  // never said it was built (bwrap failed, and its status says why) gets no go either: it could
  // not be put under its limits.
  if (failure !== undefined || state.early !== undefined) await abort()
  else if (!placed) goStream(child, plan)?.destroy()
  else {
    release(child, plan, merged)
    state.released = true
  }
  const result = await ended
  await lastOutput(state, relay)
  relay.stop()
  await limited.catch(() => {})
  await removeMade(made)
  // Abandoned for a signal: the launcher's status is that signal's, as if it had not caught it. It
  // wins over a failure of the work before the go, which the abandon itself may have caused (the
  // mount check of a sandbox being killed).
  if (state.early !== undefined) return { status: 128 + (os.constants.signals[state.early] ?? 0), sandboxStarted: true, built: true, signal: state.early }
  if (failure !== undefined) throw failure

  if (result.error) throw launchError(`cannot start ${plan.file}: ${result.error.message}; check CLAUDEBOX_BWRAP or reinstall bubblewrap`)
  const sandboxStarted = sandbox.pid !== undefined
  const isBuilt = await ready
  const signal = state.dropped ?? result.signal
  if (signal) return { status: 128 + (os.constants.signals[signal] ?? 0), sandboxStarted, built: isBuilt, signal }
  return { status: result.code ?? EXIT.cannotLaunch, sandboxStarted, built: isBuilt }
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

/**
 * Holds the ending signals from now until `release()` (the checks after a session, which protect
 * the user's next git command, and the bookkeeping after them), which says the first that came
 * meanwhile (the launcher ends by it then): a Ctrl-C there ended the launcher with every warning,
 * and the checks after it, lost (red team, round 45). A Ctrl-C from the terminal still ends the git
 * run of a check under way (it goes to the whole process group). A stop (SIGTSTP) is ignored
 * meanwhile: the session can make any key the terminal's suspend character, and a launcher
 * stopped before its checks gave the shell back to a git status that ran what it planted (round 75).
 */
export function holdSignals(): { release(): Promise<NodeJS.Signals | undefined> } {
  let came: NodeJS.Signals | undefined
  const note = (signal: NodeJS.Signals): void => void (came ??= signal)
  const ignore = (): void => {}
  for (const signal of ENDING_SIGNALS) process.on(signal, note)
  process.on('SIGTSTP', ignore)
  return {
    async release() {
      await afterAPoll() // where a signal that came meanwhile is read
      for (const signal of ENDING_SIGNALS) process.off(signal, note)
      process.off('SIGTSTP', ignore)
      return came
    },
  }
}

/** Resolves after the event loop's next poll phase: two check phases, a poll always between them. */
const afterAPoll = async (): Promise<void> => {
  for (let i = 0; i < 2; i++) await new Promise(resolve => setImmediate(resolve))
}

/** bwrap, spawned with the plan's descriptors (the launch's cgroups go if it cannot be). */
async function spawnBwrap(plan: LaunchPlan, made: Made): Promise<{ child: ChildProcess; ways: StdioWay[]; merged: boolean; mounts: PinnedMount[]; bwrap: Seen; roots: WatchRoots }> {
  let fds: ReturnType<typeof openFds> | undefined
  let argv: string[]
  const mounts: PinnedMount[] = []
  try {
    const inherited = closeInheritedFds()
    if (inherited.length > 0) debug(`closed descriptors inherited from the parent: ${inherited.join(', ')}`)
    fds = openFds(plan)
    argv = pinBinds(plan.groups, { userBinds: plan.userBinds, writable: plan.pinWithin }, fds.stdio, fds.opened, mounts)
  } catch (error) {
    for (const fd of fds?.opened ?? []) fs.closeSync(fd)
    await removeMade(made)
    throw error
  }
  const { stdio, opened, ways, merged } = fds
  // Before the spawn: what the sandbox does from its start cannot change what they name.
  const roots = watchRoots(plan.gitWatch, mounts)
  const child = spawn(plan.file, argv, { stdio, env: { ...plan.env } })
  debug('bwrap started')
  for (const fd of opened) fs.closeSync(fd)
  // The process its pid is, taken now: the limits' move checks it is still that one.
  const bwrap = { pid: child.pid ?? 0, startTime: child.pid === undefined ? undefined : processStartTime(child.pid) }
  return { child, ways, merged, mounts, bwrap, roots }
}

/**
 * The folders the git watch may change things in, as bwrap was given them (the pinned binds'
 * descriptors), and the project's top reopened from its own for the watch to hold: by their paths
 * after the spawn, a session of a project holding this one could have swapped them for links to
 * another repository of the user's (red team, round 115: its modes narrowed, a file of it moved
 * into the quarantine, 9 of 10). A launch that fails before its watch begins ends soon after,
 * and the top's descriptor with it.
 */
function watchRoots(spec: GitWatchSpec, mounts: readonly PinnedMount[]): WatchRoots {
  const pinned = new Map(mounts.map(m => [m.source, m.fd]))
  const topFd = spec.workTrees[0] === undefined ? undefined : pinned.get(spec.workTrees[0])
  let top: number | undefined
  try {
    top = topFd === undefined ? undefined : fs.openSync(`/proc/self/fd/${topFd}`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
  } catch {
    // not a folder it can open: held by its path (held-folder.ts)
  }
  return { identities: identitiesPinned(rootsOf(spec), pinned), top }
}

/**
 * With limits: once the gate has said the sandbox is built, bwrap, its init and the gate go into
 * the cgroups, then the limits are written. Whether the go may be given: a sandbox that never said
 * so could not be put under its limits (bwrap failed to build it, and its status says why).
 */
async function limit(made: Made, bwrap: Seen, sandbox: Sandbox, isReady: boolean): Promise<boolean> {
  if (made.cgroups.length === 0) return true
  await sandbox.reported
  if (!isReady || sandbox.pid === undefined) return false
  // Before the go the init has one child, the gate, which the program will be: without it under
  // the limits, nothing the program starts would be (red team, round 51).
  const gate = childrenOf(sandbox.pid, 2)
  if (gate.length !== 1) throw launchError(`cannot put the sandbox under its limits: its init has ${gate.length} processes under it where one was expected; nothing ran, rerun`)
  await moveInto(made, [bwrap, { pid: sandbox.pid, startTime: sandbox.startTime }, ...gate.map(pid => ({ pid, startTime: processStartTime(pid) }))])
  writeLimits(made.cgroups)
  return true
}

/**
 * bwrap's end is the sandbox's (--die-with-parent, then its pid namespace goes with its init), and
 * its pipes close once the reader has taken what is in them (a slow pager is no reason to cut the
 * output). Should the init have escaped that (a bwrap killed before --die-with-parent was in
 * force) it is killed after EXIT_GRACE_MS; should bwrap have died before even reporting it, that
 * init never got as far as the program, and the pipes it holds are closed rather than keep the
 * launcher waiting for ever. Output still waiting then after a signal the program got is dropped
 * (lastOutput says why).
 */
function endPipesLater(child: ChildProcess, sandbox: Sandbox, state: SessionState): void {
  let closed = false
  child.once('close', () => (closed = true))
  const drop = (signal: NodeJS.Signals): void => dropOutput(child, sandbox, state, signal)
  state.exited = { at: Date.now(), drop }
  setTimeout(() => {
    if (closed) return
    if (sandbox.pid === undefined) {
      debug('bwrap ended before reporting its sandbox, whose pipes are still open: closing them')
      for (const stream of child.stdio) stream?.destroy()
    } else if (aliveInit(sandbox) !== undefined) {
      debug(`bwrap has ended but the sandbox's init ${sandbox.pid} lives on: killing it`)
      killInit(sandbox)
    }
    if (state.forwarded !== undefined) drop(state.forwarded)
  }, EXIT_GRACE_MS).unref()
}

/**
 * A signal once bwrap has exited: there is nothing left to forward it to, only output on its way
 * to a reader that does not take it (`claudebox ... | (sleep 1000)`, then `timeout`'s SIGTERM,
 * which only SIGKILL could follow). That output is dropped, what is left of the sandbox goes, and
 * the launcher ends by the signal after its usual cleanup, as if it had not caught it.
 */
function dropOutput(child: ChildProcess, sandbox: Sandbox, state: SessionState, signal: NodeJS.Signals): void {
  if (state.dropped === undefined) debug(`${signal} after bwrap's end: the launcher ends by it, dropping any output the reader has not taken`)
  state.dropped ??= signal
  killInit(sandbox)
  for (const stream of child.stdio) stream?.destroy()
  state.wake?.()
}

/**
 * bwrap's pipes are at their end, but the launcher may hold output the reader has not taken yet.
 * bin/claudebox.js waits for it, as long as it takes; but after a signal the program got (one
 * SIGTERM from `timeout`) nothing else would end a launcher whose reader never reads: output still
 * waiting EXIT_GRACE_MS after bwrap's end is dropped, and the launcher ends by that signal.
 */
async function lastOutput(state: SessionState, relay: Relay): Promise<void> {
  const { forwarded, exited } = state
  if (forwarded === undefined || exited === undefined || state.dropped !== undefined || !relay.pending()) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    relay.written(),
    new Promise<void>(resolve => {
      state.wake = resolve
      timer = setTimeout(resolve, Math.max(0, exited.at + EXIT_GRACE_MS - Date.now()))
    }),
  ])
  clearTimeout(timer)
  if (relay.pending()) exited.drop(forwarded)
}

/** bwrap's stdio: the terminal, the --info-fd pipe, and the plan's files (seccomp program, Landlock helper) opened. */
function openFds(plan: LaunchPlan): { stdio: ('inherit' | 'ignore' | 'pipe' | number)[]; opened: number[]; ways: StdioWay[]; merged: boolean } {
  const { ways, merged } = sandboxStdio()
  const opened: number[] = []
  const stdio: ('inherit' | 'ignore' | 'pipe' | number)[] = ways.map((way, fd) => {
    if (way !== 'null') return way === 'relay' ? 'pipe' : 'inherit'
    warn(`${['stdin', 'stdout', 'stderr'][fd]} is a directory (or a path handle), which would open the files under it inside the sandbox; the sandbox gets /dev/null instead`)
    const devNull = fs.openSync('/dev/null', fd === 0 ? 'r' : 'w')
    opened.push(devNull)
    return devNull
  })
  for (const step of plan.fds) {
    // A number no step uses stays closed in bwrap: 'inherit' would hand it the launcher's own
    // descriptor of that number (libuv's signal pipe, which the sandbox could then write to).
    while (stdio.length < step.fd) stdio.push('ignore')
    if (step.kind !== 'file') stdio[step.fd] = 'pipe'
    else {
      const fd = fs.openSync(step.path as string, 'r')
      opened.push(fd)
      stdio[step.fd] = fd
    }
  }
  return { stdio, opened, ways, merged }
}

function goStream(child: ChildProcess, plan: LaunchPlan): Writable | undefined {
  const go = plan.fds.find(step => step.kind === 'go')
  return go === undefined ? undefined : ((child.stdio[go.fd] as Writable | null | undefined) ?? undefined)
}

/** The go; `merged`: the gate sends the program's stderr into its stdout (GO_GATE). */
function release(child: ChildProcess, plan: LaunchPlan, merged: boolean): void {
  const stream = goStream(child, plan)
  const words = merged ? plan.fds.find(step => step.kind === 'go')?.merged : undefined
  stream?.on('error', () => {}) // bwrap gone already: its status says why
  stream?.end(`${words ?? 'go'}\n`)
  debug('go given to the sandbox')
}

/** Whether the gate said `ready` (plan.ts READY_FD) before its pipe closed. */
async function watchReady(child: ChildProcess, plan: LaunchPlan): Promise<boolean> {
  const step = plan.fds.find(s => s.kind === 'ready')
  const stream = step === undefined ? undefined : (child.stdio[step.fd] as Readable | null | undefined)
  if (!stream) return false // a plan without the word (tests' hand-made plans): not known to be built, nothing to check
  stream.setEncoding('utf8')
  let text = ''
  return new Promise(resolve => {
    stream.on('data', (chunk: string) => {
      text += chunk
      if (!'ready\n'.startsWith(text.slice(0, 6))) stream.destroy() // not the gate's word: nothing more is read
      if (!text.startsWith('ready\n')) return
      resolve(true)
      stream.destroy() // nothing else is ever read from it
    })
    stream.on('close', () => resolve(text.startsWith('ready\n')))
    stream.on('error', () => resolve(false))
  })
}

/** Refuses the go when a pinned bind is not mounted where planned (bind-fds.ts mountsProblem). */
async function checkMounts(sandbox: Sandbox, mounts: readonly PinnedMount[]): Promise<void> {
  if (mounts.length === 0) return
  await sandbox.reported
  let mountinfo: string
  try {
    // Sync: a proc file reads in a few small chunks, which through the thread pool took ~4 ms.
    mountinfo = fs.readFileSync(`/proc/${sandbox.pid ?? 0}/mountinfo`, 'utf8')
  } catch (error) {
    throw launchError(`cannot read the sandbox's mount table to check its binds (${(error as NodeJS.ErrnoException).code ?? 'error'}); nothing ran, rerun`)
  }
  const problem = mountsProblem(mountinfo, mounts)
  if (problem !== undefined) {
    throw launchError(`the sandbox was not built as planned: ${problem} (a path was swapped while bwrap mounted it: a session of this project may be running); nothing ran, rerun`)
  }
}

/** The sandbox's init as bwrap reported it: its host pid and that process's start time. */
interface Sandbox {
  pid: number | undefined
  startTime: string | undefined
  /** Resolves once bwrap has reported, or at the pipe's end. */
  reported: Promise<void>
}

/** bwrap reports the host pid of the sandbox's init on --info-fd; `pid` is set once it has. */
function watchInfo(infoStream: Readable | null | undefined): Sandbox {
  const sandbox: Sandbox = { pid: undefined, startTime: undefined, reported: Promise.resolve() }
  if (!infoStream) return sandbox
  let info = ''
  infoStream.setEncoding('utf8')
  sandbox.reported = new Promise(resolve => {
    infoStream.on('data', (chunk: string) => {
      info += chunk
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info)
      if (match) {
        sandbox.pid = Number(match[1])
        sandbox.startTime = processStartTime(sandbox.pid)
        resolve()
      }
    })
    infoStream.on('close', resolve)
  })
  return sandbox
}

/**
 * bwrap itself does not forward signals (bubblewrap#369): killing it would SIGKILL Claude through
 * --die-with-parent and lose its state, so signals go to the init's children, the sandboxed
 * program itself. Before the go, a signal abandons the launch instead (kept for later when it
 * comes before bwrap is even spawned); after bwrap's exit, it ends the launcher (dropOutput).
 */
function relaySignals(state: SessionState): (signal: NodeJS.Signals) => void {
  return signal => {
    const { child, sandbox, abort } = state
    if (!state.released) {
      state.early ??= signal
      if (abort !== undefined) void abort().catch(() => {})
      return
    }
    if (state.exited !== undefined) return state.exited.drop(signal)
    if (child === undefined || sandbox === undefined) return
    state.forwarded ??= signal
    // Until bwrap has said which process is the sandbox's init, the signal waits: a bwrap killed
    // in its first milliseconds can leave its child running before --die-with-parent is in force
    // (seen here under load: the sandbox lived on and held the launcher's pipes open).
    if (sandbox.pid === undefined) void sandbox.reported.then(() => forward(child, sandbox, signal))
    else forward(child, sandbox, signal)
  }
}

/**
 * To the sandboxed program; when it is not running (not yet forked, or gone), the sandbox ends:
 * its init is killed, which ends everything in its pid namespace, and bwrap gets the signal.
 */
function forward(child: ChildProcess, sandbox: Sandbox, signal: NodeJS.Signals): void {
  const init = aliveInit(sandbox)
  const targets = init === undefined ? [] : childrenOf(init)
  debug(`forwarding ${signal} to ${targets.length > 0 ? targets.join(',') : `bwrap ${child.pid} (sandbox init ${sandbox.pid ?? 'none'} killed)`}`)
  for (const pid of targets) killQuietly(pid, signal)
  if (targets.length > 0) return
  child.kill(signal)
  killInit(sandbox)
}

/** The sandbox's init's pid while it still runs: the pid is still that process's, not one that got it since. */
function aliveInit(sandbox: Sandbox): number | undefined {
  return sandbox.pid !== undefined && processStartTime(sandbox.pid) === sandbox.startTime ? sandbox.pid : undefined
}

/** SIGKILL to the sandbox's init: its whole pid namespace goes. */
function killInit(sandbox: Sandbox): void {
  const init = aliveInit(sandbox)
  if (init !== undefined) killQuietly(init, 'SIGKILL')
}
