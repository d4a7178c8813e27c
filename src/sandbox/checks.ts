// --check: pure evaluation of what the probe found, one result per line.
import { isNewerRelease, TESTED_CLAUDE } from '../config/tested-claude.js'
import { terminalSafe } from '../cli/terminal-safe.js'
import type { Diagnosis } from './userns.js'
import type { LaunchSummary } from '../types.js'

export type CheckStatus = 'ok' | 'warn' | 'fail'

export interface CheckResult {
  status: CheckStatus
  name: string
  detail: string
}

/** What --check measured on top of the launch facts, by running programs. */
export interface CheckFacts {
  bwrap: { path: string; version: string | undefined } | undefined
  /** undefined when a test sandbox started; else what went wrong and the fix. */
  sandboxError: Diagnosis | undefined
  claude: { path: string; version: string | undefined } | undefined
  claudeProblem: string | undefined
  /** The Node running claudebox (process.version). */
  node: string
  /** The interpreter of the claude program when it is a script (older Claude Code), else undefined: a native program. */
  claudeInterpreter: string | undefined
  /** Why bwrap is missing: not on PATH, or CLAUDEBOX_BWRAP names nothing. */
  bwrapProblem: string
  git: { version: string } | undefined
  /** The host's programs (bwrap, Claude, git) found in a folder the sandbox writes: not run by --check. */
  inReach: readonly string[]
  /** The launch plan's summary (for a refused root: as if allowed, to show the protections). */
  plan: LaunchSummary | undefined
  /** Why this project cannot launch as it is (claude and bwrap problems are their own lines). */
  projectProblem: string | undefined
  /** The project's working tree, as the user knows it. */
  workTree: string
  /** The variable that carries an API key or token into Claude, when the host sets one. */
  apiKeyVariable: string | undefined
  /** The normal Claude Code's login that the first launch offers to use, if any. */
  importableLogin: string | undefined
  credentialsExist: boolean
  /** dev.tty.legacy_tiocsti: '0' means the kernel itself refuses TIOCSTI. */
  legacyTiocsti: string | undefined
  /** What a name lookup inside the sandbox found missing, when the network is on. */
  lookupProblem: string | undefined
  /** Config file and profile applied. */
  applied: readonly string[]
  /** Abstract unix sockets listening in the host's network namespace (shared by default). */
  abstractSockets: readonly string[]
  /** Whether the kernel supports the Landlock scope that refuses them inside (landlock.ts). */
  landlockScope: 'supported' | 'unsupported' | 'no-helper'
  /** What the next launch offers to take over (bash-era files and instance, a moved project). */
  takeovers: readonly string[]
  /** When the earliest session of this project began whose end's checks never ran (its launcher killed); the next launch makes them. */
  unfinishedSince: string | undefined
}

type Add = (status: CheckStatus, name: string, detail: string) => void

export function evaluateChecks(f: CheckFacts): CheckResult[] {
  const results: CheckResult[] = []
  const add: Add = (status, name, detail) => void results.push({ status, name, detail })
  toolChecks(f, add)
  add('ok', 'config', f.applied.join('; '))
  for (const takeover of f.takeovers) add('warn', 'take over', `${takeover} (the next launch asks; --yes accepts)`)
  const plan = f.plan
  const project = plan === undefined ? '' : `${f.workTree}${plan.projectRoot !== f.workTree ? ` (git dir ${plan.projectRoot})` : ''} -> instance ${plan.instanceId} (${plan.instanceDir})`
  if (f.projectProblem !== undefined) add('fail', 'project', f.projectProblem)
  else add('ok', 'project', project)
  if (f.unfinishedSince !== undefined) add('warn', 'unfinished session', `one that began ${f.unfinishedSince} ended without claudebox's checks at its end (its launcher was killed, or the machine stopped): start claudebox here once, which makes them, before you run git in this project`)
  if (plan === undefined) return results
  if (f.projectProblem !== undefined) add('ok', 'protections', 'below: what a launch in a project directory gets')
  add('ok', 'writable inside', plan.writable.join(', '))
  add('ok', 'read-only inside', [...plan.system, ...plan.readOnly].join(', '))
  add('ok', 'home inside', 'empty except the paths above; ~/.claude is the instance')
  add('ok', 'shared', `by every project: the sign-in (${plan.credentials.held === 'inside' ? 'inside the sandbox' : 'kept on the host'}) and the account keys of .claude.json; copied per project: ${plan.shared.join(', ')}`)
  signInCheck(f, plan, add)
  networkChecks(f, plan, add)
  protectionChecks(f, plan, add)
  return results
}

