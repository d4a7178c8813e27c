// A launch, from the probe to the sandbox's end: the questions of a first launch, the state the
// sandbox gets, the session's proxy and gateway, and the bookkeeping after it.
import { inlineSafe, terminalSafe } from '../cli/terminal-safe.js'
import { ClaudeboxError, EXIT, launchError } from '../errors.js'
import { resumeId } from '../state/adopt.js'
import { lstatKind, probeUserns, readInstanceState, snapshot } from '../host/probe.js'
import { procIsOurs, resolveExisting } from '../host/fs.js'
import type { HostLogin } from '../state/login.js'
import { setupLaunch, type LaunchSetup } from './setup.js'
import { withRootOnly } from '../host/root-only.js'
import { startRootOnlySearch } from '../host/root-only-search.js'
import { moveLegacyLogin, storeNewLogin, takeInsideLogin } from '../network/api-session.js'
import { ApprovalNeeded } from '../config/profiles.js'
import { diagnoseUserns } from '../sandbox/userns.js'
import { describeChanges, diffSnapshots } from '../sandbox/persistence.js'
import { relocateGitWatch, relocateSnapshot, relocator, type Relocate } from '../sandbox/relocate.js'
import { startGitWatch, type GitWatch } from '../host/git-watch.js'
import { DEFAULT_SANDBOX, type SandboxOptions } from '../config/sandbox-options.js'
import { debug, nowMs, resetTerminalBeforeWarnings, warn } from '../cli/log.js'
import { OLD_SANDBOX_STORE_DIR, planLaunch, writablePlaces, type LaunchRequest } from '../sandbox/plan.js'
import { auditLines, renderDryRun, shortAudit } from '../sandbox/render.js'
import type { Settings } from '../config/settings.js'
import type { CliOptions } from '../cli/args.js'
import fs from 'node:fs'
import path from 'node:path'
import { guardJson, rememberGood } from '../state/guard.js'
import { sharedJsonFiles, stateWrites } from './launch-writes.js'
import { canonicalRoot, instanceDir, instanceId, isWithin, PROJECT_ROOT_FILE, sharedPaths } from '../state/instance.js'
import { approvePlaceholderKey, carryAccountIn, carryAccountOut, rememberPlaceholderApproval } from '../state/account-state.js'
import { OWN_DIR } from '../state/registry.js'
import { liveSessions } from '../state/scan.js'
import { holdPlaceholders, releasePlaceholders, type HeldPlaceholders, type Placeholders } from '../host/placeholders.js'
import { closePlaces, pinPlaces, placePath } from '../host/bind-fds.js'
import { finishUnfinishedSessions } from './unfinished.js'
import { mayTakeOver } from '../state/migration.js'
import { claudeSandboxOn, SANDBOX_IN_FORCE, sandboxSettingsFiles } from '../host/claude-sandbox.js'
import { announceProposals, composeShared, HOST_ONLY_SETTINGS } from '../state/tier-sync.js'
import { ask, canAsk } from '../cli/prompt.js'
import type { HostFacts, LaunchPlan } from '../types.js'
import type { RunResult } from '../host/run.js'
import type { ApiSession } from '../network/api-session.js'
import type * as Apply from '../state/apply.js'
import { SessionServers } from './session-servers.js'
import { makeCgroups, type CgroupsMade } from '../host/cgroups.js'
import { saveConfigCache, useConfigCache } from '../host/config-cache.js'
import { useIndexCache } from '../host/index-cache.js'
import { enterLoginPlace } from './login-place.js'

import { VERSION } from '../version.js'
import { print } from '../cli/log.js'
import { isatty } from 'node:tty'
import { NO_TTY_SETTINGS, saveTtySettings, type TtySettings } from '../host/tty-settings.js'

