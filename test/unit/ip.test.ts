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
]

describe('ip literals', () => {
  test.each(SAMPLES)('%j: the same answer as node:net', sample => {
    expect(isIP(sample)).toBe(net.isIP(sample))
    expect(isIPv4(sample)).toBe(net.isIPv4(sample))
    expect(isIPv6(sample)).toBe(net.isIPv6(sample))
  })
})
