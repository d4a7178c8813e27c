// The command line: claudebox's own long options, picked out of argv; everything else is Claude's.
import { hostProblem } from '../config/file.js'
import { PRESETS, presetProblem, type NetworkMode } from '../network/policy.js'
import { usageError } from '../errors.js'
import { MAX_PIDS_LIMIT, parseSize } from '../sandbox/limits.js'
import { closestOption, OWN_OPTIONS, splitArgs } from './options.js'
import type { SandboxOptions } from '../config/sandbox-options.js'

export type Mode = 'launch' | 'dry-run' | 'check' | 'gc' | 'list' | 'sessions' | 'adopt' | 'proposals'

export interface CliOptions {
  mode: Mode
  /** With --gc: show the plan only. */
  dryRun: boolean
  help: boolean
  version: boolean
  /** --yes: answer claudebox's own questions. */
  yes: boolean
  /** --gc --force / --gc --broken; --list --json. */
  force: boolean
  broken: boolean
  json: boolean
  /** --adopt OLD_ROOT */
  adopt?: string
  /** --profiles: print the profile names (for completions) */
  profiles?: boolean
  /** --login: a launch of `claude auth login` whose result goes to the host's store */
  login?: boolean
  /** --promote ID / --dismiss ID (with the 'proposals' mode) */
  promote?: string
  dismiss?: string
  /** --profile NAME */
  profile?: string
  /** --completions SHELL */
  completions?: string
  /** Arguments for `claude`, unchanged and in order. */
  claudeArgs: string[]
  /** Sandbox options given on the command line (config.json fills the rest). */
  sandbox: Partial<SandboxOptions>
}


/** --pids-limit, --memory-limit, --cpu-limit: checked here, enforced by limits.ts. */
function limitOptions(opts: { pidsLimit?: string; memoryLimit?: string; cpuLimit?: string }): Partial<SandboxOptions> {
  const limits: Partial<SandboxOptions> = {}
  if (opts.pidsLimit !== undefined) {
    if (!/^\d+$/.test(opts.pidsLimit) || Number(opts.pidsLimit) > MAX_PIDS_LIMIT) throw usageError(`--pids-limit ${opts.pidsLimit}: give a whole number of processes up to ${MAX_PIDS_LIMIT}, like 4096 (0: no limit)`)
    limits.pidsLimit = Number(opts.pidsLimit)
  }
  if (opts.memoryLimit !== undefined) {
    parseSize(opts.memoryLimit)
    limits.memoryLimit = opts.memoryLimit
  }
  if (opts.cpuLimit !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(opts.cpuLimit) || Number(opts.cpuLimit) < 0.01) throw usageError(`--cpu-limit ${opts.cpuLimit}: give a number of CPUs of at least 0.01, like 2 or 0.5`)
    limits.cpuLimit = Number(opts.cpuLimit)
  }
  return limits
}

/** What commander gives back for our own options (undefined: not given). */
type ParsedOptions = {
    dryRun?: true
    check?: true
    gc?: true
    help?: true
    version?: true
    /** A mode from --network, false from --no-network (commander pairs the two). */
    network?: NetworkMode | false
    allowHost?: string[]
    denyHost?: string[]
    allowPreset?: string[]
    sshAgent?: true
    connectors?: true
    proposals?: true
    profiles?: true
    login?: true
    promote?: string
    dismiss?: string
    roBind?: string[]
    bind?: string[]
    env?: string[]
    shell?: true
    pidsLimit?: string
    memoryLimit?: string
    cpuLimit?: string
    writableGitConfig?: true
    ioUring?: true
    hardLinks?: true
    allowDangerousRoot?: true
    yes?: true
    list?: true
    json?: true
    force?: true
    broken?: true
    sessions?: true
    adopt?: string
    profile?: string
    completions?: string
  }

/**
 * Our own options (splitArgs has picked them out, each with its value) as commander reads the
 * table of options.ts, without loading it on the launch path (~15 ms): the last value of an
 * option wins, repeatable ones collect, --no-network is network false, choices and conflicts are
 * checked with commander's messages (test/unit/cli.test.ts holds the two side by side).
 */
export function parseOwn(own: readonly string[]): ParsedOptions {
  const byFlag = new Map(OWN_OPTIONS.map(option => [option.flag, option]))
  const opts: Record<string, unknown> = {}
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] as string
    const eq = arg.indexOf('=')
    const flag = eq === -1 ? arg : arg.slice(0, eq)
    const option = byFlag.get(flag)
    if (option === undefined) throw usageError(`unknown option '${arg}'; see claudebox --help`)
    if (option.value === undefined) {
      if (eq !== -1) throw usageError(`option '${flag}' takes no value (got '${arg}'); see claudebox --help`)
      if (flag === '--no-network') opts['network'] = false
      else opts[keyOf(flag)] = true
      continue
    }
    const value = eq === -1 ? (own[++i] as string) : arg.slice(eq + 1)
    if (option.choices && !option.choices.includes(value)) {
      throw usageError(`option '${flag} <${option.value}>' argument '${value}' is invalid. Allowed choices are ${option.choices.join(', ')}; see claudebox --help`)
    }
    const key = keyOf(flag)
    opts[key] = option.repeatable ? [...((opts[key] as string[] | undefined) ?? []), value] : value
  }
  for (const option of OWN_OPTIONS) {
    const conflict = opts[keyOf(option.flag)] === undefined ? undefined : option.conflicts?.find(key => opts[key] !== undefined)
    if (conflict !== undefined) throw usageError(`option '${option.flag}' cannot be used with option '${flagOf(conflict)}'; see claudebox --help`)
  }
  return opts
}

/** --allow-host -> allowHost, the attribute name commander gives an option. */
const keyOf = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

