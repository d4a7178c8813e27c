// $CLAUDEBOX_HOME/config.json: defaults for claudebox's long options. Pure validation; the file is
// read by main.ts. JSON because Node reads it without a dependency and users know it.
import { ClaudeboxError, EXIT } from './errors.js'
import type { SandboxOptions } from './sandbox-options.js'

type Kind = 'boolean' | 'string[]'

/** Config key -> the SandboxOptions field it sets, and its type. */
const KEYS: Readonly<Record<string, { field: keyof SandboxOptions; kind: Kind }>> = {
  network: { field: 'network', kind: 'boolean' },
  sshAgent: { field: 'sshAgent', kind: 'boolean' },
  roBind: { field: 'roBinds', kind: 'string[]' },
  bind: { field: 'binds', kind: 'string[]' },
  env: { field: 'env', kind: 'string[]' },
  writableGitConfig: { field: 'writableGitConfig', kind: 'boolean' },
  confirmFirstLaunch: { field: 'confirmFirstLaunch', kind: 'boolean' },
}

export const configError = (file: string, message: string): ClaudeboxError =>
  new ClaudeboxError(`${file}: ${message}`, EXIT.usage)

/** Parses and validates config.json text into sandbox option defaults. */
export function parseConfig(text: string, file: string): Partial<SandboxOptions> {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw configError(file, `not valid JSON (${(error as Error).message}); fix it or move it away`)
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw configError(file, 'must hold a JSON object, like {"network": false}')
  const result: Partial<Record<keyof SandboxOptions, unknown>> = {}
  for (const [key, value] of Object.entries(data)) {
    const spec = KEYS[key]
    if (spec === undefined) {
      const hint = closest(key, Object.keys(KEYS))
      throw configError(file, `unknown key "${key}"${hint ? `; did you mean "${hint}"?` : ''} (allowed: ${Object.keys(KEYS).join(', ')})`)
    }
    const ok = spec.kind === 'boolean' ? typeof value === 'boolean' : Array.isArray(value) && value.every(v => typeof v === 'string')
    if (!ok) throw configError(file, `"${key}" must be ${spec.kind === 'boolean' ? 'true or false' : 'a list of strings'}`)
    result[spec.field] = value
  }
  return result as Partial<SandboxOptions>
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
