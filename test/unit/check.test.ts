import { describe, expect, test } from 'vitest'
import { renderChecks } from '../../src/sandbox/checks.js'
import { isNewerRelease, TESTED_CLAUDE } from '../../src/config/tested-claude.js'

describe('renderChecks', () => {
  const results = [
    { status: 'ok' as const, name: 'bwrap', detail: '/usr/bin/bwrap' },
    { status: 'warn' as const, name: 'network', detail: 'open' },
    { status: 'fail' as const, name: 'project', detail: 'a \x1b]0;title\x07 path' },
  ]
  test('plain: status padded, values made terminal-safe', () => {
    expect(renderChecks(results)).toBe('ok   bwrap: /usr/bin/bwrap\nwarn network: open\nfail project: a \\x1b]0;title\\x07 path\n')
  })
  test('on a terminal: warn in yellow, fail in red, ok plain; values still safe', () => {
    expect(renderChecks(results, true)).toBe('ok   bwrap: /usr/bin/bwrap\n\x1b[33mwarn\x1b[0m network: open\n\x1b[31mfail\x1b[0m project: a \\x1b]0;title\\x07 path\n')
  })
})

describe('Claude Code releases', () => {
  test('newer than the newest tested is a warning naming npm run compat', () => {
    expect(isNewerRelease('2.1.332', TESTED_CLAUDE.newest)).toBe(true)
    expect(isNewerRelease(TESTED_CLAUDE.newest, TESTED_CLAUDE.newest)).toBe(false)
    expect(isNewerRelease(TESTED_CLAUDE.older, TESTED_CLAUDE.newest)).toBe(false)
    expect(isNewerRelease('3.0.0', '2.9.999')).toBe(true)
    expect(isNewerRelease('garbage', '2.1.0')).toBe(false)
  })
})
