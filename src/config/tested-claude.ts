// The Claude Code releases the end-to-end tests run against: `npm test` uses the newest, CI also
// the older one (`npm run compat -- VERSION` tries any other). --check warns about a newer one.

export const TESTED_CLAUDE = { newest: '2.1.331', older: '2.1.330' } as const

/** a > b for dotted release numbers (2.1.331 > 2.1.330); anything unparsable compares as not newer. */
export function isNewerRelease(a: string, b: string): boolean {
  const [pa, pb] = [a, b].map(v => /^(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number))
  if (pa === undefined || pb === undefined) return false
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) > (pb[i] ?? 0)
  return false
}