export async function launch(settings: Settings, options: CliOptions): Promise<number> {
  // Inside a sandbox (claudebox sets CLAUDEBOX=1 there) no new one can start: say so plainly.
  if (options.mode === 'launch' && process.env['CLAUDEBOX'] === '1') {
    throw launchError('this is already inside a claudebox sandbox, which forbids nested ones (no user namespaces inside); run claudebox on the host')
  }
  if (options.mode === 'launch' && !procIsOurs()) {
    throw launchError(`the /proc mounted here belongs to another pid namespace (/proc/self is not pid ${process.pid}), so claudebox cannot tell the sandbox's processes by their pids; mount a /proc for this one (unshare --mount-proc) and rerun`)
  }
  if (options.login !== true) return await launchHere(settings, options)
  const leave = enterLoginPlace(settings.claudeboxHome)
  try {
    return await launchHere(settings, options)
  } finally {
    leave()
  }
}

async function launchHere(settings: Settings, options: CliOptions): Promise<number> {
  // Read now (the system's stty, ~2 ms), before anything could change them (tty-settings.ts).
  debug("the launcher's code is loaded")
  const tty = options.mode === 'launch' ? saveTtySettings() : NO_TTY_SETTINGS
  // For root, the search of what only root may read runs beside the probe (root-only.ts).
  void startRootOnlySearch()
  useConfigCache(resolveExisting(settings.claudeboxHome))
  useIndexCache(resolveExisting(settings.claudeboxHome))
  let setup = await setupWithApproval(settings, options)
  debug('the host is probed')
  // A session here whose launcher was killed: its end's checks first, then the probe again (they may move files it saw).
  if (options.mode === 'launch' && finishUnfinishedSessions(setup.facts, setup.request, settings.claudeboxHome)) setup = setupLaunch(settings, options)
  // First run: the normal Claude Code's login, copied with consent, is this launch's sign-in already.
  if (options.mode === 'launch' && mayTakeOver(setup.facts) && (await (await import('./takeover.js')).offerTakeovers(setup.facts, options.yes))) setup = setupLaunch(settings, options)
  if (options.mode === 'launch' && (await offerLoginImport(setup.facts, options.yes))) setup = setupLaunch(settings, options)
  const servers = new SessionServers()
  const { api, signIn } = setup.api
  if (options.mode === 'launch' && api !== undefined && signIn !== undefined) {
    const logDir = setup.request.sandbox?.apiLog ? path.join(instanceDir(settings.claudeboxHome, instanceId(canonicalRoot(setup.facts.cwd ?? '/', setup.facts.git))), OWN_DIR, 'api') : undefined
    const key = setup.request.socketsKey
    const start = async (): Promise<ApiSession> => (await import('../network/api-session.js')).startApiSession({ ...setup.api, api, signIn, ...(key === undefined ? {} : { key }) }, setup.facts.env, logDir)
    // With the open network the sandbox is told the gateway's port: it listens first.
    if (api.socket === undefined) servers.add(await start())
    else servers.later(start)
  }
  try {
    return await launchWith(settings, options, setup, servers, tty)
  } finally {
    for (const line of await servers.finish()) warn(line)
  }
}

