// sha256.ts against node:crypto: every length around the block and padding edges, large inputs,
// strings with multi-byte UTF-8, and views into a larger buffer.
import crypto from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { sha256Hex } from '../../src/sha256.js'

const reference = (data: string | Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex')

describe('sha256Hex', () => {
  test('the FIPS 180-4 examples', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1')
  })

  test('every length from 0 to 300 bytes, random content, as bytes and as a view into a larger buffer', () => {
    for (let n = 0; n <= 300; n++) {
      const bytes = crypto.randomBytes(n)
      expect(sha256Hex(bytes), String(n)).toBe(reference(bytes))
      const padded = Buffer.concat([crypto.randomBytes(7), bytes, crypto.randomBytes(5)])
      expect(sha256Hex(padded.subarray(7, 7 + n)), `view ${n}`).toBe(reference(bytes))
    }
  })

  test('large inputs and UTF-8 strings', () => {
    // Below 64 KiB written out, from there node:crypto (a planted 16 MB tier file took 0.5 s).
    for (const n of [4096, (64 << 10) - 1, 64 << 10, 1 << 20]) {
      const bytes = crypto.randomBytes(n)
      expect(sha256Hex(bytes), String(n)).toBe(reference(bytes))
    }
    for (const text of ['/home/ünïcödé/プロジェクト/.git', '🦀'.repeat(40), 'x'.repeat(55), 'x'.repeat(56), 'x'.repeat(64)]) expect(sha256Hex(text)).toBe(reference(text))
  })
})