export function parseArgs(argv: readonly string[]): CliOptions {
  const { own, claude, missingValue } = splitArgs(argv)
  if (missingValue !== undefined) throw usageError(`option ${missingValue} needs a value; see claudebox --help`)
  const options: CliOptions = { mode: 'launch', dryRun: false, help: false, version: false, yes: false, force: false, broken: false, json: false, claudeArgs: claude, sandbox: {} }
  if (own.length === 0) return options

  const opts = parseOwn(own)
  if (opts.completions !== undefined) options.completions = opts.completions
  if (opts.adopt !== undefined) options.adopt = opts.adopt
  if (opts.promote !== undefined) options.promote = opts.promote
  if (opts.dismiss !== undefined) options.dismiss = opts.dismiss
  if (opts.profile !== undefined) options.profile = opts.profile
  options.yes = opts.yes === true
  options.json = opts.json === true
  options.force = opts.force === true
  options.broken = opts.broken === true
  options.sandbox = sandboxOptions(opts)
  options.mode = modeOf(opts)
  options.dryRun = opts.dryRun === true
  options.help = opts.help === true
  options.profiles = opts.profiles === true
  options.login = opts.login === true
  options.version = opts.version === true
  checkCombination(options, Object.keys(opts).filter(key => opts[key as keyof typeof opts] !== undefined))
  return options
}

/** The sandbox options given on the command line, checked (host patterns, presets, limits). */
function sandboxOptions(opts: ParsedOptions): Partial<SandboxOptions> {
  const sandbox: Partial<SandboxOptions> = {}
  if (opts.network !== undefined) sandbox.network = opts.network === false ? 'none' : opts.network
  for (const pattern of [...(opts.allowHost ?? []), ...(opts.denyHost ?? [])]) {
    const problem = hostProblem(pattern)
    if (problem !== undefined) throw usageError(`--allow-host/--deny-host ${problem}; see claudebox --help`)
  }
  for (const name of opts.allowPreset ?? []) {
    if (!(name in PRESETS)) throw usageError(`--allow-preset: ${presetProblem(name)}`)
  }
  if (opts.allowHost) sandbox.allowHosts = opts.allowHost
  if (opts.denyHost) sandbox.denyHosts = opts.denyHost
  if (opts.allowPreset) sandbox.allowPresets = opts.allowPreset
  if (opts.sshAgent) sandbox.sshAgent = true
  if (opts.connectors) sandbox.connectors = true
  if (opts.roBind) sandbox.roBinds = opts.roBind
  if (opts.bind) sandbox.binds = opts.bind
  if (opts.env) sandbox.env = opts.env
  if (opts.shell) sandbox.shell = true
  Object.assign(sandbox, limitOptions(opts))
  if (opts.writableGitConfig) sandbox.writableGitConfig = true
  if (opts.ioUring) sandbox.ioUring = true
  if (opts.hardLinks) sandbox.hardLinks = true
  if (opts.allowDangerousRoot) sandbox.allowDangerousRoot = true
  return sandbox
}

function modeOf(opts: ParsedOptions): CliOptions['mode'] {
  if (opts.check) return 'check'
  if (opts.gc) return 'gc'
  if (opts.list) return 'list'
  if (opts.sessions) return 'sessions'
  if (opts.adopt !== undefined) return 'adopt'
  if (opts.proposals || opts.promote !== undefined || opts.dismiss !== undefined) return 'proposals'
  return opts.dryRun ? 'dry-run' : 'launch'
}

/** The own options each management mode accepts besides itself; anything else is refused. */
const MODE_ACCEPTS: Record<string, readonly string[]> = {
  check: ['json', 'profile', 'network', 'allowHost', 'denyHost', 'allowPreset', 'sshAgent', 'connectors', 'roBind', 'bind', 'env', 'shell', 'writableGitConfig', 'ioUring', 'hardLinks', 'allowDangerousRoot', 'pidsLimit', 'memoryLimit', 'cpuLimit', 'yes'],
  gc: ['dryRun', 'yes', 'force', 'broken'],
  list: ['json'],
  sessions: ['json'],
  adopt: ['dryRun', 'yes'],
  proposals: ['json'],
  promote: ['dryRun', 'yes'],
  dismiss: [],
  profiles: [],
}
/** Options that only mean something next to a mode. */
const MODIFIER_OF: Record<string, string> = { json: '--check, --list, --sessions or --proposals', force: '--gc', broken: '--gc' }

const flagOf = (key: string): string => `--${key.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`)}`

/**
 * Nothing is dropped: a management mode takes no Claude arguments and only its own modifiers, and
 * a modifier without its mode is an error (`--gc --yes --dryrun` once removed an instance).
 */
function checkCombination(options: CliOptions, given: readonly string[]): void {
  const modes = given.filter(key => key in MODE_ACCEPTS)
  if (modes.length > 1) throw usageError(`${modes.map(flagOf).join(' and ')} cannot be combined; run them one at a time`)
  const mode = modes[0]
  if (mode === undefined) {
    const stray = given.find(key => key in MODIFIER_OF)
    if (stray !== undefined) throw usageError(`${flagOf(stray)} works only with ${MODIFIER_OF[stray] ?? ''}; see claudebox --help`)
    return
  }
  const extra = options.claudeArgs[0]
  if (extra !== undefined) {
    const near = closestOption(extra)
    throw usageError(`${flagOf(mode)} does not take ${JSON.stringify(extra)}${near ? ` (did you mean ${near}?)` : ''}; see claudebox --help`)
  }
  const foreign = given.find(key => key !== mode && !MODE_ACCEPTS[mode]?.includes(key))
  if (foreign !== undefined) throw usageError(`${flagOf(foreign)} does not apply to ${flagOf(mode)}; see claudebox --help`)
}
