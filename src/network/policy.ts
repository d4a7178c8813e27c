// The allowlist of --network=allow, as pure functions: which destination (host, port) a request
// may reach, and which of the addresses a name resolves to the proxy may connect to.
// proxy.ts asks these for every connection; tests call them with made-up answers.
import { createRequire } from 'node:module'
import type * as Net from 'node:net'
import { isIP, isIPv6 } from './ip.js'

export const NETWORK_MODES = ['open', 'none', 'allow'] as const
export type NetworkMode = (typeof NETWORK_MODES)[number]

/**
 * What Claude Code itself needs: the API and the sign-in endpoints that refresh a token
 * (strings of the 2.1.330 binary: api.anthropic.com, platform.claude.com/v1/oauth/token,
 * claude.ai and console.anthropic.com for login). Telemetry and error reporting hosts are left
 * out: Claude works without them (measured with the mock API, see the README).
 */
export const CLAUDE_HOSTS: readonly string[] = ['api.anthropic.com', 'platform.claude.com', 'claude.ai', 'console.anthropic.com']

/** Named extras a profile (or --allow-preset) can add: the hosts each tool downloads from. */
export const PRESETS: Readonly<Record<string, readonly string[]>> = {
  npm: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  pypi: ['pypi.org', 'files.pythonhosted.org'],
  crates: ['crates.io', 'index.crates.io', 'static.crates.io'],
  // proxy.golang.org redirects module zips to storage.googleapis.com (a host anyone can serve from).
  go: ['proxy.golang.org', 'sum.golang.org', 'storage.googleapis.com'],
  github: ['github.com', 'api.github.com', 'codeload.github.com', 'raw.githubusercontent.com', 'objects.githubusercontent.com'],
}

/** Ports an allow pattern without one admits: HTTPS and HTTP, what a host name in a list usually means (a deny pattern without one refuses every port). */
export const WEB_PORTS: readonly number[] = [443, 80]

export interface HostRule {
  /** As written, for messages and the audit. */
  pattern: string
  /** Normalised host; for a wildcard the domain after `*.` ('' for a lone `*`). */
  host: string
  wildcard: boolean
  /** 'web' (no port given: 80 and 443), 'any' (`:*`) or one port. */
  ports: 'web' | 'any' | number
  /** Where it came from: Claude's defaults and presets never admit private addresses. */
  source: 'default' | 'preset' | 'user'
  /** The host is an IP address literal. */
  literal: boolean
}

export interface EgressPolicy {
  allow: readonly HostRule[]
  deny: readonly HostRule[]
}

export interface PolicyInput {
  allowHosts: readonly string[]
  denyHosts: readonly string[]
  presets: readonly string[]
}

/** The policy of a launch: Claude's hosts, the presets, the user's hosts; the deny list wins. */
export function buildPolicy(input: PolicyInput): EgressPolicy {
  const allow: HostRule[] = CLAUDE_HOSTS.map(h => parseHostPattern(h, 'default'))
  for (const name of input.presets) {
    const hosts = PRESETS[name]
    if (hosts === undefined) throw new Error(presetProblem(name))
    allow.push(...hosts.map(h => parseHostPattern(h, 'preset')))
  }
  allow.push(...input.allowHosts.map(h => parseHostPattern(h, 'user')))
  return { allow, deny: input.denyHosts.map(h => parseHostPattern(h, 'user')) }
}

export const presetProblem = (name: string): string => `unknown preset "${name}" (presets: ${Object.keys(PRESETS).join(', ')})`

/**
 * Parses `HOST`, `HOST:PORT`, `HOST:*`, `*.DOMAIN[:PORT]`, `*`, an IPv4 address or a bracketed
 * IPv6 address (`[::1]:8080`; a bare IPv6 address takes no port). Throws with the reason.
 */
