// --check: pure evaluation of what the probe found, one result per line.
import type { LaunchSummary } from './types.js'

export type CheckStatus = 'ok' | 'warn' | 'fail'

export interface CheckResult {
  status: CheckStatus
  name: string
  detail: string
}

/** What --check measured on top of the launch facts, by running programs. */
export interface CheckFacts {
  bwrap: { path: string; version: string | undefined } | undefined
  /** undefined when a trivial sandbox started; else bwrap's message. */
  sandboxError: string | undefined
  claude: { path: string; version: string | undefined } | undefined
  claudeProblem: string | undefined
  git: { version: string } | undefined
  /** The launch plan's summary, or why there is none. */
  plan: LaunchSummary | { error: string }
  credentials: { path: string; exists: boolean }
  tiocstiBlockedByKernel: boolean | undefined
}

export function evaluateChecks(f: CheckFacts): CheckResult[] {
  const results: CheckResult[] = []
  const add = (status: CheckStatus, name: string, detail: string): void => void results.push({ status, name, detail })

  if (f.bwrap) add('ok', 'bwrap', `${f.bwrap.path} (${f.bwrap.version ?? 'unknown version'})`)
  else add('fail', 'bwrap', 'not found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap) or set CLAUDEBOX_BWRAP')

  if (!f.bwrap) add('fail', 'user namespaces', 'not tested: no bwrap')
  else if (f.sandboxError === undefined) add('ok', 'user namespaces', 'a test sandbox started')
  else add('fail', 'user namespaces', `a test sandbox failed: ${f.sandboxError}`)

  if (f.claude) add('ok', 'claude', `${f.claude.path} (${f.claude.version ?? 'unknown version'})`)
  else add('fail', 'claude', f.claudeProblem ?? 'not found')

  if (f.git) add('ok', 'git', f.git.version)
  else add('warn', 'git', 'not found: projects map to the current directory, not the repository')

  if ('error' in f.plan) add('fail', 'project', f.plan.error)
  else {
    add('ok', 'project', `${f.plan.projectRoot} -> instance ${f.plan.instanceId} (${f.plan.instanceDir})`)
    add('ok', 'writable inside', f.plan.writable.join(', '))
  }

  if (f.credentials.exists) add('ok', 'shared sign-in', `credentials at ${f.credentials.path}`)
  else add('warn', 'shared sign-in', `no credentials yet at ${f.credentials.path}; sign in inside claudebox once and every project uses it`)

  add('ok', 'network', 'shared with the host (the agent can reach the internet)')
  return results
}

export function renderChecks(results: readonly CheckResult[]): string {
  return results.map(r => `${r.status.padEnd(4)} ${r.name}: ${r.detail}\n`).join('')
}

export const checksPassed = (results: readonly CheckResult[]): boolean => results.every(r => r.status !== 'fail')