async function launchWith(settings: Settings, options: CliOptions, setup: LaunchSetup, servers: SessionServers, tty: TtySettings): Promise<number> {
  const { request } = setup
  const facts = await withRootOnly(setup.facts, writablePlaces(setup.facts, request.sandbox ?? DEFAULT_SANDBOX))
  let plan = planLaunch(facts, request)
  debug('the plan is made')
  for (const warning of plan.warnings) warn(warning)
  if (options.mode === 'dry-run') return await dryRun(plan, facts)
  if (facts.instance.kind === 'missing') await firstLaunch(plan, request.sandbox ?? DEFAULT_SANDBOX, options.yes)
  // The cgroups of the limits, made now: the kernel's wait for the first move passes while the
  // launcher prepares (cgroups.ts).
  const cgroups = makeCgroups(plan.cgroups)
  let ran: Awaited<ReturnType<typeof runSession>>
  try {
    const placeholders = await prepareState(plan, setup)
    debug('what bwrap binds is written')
    // Everything checked: the one-time word on the closed network default (presets chosen apply now).
    if (setup.networkDefaulted) plan = await networkNotice(settings, options, request, plan, facts.instance.kind !== 'missing')
    ran = await runSession(plan, setup, options, { servers, cgroups, tty, placeholders })
  } finally {
    await cgroups.abandon()
  }
  const { result, unregister, startedAt, interactive, release } = ran
  debug('the sandbox has ended')
  let failed: number | undefined
  let held: NodeJS.Signals | undefined
  try {
    failed = failedStart(result, plan, facts)
    const move = ran.moved() ?? ((p: string): string => p)
    if (failed === undefined) afterTheSession(plan, setup, options, { before: relocateSnapshot(ran.before, move), watch: plan.watch.map(move), top: move(facts.git?.topLevel ?? facts.cwd ?? '/') })
  } finally {
    // Only now: a launch of this project that starts meanwhile sees this session live, and leaves
    // the files it is still carrying back alone (its carryAccountIn would undo a theme chosen here).
    unregister()
    // The session's servers end while signals are still held: a refresh of the login under way is
    // stored before a signal may end the launcher (red team, round 91: a SIGINT right after the
    // session, which the session itself brought about with `stty intr R` and a terminal query,
    // re-raised first, lost the login for every project).
    for (const line of await servers.finish()) warn(line)
    held = await release()
  }
  if (failed !== undefined) return failed
  if (plan.summary.claudeCode && interactive && !options.claudeArgs.some(arg => arg === '-p' || arg === '--print')) {
    await resumeHint(plan.summary.instanceDir, facts.cwd ?? '/', startedAt)
  }
  debug('the bookkeeping after the session is done')
  // Re-raise a death by signal, so that our caller sees it as it would have without claudebox; or
  // end by the signal that came while git was checked.
  const signal = result.signal ?? held
  if (signal) process.kill(process.pid, signal)
  return result.status
}

/** --dry-run: the script, and the programs it names by digest (content-addressed, outside any project). */
async function dryRun(plan: LaunchPlan, facts: HostFacts): Promise<number> {
  const { applyFiles } = await import('../state/apply.js')
  applyFiles(plan.files.filter(file => typeof file.content !== 'string'))
  const takeovers = mayTakeOver(facts) ? (await import('./takeover.js')).pendingTakeovers(facts) : []
  const writes = stateWrites(plan, facts).map(line => `claudebox also writes: ${line}`)
  return print(renderDryRun(plan, [...auditLines(plan), ...takeovers.map(line => `before this launch claudebox would ask to: ${line}`), ...writes]))
}

/**
 * What bwrap binds, as it must be when it binds it: the plan's directories and files, the guarded
 * JSON, this project's copies of the shared tier (with sharedReadOnly bound read-only onto
 * themselves, so they must exist first).
 */
async function prepareState(plan: LaunchPlan, setup: LaunchSetup): Promise<HeldPlaceholders> {
  const { facts, request } = setup
  const { applyFiles, applyMkdirs, removeEmptyInstance, stateError } = await import('../state/apply.js')
  // Only claudebox's own state folders may be missing (a first launch makes them); every other place the probe saw.
  const places = pinPlaces(plan.pinWithin, place => isWithin(place, facts.claudeboxHome))
  const opened: number[] = []
  const at = (p: string): string => placePath(places, p, opened)
  let placeholders: HeldPlaceholders
  try {
    placeholders = holdPlaceholders(facts.claudeboxHome, placeholdersOf(plan), () => {
      applyMkdirs(plan.mkdirs, facts.claudeboxHome, at)
      applyFiles(plan.files, at)
    })
  } catch (error) {
    // A first launch that could not write its project-root leaves no instance behind.
    if (facts.instance.kind === 'missing') removeEmptyInstance(plan.summary.instanceDir)
    // The placeholders' markers (host/placeholders.ts) fail as plainly as the state does.
    if (error instanceof ClaudeboxError) throw error
    // Named by the file that failed (a placeholder in the project), not always by the state folder (round 120).
    const failed = (error as NodeJS.ErrnoException).path
    throw stateError(typeof failed === 'string' && !failed.startsWith('/proc/') ? failed : facts.claudeboxHome, error)
  } finally {
    closePlaces(places)
    opened.forEach(fd => fs.closeSync(fd))
  }
  try {
    guardSharedState(plan, facts.claudeboxHome)
  } catch (error) {
    if (error instanceof ClaudeboxError || (error as NodeJS.ErrnoException).code === undefined) throw error
    throw stateError(plan.summary.instanceDir, error)
  }
  prepareProjectState(plan, facts.claudeboxHome, request, facts.env)
  return placeholders
}