export function parseHostPattern(text: string, source: HostRule['source'] = 'user'): HostRule {
  const trimmed = text.trim()
  let hostPart = trimmed
  let portPart: string | undefined
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(trimmed)
  if (bracket) {
    hostPart = bracket[1] as string
    portPart = bracket[2]
    if (!isIPv6(hostPart)) throw new Error(`"${text}": only an IPv6 address goes in brackets (like [::1]:8080)`)
  } else if (!isIPv6(trimmed)) {
    const colon = trimmed.lastIndexOf(':')
    if (colon !== -1) {
      hostPart = trimmed.slice(0, colon)
      portPart = trimmed.slice(colon + 1)
    }
  }
  const ports = parsePorts(portPart, text)
  const wildcard = hostPart === '*' || hostPart.startsWith('*.')
  const domain = hostPart === '*' ? '' : wildcard ? hostPart.slice(2) : hostPart
  if (domain.includes('*')) throw new Error(`"${text}": a wildcard may only be a leading "*." (like *.example.com)`)
  // An empty host (``, `:80`) or `*.` without a domain: never a lone `*` by accident.
  if (domain === '' && hostPart !== '*') throw new Error(`"${text}" names no host (write a domain after "*.", or a lone * for every host)`)
  const host = domain === '' ? '' : normalizeHost(domain)
  if (host === undefined) throw new Error(`"${text}" is not a host name, an IP address or a *.domain pattern`)
  return { pattern: trimmed, host, wildcard, ports, source, literal: !wildcard && isIP(host) !== 0 }
}

function parsePorts(port: string | undefined, text: string): HostRule['ports'] {
  if (port === undefined) return 'web'
  if (port === '*') return 'any'
  const n = /^\d{1,5}$/.test(port) ? Number(port) : NaN
  if (!(n >= 1 && n <= 65535)) throw new Error(`"${text}": the port must be 1-65535 or *`)
  return n
}

/**
 * A host as the URL parser sees it: lower case, IDN to punycode, no trailing dot, IPv4 in
 * dotted form (so `127.1` and `2130706433` are 127.0.0.1) and IPv6 compressed, without brackets.
 * A name with an empty label (`a..b`, `evil.com..`, `.x`) is not a host: a second trailing dot
 * must not slip a name past the deny list.
 */
