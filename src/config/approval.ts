// Approving a repository's .claudebox.json that widens the sandbox: shown and asked on a terminal,
// then recorded in config.json with the sha256 of the exact bytes, so a later change by the agent
// is shown and asked again. --yes does not answer this question: an alias with --yes must not let
// a cloned repository open the sandbox.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { readConfigText } from '../host/probe.js'
import { warn } from '../cli/log.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { wideningKind, type ApprovalNeeded } from './profiles.js'
import { ask, canAsk } from '../cli/prompt.js'
import { refuseLinkedBinds } from '../host/repository-binds.js'

/** Asks the user; on yes, records the approval and returns true. */
export async function approveProject(needed: ApprovalNeeded, claudeboxHome: string): Promise<boolean> {
  if (!canAsk()) return false
  const { file, root, sha256, widenings } = needed.approval
  refuseLinkedBinds(process.cwd(), needed.approval.binds)
  // One bounded line each (profiles.ts shownValue; the values are printable ASCII, file.ts; binds
  // through no link, normalized, their end kept), and right above the question, in claudebox's own
  // words, what kinds of widening they are.
  warn(`${inlineSafe(file)} asks to widen the sandbox of ${inlineSafe(root)}:`)
  for (const item of widenings) warn(`  - ${inlineSafe(item)}`)
  warn(`  (${widenings.length} ${widenings.length === 1 ? 'widening' : 'widenings'}: ${widenings.map(wideningKind).join('; ')}; sha256 of the file: ${sha256})`)
  const answer = await ask('Allow this file, with exactly these contents? [y/N]')
  if (!/^y(es)?$/i.test(answer)) return false
  recordApproval(path.join(claudeboxHome, 'config.json'), root, sha256)
  return true
}

/** Replaces this root's approval in config.json, keeping every other key as it was. */
function recordApproval(configFile: string, root: string, sha256: string): void {
  const text = readConfigText(configFile)
  const data = (text === undefined ? {} : JSON.parse(text)) as Record<string, unknown>
  const previous = Array.isArray(data['approvedProjects']) ? (data['approvedProjects'] as unknown[]) : []
  const others = previous.filter(entry => (typeof entry === 'string' ? entry : (entry as { root?: unknown } | null)?.root) !== root)
  data['approvedProjects'] = [...others, { root, sha256 }]
  fs.mkdirSync(path.dirname(configFile), { recursive: true, mode: 0o700 })
  writeFileAtomic(configFile, `${JSON.stringify(data, null, 2)}\n`)
}
