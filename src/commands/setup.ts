// Reads config.json and the project's .claudebox.json, resolves the options, and completes the
// facts for them: the shared start of a launch, --dry-run and --check.
import { sha256Hex } from '../sha256.js'
import fs from 'node:fs'
import path from 'node:path'
import type { CliOptions } from '../cli/args.js'
import { EMPTY_CONFIG, parseConfig, parseProjectFile, type Config, type ProjectFile } from '../config/file.js'
import { probe, readConfigText, sessionSocketsDir, withOptionFacts } from '../host/probe.js'
import { withClaude } from '../host/claude-install.js'
import { gitProgram } from '../host/system-programs.js'
import { leadsInto } from '../host/host-env.js'
import { refuseLinkedBinds } from '../host/repository-binds.js'
import { pidScope, randomHex } from '../host/fs.js'
import { launchError, usageError } from '../errors.js'
import { resolveOptions, type ResolvedOptions } from '../config/profiles.js'
import type { Settings } from '../config/settings.js'
import { DEFAULT_SHARED_ENTRIES } from '../sandbox/tiers.js'
import type { HostFacts } from '../types.js'
import { writablePlaces, type LaunchRequest } from '../sandbox/plan.js'
import { writableProgramRefusal } from '../sandbox/policy.js'
import { chooseApi, type ApiChoice } from '../network/api-session.js'
import { canonicalRoot, instanceDir, instanceId } from '../state/instance.js'

export interface LaunchSetup {
  config: Config
  facts: HostFacts
  resolved: ResolvedOptions
  request: LaunchRequest
  /** No command line, config, profile or project file chose the network: the built-in default. */
  networkDefaulted: boolean
  /** The sign-in of this launch, held on the host (secretless). */
  api: ApiChoice
}

export const PROJECT_FILE = '.claudebox.json'

export function loadConfig(settings: Settings): Config {
  const file = path.join(settings.claudeboxHome, 'config.json')
  const text = readConfigText(file)
  return text === undefined ? EMPTY_CONFIG : parseConfig(text, file)
}

