// $CLAUDEBOX_HOME/config.json: defaults for claudebox's long options, the tiers, named profiles
// and approved projects. Pure validation; main.ts reads the file. JSON because Node reads it
// without a dependency and every user knows it; errors name the file, the key and what is allowed.
import { NETWORK_MODES, parseHostPattern, PRESETS, presetProblem } from '../network/policy.js'
import { ClaudeboxError, EXIT } from '../errors.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import type { SandboxOptions } from './sandbox-options.js'
import { MAX_PIDS_LIMIT } from '../sandbox/limits.js'

type Kind = 'boolean' | 'string' | 'string[]' | 'network' | 'hosts' | 'presets' | 'limit'

/** Keys that set sandbox options, in config.json, in profiles and (narrowing only) in projects. */
const OPTION_KEYS: Readonly<Record<string, { field: keyof SandboxOptions; kind: Kind }>> = {
  network: { field: 'network', kind: 'network' },
  allowHosts: { field: 'allowHosts', kind: 'hosts' },
  denyHosts: { field: 'denyHosts', kind: 'hosts' },
  allowPresets: { field: 'allowPresets', kind: 'presets' },
  sshAgent: { field: 'sshAgent', kind: 'boolean' },
  connectors: { field: 'connectors', kind: 'boolean' },
  secretless: { field: 'secretless', kind: 'boolean' },
  apiLog: { field: 'apiLog', kind: 'boolean' },
  roBind: { field: 'roBinds', kind: 'string[]' },
  bind: { field: 'binds', kind: 'string[]' },
  env: { field: 'env', kind: 'string[]' },
  writableGitConfig: { field: 'writableGitConfig', kind: 'boolean' },
  ioUring: { field: 'ioUring', kind: 'boolean' },
  hardLinks: { field: 'hardLinks', kind: 'boolean' },
  pidsLimit: { field: 'pidsLimit', kind: 'limit' },
  memoryLimit: { field: 'memoryLimit', kind: 'limit' },
  cpuLimit: { field: 'cpuLimit', kind: 'limit' },
}

/** A named set of options plus Claude settings, chosen with --profile or a project's .claudebox.json. */
export interface Profile {
  options: Partial<SandboxOptions>
  /** Claude's model (passed as --model unless the command line names one). */
  model?: string
  /** More arguments for claude, before the command line's own. */
  claudeArgs?: string[]
}

export interface Config {
  file: string | undefined
  defaults: Partial<SandboxOptions>
  /** Config-dir entries every project shares (see tiers.ts); undefined: the default list. */
  sharedEntries?: string[]
  /** Shared entries are read-only inside the sandbox. */
  sharedReadOnly: boolean
  profiles: Readonly<Record<string, Profile>>
  /**
   * Projects whose .claudebox.json may widen the sandbox: the root and the sha256 of the file's
   * bytes the user approved. A root without a digest (older config) approves nothing any more.
   */
  approvedProjects: readonly Approval[]
}

export interface Approval {
  root: string
  sha256?: string
}

export const EMPTY_CONFIG: Config = { file: undefined, defaults: {}, sharedReadOnly: false, profiles: {}, approvedProjects: [] }

const TOP_KEYS = [...Object.keys(OPTION_KEYS), 'confirmFirstLaunch', 'sharedEntries', 'sharedReadOnly', 'profiles', 'approvedProjects']
const PROFILE_KEYS = [...Object.keys(OPTION_KEYS), 'model', 'claudeArgs']

export const configError = (file: string, message: string): ClaudeboxError => new ClaudeboxError(`${file}: ${message}`, EXIT.usage)

/** Parses and validates config.json text. */
export function parseConfig(text: string, file: string): Config {
  const data = parseObject(text, file, '{"network": "allow"}')
  const config: Config = { ...EMPTY_CONFIG, file, defaults: {}, profiles: {} }
  for (const [key, value] of Object.entries(data)) {
    checkKnown(file, key, TOP_KEYS, '')
    if (key in OPTION_KEYS) Object.assign(config.defaults, optionEntry(file, key, value, ''))
    else if (key === 'confirmFirstLaunch') config.defaults.confirmFirstLaunch = expect(file, key, value, 'boolean') as boolean
    else if (key === 'sharedEntries') config.sharedEntries = checkEntries(file, expect(file, key, value, 'string[]') as string[])
    else if (key === 'sharedReadOnly') config.sharedReadOnly = expect(file, key, value, 'boolean') as boolean
    else if (key === 'approvedProjects') config.approvedProjects = parseApprovals(file, value)
    else if (key === 'profiles') config.profiles = parseProfiles(file, value)
  }
  return config
}