/** bwrap and user namespaces, Claude Code and its release, Node, git. */
function toolChecks(f: CheckFacts, add: Add): void {
  if (f.bwrap) add('ok', 'bwrap', `${f.bwrap.path} (${f.bwrap.version ?? 'unknown version'})`)
  else add('fail', 'bwrap', f.bwrapProblem)
  if (!f.bwrap) add('fail', 'user namespaces', 'not tested: no bwrap')
  else if (f.sandboxError === undefined) add('ok', 'user namespaces', 'a test sandbox started')
  else add('fail', 'user namespaces', `a test sandbox failed: ${f.sandboxError.cause}; fix: ${f.sandboxError.fix}`)
  if (f.claude) {
    add('ok', 'claude', `${f.claude.path} (${f.claude.version ?? 'unknown version'})`)
    const release = /^\d+\.\d+\.\d+/.exec(f.claude.version ?? '')?.[0]
    if (release !== undefined && isNewerRelease(release, TESTED_CLAUDE.newest)) {
      add('warn', 'claude release', `${release} is newer than the newest release claudebox was tested with (${TESTED_CLAUDE.newest}); if something breaks, run npm run compat -- ${release} in a clone of claudebox, or install ${TESTED_CLAUDE.newest}`)
    }
  } else add('fail', 'claude', f.claudeProblem ?? 'not found')
  add(...nodeCheck(f.node, f.claudeInterpreter))
  if (f.git) add('ok', 'git', f.git.version)
  else if (f.inReach.length === 0) add('warn', 'git', 'not found: projects map to the current directory, not the repository')
  if (f.inReach.length > 0) add('warn', 'programs in reach', `not run, being in a folder the sandbox can write (a session could have put them there): ${f.inReach.join(', ')}; put the system's folders (/usr/bin) before theirs in PATH`)
}

/** Where the sign-in is: on the host (the default), none yet, or inside with the opt-out. */
function signInCheck(f: CheckFacts, plan: LaunchSummary, add: Add): void {
  const credentials = `${plan.credentials.mechanism === 'store-dir' ? 'shared store directory (CLAUDE_SECURESTORAGE_CONFIG_DIR)' : 'shared file bound into the instance (older Claude Code)'} at ${plan.credentials.path}`
  const held = plan.credentials.held
  if (held === 'host') add('ok', 'sign-in', `kept on the host (${plan.credentials.kind ?? ''}); the sandbox gets a per-session placeholder and claudebox adds the credential to Claude's API calls`)
  else if (held === 'none-yet' && f.importableLogin !== undefined) add('ok', 'sign-in', `not yet: the first launch offers your Claude Code login from ${f.importableLogin} (claudebox --yes takes it); it stays on the host`)
  else if (held === 'none-yet') add('warn', 'sign-in', 'no login yet: run claudebox --login once (or set ANTHROPIC_API_KEY); it stays on the host for every project')
  else if (f.apiKeyVariable !== undefined) add('warn', 'sign-in', `inside the sandbox ("secretless": false): ${f.apiKeyVariable} from your environment; any process inside can read it`)
  else if (f.credentialsExist) add('warn', 'sign-in', `inside the sandbox ("secretless": false): ${credentials}; any process inside can read and replace it`)
  else add('warn', 'sign-in', `no credentials yet: ${credentials}; sign in inside claudebox once and every project uses it`)
}

