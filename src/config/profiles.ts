// Which options a launch uses: built-in defaults < config.json < the profile (--profile, or the one
// a project's .claudebox.json names) < the command line. A project file comes from the repository,
// which may be untrusted, so it may only narrow the sandbox unless the user approved the project.
import path from 'node:path'
import { type Config, type ProjectFile } from './file.js'
import { ClaudeboxError, EXIT, usageError } from '../errors.js'
import { parseSize } from '../sandbox/limits.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { DEFAULT_SANDBOX, type SandboxOptions } from './sandbox-options.js'

const ADDITIVE = ['allowHosts', 'denyHosts', 'allowPresets'] as const

export interface ResolvedOptions {
  sandbox: SandboxOptions
  /** Arguments the profile adds before the command line's claude arguments. */
  claudeArgs: string[]
  /** What was applied, for --check and --dry-run. */
  applied: string[]
}

export interface ResolveInput {
  config: Config
  cli: Partial<SandboxOptions>
  cliProfile: string | undefined
  cliClaudeArgs: readonly string[]
  project: ProjectFile | undefined
  /** The project's canonical working tree, as approvedProjects lists it. */
  projectRoot: string | undefined
}

export function resolveOptions(input: ResolveInput): ResolvedOptions {
  const { config, project } = input
  const base: SandboxOptions = { ...DEFAULT_SANDBOX, ...config.defaults }
  const applied: string[] = [config.file ? `config ${config.file}` : 'no config.json (built-in defaults)']
  let sandbox = base
  const claudeArgs: string[] = []

  const pickProfile = (name: string, source: string) => {
    const profile = config.profiles[name]
    if (profile === undefined) {
      const known = Object.keys(config.profiles)
      const where = config.file ?? 'config.json'
      throw usageError(`${source} asks for profile "${shownValue(name)}", which ${where} does not define${known.length ? ` (profiles: ${known.join(', ')})` : ''}`)
    }
    return profile
  }

  if (input.cliProfile !== undefined) {
    const profile = pickProfile(input.cliProfile, '--profile')
    sandbox = { ...sandbox, ...profile.options }
    claudeArgs.push(...profileClaudeArgs(profile, input.cliClaudeArgs))
    applied.push(`profile ${input.cliProfile} (--profile)`)
    if (project) applied.push(`${project.file} ignored: --profile given`)
  } else if (project) {
    const profile = project.profile === undefined ? undefined : pickProfile(project.profile, project.file)
    const candidate: SandboxOptions = { ...sandbox, ...profile?.options, ...project.options }
    const extraArgs = profile ? profileClaudeArgs(profile, input.cliClaudeArgs) : []
    // Compared with what the user's own config and command line give, both complete: a repository's
    // list must not ride on a --network=allow from the command line.
    const [mine, theirs] = [withCli(base, input.cli), withCli(candidate, input.cli)]
    const widenings = widening(mine, theirs)
    if (profile?.claudeArgs?.length) widenings.push(`claude arguments ${shownValue(profile.claudeArgs.join(' '))}`)
    const approved = config.approvedProjects.some(a => a.root === input.projectRoot && a.sha256 !== undefined && a.sha256 === project.sha256)
    if (widenings.length > 0 && !approved) throw approvalNeeded(project, input.projectRoot ?? '', { widenings, binds: addedBinds(mine, theirs) }, config)
    sandbox = candidate
    claudeArgs.push(...extraArgs)
    applied.push(`${project.file}${project.profile ? ` (profile ${project.profile})` : ''}${approved ? ', approved project' : ', narrowing only'}`)
  }
  return { sandbox: withCli(sandbox, input.cli), claudeArgs, applied }
}

/** The command line over `sandbox`; its hosts and presets add to the lists instead of replacing them. */
function withCli(sandbox: SandboxOptions, cli: Partial<SandboxOptions>): SandboxOptions {
  const lists = Object.fromEntries(ADDITIVE.map(key => [key, [...sandbox[key], ...(cli[key] ?? [])]]))
  return { ...sandbox, ...cli, ...lists }
}

/** A repository file that widens the sandbox and is not approved with exactly these bytes. */
export class ApprovalNeeded extends ClaudeboxError {
  constructor(
    message: string,
    readonly approval: { file: string; root: string; sha256: string; widenings: readonly string[]; binds: readonly string[] },
  ) {
    super(message, EXIT.usage)
  }
}

/** The binds `candidate` adds to `base`, writable or not: the question says where each leads. */
function addedBinds(base: SandboxOptions, candidate: SandboxOptions): string[] {
  return [...candidate.binds.filter(b => !base.binds.includes(b)), ...candidate.roBinds.filter(b => !base.roBinds.includes(b))]
}