function parseProfiles(file: string, value: unknown): Record<string, Profile> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw configError(file, '"profiles" must be an object of named profiles, like {"offline": {"network": "none"}}')
  const profiles: Record<string, Profile> = {}
  for (const [name, body] of Object.entries(value as Record<string, unknown>)) {
    const where = `profiles.${name}.`
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw configError(file, `profile name "${name}" may hold only letters, digits, '.', '_' and '-'`)
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw configError(file, `"profiles.${name}" must be an object`)
    const profile: Profile = { options: {} }
    for (const [key, v] of Object.entries(body)) {
      checkKnown(file, key, PROFILE_KEYS, where)
      if (key in OPTION_KEYS) Object.assign(profile.options, optionEntry(file, key, v, where))
      else if (key === 'model') profile.model = expect(file, `${where}model`, v, 'string') as string
      else if (key === 'claudeArgs') profile.claudeArgs = expect(file, `${where}claudeArgs`, v, 'string[]') as string[]
    }
    profiles[name] = profile
  }
  return profiles
}

/** A project's .claudebox.json: the profile it asks for, and narrowing shorthands. */
export interface ProjectFile {
  /** sha256 of the file's bytes: what an approval is tied to. */
  sha256?: string
  file: string
  profile?: string
  options: Partial<SandboxOptions>
}

function parseApprovals(file: string, value: unknown): Approval[] {
  const example = '[{"root": "/home/you/src/shop", "sha256": "<digest claudebox printed>"}]'
  if (!Array.isArray(value)) throw configError(file, `"approvedProjects" must be a list like ${example}`)
  return value.map(entry => {
    if (typeof entry === 'string') return { root: entry }
    const { root, sha256 } = (entry ?? {}) as { root?: unknown; sha256?: unknown }
    if (typeof root !== 'string' || (sha256 !== undefined && (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)))) {
      throw configError(file, `each "approvedProjects" entry must look like ${example}`)
    }
    return sha256 === undefined ? { root } : { root, sha256 }
  })
}

export function parseProjectFile(text: string, file: string): ProjectFile {
  const data = parseObject(text, file, '{"profile": "offline"}')
  const project: ProjectFile = { file, options: {} }
  for (const [key, value] of Object.entries(data)) {
    checkKnown(file, key, ['profile', ...Object.keys(OPTION_KEYS)], '')
    if (key === 'profile') project.profile = expect(file, key, value, 'string') as string
    else Object.assign(project.options, optionEntry(file, key, value, ''))
    plainText(file, key, value)
  }
  return project
}

/**
 * A repository's values are shown to you in the approval question as they are: printable ASCII
 * only, each at most MAX_PROJECT_VALUE characters (red team, round 91: wide blanks (U+3000) laid a
 * forged list over the screen above the question; a --bind whose cut-off tail held /../../home/.ssh).
 */
function plainText(file: string, key: string, value: unknown): void {
  for (const text of Array.isArray(value) ? value : [value]) {
    if (typeof text !== 'string') continue
    if (!/^[\x20-\x7e]*$/.test(text)) throw configError(file, `"${key}": ${JSON.stringify(text.slice(0, 40)).replace(/[^\x20-\x7e]/g, '?')}... holds characters other than printable ASCII; a repository's values must be plain text, which the approval question shows as it is`)
    if (text.length > MAX_PROJECT_VALUE) throw configError(file, `"${key}": a value of ${text.length} characters (at most ${MAX_PROJECT_VALUE} in a repository's file)`)
  }
}

/** The longest value a repository's .claudebox.json may hold. */
const MAX_PROJECT_VALUE = 256

function parseObject(text: string, file: string, example: string): Record<string, unknown> {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw configError(file, `not valid JSON (${(error as Error).message}); fix it or move it away`)
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw configError(file, `must hold a JSON object, like ${example}`)
  return data as Record<string, unknown>
}

