// The --network=allow allowlist (src/network/policy.ts): host patterns, the decision for a
// destination, and which resolved addresses a decision admits. Pure: no I/O.
import { describe, expect, test } from 'vitest'
import {
  addressAllowed,
  allowsLoopback,
  buildPolicy,
  CLAUDE_HOSTS,
  decideDestination,
  describePolicy,
  isSpecialAddress,
  normalizeHost,
  parseHostPattern,
  PRESETS,
  type Decision,
  type EgressPolicy,
  type HostRule,
} from '../../src/network/policy.js'

const policy = (allowHosts: string[] = [], denyHosts: string[] = [], presets: string[] = []): EgressPolicy => buildPolicy({ allowHosts, denyHosts, presets })

describe('parseHostPattern', () => {
  test.each<[string, Partial<HostRule>]>([
    ['example.com', { host: 'example.com', wildcard: false, ports: 'web', literal: false }],
    ['example.com:8443', { host: 'example.com', ports: 8443 }],
    ['example.com:*', { host: 'example.com', ports: 'any' }],
    ['example.com:1', { ports: 1 }],
    ['example.com:65535', { ports: 65535 }],
    ['*.example.com', { host: 'example.com', wildcard: true, ports: 'web', literal: false }],
    ['*.example.com:8080', { host: 'example.com', wildcard: true, ports: 8080 }],
    ['*', { host: '', wildcard: true, ports: 'web' }],
    ['*:*', { host: '', wildcard: true, ports: 'any' }],
    ['10.0.0.5', { host: '10.0.0.5', literal: true, ports: 'web' }],
    ['10.0.0.5:8080', { host: '10.0.0.5', literal: true, ports: 8080 }],
    ['[::1]:8080', { host: '::1', literal: true, ports: 8080 }],
    ['[::1]', { host: '::1', literal: true, ports: 'web' }],
    ['[2001:DB8:0:0::1]:443', { host: '2001:db8::1', literal: true, ports: 443 }],
    ['::1', { host: '::1', literal: true, ports: 'web' }],
    // a bare IPv6 address takes no port: the last group is part of the address
    ['::1:8080', { host: '::1:8080', literal: true, ports: 'web' }],
    ['fe80::1', { host: 'fe80::1', literal: true }],
    ['example.com.', { host: 'example.com' }],
    ['*.example.com.:443', { host: 'example.com', wildcard: true, ports: 443 }],
    ['EXAMPLE.Com', { host: 'example.com' }],
    ['bücher.de', { host: 'xn--bcher-kva.de' }],
    ['*.Bücher.de', { host: 'xn--bcher-kva.de', wildcard: true }],
    ['  example.com  ', { host: 'example.com', pattern: 'example.com' }],
    ['127.1', { host: '127.0.0.1', literal: true }],
    ['2130706433:22', { host: '127.0.0.1', literal: true, ports: 22 }],
    ['localhost:5432', { host: 'localhost', literal: false, ports: 5432 }],
  ])('%j -> %j', (text, expected) => {
    expect(parseHostPattern(text)).toMatchObject({ source: 'user', ...expected })
  })

  test('the source is recorded', () => {
    expect(parseHostPattern('a.example', 'preset').source).toBe('preset')
    expect(parseHostPattern('a.example', 'default').source).toBe('default')
  })

  test.each([
    ['a*b', /"a\*b": a wildcard may only be a leading "\*\." \(like \*\.example\.com\)/],
    ['*.*.x', /"\*\.\*\.x": a wildcard may only be a leading "\*\."/],
    ['x.*', /a wildcard may only be a leading/],
    ['*example.com', /a wildcard may only be a leading/],
    ['example.com:0', /"example.com:0": the port must be 1-65535 or \*/],
    ['example.com:70000', /the port must be 1-65535 or \*/],
    ['example.com:abc', /the port must be 1-65535 or \*/],
    ['example.com:', /the port must be 1-65535 or \*/],
    ['example.com:-1', /the port must be 1-65535 or \*/],
    ['example.com:123456', /the port must be 1-65535 or \*/],
    ['[::1]:', /the port must be 1-65535 or \*/],
    ['', /names no host/],
    ['   ', /names no host/],
    [':80', /names no host/],
    ['*.', /names no host/],
    ['*.:443', /names no host/],
    ['a b', /"a b" is not a host name, an IP address or a \*\.domain pattern/],
    ['exa mple.com:443', /is not a host name/],
    ['http://x', /"http:\/\/x"/],
    ['http://x:80', /is not a host name/],
    ['https://example.com/path', /"https:\/\/example.com\/path"/],
    ['user@example.com', /is not a host name/],
    ['a..b', /is not a host name/],
    ['example.com..', /is not a host name/],
    ['.example.com', /is not a host name/],
    ['[example.com]:443', /only an IPv6 address goes in brackets/],
  ])('%j is refused: %s', (text, message) => {
    expect(() => parseHostPattern(text)).toThrow(message)
  })
})

