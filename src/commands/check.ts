// --check: runs the probes that need processes (bwrap, claude, git versions, test sandboxes).
import fs from 'node:fs'
import { execa } from 'execa'
import { mayTakeOver } from '../state/migration.js'
import { pendingTakeovers } from './takeover.js'
import { checksPassed, evaluateChecks, renderChecks, type CheckResult } from '../sandbox/checks.js'
import { copyable, findHostLogin, type HostLogin } from '../state/login.js'
import { jsonSafe, writeOut } from '../cli/terminal-safe.js'
import type { LaunchSummary } from '../types.js'
import { ClaudeboxError, EXIT } from '../errors.js'
import type { CliOptions } from '../cli/args.js'
import { probeLandlockScope, probeUserns } from '../host/probe.js'
import { GIT, gitProgram } from '../host/system-programs.js'
import { safePath } from '../host/host-env.js'
import { programsInReach, setupLaunch, type LaunchSetup } from './setup.js'
import { planProbeSandbox } from '../sandbox/mounts.js'
import { withRootOnly } from '../host/root-only.js'
import { bwrapMissing, claudeError, planLaunch, writablePlaces } from '../sandbox/plan.js'
import { DEFAULT_SANDBOX } from '../config/sandbox-options.js'
import type { Settings } from '../config/settings.js'
import { diagnoseUserns } from '../sandbox/userns.js'
import { firstGone, sessionRecords } from '../state/scan.js'

const LOOKUP_SCRIPT =
  'for f in /etc/resolv.conf /etc/hosts /etc/nsswitch.conf; do [ -r "$f" ] || echo "$f is missing"; done; getent hosts localhost >/dev/null || echo "localhost does not resolve"'

export async function runCheck(settings: Settings, options: CliOptions): Promise<number> {
  const { setup, refused } = setupForCheck(settings, options)
  if (setup === undefined) return report([refused], options.json)
  const { facts, request } = setup
  const sandbox = request.sandbox ?? DEFAULT_SANDBOX
  const writes = writablePlaces(facts, sandbox)
  // Outside the project (whose own settings could run something) and with only PATH, without the
  // folders the sandbox writes (a `node` a Claude script's `env node` finds): the probe sandbox must
  // not carry the host's variables, and --version needs none of them.
  const run = (file: string, args: string[]) =>
    execa(file, args, { reject: false, timeout: 10_000, stdin: 'ignore', cwd: '/', env: { PATH: safePath(facts.env['PATH'] ?? '/usr/bin:/bin', writes), HOME: facts.home }, extendEnv: false })
  const version = async (file: string, args: string[]): Promise<string | undefined> => {
    const result = await run(file, args)
    return result.exitCode === 0 ? result.stdout.trim().split('\n')[0] : undefined
  }
  // Never run on the host, and said: a program in a folder the sandbox writes may be one a session put there (red team, round 100).
  const inReach = programsInReach([facts.bwrap, facts.claude?.resolved, gitProgram()], writes)
  const runnable = (p: string | undefined): p is string => p !== undefined && !inReach.includes(p)
  // The probe sandbox hides what a launch's does (root-only.ts; without it when that search failed).
  const lookup = runnable(facts.bwrap) ? planProbeSandbox(await withRootOnly(facts, writes).catch(() => facts), LOOKUP_SCRIPT, sandbox.network) : undefined
  const [bwrapVersion, lookupResult, claudeVersion, gitVersion] = await Promise.all([
    runnable(facts.bwrap) ? version(facts.bwrap, ['--version']) : undefined,
    lookup ? run(lookup.file, lookup.argv) : undefined,
    runnable(facts.claude?.resolved) ? version(facts.claude.resolved, ['--version']) : undefined,
    facts.gitAvailable && runnable(gitProgram()) ? version(GIT(), ['--version']) : undefined,
  ])
  const sandboxFailed = lookupResult !== undefined && lookupResult.exitCode !== 0
  const userns = probeUserns(facts.bwrap, facts.env)
  const { plan, projectProblem } = planForCheck(facts, request)
  const results = evaluateChecks({
    bwrap: facts.bwrap ? { path: facts.bwrap, version: bwrapVersion } : undefined,
    sandboxError: sandboxFailed ? diagnoseUserns(userns, lookupResult.stderr.trim().split('\n')[0] ?? '') : undefined,
    claude: facts.claude ? { path: facts.claude.found, version: claudeVersion ?? facts.claude.version } : undefined,
    claudeProblem: claudeError(facts).message,
    bwrapProblem: bwrapMissing(facts.env),
    node: process.version,
    claudeInterpreter: facts.claude?.interpreter?.resolved,
    git: gitVersion ? { version: gitVersion } : undefined,
    inReach,
    plan,
    projectProblem,
    workTree: facts.git?.topLevel ?? facts.cwd ?? '/',
    apiKeyVariable: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'].find(name => facts.env[name]),
    importableLogin: importable(findHostLogin(facts.claudeboxHome, facts.home, facts.env)),
    credentialsExist: plan === undefined ? false : fs.existsSync(plan.credentials.path),
    legacyTiocsti: userns.sysctl['dev/tty/legacy_tiocsti'],
    lookupProblem: sandboxFailed || !lookupResult ? undefined : lookupResult.stdout.trim().replaceAll('\n', '; ') || undefined,
    applied: setup.resolved.applied,
    abstractSockets: abstractSockets(),
    landlockScope: probeLandlockScope(facts.arch),
    takeovers: mayTakeOver(facts) ? pendingTakeovers(facts) : [],
    unfinishedSince: plan === undefined ? undefined : unfinishedSince(plan.instanceDir),
  })
  // The refusal stands in for the line that would say which files applied.
  return report(refused === undefined ? results : [refused, ...results.filter(result => result.name !== 'config')], options.json)
}