function optionEntry(file: string, key: string, value: unknown, where: string): Partial<SandboxOptions> {
  const spec = OPTION_KEYS[key] as { field: keyof SandboxOptions; kind: Kind }
  return { [spec.field]: expect(file, `${where}${key}`, value, spec.kind) }
}

function expect(file: string, key: string, value: unknown, kind: Kind): unknown {
  if (kind === 'network') return networkMode(file, key, value)
  if (kind === 'limit') return limitValue(file, key, value)
  if (kind === 'hosts' || kind === 'presets') {
    const list = expect(file, key, value, 'string[]') as string[]
    for (const item of list) {
      const problem = kind === 'presets' ? (item in PRESETS ? undefined : presetProblem(item)) : hostProblem(item)
      if (problem !== undefined) throw configError(file, `"${key}": ${problem}`)
    }
    return list
  }
  const ok =
    kind === 'boolean' ? typeof value === 'boolean' : kind === 'string' ? typeof value === 'string' : Array.isArray(value) && value.every(v => typeof v === 'string')
  if (!ok) throw configError(file, `"${key}" must be ${kind === 'boolean' ? 'true or false' : kind === 'string' ? 'a string' : 'a list of strings'}`)
  return value
}

/** "open", "none" or "allow"; true and false (the first config format) mean open and none. */
function networkMode(file: string, key: string, value: unknown): string {
  if (value === true) return 'open'
  if (value === false) return 'none'
  if (typeof value === 'string' && (NETWORK_MODES as readonly string[]).includes(value)) return value
  throw configError(file, `"${key}" must be one of ${NETWORK_MODES.map(m => `"${m}"`).join(', ')}`)
}

/** pidsLimit: a whole number (0: none); memoryLimit: "4G", "512M"...; cpuLimit: CPUs, at least 0.01. */
function limitValue(file: string, key: string, value: unknown): unknown {
  const name = key.split('.').pop()
  const ok =
    name === 'pidsLimit'
      ? Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_PIDS_LIMIT
      : name === 'cpuLimit'
        ? typeof value === 'number' && value >= 0.01
        : typeof value === 'string' && /^[1-9]\d*[KMG]?$/i.test(value)
  const what = name === 'pidsLimit' ? `a whole number of processes up to ${MAX_PIDS_LIMIT}, like 4096 (0: no limit)` : name === 'cpuLimit' ? 'a number of CPUs, like 2 or 0.5' : 'a size like "4G" or "512M"'
  if (!ok) throw configError(file, `"${key}" must be ${what}`)
  return value
}

/** Why a HOST[:PORT] pattern is not valid, or undefined. */
export function hostProblem(pattern: string): string | undefined {
  try {
    parseHostPattern(pattern)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

function checkKnown(file: string, key: string, allowed: readonly string[], where: string): void {
  if (allowed.includes(key)) return
  // A repository chooses the key: compare and echo only a short prefix of it.
  const shown = inlineSafe(key.length > 60 ? `${key.slice(0, 57)}...` : key)
  const hint = key.length > 60 ? undefined : closest(key, allowed)
  throw configError(file, `unknown key "${where}${shown}"${hint ? `; did you mean "${where}${hint}"?` : ''} (allowed: ${allowed.join(', ')})`)
}

/** Entry names of a Claude config dir: plain names, not claudebox's own or the account files. */
function checkEntries(file: string, entries: string[]): string[] {
  for (const entry of entries) {
    if (!/^[A-Za-z0-9_.-]+$/.test(entry) || entry === '.' || entry === '..') throw configError(file, `"sharedEntries": "${entry}" must be a plain file or directory name`)
    if (['claudebox', 'project-root', '.claude.json', '.credentials.json'].includes(entry)) {
      throw configError(file, `"sharedEntries": "${entry}" is managed by claudebox itself and cannot be listed`)
    }
  }
  return entries
}

/** The allowed name nearest to `word` by edit distance, when it is close enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase())
    if (!best || distance < best.distance) best = { name, distance }
  }
  return best && best.distance <= Math.max(2, Math.floor(word.length / 3)) ? best.name : undefined
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
