import path from 'node:path'
import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { canonicalRoot, instanceDir, instanceId, isWithin } from '../../src/state/instance.js'
import { readSettings } from '../../src/config/settings.js'

describe('instance id', () => {
  test.each([
    ['/home/ada/src/shop/.git'],
    ['/tmp/with space/and \'quote\'/.git'],
    ['/srv/prøjekt/日本/.git'],
  ])('%s -> first 16 hex of SHA-256 of the UTF-8 path, no newline', root => {
    const expected = createHash('sha256').update(Buffer.from(root, 'utf8')).digest('hex').slice(0, 16)
    expect(instanceId(root)).toBe(expected)
    expect(instanceId(root)).toMatch(/^[0-9a-f]{16}$/)
  })

  test('a known value', () => {
    // printf %s /home/ada/src/shop/.git | sha256sum | cut -c1-16
    expect(instanceId('/home/ada/src/shop/.git')).toBe(createHash('sha256').update('/home/ada/src/shop/.git').digest('hex').slice(0, 16))
  })

  test('canonical root: the common dir in git, else the cwd', () => {
    const git = { topLevel: '/r', gitDir: '/r/.git/worktrees/x', commonDir: '/r/.git' }
    expect(canonicalRoot('/r/sub', git)).toBe('/r/.git')
    expect(canonicalRoot('/plain', undefined)).toBe('/plain')
  })

  test('instance dir under $CLAUDEBOX_HOME/instances', () => {
    expect(instanceDir('/h/.claudebox', 'abc')).toBe('/h/.claudebox/instances/abc')
  })

  test.each([
    ['/a/b', '/a', true],
    ['/a', '/a', true],
    ['/ab', '/a', false],
    ['/a/../b', '/a', false],
    ['/', '/a', false],
    ['/a/..tmp', '/a', true],
    ['/a/..', '/a', false],
    ['/a/...', '/a', true],
    ['/a/b/..c/d', '/a/b', true],
    ['/a..', '/a', false],
    ['/a/b', '/', true],
    ['/', '/', true],
    ['/a//b', '/a/b', true],
    ['/a/b/', '/a/b', true],
    ['/a/./b', '/a/b', true],
    ['/a/b', '/a/b/.', true],
    ['/a/bc', '/a/b/', false],
  ])('isWithin(%s, %s) = %s', (child, parent, expected) => {
    expect(isWithin(child, parent)).toBe(expected)
  })

  test('isWithin reads every path as path.relative does (its string fast path included)', () => {
    const names = ['a', 'b', 'ab', '.', '..', '..a', 'a..', '...', '']
    const paths = new Set<string>(['/', '//'])
    for (const x of names) for (const y of names) for (const z of ['', ...names]) paths.add(`/${x}/${y}${z === '' ? '' : `/${z}`}`)
    const byRelative = (child: string, parent: string): boolean => {
      const rel = path.relative(parent, child)
      return rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.isAbsolute(rel))
    }
    const all = [...paths]
    for (const child of all) for (const parent of all) if (isWithin(child, parent) !== byRelative(child, parent)) expect({ child, parent, within: isWithin(child, parent) }).toBe('as path.relative reads it')
  })
})

describe('settings', () => {
  test('CLAUDEBOX_HOME defaults to ~/.claudebox', () => {
    expect(readSettings({}, '/home/ada').claudeboxHome).toBe('/home/ada/.claudebox')
  })
  test.each([[''], ['relative/dir'], ['/'], ['/home/ada']])('CLAUDEBOX_HOME=%j is refused', value => {
    expect(() => readSettings({ CLAUDEBOX_HOME: value }, '/home/ada')).toThrow(/CLAUDEBOX_HOME/)
  })
  test.each([
    ['/home/ada/.claude', {}],
    ['/home/ada/.claude/box', {}],
    ['/srv/claude/config', { CLAUDE_CONFIG_DIR: '/srv/claude/config' }],
    ['/srv/claude/config/x', { CLAUDE_CONFIG_DIR: '/srv/claude/config' }],
  ])("CLAUDEBOX_HOME=%s, Claude Code's own folder or in it, is refused (red team, round 94: the first launch moved the user's login out of it)", (value, env) => {
    expect(() => readSettings({ CLAUDEBOX_HOME: value, ...env }, '/home/ada')).toThrow(/CLAUDEBOX_HOME must not be Claude Code's own folder/)
  })
  test("the comparison is of real paths: a CLAUDEBOX_HOME that leads into Claude Code's folder through a link is refused too (red team, round 95)", () => {
    const real = (p: string): string => p.replace(/^\/home\/ada\/cblink/, '/home/ada/.claude').replace(/^\/home\//, '/var/home/')
    expect(() => readSettings({ CLAUDEBOX_HOME: '/home/ada/cblink' }, '/home/ada', undefined, { real, id: () => undefined })).toThrow(/CLAUDEBOX_HOME must not be Claude Code's own folder/)
    expect(() => readSettings({ CLAUDEBOX_HOME: '/var/home/ada/.claude' }, '/home/ada', undefined, { real, id: () => undefined })).toThrow(/CLAUDEBOX_HOME must not be Claude Code's own folder/)
    expect(readSettings({ CLAUDEBOX_HOME: '/var/home/ada/.claudebox' }, '/home/ada', undefined, { real, id: () => undefined }).claudeboxHome).toBe('/var/home/ada/.claudebox')
  })
  test("a CLAUDEBOX_HOME that is Claude Code's folder through a bind mount (the same device and inode) is refused too (round 96)", () => {
    const id = (p: string): string | undefined => (p === '/mnt/alias' || p === '/home/ada/.claude' ? '7:42' : undefined)
    expect(() => readSettings({ CLAUDEBOX_HOME: '/mnt/alias' }, '/home/ada', undefined, { real: p => p, id })).toThrow(/CLAUDEBOX_HOME must not be Claude Code's own folder/)
    expect(() => readSettings({ CLAUDEBOX_HOME: '/mnt/alias/box' }, '/home/ada', undefined, { real: p => p, id })).toThrow(/CLAUDEBOX_HOME must not be Claude Code's own folder/)
  })
  test("a CLAUDEBOX_HOME beside Claude Code's folder, or holding it (a sandbox's CLAUDE_CONFIG_DIR is an instance), is kept", () => {
    expect(readSettings({ CLAUDEBOX_HOME: '/home/ada/.claudebox2' }, '/home/ada').claudeboxHome).toBe('/home/ada/.claudebox2')
    expect(readSettings({ CLAUDEBOX_HOME: '/home/ada/.claudebox', CLAUDE_CONFIG_DIR: '/home/ada/.claudebox/instances/0123' }, '/home/ada').claudeboxHome).toBe('/home/ada/.claudebox')
    expect(readSettings({ CLAUDEBOX_HOME: '/home/ada/.claude' }, '/home/ada'.replace('ada', 'bob')).claudeboxHome).toBe('/home/ada/.claude')
  })
  test('overrides', () => {
    const s = readSettings({ CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: '/opt/bwrap', CLAUDEBOX_DEBUG: '1' }, '/h')
    expect(s).toMatchObject({ claudeOverride: '/bin/true', bwrapOverride: '/opt/bwrap', debug: true })
  })
})
