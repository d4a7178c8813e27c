// network/ip.ts recognises address literals exactly as node:net does (the plan uses it so that a
// launch does not load node:net before bwrap starts).
import net from 'node:net'
import { describe, expect, test } from 'vitest'
import { isIP, isIPv4, isIPv6 } from '../../src/network/ip.js'

const SAMPLES = [
  '127.0.0.1', '0.0.0.0', '255.255.255.255', '256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.04', ' 1.2.3.4', '1.2.3.4 ',
  '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '2001:db8::1', 'fe80::1%eth0', 'fe80::1%', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
  '1::2::3', ':::', 'gggg::1', '[::1]', '1:2:3:4:5:6:1.2.3.4', '::1.2.3.4', '64:ff9b::8.8.8.8', 'localhost', 'example.com', '', '1e2.0.0.1',
  '::ffff:1.2.3.4.5', 'ABCD:EF01::', '1::', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '0x7f.0.0.1', '127.1',
  '1:2:3:4:5:6:7:8::', '::1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::8', '1:2:3:4:5:6::7:8', '1:2:3:4:5::1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4',
  '1.2.3.4::', '1.2.3.4:1::', '::1.2.3.4:1', '1:::2', '1::2:', ':1::2', '1:', ':1', '12345::', 'fe80::1%', 'fe80::1%e/0',
  'fe80::1%eth0%1', '::%x', '%eth0', '1:2:3:4:5:6:1.2.3.4%lo', '::ffff:256.1.1.1', ':', '0:0:0:0:0:0:0:0', '00000::',
]

describe('ip literals', () => {
  test('random strings of address characters: the same answers as node:net', () => {
    const alphabet = '0123456789abcdef:.%'
    let seed = 7
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let i = 0; i < 20000; i++) {
      const sample = Array.from({ length: 2 + random(30) }, () => alphabet[random(alphabet.length)]).join('')
      expect(isIPv6(sample), sample).toBe(net.isIPv6(sample))
      expect(isIP(sample), sample).toBe(net.isIP(sample))
    }
  })

  test.each(SAMPLES)('%j: the same answer as node:net', sample => {
    expect(isIP(sample)).toBe(net.isIP(sample))
    expect(isIPv4(sample)).toBe(net.isIPv4(sample))
    expect(isIPv6(sample)).toBe(net.isIPv6(sample))
  })
})