/** `builtIn`: config.json and the project's .claudebox.json left out (--check, when they are refused). */
export function setupLaunch(settings: Settings, options: CliOptions, builtIn = false): LaunchSetup {
  const config = builtIn ? EMPTY_CONFIG : loadConfig(settings)
  const base = probe(settings, process.env, options.login !== true)
  const projectRoot = base.git?.topLevel ?? base.cwd
  const project = builtIn || projectRoot === undefined ? undefined : readProjectFile(path.join(projectRoot, PROJECT_FILE))
  const resolved = resolveOptions({
    config,
    cli: options.sandbox,
    cliProfile: options.profile,
    cliClaudeArgs: options.claudeArgs,
    project,
    projectRoot,
  })
  const network = resolved.sandbox.network
  const cliHosts = [...(options.sandbox.allowHosts ?? []), ...(options.sandbox.denyHosts ?? []), ...(options.sandbox.allowPresets ?? [])]
  if (cliHosts.length > 0 && network !== 'allow') {
    // The user would believe the agent is kept to a list while every host is reachable (or none).
    throw usageError(`--allow-host, --deny-host and --allow-preset need --network=allow (the network is ${network} for this launch)`)
  }
  // The repository's binds, approved or narrowing, lead where their text says (repository-binds.ts).
  if (project !== undefined && options.profile === undefined) refuseLinkedBinds(base.cwd ?? '/', [...(project.options.binds ?? []), ...(project.options.roBinds ?? [])])
  const optionFacts = withOptionFacts(base, resolved.sandbox, config.sharedEntries ?? DEFAULT_SHARED_ENTRIES)
  const writes = writablePlaces(optionFacts, resolved.sandbox)
  const facts = withClaude(optionFacts, writes)
  if (options.mode === 'launch') refuseWritablePrograms(facts, writes)
  // Without the host's network, the launcher's servers listen on unix sockets bridged inside.
  const socketsDir = network === 'open' ? undefined : sessionSocketsDir(base.env, writes, facts.claudeboxHome)
  const request: LaunchRequest = {
    // Its own: launchers in other pid namespaces (containers sharing this home) have the same
    // pids, and a later launcher here may get this one's (red team, round 53: two sessions shared
    // one store, and the first to end removed it under the other).
    storeSession: `session-${process.pid}-${pidScope()}-${randomHex(4)}`,
    claudeArgs: [...resolved.claudeArgs, ...options.claudeArgs],
    sandbox: resolved.sandbox,
    tiers: { entries: config.sharedEntries, readOnly: config.sharedReadOnly },
    applied: resolved.applied,
    ...(network === 'allow' && socketsDir !== undefined ? { egressSocket: path.join(socketsDir, 'proxy.sock') } : {}),
    // This session's own: only its bridge presents it to the sockets (lazy-server.ts).
    ...(socketsDir === undefined ? {} : { socketsKey: randomHex(16) }),
  }
  // Secretless (the default): the login stays on the host; without one yet, the sandbox gets an
  // empty store of its own, so a /login inside lands there and is taken out after the session.
  let api: ApiChoice = {}
  if (options.login === true) {
    // Signing in: Claude writes the new login into the sandbox's own store; the launcher then
    // moves it to the host's store (main.ts). No gateway: there is no login to add yet.
    request.claudeArgs = ['auth', 'login', ...options.claudeArgs]
    request.ownCredentialStore = true
  } else if (resolved.sandbox.secretless) {
    const instance = instanceDir(settings.claudeboxHome, instanceId(canonicalRoot(base.cwd ?? '/', base.git)))
    api = { ...chooseApi(base.env, settings.claudeboxHome, instance, socketsDir), sandboxWrites: writes }
    if (api.api !== undefined) request.api = api.api
    else request.ownCredentialStore = true
  }
  const profileName = options.profile ?? project?.profile
  const networkDefaulted = [options.sandbox.network, config.defaults.network, profileName === undefined ? undefined : config.profiles[profileName]?.options.network, project?.options.network].every(v => v === undefined)
  return { config, facts, resolved, request, networkDefaulted, api }
}

/**
 * bwrap and git, which claudebox runs on the host, must not come from a folder the sandbox writes
 * (a PATH entry of an activated virtualenv in the project): a session could replace them, and a
 * bwrap of its own would build the next session's sandbox (red team, round 91).
 */
function refuseWritablePrograms(facts: HostFacts, writes: readonly string[]): void {
  for (const [name, program] of [['bwrap', facts.bwrap], ['git', gitProgram()]] as const) {
    if (program !== undefined && programsInReach([program], writes).length > 0) throw launchError(writableProgramRefusal(name, program))
  }
}

/** Those of the host's `programs` that lie in (or lead through links into) a folder the sandbox writes. */
export function programsInReach(programs: readonly (string | undefined)[], writes: readonly string[]): string[] {
  // A project of `/` (no current directory: the plan refuses it, saying why) would name every program.
  if (writes.includes('/')) return []
  return programs.filter((p): p is string => p !== undefined && leadsInto(p, writes))
}

/** The largest .claudebox.json read: a repository file, so its size is the attacker's choice. */
const PROJECT_FILE_LIMIT = 64 * 1024

/**
 * The project's .claudebox.json, if it has one: never through a symlink, never blocking on a FIFO,
 * bounded in size; its sha256 is what an approval is tied to.
 */
function readProjectFile(file: string): ProjectFile | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw usageError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); make it a regular file or remove it`)
  }
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile()) throw usageError(`${file} is not a regular file; remove it or make it one`)
    if (st.size > PROJECT_FILE_LIMIT) throw usageError(`${file} is ${st.size} bytes, more than ${PROJECT_FILE_LIMIT}; a project file holds a few options`)
    const bytes = fs.readFileSync(fd)
    const project = parseProjectFile(bytes.toString('utf8'), file)
    return { ...project, sha256: sha256Hex(bytes) }
  } finally {
    fs.closeSync(fd)
  }
}
