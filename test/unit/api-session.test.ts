// The end-of-session line's numbers: grouped by hand, the same as toLocaleString('en') writes them.
import { describe, expect, test } from 'vitest'
import { grouped } from '../../src/network/api-session.js'

describe('grouped', () => {
  test.each([
    [0, '0'],
    [7, '7'],
    [999, '999'],
    [1000, '1,000'],
    [65536, '65,536'],
    [1234567, '1,234,567'],
    [1000000000, '1,000,000,000'],
  ])('%d as %s', (n, text) => expect(grouped(n)).toBe(text))

  test('as toLocaleString("en") writes integers, over 2,000 of them', () => {
    for (let i = 0; i < 2000; i++) {
      const n = Math.floor(Math.random() * 10 ** Math.floor(Math.random() * 13))
      expect(grouped(n)).toBe(n.toLocaleString('en'))
    }
  })
})