describe('normalizeHost', () => {
  test.each<[string, string | undefined]>([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['2130706433', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['[::1]', '::1'],
    ['::FFFF:127.0.0.1', '::ffff:7f00:1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['%65xample.com', 'example.com'],
    ['', undefined],
    ['.', undefined],
    ['..', undefined],
    ['example.com..', undefined],
    ['a..b', undefined],
    ['a b', undefined],
    ['a/b', undefined],
    ['a@b', undefined],
    ['example.com%00', undefined],
  ])('%j -> %j', (host, expected) => {
    expect(normalizeHost(host)).toBe(expected)
  })
})

describe('decideDestination', () => {
  const p = policy(
    ['example.com', '*.corp.example:8443', 'svc.test:*', '10.0.0.5:8080', '127.0.0.1:5432', 'x.blocked.example', 'only.test:22'],
    ['bad.corp.example', '*.evil.corp.example', 'x.blocked.example', 'svc.test:2222'],
    ['npm'],
  )
  test.each<[string, number, string | true]>([
    // exact names, on the web ports unless a port is given
    ['example.com', 443, true],
    ['example.com', 80, true],
    ['example.com', 8080, 'not in the allowlist'],
    ['example.com', 22, 'not in the allowlist'],
    ['EXAMPLE.COM.', 443, true],
    ['www.example.com', 443, 'not in the allowlist'],
    ['only.test', 22, true],
    ['only.test', 443, 'not in the allowlist'],
    // a wildcard: subdomains at any depth, never the apex, never a look-alike
    ['a.corp.example', 8443, true],
    ['a.b.c.corp.example', 8443, true],
    ['corp.example', 8443, 'not in the allowlist'],
    ['xcorp.example', 8443, 'not in the allowlist'],
    ['a.corp.example', 443, 'not in the allowlist'],
    // :* admits every port
    ['svc.test', 22, true],
    ['svc.test', 65535, true],
    // the deny list wins, exact or wildcard, and a deny pattern without a port covers every port
    ['bad.corp.example', 8443, 'in the deny list (bad.corp.example)'],
    ['x.evil.corp.example', 8443, 'in the deny list (*.evil.corp.example)'],
    ['a.b.evil.corp.example', 8443, 'in the deny list (*.evil.corp.example)'],
    ['evil.corp.example', 8443, true],
    ['x.blocked.example', 443, 'in the deny list (x.blocked.example)'],
    // ... and one with a port only that port
    ['svc.test', 2222, 'in the deny list (svc.test:2222)'],
    ['svc.test', 2223, true],
    // Claude's own hosts, on the web ports only
    ['api.anthropic.com', 443, true],
    ['api.anthropic.com', 80, true],
    ['api.anthropic.com', 22, 'not in the allowlist'],
    ['platform.claude.com', 443, true],
    ['claude.ai', 443, true],
    ['console.anthropic.com', 443, true],
    ['statsig.anthropic.com', 443, 'not in the allowlist'],
    // a preset that was asked for, and one that was not
    ['registry.npmjs.org', 443, true],
    ['pypi.org', 443, 'not in the allowlist'],
    // addresses, however they are written
    ['10.0.0.5', 8080, true],
    ['167772165', 8080, true],
    ['10.0.0.5', 443, 'not in the allowlist'],
    ['127.0.0.1', 5432, true],
    ['2130706433', 5432, true],
    ['127.1', 5432, true],
    ['0x7f.0.0.1', 5432, true],
    ['127.0.0.2', 5432, 'not in the allowlist'],
    // not a host at all
    ['example.com..', 443, 'not a valid host name'],
    ['', 443, 'not a valid host name'],
    ['a b', 443, 'not a valid host name'],
  ])('%s:%i -> %s', (host, port, expected) => {
    const decision = decideDestination(p, host, port)
    if (expected === true) expect(decision).toMatchObject({ allowed: true })
    else expect(decision).toMatchObject({ allowed: false, reason: expected })
  })

  test('the decision carries the normalised host', () => {
    expect(decideDestination(p, '2130706433', 5432).host).toBe('127.0.0.1')
    expect(decideDestination(p, 'Example.COM.', 443).host).toBe('example.com')
  })

  test('the deny list wins over an exact allow, and * denies even the defaults', () => {
    expect(decideDestination(policy(['x.example.com'], ['*.example.com']), 'x.example.com', 443)).toMatchObject({ allowed: false, reason: 'in the deny list (*.example.com)' })
    expect(decideDestination(policy([], ['*']), 'api.anthropic.com', 443)).toMatchObject({ allowed: false, reason: 'in the deny list (*)' })
  })

  test('a deny pattern without a port refuses its host on every port, even under *:*', () => {
    const open = policy(['*:*'], ['evil.example', '127.0.0.1'])
    for (const port of [22, 80, 443, 8443]) {
      expect(decideDestination(open, 'evil.example', port)).toMatchObject({ allowed: false, reason: 'in the deny list (evil.example)' })
      expect(decideDestination(open, '2130706433', port)).toMatchObject({ allowed: false, reason: 'in the deny list (127.0.0.1)' })
    }
    expect(decideDestination(open, 'good.example', 22)).toMatchObject({ allowed: true })
  })

  test('a lone * admits every name on the web ports; *:* on every port', () => {
    expect(decideDestination(policy(['*']), 'anything.example', 443)).toMatchObject({ allowed: true })
    expect(decideDestination(policy(['*']), 'anything.example', 22)).toMatchObject({ allowed: false })
    expect(decideDestination(policy(['*:*']), 'anything.example', 22)).toMatchObject({ allowed: true })
  })

  test.each(Object.entries(PRESETS))('preset %s admits its hosts on 443 only when asked for', (name, hosts) => {
    const withPreset = policy([], [], [name])
    for (const host of hosts) {
      expect(decideDestination(withPreset, host, 443), host).toMatchObject({ allowed: true, privateOk: false, rule: { source: 'preset' } })
      expect(decideDestination(policy(), host, 443), host).toMatchObject({ allowed: false })
    }
  })

  test('defaults: Claude’s hosts come first and are tagged as defaults', () => {
    const p0 = policy()
    expect(p0.allow.map(r => r.pattern)).toEqual(CLAUDE_HOSTS)
    expect(p0.allow.every(r => r.source === 'default')).toBe(true)
    expect(p0.deny).toEqual([])
  })

  test('an unknown preset names the known ones', () => {
    expect(() => policy([], [], ['nope'])).toThrow('unknown preset "nope" (presets: npm, pypi, crates, go, github)')
  })

  test('privateOk: only for a host the user named exactly', () => {
    const q = policy(['git.corp.lan', '*.corp.lan', 'api.anthropic.com:8443'], [], ['github'])
    const ok = (host: string, port = 443): boolean => (decideDestination(q, host, port) as Extract<Decision, { allowed: true }>).privateOk
    expect(ok('git.corp.lan')).toBe(true)
    expect(ok('ci.corp.lan')).toBe(false)
    expect(ok('github.com')).toBe(false)
    expect(ok('api.anthropic.com')).toBe(false)
    expect(ok('api.anthropic.com', 8443)).toBe(true)
  })

  test('describePolicy shows the patterns as written', () => {
    expect(describePolicy(policy(['A.example:8080'], ['*.bad.example']))).toEqual({ allow: [...CLAUDE_HOSTS, 'A.example:8080'], deny: ['*.bad.example'] })
  })
})

describe('isSpecialAddress', () => {
  test.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'febf::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::FFFF:7F00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::7f00:1',
    'not-an-address',
    '',
  ])('%s is special', address => {
    expect(isSpecialAddress(address)).toBe(true)
  })

  test.each([
    '1.1.1.1',
    '8.8.8.8',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '192.169.0.1',
    '169.253.255.255',
    '223.255.255.255',
    // documentation and benchmark ranges are handed out for public names by some resolvers
    '203.0.113.80',
    '198.18.0.1',
    '2606:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:1.1.1.1',
    '::ffff:101:101',
  ])('%s is public', address => {
    expect(isSpecialAddress(address)).toBe(false)
  })
})

