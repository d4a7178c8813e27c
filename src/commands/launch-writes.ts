// The writes a launch makes besides the plan's files (the guard, this project's copies of the shared
// tier, the account keys, the session's records), said by --dry-run before they happen.
import path from 'node:path'
import { copyable, DECISION_FILE, findHostLogin } from '../state/login.js'
import { inspectJson } from '../state/guard.js'
import { sharedPaths } from '../state/instance.js'
import { OWN_DIR, SESSIONS_DIR } from '../state/registry.js'
import type { HostFacts, LaunchPlan } from '../types.js'

/** The JSON files Claude rewrites: the shared ones, and this project's .claude.json (its own good copies). */
export function sharedJsonFiles(plan: LaunchPlan, claudeboxHome: string): { files: string[]; goodDir: string; perProject?: true }[] {
  const shared = sharedPaths(claudeboxHome)
  const files = [shared.claudeJson, ...(plan.summary.shared.includes('settings.json') ? [path.join(shared.dir, 'settings.json')] : [])]
  const instance = plan.summary.instanceDir
  return [
    { files, goodDir: path.join(shared.dir, 'good') },
    { files: [path.join(instance, '.claude.json')], goodDir: path.join(instance, OWN_DIR, 'good'), perProject: true },
  ]
}

/** One line per write outside the script, in the order the launch makes them. */
export function stateWrites(plan: LaunchPlan, facts: HostFacts): string[] {
  const instance = plan.summary.instanceDir
  const lines: string[] = []
  const login = facts.instance.kind === 'missing' ? findHostLogin(facts.claudeboxHome, facts.home, facts.env) : undefined
  if (login !== undefined && copyable(login)) lines.push(`asks once to copy your Claude Code login's account keys (${login.accountFile ?? ''}) into ${sharedPaths(facts.claudeboxHome).claudeJson}`)
  else if (login !== undefined) lines.push(`says once that your Claude Code login (${login.credentials ?? ''}) is not copied, and records that in ${path.join(sharedPaths(facts.claudeboxHome).dir, DECISION_FILE)}`)
  for (const { files, goodDir } of sharedJsonFiles(plan, facts.claudeboxHome)) {
    for (const file of files) {
      const state = inspectJson(file)
      if (state === 'corrupt') lines.push(`${file} is not valid JSON: set aside as ${path.basename(file)}.corrupt-<time> and restored from the newest good copy in ${goodDir}`)
      else if (state === 'valid') lines.push(`${file} is valid: a good copy is kept in ${goodDir} (the last 5)`)
      else if (state === 'too-large') lines.push(`${file} is too large to check or copy: left as it is`)
    }
  }
  lines.push(`this project's copies of ${plan.summary.shared.join(', ')} in ${instance}, when the shared tier changed since the last launch (holding ${path.join(facts.claudeboxHome, `tiers-${path.basename(instance)}.lock`)})`)
  lines.push(`the account keys into ${path.join(instance, '.claude.json')}`)
  lines.push(`the session's record in ${path.join(instance, SESSIONS_DIR)}/<pid>-<scope>.json (its time refreshed every minute while the session runs) and its metadata in ${path.join(instance, OWN_DIR)}; after the session the good copies again, and the account keys that changed back into ${sharedPaths(facts.claudeboxHome).claudeJson} (holding its .lock beside it)`)
  return lines
}