/** The network mode; with the open network, what of the host's it exposes. */
function networkChecks(f: CheckFacts, plan: LaunchSummary, add: Add): void {
  if (plan.network === 'allow') {
    add('ok', 'network', 'allow: no network inside; a proxy run by claudebox admits only the hosts below, names resolved on the host, private addresses refused unless listed')
    add('ok', 'network allow', plan.egress?.allow.join(', ') ?? '')
    if (plan.egress?.deny.length) add('ok', 'network deny', plan.egress.deny.join(', '))
    return
  }
  if (plan.network === 'none') return add('ok', 'network', 'none: loopback only')
  add('warn', 'network', "open: shared with the host, so the agent can reach any host and the services on the host's loopback (--network=allow keeps it to a list, --network=none cuts it)")
  const sensitive = f.abstractSockets.filter(s => /X11|dbus|bus|wayland|ssh|agent|gpg/i.test(s))
  const names = `${sensitive.slice(0, 5).join(', ')}${sensitive.length > 5 ? ', ...' : ''}`
  if (f.landlockScope === 'supported') add('ok', 'abstract sockets', `the host's are refused inside by a Landlock scope${sensitive.length > 0 ? ` (${names})` : ''}`)
  else if (sensitive.length > 0) {
    const why = f.landlockScope === 'unsupported' ? 'this kernel lacks the Landlock scope (Linux 6.12+)' : 'no Landlock helper for this architecture'
    add('warn', 'abstract sockets', `reachable inside while the network is open: ${names}; ${why} (--network=allow or none removes them)`)
  }
  if (f.lookupProblem) add('warn', 'name lookup', `inside the sandbox: ${f.lookupProblem}`)
  else add('ok', 'name lookup', 'resolv.conf, hosts and nsswitch.conf are readable inside and localhost resolves')
}

/** Claude's own sandbox, the protections and limits in force, terminal injection. */
function protectionChecks(f: CheckFacts, plan: LaunchSummary, add: Add): void {
  if (plan.claudeCode) add('ok', "Claude Code's sandbox", CLAUDE_SANDBOX_COMPARED)
  for (const protection of plan.protections) add(protection.startsWith('claude.ai connectors: ON') ? 'warn' : 'ok', 'protection', protection)
  for (const limit of plan.limits.inForce) add('ok', 'limit', limit)
  for (const limit of plan.limits.notInForce) add(limit.startsWith('processes') ? 'warn' : 'ok', 'limit', limit)
  if (!plan.protections.some(p => p.startsWith('seccomp'))) {
    add(f.legacyTiocsti === '0' ? 'ok' : 'warn', 'terminal injection', f.legacyTiocsti === '0' ? 'the kernel refuses TIOCSTI (dev.tty.legacy_tiocsti = 0)' : 'not blocked: no seccomp filter for this architecture')
  } else if (f.legacyTiocsti === '0') {
    add('ok', 'terminal injection', 'also refused by the kernel (dev.tty.legacy_tiocsti = 0)')
  }
}

/** claudebox needs Node 20; Claude Code's package declares 22, which matters only if Claude runs on Node. */
function nodeCheck(node: string, interpreter: string | undefined): [CheckStatus, string, string] {
  const major = Number(/^v?(\d+)/.exec(node)?.[1] ?? 0)
  const own = `claudebox runs on Node ${node} (it needs 20 or newer)`
  if (interpreter === undefined) return ['ok', 'node', `${own}; Claude Code here is a native program and does not run on Node (its npm package declares node >= 22, which only npm checks, with a warning)`]
  if (major < 22 && interpreter.endsWith('/node')) return ['warn', 'node', `${own}; Claude Code runs on ${interpreter}, and its releases declare node >= 22: if it fails to start, install Node 22 or Claude Code's native build`]
  return ['ok', 'node', `${own}; Claude Code runs on ${interpreter}`]
}

const CLAUDE_SANDBOX_COMPARED =
  "its own per-command sandbox (sandbox.enabled) is off inside claudebox: it needs nested user namespaces, which claudebox denies. claudebox's covers more: Claude itself, its file edits, hooks and MCP servers, not only Bash; your home is hidden, not only read-only (README: Claude Code's own sandbox)"

const COLOUR: Record<CheckStatus, string> = { ok: '', warn: '\x1b[33m', fail: '\x1b[31m' }

/** One line per result; every value made safe here, so the caller writes the text as it is. */
export function renderChecks(results: readonly CheckResult[], colour = false): string {
  return results.map(r => `${colour && COLOUR[r.status] ? `${COLOUR[r.status]}${r.status.padEnd(4)}\x1b[0m` : r.status.padEnd(4)} ${terminalSafe(`${r.name}: ${r.detail}`)}\n`).join('')
}

export const checksPassed = (results: readonly CheckResult[]): boolean => results.every(r => r.status !== 'fail')