/**
 * A broken config.json or a refused project file is a failed check, not a crash; the other checks
 * still run, with the built-in options (what the user needs to see is often there too). Only a
 * launch that fails even so (a bad command line) shows the failure alone.
 */
function setupForCheck(settings: Settings, options: CliOptions): { setup: LaunchSetup; refused?: CheckResult } | { setup: undefined; refused: CheckResult } {
  try {
    return { setup: setupLaunch(settings, options) }
  } catch (error) {
    if (!(error instanceof ClaudeboxError)) throw error
    try {
      return { setup: setupLaunch(settings, options, true), refused: { status: 'fail', name: 'config', detail: `${error.message}; the checks below use the built-in options` } }
    } catch {
      return { setup: undefined, refused: { status: 'fail', name: 'config', detail: error.message } }
    }
  }
}

function report(results: readonly CheckResult[], json: boolean): number {
  const passed = checksPassed(results)
  if (json) writeOut(`${jsonSafe({ passed, checks: results })}\n`)
  else process.stdout.write(renderChecks(results, colours())) // made terminal-safe by renderChecks
  return passed ? EXIT.ok : EXIT.checkFailed
}

/** fail and warn in colour on a terminal, unless NO_COLOR (no-color.org). */
const colours = (): boolean => process.stdout.isTTY === true && !process.env['NO_COLOR'] && process.env['TERM'] !== 'dumb'

/** Claude and bwrap stand in when missing (their own lines fail), so the rest still shows. */
const STAND_IN_CLAUDE = { found: 'claude', resolved: '/usr/bin/claude', installRoot: '/usr/bin/claude' }

/**
 * The launch plan as --check shows it: one failure is reported once, on its own line, and a
 * refused project root (/, /tmp, your home) still shows what would protect a project.
 */
function planForCheck(facts: LaunchSetup['facts'], request: LaunchSetup['request']): { plan: LaunchSummary | undefined; projectProblem: string | undefined } {
  const stood = { ...facts, claude: facts.claude ?? STAND_IN_CLAUDE, bwrap: facts.bwrap ?? '/usr/bin/bwrap' }
  const attempt = (req: LaunchSetup['request']): LaunchSummary | string => {
    try {
      return planLaunch(stood, req).summary
    } catch (error) {
      if (!(error instanceof ClaudeboxError)) throw error
      return error.message
    }
  }
  const first = attempt(request)
  if (typeof first !== 'string') return { plan: first, projectProblem: undefined }
  const widened = attempt({ ...request, sandbox: { ...(request.sandbox ?? DEFAULT_SANDBOX), allowDangerousRoot: true } })
  return { plan: typeof widened === 'string' ? undefined : widened, projectProblem: first }
}

/** Names of the abstract unix sockets listening in this network namespace (/proc/net/unix). */
function abstractSockets(): string[] {
  try {
    const names = fs
      .readFileSync('/proc/net/unix', 'utf8')
      .split('\n')
      .slice(1)
      .map(line => line.trim().split(/\s+/)[7])
      .filter((name): name is string => name !== undefined && name.startsWith('@'))
      // Node and others bind names zero-padded to the whole sun_path, shown as trailing '@'s.
      .map(name => name.replace(/(.)@+$/, '$1'))
    return [...new Set(names)]
  } catch {
    return []
  }
}

/** When the earliest session began whose launcher was killed before its end, while no session of the project runs. */
function unfinishedSince(instance: string): string | undefined {
  const { live, gone } = sessionRecords(instance)
  if (live.length > 0 || gone.length === 0) return undefined
  const started = firstGone(gone)?.record.started
  return typeof started === 'string' && started !== '' ? started : 'at a time not recorded'
}

/** Where the login the first launch offers to copy is (an API key's account file); none for an OAuth login (login.ts). */
const importable = (login: HostLogin | undefined): string | undefined => (login !== undefined && copyable(login) ? login.accountFile : undefined)
