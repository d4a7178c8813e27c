// SHA-256 (FIPS 180-4) of what claudebox hashes: a project's canonical root (its instance id),
// tier files, the project file, the programs --dry-run names. Small inputs are hashed here rather
// than by node:crypto, whose loading cost ~3 ms of every launch; from NATIVE_FROM bytes on,
// node:crypto does it, loaded then: this code runs at ~35 MB/s, node:crypto at ~1.7 GB/s, and a
// sandbox can plant tier files of many MB that are hashed after every session.
// test/unit/sha256.test.ts holds both paths against node:crypto.
import { createRequire } from 'node:module'
import type * as Crypto from 'node:crypto'

const NATIVE_FROM = 64 << 10

/** node:crypto, loaded at the first call that needs it. */
export const nodeCrypto = (): typeof Crypto => createRequire(import.meta.url)('node:crypto') as typeof Crypto

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
])

/** The SHA-256 of `data` (a string is hashed as UTF-8), in lowercase hex. */
export function sha256Hex(data: string | Uint8Array): string {
  // Buffer, not TextEncoder: that one's module loads at its first use (~0.2 ms of a launch).
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  if (bytes.length >= NATIVE_FROM) return nodeCrypto().createHash('sha256').update(bytes).digest('hex')
  const state = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])
  const words = new Uint32Array(64)
  for (const block of padded(bytes)) compress(state, block, words)
  return Array.from(state, word => word.toString(16).padStart(8, '0')).join('')
}

/** The message, a 1 bit, zeros and its length in bits (big-endian), in 64-byte blocks. */
function* padded(bytes: Uint8Array): Generator<DataView> {
  const whole = bytes.length - (bytes.length % 64)
  for (let at = 0; at < whole; at += 64) yield new DataView(bytes.buffer, bytes.byteOffset + at, 64)
  const tail = new Uint8Array(bytes.length % 64 < 56 ? 64 : 128)
  tail.set(bytes.subarray(whole))
  tail[bytes.length % 64] = 0x80
  const view = new DataView(tail.buffer)
  view.setUint32(tail.length - 8, Math.floor(bytes.length / 0x20000000))
  view.setUint32(tail.length - 4, (bytes.length * 8) >>> 0)
  for (let at = 0; at < tail.length; at += 64) yield new DataView(tail.buffer, at, 64)
}

// The rotations are written out (x >>> n | x << 32 - n) rather than called: a launch hashes a few
// hundred blocks in V8's interpreter, where each of the 576 calls a block would make costs more
// than the rotation, and they made the helper hot enough for V8's optimizing compiler.
function compress(state: Uint32Array, block: DataView, w: Uint32Array): void {
  for (let i = 0; i < 16; i++) w[i] = block.getUint32(i * 4)
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15] as number
    const b = w[i - 2] as number
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3)
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10)
    w[i] = (w[i - 16] as number) + s0 + (w[i - 7] as number) + s1
  }
  let [a, b, c, d, e, f, g, h] = Array.from(state) as [number, number, number, number, number, number, number, number]
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  const add = [a, b, c, d, e, f, g, h]
  for (let i = 0; i < 8; i++) state[i] = ((state[i] as number) + (add[i] as number)) >>> 0
}
