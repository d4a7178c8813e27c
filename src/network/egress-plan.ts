// The network side of a launch's plan (pure): where the launcher's sockets and the bridge's ports
// are inside the sandbox, the allowlist of --network=allow and the variables that send programs
// through the proxy. sandbox/plan.ts puts them into the bwrap command.
import { addressAllowed, allowsLoopback, isIpLiteral, buildPolicy, decideDestination, unbracket, type EgressPolicy } from './policy.js'
import { upstreamFromEnv } from './upstream-proxy.js'
import type { SandboxOptions } from '../config/sandbox-options.js'
import { usageError } from '../errors.js'
import type { LaunchPlan } from '../types.js'

/**
 * The directory of the launcher's sockets, bound read-only: the proxy and the gateway start
 * listening while bwrap builds the sandbox, before the go (GO_FD).
 */
export const SOCKETS_DIR = '/run/claudebox/net'
export const PROXY_SOCKET = `${SOCKETS_DIR}/proxy.sock`
/** The port the bridge gives the proxy inside. */
export const BRIDGE_PORT = 3128
const PROXY_URL = `http://127.0.0.1:${BRIDGE_PORT}`

/** The API gateway's socket inside, and the port the bridge gives it (credentials stay on the host). */
export const API_SOCKET = `${SOCKETS_DIR}/api.sock`
export const API_PORT = 3129

/** The session's proxy: its socket, its rules, and the host's own (company) proxy to go through. */
export function egressPlan(socket: string, key: string, policy: EgressPolicy, env: Readonly<Record<string, string | undefined>>): NonNullable<LaunchPlan['egress']> {
  const upstream = upstreamFromEnv(env)
  return upstream === undefined ? { socket, key, policy } : { socket, key, policy, upstream }
}

/** The allowlist of a launch; a bad preset or host (from an unchecked source) is a usage error. */
export function egressPolicy(options: SandboxOptions, env: Readonly<Record<string, string | undefined>>): EgressPolicy {
  try {
    const api = namedApiEndpoint(env)
    return buildPolicy({ allowHosts: [...options.allowHosts, ...(api === undefined ? [] : [api])], denyHosts: options.denyHosts, presets: options.allowPresets })
  } catch (error) {
    throw usageError(`network allowlist: ${(error as Error).message}`)
  }
}

/**
 * The API endpoint the user named on the host (ANTHROPIC_BASE_URL: a company gateway, a local test
 * server) is admitted exactly, host and port, even on the host's loopback: the one loopback
 * exception, because the user named it. The deny list still wins.
 */
function namedApiEndpoint(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const value = env['ANTHROPIC_BASE_URL']
  if (!value) return undefined
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return `${url.hostname}:${url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : url.port}`
  } catch {
    return undefined
  }
}

/**
 * Claude cannot work when its API is not admitted, and it does not give up quickly: a refused
 * tunnel is retried for 3 minutes (measured: 52 attempts), a loopback API that bypasses the proxy
 * (NO_PROXY) too. Say so before starting, with the fix. Bedrock, Vertex and Foundry choose their
 * own hosts: not checked.
 */
export function checkApiReachable(policy: EgressPolicy, env: ReadonlyMap<string, string>): void {
  if (['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'CLAUDE_CODE_USE_FOUNDRY'].some(name => /^(1|true|yes)$/i.test(env.get(name) ?? ''))) return
  const baseUrl = env.get('ANTHROPIC_BASE_URL') || 'https://api.anthropic.com'
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return // Claude reports a malformed ANTHROPIC_BASE_URL itself
  }
  const host = unbracket(url.hostname)
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port)
  const decision = decideDestination(policy, host, port)
  const literal = decision.host === 'localhost' ? '127.0.0.1' : isIpLiteral(decision.host) ? decision.host : undefined
  const reason = !decision.allowed
    ? decision.reason
    : literal !== undefined && !addressAllowed(policy, decision, literal, port)
      ? 'a loopback or private address that is not listed'
      : undefined
  if (reason !== undefined) {
    const what = env.get('ANTHROPIC_BASE_URL') ? `ANTHROPIC_BASE_URL (${baseUrl})` : `Claude's API (${baseUrl})`
    const fix = reason.startsWith('in the deny list') ? 'remove it from the deny list' : `add --allow-host ${url.port ? url.host : url.hostname} (or allowHosts in config.json)`
    throw usageError(`--network=allow does not admit ${what}: ${reason}, so Claude could not work; ${fix}`)
  }
}

/**
 * The proxy variables, in both spellings tools read. Loopback stays direct (the sandbox's own
 * servers) unless the list names a loopback destination: then it means the host's, via the proxy.
 */
export function proxyEnv(policy: EgressPolicy): [string, string][] {
  // The API gateway's port inside is always direct.
  const noProxy = allowsLoopback(policy) ? `127.0.0.1:${API_PORT}` : 'localhost,127.0.0.1,::1'
  const pairs: [string, string][] = []
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) pairs.push([name, PROXY_URL], [name.toLowerCase(), PROXY_URL])
  pairs.push(['NO_PROXY', noProxy], ['no_proxy', noProxy])
  // Node 24+ applies the variables to fetch() and http only when asked to.
  pairs.push(['NODE_USE_ENV_PROXY', '1'])
  return pairs
}
