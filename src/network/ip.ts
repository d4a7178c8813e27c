// IP address literals, recognised exactly as Node's net.isIP does (its IPv4 expression from Node's
// lib/internal/net.js; IPv6 parsed), without node:net: the plan of every launch asks, before
// bwrap starts, where the launch does not otherwise load net (test/unit/ip.test.ts compares).

const V4_SEGMENT = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])'
const V4 = `(?:${V4_SEGMENT}\\.){3}${V4_SEGMENT}`
const IPV4 = new RegExp(`^${V4}$`)
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/
const ZONE = /^[0-9a-zA-Z\-.:]+$/

export const isIPv4 = (s: string): boolean => IPV4.test(s)
/**
 * Node's IPv6 expression, as a parser: V8 takes ~15 ms to compile that expression on its first use,
 * which every launch would pay. Eight groups of 1-4 hex digits, or fewer around one `::` that
 * stands for at least one; an IPv4 address may be the last two; then an optional %zone.
 */
export function isIPv6(s: string): boolean {
  const percent = s.indexOf('%')
  if (percent !== -1 && !ZONE.test(s.slice(percent + 1))) return false
  const address = percent === -1 ? s : s.slice(0, percent)
  const halves = address.split('::')
  if (halves.length > 2) return false
  const groups = halves.map(half => (half === '' ? [] : half.split(':')))
  const all = groups.flat()
  // An IPv4 address can only end the address (after any ::).
  const tail = groups[groups.length - 1] ?? []
  const last = tail[tail.length - 1]
  const v4 = last !== undefined && last.includes('.')
  if (v4 && !isIPv4(last)) return false
  const hex = v4 ? all.slice(0, -1) : all
  if (!hex.every(group => HEX_GROUP.test(group))) return false
  const count = hex.length + (v4 ? 2 : 0)
  return halves.length === 2 ? count <= 7 : count === 8
}

/** 4, 6, or 0 for anything that is not an address literal (as net.isIP). */
export const isIP = (s: string): 0 | 4 | 6 => (isIPv4(s) ? 4 : isIPv6(s) ? 6 : 0)