/**
 * The last checks and records, while bwrap builds the sandbox (its program waits for the go):
 * none of them changes what bwrap binds.
 */
function lastChecks(plan: LaunchPlan, facts: HostFacts, options: CliOptions, apply: typeof Apply): void {
  if (plan.summary.claudeCode && claudeSandboxOn(sandboxSettingsFiles(plan.summary.instanceDir, [facts.git?.topLevel, facts.cwd])) !== undefined) warn(SANDBOX_IN_FORCE)
  // Two first launches of projects whose ids collide would both pass the probe; the file decides.
  const state = readInstanceState(plan.summary.instanceDir)
  if (state.kind !== 'ok' || state.recordedRoot !== plan.summary.projectRoot) {
    const unreadable = unreadableRootFile(plan.summary.instanceDir)
    // Moving it away would take the project's conversations with it (red team, round 94).
    if (unreadable !== undefined) throw launchError(`instance ${plan.summary.instanceDir} holds a project-root you cannot read (${unreadable}; a sudo claudebox leaves root's files): make the instance yours again (chown -R) and rerun`)
    throw launchError(`instance ${plan.summary.instanceDir} does not record ${plan.summary.projectRoot}; move it away and rerun`)
  }
  apply.recordInstanceMeta(plan.summary.instanceDir, facts)
  const resume = resumeId(options.claudeArgs)
  if (resume !== undefined) apply.linkResumedTranscript(plan.summary.instanceDir, facts.cwd ?? '/', resume)
}

/** What a session runs with besides its plan: its servers, the limits' cgroups, the terminal's settings and the placeholders held. */
interface SessionParts {
  servers: SessionServers
  cgroups: CgroupsMade
  tty: TtySettings
  placeholders: HeldPlaceholders
}

/**
 * bwrap; while it builds the sandbox, the last checks, the git watch, the session's record and
 * its servers (the proxy and the gateway listen before the go; their socket directory exists
 * before bwrap binds it). The record is removed by the caller, after the bookkeeping (or here,
 * when the launch failed).
 */
async function runSession(plan: LaunchPlan, setup: LaunchSetup, options: CliOptions, { servers, cgroups, tty, placeholders }: SessionParts): Promise<Session> {
  const { facts } = setup
  const [startedAt, interactive] = [Date.now() - 1000, isatty(0) && isatty(1)]
  const apply = await import('../state/apply.js')
  if (plan.socketsDir !== undefined) servers.makeSocketsDir(plan.socketsDir)
  const { egress } = plan
  if (egress !== undefined) servers.later(async () => (await import('../network/session.js')).startEgress(egress, plan.summary.instanceDir))
  debug(`bwrap argv: ${JSON.stringify([plan.file, ...plan.argv])}`)
  const { holdSignals, runForeground } = await import('../host/run.js')
  let before: Record<string, string> = {}
  let gitWatch: GitWatch | undefined
  let record: (() => void) | undefined
  let hold: ReturnType<typeof holdSignals> | undefined
  let move: Relocate | undefined
  let returned = false
  const unregister = (): void => {
    if (record !== undefined) afterSession('removing the session record', record)
    record = undefined
  }
  try {
    const result = await runForeground(
      plan,
      async (end, roots) => {
        lastChecks(plan, facts, options, apply)
        before = snapshot(plan.watch)
        gitWatch = watchOrStop(plan, end, roots)
        record = apply.registerSession(plan.summary.instanceDir, facts.cwd ?? '/', VERSION, { watched: before, guarded: { forbidden: [...plan.gitWatch.forbidden], links: [...plan.gitWatch.links] } })
        await servers.startPending()
        saveConfigCache()
      },
      cgroups,
      () => gitWatch?.sweep(),
    )
    returned = true
    return { result, unregister, before, startedAt, interactive, moved: () => move, release: async () => await hold?.release() }
  } catch (error) {
    unregister()
    throw error
  } finally {
    // Held until the bookkeeping after the session is done too (the caller releases them).
    hold = holdSignals()
    debug('checking git after the session, signals held')
    tty.restore()
    resetTerminalBeforeWarnings()
    afterSession('checking git', () => {
      for (const warning of gitWatch?.finish() ?? []) warn(warning)
    })
    const moved = gitWatch?.moved()
    const to = moved?.to
    move = to === undefined ? undefined : relocator(plan.gitWatch.workTrees[0] ?? '/', to)
    // Moved during the session: the same checks, where the project is now, counting what changed
    // since the start, only inside the folder the project was (the new path is the session's to swap: round 114).
    if (move !== undefined && to !== undefined) {
      const spec = relocateGitWatch(plan.gitWatch, move)
      afterSession('checking git where the project was moved', () => startGitWatch(spec, () => {}, startedAt, { identities: new Map([[to, moved?.identity]]) }).finish().forEach(warn))
    }
    afterSession('removing the placeholders', () => releasePlaceholders(facts.claudeboxHome, placeholdersOf(plan), placeholders, move))
    if (!returned) await hold.release()
  }
}

