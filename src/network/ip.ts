// IP address literals, recognised exactly as Node's net.isIP does (the same expressions, from
// Node's lib/internal/net.js), without loading node:net: the plan of every launch asks, and
// loading net costs ~15 ms of start-up that the launch path does not otherwise pay before bwrap.

const V4_SEGMENT = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])'
const V4 = `(?:${V4_SEGMENT}\\.){3}${V4_SEGMENT}`
const V6_SEGMENT = '(?:[0-9a-fA-F]{1,4})'
const IPV4 = new RegExp(`^${V4}$`)
const IPV6 = new RegExp(
  '^(?:' +
    `(?:${V6_SEGMENT}:){7}(?:${V6_SEGMENT}|:)|` +
    `(?:${V6_SEGMENT}:){6}(?:${V4}|:${V6_SEGMENT}|:)|` +
    `(?:${V6_SEGMENT}:){5}(?::${V4}|(?::${V6_SEGMENT}){1,2}|:)|` +
    `(?:${V6_SEGMENT}:){4}(?:(?::${V6_SEGMENT}){0,1}:${V4}|(?::${V6_SEGMENT}){1,3}|:)|` +
    `(?:${V6_SEGMENT}:){3}(?:(?::${V6_SEGMENT}){0,2}:${V4}|(?::${V6_SEGMENT}){1,4}|:)|` +
    `(?:${V6_SEGMENT}:){2}(?:(?::${V6_SEGMENT}){0,3}:${V4}|(?::${V6_SEGMENT}){1,5}|:)|` +
    `(?:${V6_SEGMENT}:){1}(?:(?::${V6_SEGMENT}){0,4}:${V4}|(?::${V6_SEGMENT}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEGMENT}){0,5}:${V4}|(?::${V6_SEGMENT}){1,7}|:))` +
    ')(?:%[0-9a-zA-Z-.:]{1,})?$',
)

export const isIPv4 = (s: string): boolean => IPV4.test(s)
export const isIPv6 = (s: string): boolean => IPV6.test(s)

/** 4, 6, or 0 for anything that is not an address literal (as net.isIP). */
export const isIP = (s: string): 0 | 4 | 6 => (isIPv4(s) ? 4 : isIPv6(s) ? 6 : 0)
