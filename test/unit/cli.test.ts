import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { parseArgs } from '../../src/cli.js'
import { shq } from '../../src/quote.js'

describe('arguments', () => {
  test.each([
    [[], 'launch', []],
    [['-c'], 'launch', ['-c']],
    [['--resume', 'ID'], 'launch', ['--resume', 'ID']],
    [['-p', 'text with spaces'], 'launch', ['-p', 'text with spaces']],
    [['-c', '--dry-run'], 'dry-run', ['-c']],
    [['--dry-run', '--model', 'opus', '-p', 'x'], 'dry-run', ['--model', 'opus', '-p', 'x']],
    [['--', '--version'], 'launch', ['--version']],
    [['--', '--dry-run', '--check'], 'launch', ['--dry-run', '--check']],
    [['--check'], 'check', []],
    [['--gc'], 'gc', []],
  ] as const)('%j -> %s with claude args %j', async (argv, mode, claudeArgs) => {
    const options = await parseArgs(argv)
    expect(options.mode).toBe(mode)
    expect(options.claudeArgs).toEqual(claudeArgs)
  })

  test('--gc --dry-run plans only', async () => {
    expect(await parseArgs(['--gc', '--dry-run'])).toMatchObject({ mode: 'gc', dryRun: true })
  })

  test('--help and --version are claudebox\'s; -h and -v are claude\'s', async () => {
    expect((await parseArgs(['--help'])).help).toBe(true)
    expect((await parseArgs(['--version'])).version).toBe(true)
    expect((await parseArgs(['-v'])).claudeArgs).toEqual(['-v'])
  })

  test('conflicting modes are a usage error (status 2)', async () => {
    await expect(parseArgs(['--check', '--gc'])).rejects.toMatchObject({ exitCode: 2 })
  })
})

describe('shq', () => {
  const words = ['', 'plain', 'with space', "it's", '$HOME', '`id`', 'line\nbreak', '*', '~/x', 'a;b', 'back\\slash', 'prøjekt 日本', '--flag=v', '"dq"']
  test('round-trips through sh', () => {
    const script = `printf '%s\\0' ${words.map(shq).join(' ')}`
    const out = execFileSync('sh', ['-c', script], { encoding: 'utf8' })
    expect(out.split('\0').slice(0, -1)).toEqual(words)
  })
  test('leaves safe words bare', () => {
    expect(shq('/usr/bin/bwrap')).toBe('/usr/bin/bwrap')
    expect(shq('--ro-bind')).toBe('--ro-bind')
  })
})