const placeholdersOf = (plan: LaunchPlan): Placeholders => ({ files: plan.gitWatch.placeholders, dirs: plan.gitWatch.headPlaceholders })

/** A session that ran: its result, and what the bookkeeping after it compares with. */
interface Session {
  result: RunResult
  unregister: () => void
  /** The files that run outside the sandbox, as they were before it (persistence.ts). */
  before: Record<string, string>
  startedAt: number
  interactive: boolean
  /** Where each path of the project is now, when it was moved during the session (git-watch.ts moved). */
  moved: () => Relocate | undefined
  /** Ends the hold on signals begun after the session; the one that came meanwhile: the launcher ends by it at the end. */
  release: () => Promise<NodeJS.Signals | undefined>
}

/** claudebox's own status when the sandbox never started (bwrap's would read as Claude's); else undefined. */
function failedStart(result: { status: number; signal?: unknown; sandboxStarted: boolean; built: boolean }, plan: LaunchPlan, facts: HostFacts): number | undefined {
  const vanished = [facts.git?.topLevel ?? facts.cwd ?? '/', facts.git?.commonDir ?? '/', plan.summary.instanceDir].find(p => !fs.existsSync(p))
  if (result.status !== 0 && !result.signal && !result.built && vanished !== undefined) {
    // The project (or the instance) was removed while the launch ran: bwrap's "Can't find source
    // path" with status 1 would read as Claude's own status (or 137, when the git watch saw the
    // removal take a placeholder first and ended the sandbox). A session that removed its project
    // and then ended with 1 keeps its 1: the gate had said the sandbox was built.
    warn(`the sandbox could not start: ${vanished} no longer exists (removed while claudebox started); cd into your project and rerun`)
    return EXIT.cannotLaunch
  }
  if (result.sandboxStarted && !result.built && result.status !== 0 && !result.signal) {
    // bwrap reports the sandbox's pid before it mounts: a mount it then refused is its status, not Claude's.
    warn(`bwrap could not set up the sandbox (status ${result.status}, message above); the program never ran. claudebox --check shows more`)
    return EXIT.cannotLaunch
  }
  if (!result.sandboxStarted && result.status !== 0) {
    // bwrap never got as far as starting the sandbox: its own message is above.
    const diagnosis = diagnoseUserns(probeUserns(facts.bwrap, facts.env), '')
    warn(`bwrap could not create the sandbox (status ${result.status}, message above): ${diagnosis.cause}; fix: ${diagnosis.fix}. claudebox --check shows more`)
    return EXIT.cannotLaunch
  }
  return undefined
}