describe('addressAllowed', () => {
  const p = policy(['localhost:8080', 'git.corp.lan', '*.corp.lan', '10.0.0.5:8080', '*.example.test:*', '*'], ['10.9.9.9', '1.2.3.4'], ['npm'])
  const decide = (host: string, port: number): Extract<Decision, { allowed: true }> => {
    const decision = decideDestination(p, host, port)
    if (!decision.allowed) throw new Error(`${host}:${port} not allowed: ${decision.reason}`)
    return decision
  }
  test.each<[string, number, string, boolean, string]>([
    // a name the user listed exactly may lead anywhere but the deny list
    ['localhost', 8080, '127.0.0.1', true, 'exact user host'],
    ['localhost', 8080, '::1', true, 'exact user host, IPv6'],
    ['git.corp.lan', 443, '10.1.1.1', true, 'exact user LAN name'],
    ['git.corp.lan', 443, '10.9.9.9', false, 'an address in the deny list, even for an exact name'],
    // a wildcard (or *) never leads to a special address...
    ['ci.corp.lan', 443, '10.1.1.1', false, 'wildcard to RFC 1918'],
    ['ci.corp.lan', 443, '127.0.0.1', false, 'wildcard to loopback'],
    ['ci.corp.lan', 443, '::ffff:127.0.0.1', false, 'wildcard to IPv4-mapped loopback'],
    ['ci.corp.lan', 443, '::ffff:7f00:1', false, 'wildcard to IPv4-mapped loopback, hex'],
    ['ci.corp.lan', 443, 'fd00::1', false, 'wildcard to ULA'],
    ['ci.corp.lan', 443, 'fe80::1', false, 'wildcard to link-local'],
    ['ci.corp.lan', 443, '100.100.100.100', false, 'wildcard to CGNAT'],
    ['anything.example', 443, '169.254.169.254', false, '* to the metadata address'],
    ['anything.example', 443, '0.0.0.0', false, '* to 0.0.0.0'],
    ['anything.example', 443, '224.0.0.1', false, '* to multicast'],
    // ... but public ones are fine
    ['ci.corp.lan', 443, '1.1.1.1', true, 'wildcard to public'],
    ['anything.example', 443, '2606:4700::1111', true, '* to public IPv6'],
    ['anything.example', 443, '1.2.3.4', false, 'a public address in the deny list'],
    ['a.example.test', 8080, '1.2.3.4', false, 'a deny entry without a port covers every port'],
    // a preset or Claude's list never leads to a special address
    ['registry.npmjs.org', 443, '127.0.0.1', false, 'preset to loopback'],
    ['registry.npmjs.org', 443, '104.16.0.1', true, 'preset to public'],
    ['api.anthropic.com', 443, '10.0.0.1', false, 'default to RFC 1918'],
    ['api.anthropic.com', 443, '160.79.104.10', true, 'default to public'],
    // the user listed the address itself (with its port)
    ['a.example.test', 8080, '10.0.0.5', true, 'listed address, listed port'],
    ['a.example.test', 9090, '10.0.0.5', false, 'listed address, other port'],
    ['a.example.test', 8080, '10.0.0.6', false, 'an address next to the listed one'],
  ])('%s:%i -> %s: %s (%s)', (host, port, address, expected) => {
    expect(addressAllowed(p, decide(host, port), address, port)).toBe(expected)
  })

  test('an address listed by a wildcard rule or a preset does not count as listed', () => {
    const q = policy(['*.example.test'])
    const decision = decideDestination(q, 'a.example.test', 443) as Extract<Decision, { allowed: true }>
    expect(addressAllowed(q, decision, '10.0.0.5', 443)).toBe(false)
  })
})

describe('allowsLoopback (NO_PROXY)', () => {
  test.each<[string[], boolean]>([
    [[], false],
    [['localhost:8080'], true],
    [['127.0.0.1:5432'], true],
    [['127.1:5432'], true],
    [['[::1]:8080'], true],
    [['*'], false],
    [['*.localhost'], false],
    [['git.corp.lan'], false],
  ])('%j -> %s', (hosts, expected) => {
    expect(allowsLoopback(policy(hosts))).toBe(expected)
  })
})
