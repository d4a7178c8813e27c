// Host output escapes control characters: a table of hostile text and what the terminal sees.
import { describe, expect, test } from 'vitest'
import { hasRawControl, inlineSafe, jsonSafe, terminalSafe } from '../../src/cli/terminal-safe.js'

describe('terminal-safe output', () => {
  test.each([
    ['OSC 52 (clipboard)', '\x1b]52;c;aGk=\x07', '\\x1b]52;c;aGk=\\x07'],
    ['OSC 0 (title)', '\x1b]0;pwned\x1b\\', '\\x1b]0;pwned\\x1b\\'],
    ['SGR and clear screen', '\x1b[31m\x1b[2J', '\\x1b[31m\\x1b[2J'],
    ['a bare CR', 'ok\rFAKE', 'ok\\rFAKE'],
    ['C1 CSI', 'a\u009b2Jb', 'a\\x9b2Jb'],
    ['bidi override', 'evil\u202etxt.sh', 'evil\\u202etxt.sh'],
    ['DEL and NUL', 'a\x7fb\x00', 'a\\x7fb\\x00'],
    ['zero-width space, joiner and BOM', 'a\u200bb\u200dc\ufeff', 'a\\u200bb\\u200dc\\ufeff'],
    ['tag characters (a hidden "hi")', 'ok\u{e0068}\u{e0069}', 'ok\\u{e0068}\\u{e0069}'],
    ['line and paragraph separators', 'a\u2028b\u2029', 'a\\u2028b\\u2029'],
    ['variation selectors (they can carry any bytes)', 'ok\ufe0f\u{e0100}', 'ok\\ufe0f\\u{e0100}'],
    ['Hangul filler, braille blank, private use', '\u3164\u2800\ue000', '\\u3164\\u2800\\ue000'],
    ['plain text, accents and CJK', 'prøjekt 日本', 'prøjekt 日本'],
  ])('%s', (_name, input, shown) => {
    expect(terminalSafe(input)).toBe(shown)
    expect(inlineSafe(input)).toBe(shown)
  })

  test('newlines and tabs: kept in whole output, escaped inside one value', () => {
    expect(terminalSafe('a\nb\tc')).toBe('a\nb\tc')
    expect(inlineSafe('a\nclaudebox: all good\tc')).toBe('a\\nclaudebox: all good\\tc')
  })

  test('JSON stays valid and carries no raw C1, bidi or other invisible character', () => {
    const value = { root: '/p/\u009b\u202e\x1b\u200b\u{e0041}\u2028' }
    const text = jsonSafe(value)
    expect(hasRawControl(text)).toBe(false)
    expect(JSON.parse(text)).toEqual(value)
  })
})