/** The git watch, started; one that ended the session already (its folders could not be watched) stops the launch: nothing runs (round 141: that end came before the sandbox had a pid, and the program ran). */
function watchOrStop(plan: LaunchPlan, end: () => void, roots: Parameters<typeof startGitWatch>[3]): GitWatch {
  const gitWatch = startGitWatch(plan.gitWatch, end, Date.now(), roots)
  const why = gitWatch.endedFor()
  if (why !== undefined) throw launchError(`${why}; nothing ran`)
  return gitWatch
}

/** Bookkeeping after the session never changes Claude's status: a failure (a full disk) is one line. */
/** `outside`: the files that run outside the sandbox as they were before it, where they are now (the project may have moved). */
function afterTheSession(plan: LaunchPlan, setup: LaunchSetup, options: CliOptions, outside: { before: Record<string, string>; watch: readonly string[]; top: string }): void {
  const { facts, request } = setup
  const instance = plan.summary.instanceDir
  afterSession('remembering the shared state', () => rememberSharedState(plan, facts.claudeboxHome))
  const identity = options.login || request.sandbox?.secretless === false
  afterSession('carrying the account keys back', () => carryAccountOut(sharedPaths(facts.claudeboxHome).claudeJson, instance, identity))
  if (request.api?.kind === 'api-key') afterSession('remembering the key approval', () => rememberPlaceholderApproval(instance, request.api?.placeholder ?? ''))
  afterSession('looking for a sign-in made inside', () => {
    const session = request.storeSession ?? 'session'
    const line = options.login ? storeNewLogin(instance, session, facts.claudeboxHome) : takeInsideLogin(instance, session, request.api?.placeholder, facts.claudeboxHome)
    if (line !== undefined) warn(line)
  })
  afterSession('looking for proposals', () => {
    const line = announceProposals(instance, sharedPaths(facts.claudeboxHome).dir, plan.summary.shared, hostOnlySettings(request.sandbox?.secretless))
    if (line !== undefined) warn(line)
  })
  afterSession('comparing the files that run outside the sandbox', () => {
    const changes = diffSnapshots(outside.before, snapshot(outside.watch))
    if (changes.length > 0) warn(describeChanges(changes, outside.top))
  })
}

/** Claude's own hint names `claude --resume ID`, which fails outside the sandbox: this one works. */
async function resumeHint(instance: string, cwd: string, since: number): Promise<void> {
  const { conversationSince } = await import('./sessions.js')
  const id = conversationSince(instance, cwd, since)
  // The name comes from a directory the sandbox writes: only a conversation id is repeated.
  if (id !== undefined && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) warn(`resume this conversation with: claudebox --resume ${id}`)
}

/** Secretless launches keep the settings the host acts on (apiKeyHelper) out of the instance copies. */
const hostOnlySettings = (secretless: boolean | undefined): readonly string[] => (secretless === false ? [] : HOST_ONLY_SETTINGS)

/** Upgrading: this project's instance, or another one, existed before this launch. */
async function networkNotice(settings: Settings, options: CliOptions, request: LaunchRequest, plan: LaunchPlan, instanceExisted: boolean): Promise<LaunchPlan> {
  const { offerNetworkDefault } = await import('./network-offer.js')
  const upgrading = instanceExisted || (await import('../state/scan.js')).scanInstances(path.join(settings.claudeboxHome, 'instances')).length > 1
  try {
    if ((await offerNetworkDefault(settings.claudeboxHome, upgrading)).length === 0) return plan
  } catch (error) {
    if (error instanceof ClaudeboxError) throw error // Ctrl-C at the question
    warn(`could not record the network notice (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
    return plan
  }
  // Only what the answer changes (the presets, in the options) comes from the new setup. All else
  // is this launch's own: the API path of the running gateway (or none), the sockets' directory
  // and key (red team: a new key left the gateway refusing every call), the session's own store,
  // which the bookkeeping after it looks in (review of round 53: a login saved meanwhile mixed a
  // second gateway's sockets into the plan).
  const again = setupLaunch(settings, options)
  const { sandbox, applied } = again.request
  return planLaunch(await withRootOnly(again.facts, writablePlaces(again.facts, sandbox ?? DEFAULT_SANDBOX)), { ...request, ...(sandbox === undefined ? {} : { sandbox }), ...(applied === undefined ? {} : { applied }) })
}

/** Why the instance's project-root cannot be read when it is there (EACCES...); undefined otherwise. */
function unreadableRootFile(instance: string): string | undefined {
  try {
    fs.closeSync(fs.openSync(path.join(instance, PROJECT_ROOT_FILE), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK))
    return undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'EACCES' || code === 'EPERM' ? code : undefined
  }
}

function afterSession(what: string, step: () => void): void {
  const begun = nowMs()
  try {
    step()
  } catch (error) {
    warn(`after the session, ${what} failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); Claude's own status is kept`)
  } finally {
    debug(`after the session, ${what}: ${(nowMs() - begun).toFixed(1)} ms`)
  }
}

