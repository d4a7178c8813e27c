// When sessions ran (src/host/session-times.ts): a time in an ended session, with a little slack
// for the kernel's coarser clock, counts as that session's; the file is made by the first session's
// end; one that cannot be read puts every time in a session and is never rewritten.
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
    expect(recordSession(file, 5_000, 6_000)).toBeUndefined()
    const times = sessionTimes(file)
    expect([951, 1_500, 2_050, 5_500].map(ms => times.during(ms))).toEqual([true, true, true, true])
    expect([900, 2_100, 3_000, 6_100].map(ms => times.during(ms))).toEqual([false, false, false, false])
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
  })

  test('sessions that overlap (two at once) are kept as one window', () => {
    const file = place()
    recordSession(file, 1_000, 3_000)
    recordSession(file, 2_000, 4_000)
    recordSession(file, 10_000, 11_000)
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ windows: [[1_000, 4_000], [10_000, 11_000]] })
  })

  test('past 50,000 windows the oldest are joined into one: the times between them count as a session\'s too', () => {
    const file = place()
    fs.mkdirSync(path.dirname(file))
    const windows = Array.from({ length: 50_000 }, (_, i) => [i * 10, i * 10 + 1])
    fs.writeFileSync(file, JSON.stringify({ windows }))
    recordSession(file, 10_000_000, 10_000_001)
    const kept = (JSON.parse(fs.readFileSync(file, 'utf8')) as { windows: number[][] }).windows
    expect(kept).toHaveLength(50_000)
    expect(kept[0]).toEqual([0, 11])
    expect(kept[kept.length - 1]).toEqual([10_000_000, 10_000_001])
    expect(sessionTimes(file).during(5)).toBe(true)
  })

  test('a file that cannot be read puts every time in a session, is left as it is, and the end says so', () => {
    const file = place()
    recordSession(file, 1_000, 2_000)
    fs.writeFileSync(file, '{ damaged')
    expect(sessionTimes(file).during(123)).toBe(true)
    expect(recordSession(file, 5_000, 6_000)).toMatch(/cannot be read[^\n]*remove that file/)
    expect(fs.readFileSync(file, 'utf8')).toBe('{ damaged')
  })
})
