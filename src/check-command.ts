// --check: runs the probes that need processes (bwrap, claude, git versions, a test sandbox).
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { checksPassed, evaluateChecks, renderChecks, type CheckFacts } from './check.js'
import { ClaudeboxError, EXIT } from './errors.js'
import { probe } from './facts.js'
import { sharedPaths } from './instance.js'
import { planLaunch } from './plan.js'
import type { Settings } from './settings.js'

export async function runCheck(settings: Settings): Promise<number> {
  const facts = probe(settings)
  const version = async (file: string, args: string[]): Promise<string | undefined> => {
    const result = await execa(file, args, { reject: false, timeout: 10_000, stdin: 'ignore' })
    return result.exitCode === 0 ? result.stdout.trim().split('\n')[0] : undefined
  }
  const [bwrapVersion, sandboxError, claudeVersion, gitVersion] = await Promise.all([
    facts.bwrap ? version(facts.bwrap, ['--version']) : undefined,
    facts.bwrap ? trySandbox(facts.bwrap) : undefined,
    facts.claude ? version(facts.claude.resolved, ['--version']) : undefined,
    facts.gitAvailable ? version('git', ['--version']) : undefined,
  ])
  let plan: CheckFacts['plan']
  try {
    plan = planLaunch(facts, { claudeArgs: [] }).summary
  } catch (error) {
    plan = { error: error instanceof ClaudeboxError ? error.message : String(error) }
  }
  const credentials = path.join(sharedPaths(facts.claudeboxHome).secureStorage, '.credentials.json')
  const results = evaluateChecks({
    bwrap: facts.bwrap ? { path: facts.bwrap, version: bwrapVersion } : undefined,
    sandboxError,
    claude: facts.claude ? { path: facts.claude.found, version: claudeVersion ?? facts.claude.version } : undefined,
    claudeProblem: facts.claudeProblem === 'not-executable' ? 'found but not executable' : 'not found on PATH (or CLAUDEBOX_CLAUDE)',
    git: gitVersion ? { version: gitVersion } : undefined,
    plan,
    credentials: { path: credentials, exists: fs.existsSync(credentials) },
    tiocstiBlockedByKernel: undefined,
  })
  process.stdout.write(renderChecks(results))
  return checksPassed(results) ? EXIT.ok : EXIT.checkFailed
}

/** Starts the smallest sandbox with the namespaces a launch uses; returns bwrap's error, if any. */
async function trySandbox(bwrap: string): Promise<string | undefined> {
  const args = ['--unshare-all', '--share-net', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true']
  const result = await execa(bwrap, args, { reject: false, timeout: 10_000, stdin: 'ignore' })
  if (result.exitCode === 0) return undefined
  return result.stderr.trim().split('\n')[0] || `exit status ${result.exitCode ?? result.signal}`
}