/** setupLaunch, asking on a terminal when the project's .claudebox.json would widen the sandbox. */
async function setupWithApproval(settings: Settings, options: CliOptions): Promise<ReturnType<typeof setupLaunch>> {
  try {
    return setupLaunch(settings, options)
  } catch (error) {
    if (!(error instanceof ApprovalNeeded) || options.mode !== 'launch') throw error
    const { approveProject } = await import('../config/approval.js')
    if (!(await approveProject(error, settings.claudeboxHome))) throw error
    return setupLaunch(settings, options)
  }
}

/**
 * First run: when claudebox has no credentials yet but the user's normal Claude Code has a login,
 * offer once to copy it: asked on a terminal, accepted by --yes, only mentioned otherwise. An OAuth
 * login is not offered (login.ts): said once, with the way to a login of claudebox's own.
 */
async function offerLoginImport(facts: HostFacts, yes: boolean): Promise<boolean> {
  const { copyable, findHostLogin } = await import('../state/login.js')
  const login = findHostLogin(facts.claudeboxHome, facts.home, facts.env)
  if (login === undefined) return false
  const where = login.credentials ?? login.accountFile ?? ''
  if (!copyable(login)) {
    await recordImport(facts.claudeboxHome, login, false)
    warn(`your Claude Code login in ${where} is not copied: its refresh token works once, so the first refresh by either copy would sign the other out; sign claudebox in with a login of its own: claudebox --login`)
    return false
  }
  let accepted = yes
  if (!yes) {
    if (!canAsk()) {
      warn(`found a Claude Code login in ${where}; run claudebox --yes once to use it in every project (nothing copied)`)
      return false
    }
    accepted = !/^n(o)?$/i.test(await ask(`use your Claude Code login from ${where} in every project (it is copied, not moved)? [Y/n]`))
  }
  await recordImport(facts.claudeboxHome, login, accepted)
  warn(accepted ? `copied your Claude Code login from ${where} (your own ~/.claude is unchanged)` : 'not using your Claude Code login; sign in with claudebox --login instead')
  return accepted
}

/** importLogin, a full disk or a read-only home said so, not an internal error (red team, round 94). */
async function recordImport(claudeboxHome: string, login: HostLogin, accepted: boolean): Promise<void> {
  const { importLogin } = await import('../state/login.js')
  try {
    importLogin(claudeboxHome, login, accepted)
  } catch (error) {
    throw launchError(`could not record your Claude Code login's ${accepted ? 'copy' : 'answer'} in ${claudeboxHome} (${(error as NodeJS.ErrnoException).code ?? 'error'}); free some space there or make it writable, and rerun (your own login is unchanged)`)
  }
}

/**
 * Before the sandbox starts: this project's copies of the shared entries brought up to date, and
 * the account keys carried into its .claude.json. Both wait while another session of this project
 * runs (it is writing those very files); that session's next launch catches up.
 */
