// When sessions ran (src/host/session-times.ts): a time in an ended session, with a little slack
// for the kernel's coarser clock, counts as that session's; the file is made by the first session's
// end, a line appended at each; one that cannot be read puts every time in a session.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { recordSession, sessionTimes, sessionTimesFile } from '../../src/host/session-times.js'
import { tempDir } from '../helpers/temp.js'

const place = (): string => sessionTimesFile(path.join(tempDir(), 'nested', 'abc.json'))

describe('when sessions ran', () => {
  test('times within an ended session (50 ms either side) are in one; others, and all with no file, are not; the first end makes the folder', () => {
    const file = place()
    expect(sessionTimes(file).during(1_000)).toBe(false)
    expect(recordSession(file, 1_000, 2_000)).toBeUndefined()
    expect(fs.readFileSync(file, 'utf8')).toBe('1000 2000\n')
    expect(recordSession(file, 5_000, 6_000)).toBeUndefined()
    const times = sessionTimes(file)
    expect([951, 1_500, 2_050, 5_500].map(ms => times.during(ms))).toEqual([true, true, true, true])
    expect([900, 2_100, 3_000, 6_100].map(ms => times.during(ms))).toEqual([false, false, false, false])
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
  })

  test('past 256 KiB the file is rewritten: overlapping sessions (two at once) joined into one window; past 20,000 windows the oldest are joined, the times between them counting as a session\'s too', () => {
    const file = place()
    recordSession(file, 1_000, 3_000)
    const lines = Array.from({ length: 25_000 }, (_, i) => `${10_000 + i * 10} ${10_000 + i * 10 + 1}\n`).join('')
    fs.appendFileSync(file, `2000 4000\n${lines}`)
    recordSession(file, 99_000_000, 99_000_001)
    const kept = fs.readFileSync(file, 'utf8').trim().split('\n')
    expect(kept).toHaveLength(20_000)
    expect(kept[0]).toBe(`1000 ${10_000 + 5_001 * 10 + 1}`) // 25,002 windows: the oldest 5,003 joined
    expect(kept[kept.length - 1]).toBe('99000000 99000001')
    expect([5_000, 20_005].map(ms => sessionTimes(file).during(ms))).toEqual([true, true])
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['sessions'])
  })

  test('a file holding anything else than windows, or that cannot be read, puts every time in a session; one larger than is read is said at the end', () => {
    const file = place()
    recordSession(file, 1_000, 2_000)
    fs.appendFileSync(file, 'damaged\n')
    expect(sessionTimes(file).during(123)).toBe(true)
    fs.writeFileSync(file, `${'1 2\n'.repeat((4 << 20) / 4)}`)
    expect(recordSession(file, 5_000, 6_000)).toMatch(/larger than it reads[^\n]*remove that file/)
    expect(sessionTimes(file).during(123)).toBe(true)
  })
})