export function normalizeHost(host: string): string | undefined {
  const bare = host.replace(/\.$/, '')
  if (bare === '' || /[\s/?#@\\]/.test(bare)) return undefined
  let hostname: string
  try {
    hostname = unbracket(new URL(`http://${isIPv6(bare) ? `[${bare}]` : bare}/`).hostname)
  } catch {
    return undefined
  }
  if (isIPv6(hostname)) return hostname
  return hostname === '' || hostname.startsWith('.') || hostname.endsWith('.') || hostname.includes('..') ? undefined : hostname
}

/** `[::1]` -> `::1`: URLs and CONNECT write IPv6 hosts in brackets. */
export const unbracket = (host: string): string => host.replace(/^\[(.*)\]$/, '$1')

function portMatches(rule: HostRule, port: number): boolean {
  return rule.ports === 'any' ? true : rule.ports === 'web' ? WEB_PORTS.includes(port) : rule.ports === port
}

function hostMatches(rule: HostRule, host: string): boolean {
  if (!rule.wildcard) return rule.host === host
  return rule.host === '' || host.endsWith(`.${rule.host}`)
}

const matching = (rules: readonly HostRule[], host: string, port: number): HostRule[] => rules.filter(r => hostMatches(r, host) && portMatches(r, port))

/** A deny pattern without a port refuses the host on every port: a list that admits `HOST:*` must not reach it on 22. */
const denying = (policy: EgressPolicy, host: string, port: number): HostRule | undefined =>
  policy.deny.find(r => hostMatches(r, host) && (r.ports === 'web' || portMatches(r, port)))

export type Decision =
  | { allowed: true; host: string; rule: HostRule; privateOk: boolean }
  | { allowed: false; host: string; reason: string }

/** Whether a request for host:port may go on (before any name is resolved). */
export function decideDestination(policy: EgressPolicy, requestedHost: string, port: number): Decision {
  const host = normalizeHost(requestedHost)
  if (host === undefined) return { allowed: false, host: requestedHost, reason: 'not a valid host name' }
  const denied = denying(policy, host, port)
  if (denied) return { allowed: false, host, reason: `in the deny list (${denied.pattern})` }
  const rules = matching(policy.allow, host, port)
  const rule = rules[0]
  if (rule === undefined) return { allowed: false, host, reason: 'not in the allowlist' }
  // Only a host the user named exactly (an address, `localhost`, a LAN name) may lead to a
  // loopback, private or link-local address: never one a wildcard, a preset or Claude's list admitted.
  const privateOk = rules.some(r => r.source === 'user' && !r.wildcard)
  return { allowed: true, host, rule, privateOk }
}

/**
 * Whether the proxy may connect to `address` for an allowed decision: public addresses always;
 * special ones (loopback, private, link-local, ..., and any address of this host's interfaces)
 * only when the user named the host exactly or listed the address itself, never through a
 * wildcard, a preset or Claude's list. An address in the deny list never.
 */
export function addressAllowed(
  policy: EgressPolicy,
  decision: Extract<Decision, { allowed: true }>,
  address: string,
  port: number,
  hostAddresses: ReadonlySet<string> = new Set(),
): boolean {
  const normal = normalizeHost(address) ?? address
  if (denying(policy, normal, port) !== undefined) return false
  // The host's own interface addresses reach its services as loopback does, public or not
  // (`*:*` once reached a service on the host's own address): treated like loopback.
  if (!isSpecialAddress(normal) && !hostAddresses.has(normal)) return true
  if (decision.privateOk) return true
  return matching(policy.allow, normal, port).some(r => r.literal && r.source === 'user')
}

/** The host's interface addresses, normalised as the policy compares them (zone ids dropped). */
export function normalizedAddresses(addresses: readonly string[]): Set<string> {
  return new Set(addresses.map(a => a.replace(/%.*$/, '')).map(a => normalizeHost(a) ?? a))
}

// The ranges that lead to this machine, its LAN or its VPN (CGNAT: Tailscale), plus multicast and
// reserved. Documentation and benchmarking ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
// 198.18/15) are not here: egress gateways and fake-IP DNS resolvers (this CI machine's npm
// registry answers 203.0.113.80) hand them out for public names.
const SPECIAL_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['224.0.0.0', 3],
] as const
const SPECIAL_V6 = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const

/** node:net (for its BlockList) loads when an address is first checked: the proxy's work, after bwrap starts. */
let special: Net.BlockList | undefined
function specialAddresses(): Net.BlockList {
  if (special !== undefined) return special
  const net = createRequire(import.meta.url)('node:net') as typeof Net
  special = new net.BlockList()
  for (const [prefix, bits] of SPECIAL_V4) special.addSubnet(prefix, bits, 'ipv4')
  for (const [prefix, bits] of SPECIAL_V6) special.addSubnet(prefix, bits, 'ipv6')
  return special
}

/** Loopback, private (RFC 1918, ULA, CGNAT), link-local, multicast, reserved or unspecified. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return specialAddresses().check(address, 'ipv4')
  if (family !== 6) return true // not an address at all: never treat it as public
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) ?? /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (mapped) return isSpecialAddress(mapped.length === 2 ? (mapped[1] as string) : hexPairToV4(mapped[1] as string, mapped[2] as string))
  return specialAddresses().check(address, 'ipv6')
}

function hexPairToV4(high: string, low: string): string {
  const h = parseInt(high, 16)
  const l = parseInt(low, 16)
  return [h >> 8, h & 255, l >> 8, l & 255].join('.')
}

/** The rules as the audit shows them. */
export function describePolicy(policy: EgressPolicy): { allow: string[]; deny: string[] } {
  const show = (r: HostRule): string => r.pattern
  return { allow: policy.allow.map(show), deny: policy.deny.map(show) }
}

/** Whether any allow rule names a loopback destination (then loopback requests go through the proxy). */
export function allowsLoopback(policy: EgressPolicy): boolean {
  return policy.allow.some(r => r.source === 'user' && !r.wildcard && (r.host === 'localhost' || (r.literal && isLoopback(r.host))))
}

const isLoopback = (address: string): boolean => address === '::1' || address.startsWith('127.')

/** An IPv4 or IPv6 address literal (not a name). */
export const isIpLiteral = (host: string): boolean => isIP(host) !== 0