function prepareProjectState(plan: LaunchPlan, claudeboxHome: string, request: LaunchRequest, env: Readonly<Record<string, string | undefined>>): void {
  const { api } = request
  const secretless = request.sandbox?.secretless
  const instance = plan.summary.instanceDir
  const others = liveSessions(instance)
  // A failure (a full disk) leaves the copies as they were, which the next launch catches up on.
  const attempt = (what: string, step: () => void): void => {
    try {
      step()
    } catch (error) {
      warn(`could not ${what} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the session uses them as they were`)
    }
  }
  attempt("update this project's copies of the shared tier", () => {
    for (const warning of composeShared(instance, sharedPaths(claudeboxHome).dir, plan.summary.shared, others, hostOnlySettings(secretless))) warn(warning)
  })
  // An older claudebox kept the sessions' stores in the instance, where every session of the
  // project could read them: gone, now that each session has its own outside (plan.ts sandboxStore).
  const oldStores = path.join(instance, OLD_SANDBOX_STORE_DIR)
  if (others === 0 && lstatKind(oldStores) === 'dir') attempt('remove the old credential stores in the instance', () => fs.rmSync(oldStores, { recursive: true, force: true }))
  if (others === 0) attempt("move this project's sign-in out of the instance", () => {
    const line = moveLegacyLogin(instance, claudeboxHome)
    if (line !== undefined) warn(line)
  })
  if (others === 0) attempt("carry the account keys into this project's .claude.json", () => carryAccountIn(sharedPaths(claudeboxHome).claudeJson, instance, secretless !== false))
  if (others === 0 && api?.kind === 'api-key') {
    attempt('pre-approve the placeholder key', () => approvePlaceholderKey(sharedPaths(claudeboxHome).claudeJson, instance, env['ANTHROPIC_API_KEY'] ?? '', api.placeholder, api.storedKey === true))
  }
}

function rememberSharedState(plan: LaunchPlan, claudeboxHome: string): void {
  for (const { files, goodDir } of sharedJsonFiles(plan, claudeboxHome)) for (const file of files) rememberGood(file, goodDir, new Date())
}

/** Validates the JSON files Claude reads before it starts (guard.ts). */
function guardSharedState(plan: LaunchPlan, claudeboxHome: string): void {
  for (const { files, goodDir, perProject } of sharedJsonFiles(plan, claudeboxHome)) {
    // Claude's backups/ is in the instance, which the agent writes: only this project's own file
    // is restored from there. A shared file comes back only from claudebox's copies on the host.
    const backups = perProject ? [path.join(plan.summary.instanceDir, 'backups')] : []
    for (const file of files) {
      // An empty instance .claude.json is the mount point an older claudebox bound the shared one onto.
      if (perProject && lstatKind(file) === 'file' && fs.lstatSync(file).size === 0) continue
      guardOne(file, backups, goodDir)
    }
  }
}

function guardOne(file: string, backups: readonly string[], goodDir: string): void {
  const result = guardJson(file, backups, goodDir, new Date())
  const aside = (setAside: string | undefined): string => (setAside ? `set aside as ${inlineSafe(path.basename(setAside))}` : 'not copied again (5 copies are set aside already)')
  if (result.kind === 'restored') warn(`${inlineSafe(file)} was corrupt: ${aside(result.setAside)}, restored from ${inlineSafe(result.from)}`)
  if (result.kind === 'set-aside') warn(`${inlineSafe(file)} was corrupt: ${aside(result.setAside)}; no good copy to restore, so Claude starts from an empty one`)
  if (result.kind === 'too-large') warn(`${inlineSafe(file)} is ${Math.round(result.size / 2 ** 20)} MB: claudebox neither checks nor copies files this large; look at what grew it`)
}

/**
 * The first launch in a project shows what the sandbox exposes, on a terminal only, and goes on
 * (Claude Code asks its own trust question); with confirmFirstLaunch it asks first.
 */
async function firstLaunch(plan: LaunchPlan, sandbox: SandboxOptions, yes: boolean): Promise<void> {
  const terminal = isatty(2)
  if (terminal) process.stderr.write(terminalSafe(`claudebox: first launch in this project:\n${shortAudit(plan).map(l => `  ${l}\n`).join('')}`))
  if (!sandbox.confirmFirstLaunch || yes) return
  if (!canAsk()) throw launchError('not started: config.json asks to confirm the first launch in a project; rerun with --yes to accept')
  if (!/^y(es)?$/i.test(await ask('start Claude in this sandbox? [y/N]'))) throw launchError('not started: you declined the first launch')
}