function approvalNeeded(project: ProjectFile, root: string, { widenings, binds }: { widenings: readonly string[]; binds: readonly string[] }, config: Config): ApprovalNeeded {
  const sha256 = project.sha256 ?? ''
  const known = config.approvedProjects.some(a => a.root === root)
  const entry = JSON.stringify({ root, sha256 })
  return new ApprovalNeeded(
    `${project.file}: ${project.profile ? `profile "${project.profile}": ` : ''}${known ? 'changed since you approved it; it now' : 'a file in the repository'} would widen the sandbox (${widenings.join('; ')}), and may only narrow it unless you approve these exact contents: ` +
      `run claudebox on a terminal to be asked, or add ${entry} to "approvedProjects" in ${config.file ?? 'config.json'}, or pass --profile yourself`,
    { file: project.file, root, sha256, widenings, binds },
  )
}

/** A widening (of widening() below) in claudebox's own words: the label of a list, never its values. */
export function wideningKind(widening: string): string {
  return /^(adds --[a-z-]+|drops --[a-z-]+|claude arguments)\b/.exec(widening)?.[1] ?? widening
}

/** How `candidate` opens the sandbox further than `base`, in words. */
export function widening(base: SandboxOptions, candidate: SandboxOptions): string[] {
  const found: string[] = []
  const openness = { none: 0, allow: 1, open: 2 } as const
  if (openness[candidate.network] > openness[base.network]) found.push(`sets the network to ${candidate.network}`)
  if (candidate.sshAgent && !base.sshAgent) found.push('forwards the ssh-agent')
  if (candidate.connectors && !base.connectors) found.push("turns on the account's claude.ai connectors")
  if (!candidate.secretless && base.secretless) found.push('puts your login inside the sandbox (secretless: false)')
  if (candidate.writableGitConfig && !base.writableGitConfig) found.push('makes .git/config writable')
  if (candidate.ioUring && !base.ioUring) found.push('allows io_uring')
  if (candidate.hardLinks && !base.hardLinks) found.push('allows hard links')
  if (candidate.allowDangerousRoot && !base.allowDangerousRoot) found.push('allows a dangerous root')
  const raised = (from: number | string | undefined, to: number | string | undefined, label: string): void => {
    const amount = (v: number | string | undefined): number => (v === undefined || v === 0 ? Infinity : typeof v === 'number' ? v : parseSize(v))
    if (amount(to) > amount(from)) found.push(`raises ${label} to ${to === undefined || to === 0 ? 'none' : to}`)
  }
  raised(base.pidsLimit, candidate.pidsLimit, 'the process limit')
  raised(base.memoryLimit, candidate.memoryLimit, 'the memory limit')
  raised(base.cpuLimit, candidate.cpuLimit, 'the CPU limit')
  const added = (from: readonly string[], to: readonly string[], label: string, shown = shownValue): void => {
    const items = to.filter(item => !from.includes(item))
    if (items.length > 0) found.push(`${label} ${items.slice(0, SHOWN_ITEMS).map(shown).join(', ')}${items.length > SHOWN_ITEMS ? ` and ${items.length - SHOWN_ITEMS} more (read the file)` : ''}`)
  }
  added(base.roBinds, candidate.roBinds, 'adds --ro-bind', shownPath)
  added(base.binds, candidate.binds, 'adds --bind', shownPath)
  added(base.env, candidate.env, 'adds --env')
  // The lists matter only when both are allow: an allowlist of any length is narrower than open,
  // and going from none to allow is already counted above.
  if (base.network === 'allow' && candidate.network === 'allow') {
    added(base.allowHosts, candidate.allowHosts, 'adds --allow-host')
    added(base.allowPresets, candidate.allowPresets, 'adds --allow-preset')
    added(candidate.denyHosts, base.denyHosts, 'drops --deny-host')
  }
  return found
}

/**
 * What a repository wrote (a path, an --env NAME=VALUE, a host), shown in the list the user
 * approves as one line of bounded length: a value with newlines or thousands of characters pushed
 * the real widenings (network open, a writable bind of the home) off the screen above a forged,
 * harmless-looking list (red team, round 90).
 */
function shownValue(value: string): string {
  const line = inlineSafe(value)
  return line.length <= SHOWN_CHARS ? line : `${line.slice(0, SHOWN_CHARS)}... (${line.length - SHOWN_CHARS} more characters)`
}

/**
 * A bind as where it leads: normalized (`a/b/../../../.ssh` is `../.ssh`; a repository's binds go
 * through no link, approval.ts), and when long, its end kept, which says where (round 91: a cut
 * kept the start and hid `/../../home/.ssh`).
 */
function shownPath(value: string): string {
  const line = inlineSafe(path.normalize(value))
  return line.length <= SHOWN_CHARS ? line : `...${line.slice(-SHOWN_CHARS)} (${line.length - SHOWN_CHARS} more characters before)`
}

/** Entries of one list, and characters of one value, the approval question shows. */
const SHOWN_ITEMS = 4
const SHOWN_CHARS = 100

function profileClaudeArgs(profile: { model?: string; claudeArgs?: string[] }, cliClaudeArgs: readonly string[]): string[] {
  const args = [...(profile.claudeArgs ?? [])]
  if (profile.model && !cliClaudeArgs.some(a => a === '--model' || a.startsWith('--model='))) args.unshift('--model', profile.model)
  return args
}
