import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { parseArgs } from '../../src/cli/args.js'
import type { SandboxOptions } from '../../src/config/sandbox-options.js'
import { shq } from '../../src/sandbox/quote.js'
import { hasRawControl } from '../../src/cli/terminal-safe.js'

describe('arguments', () => {
  test.each([
    [[], 'launch', []],
    [['-c'], 'launch', ['-c']],
    [['--resume', 'ID'], 'launch', ['--resume', 'ID']],
    [['-p', 'text with spaces'], 'launch', ['-p', 'text with spaces']],
    // Own options only before the first argument that is Claude's: the rest is Claude's, untouched.
    [['-c', '--dry-run'], 'launch', ['-c', '--dry-run']],
    [['-p', '--ro-bind=/x'], 'launch', ['-p', '--ro-bind=/x']],
    [['--network=none', '-p', '--bind', '/etc'], 'launch', ['-p', '--bind', '/etc']],
    [['--dry-run', '--model', 'opus', '-p', 'x'], 'dry-run', ['--model', 'opus', '-p', 'x']],
    [['--', '--version'], 'launch', ['--version']],
    [['--', '--dry-run', '--check'], 'launch', ['--dry-run', '--check']],
    [['--check'], 'check', []],
    [['--gc'], 'gc', []],
  ] as const)('%j -> %s with claude args %j', (argv, mode, claudeArgs) => {
    const options = parseArgs(argv)
    expect(options.mode).toBe(mode)
    expect(options.claudeArgs).toEqual(claudeArgs)
  })

  test("-h is claudebox's help, as in gh, docker and npm; after Claude's arguments or --, it is Claude's", () => {
    expect(parseArgs(['-h'])).toMatchObject({ help: true, claudeArgs: [] })
    expect(parseArgs(['-p', '-h'])).toMatchObject({ help: false, claudeArgs: ['-p', '-h'] })
    expect(parseArgs(['--', '-h'])).toMatchObject({ help: false, claudeArgs: ['-h'] })
  })

  test('--gc --dry-run plans only', () => {
    expect(parseArgs(['--gc', '--dry-run'])).toMatchObject({ mode: 'gc', dryRun: true })
  })

  test('--help and --version are claudebox\'s; -h and -v are claude\'s', () => {
    expect(parseArgs(['--help']).help).toBe(true)
    expect(parseArgs(['--version']).version).toBe(true)
    expect(parseArgs(['-v']).claudeArgs).toEqual(['-v'])
  })

  test('conflicting modes are a usage error (status 2)', () => {
    expect(() => parseArgs(['--check', '--gc'])).toThrow(expect.objectContaining({ exitCode: 2 }))
  })

  test('a prompt that looks like an option is never taken for one', () => {
    const options = parseArgs(['-p', '--ro-bind=/x', '--writable-git-config'])
    expect(options.sandbox).toEqual({})
    expect(options.claudeArgs).toEqual(['-p', '--ro-bind=/x', '--writable-git-config'])
  })

  test.each([
    [['--gc', '--yes', '--dryrun'], /--gc does not take "--dryrun" \(did you mean --dry-run\?\)/],
    [['--list', '--jsn'], /--list does not take "--jsn" \(did you mean --json\?\)/],
    [['--list', '--sessions'], /--list and --sessions cannot be combined/],
    [['--json'], /--json works only with --check, --list, --sessions or --proposals/],
    [['--broken'], /--broken works only with --gc/],
    [['--force', '-c'], /--force works only with --gc/],
    [['--gc', '--dry-run', '--json'], /--json does not apply to --gc/],
    [['--list', '--bind', '/x'], /--bind does not apply to --list/],
    [['--sessions', 'extra'], /--sessions does not take "extra"/],
    [['--adopt', '/old', '--force'], /--force does not apply to --adopt/],
    [['--proposals', '--promote', 'x'], /--proposals and --promote cannot be combined/],
    [['--dismiss', 'x', '--yes'], /--yes does not apply to --dismiss/],
    [['--promote', 'x', '--connectors'], /--connectors does not apply to --promote/],
  ] as const)('%j is refused, naming the argument (status 2)', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringMatching(message) as unknown }))
  })

  test.each([[['--gc', '--dry-run', '--broken', '--force', '--yes']], [['--list', '--json']], [['--adopt', '/old', '--dry-run']], [['--check', '--network=none']], [['--proposals', '--json']], [['--promote', 'a:b', '--dry-run', '--yes']], [['--connectors', '-p', 'hi']]] as const)(
    '%j is accepted',
    argv => {
      expect(parseArgs(argv)).toBeDefined()
    },
  )
})

describe('arguments: --network and the allowlist options', () => {
  test.each<[string[], SandboxOptions['network'] | undefined]>([
    [['--network=allow'], 'allow'],
    [['--network', 'allow'], 'allow'],
    [['--network=open'], 'open'],
    [['--network', 'none'], 'none'],
    [['--no-network'], 'none'],
    [[], undefined],
  ])('%j -> network %s', (argv, network) => {
    const options = parseArgs([...argv, '-c'])
    expect(options.sandbox.network).toBe(network)
    expect(options.claudeArgs).toEqual(['-c'])
  })

  test('--network with an unknown mode is a usage error', () => {
    expect(() => parseArgs(['--network', 'bogus'])).toThrow(expect.objectContaining({ exitCode: 2 }))
    expect(() => parseArgs(['--network', 'bogus'])).toThrow(/bogus.*allow, none, open.*see claudebox --help/)
    expect(() => parseArgs(['--network'])).toThrow(expect.objectContaining({ exitCode: 2, message: 'option --network needs a value; see claudebox --help' }))
  })

  test('--allow-host, --deny-host and --allow-preset are repeatable and keep their order', () => {
    const options = parseArgs([
      '--network=allow',
      '--allow-host',
      'b.example',
      '--allow-host=a.example:8080',
      '--deny-host',
      '*.bad.example',
      '--allow-host',
      '*.c.example',
      '--allow-preset',
      'npm',
      '--allow-preset=github',
      '--deny-host=x.example:*',
      '-p',
      'hi',
    ])
    expect(options.claudeArgs).toEqual(['-p', 'hi'])
    expect(options.sandbox).toEqual({
      network: 'allow',
      allowHosts: ['b.example', 'a.example:8080', '*.c.example'],
      denyHosts: ['*.bad.example', 'x.example:*'],
      allowPresets: ['npm', 'github'],
    })
    expect(options.claudeArgs).toEqual(['-p', 'hi'])
  })

  test.each([
    [['--allow-host', 'a*b'], /^--allow-host\/--deny-host "a\*b": a wildcard may only be a leading "\*\." \(like \*\.example\.com\); see claudebox --help$/],
    [['--allow-host', 'ok.example', '--allow-host', 'x:0'], /^--allow-host\/--deny-host "x:0": the port must be 1-65535 or \*/],
    [['--deny-host', 'http://x'], /^--allow-host\/--deny-host "http:\/\/x"/],
    [['--allow-host', ''], /names no host/],
    [['--allow-preset', 'nope'], /^--allow-preset: unknown preset "nope" \(presets: npm, pypi, crates, go, github\)$/],
    [['--allow-host'], /^option --allow-host needs a value/],
  ])('%j is a usage error (status 2)', (argv, message) => {
    expect(() => parseArgs(['--network=allow', ...argv])).toThrow(expect.objectContaining({ exitCode: 2 }))
    expect(() => parseArgs(['--network=allow', ...argv])).toThrow(message)
  })
})

describe('shq', () => {
  const hostile = ['osc52\x1b]52;c;aGk=\x07end', 'clear\x1b[2J', "cr\rit's", 'c1\u009b31m', 'bidi\u202etxt.exe', 'del\x7f']
  const words = ['', 'plain', 'with space', "it's", '$HOME', '`id`', 'line\nbreak', '*', '~/x', 'a;b', 'back\\slash', 'prøjekt 日本', '--flag=v', '"dq"', ...hostile]
  test('round-trips through sh', () => {
    const script = `printf '%s\\0' ${words.map(shq).join(' ')}`
    const out = execFileSync('sh', ['-c', script], { encoding: 'utf8' })
    expect(out.split('\0').slice(0, -1)).toEqual(words)
  })
  test('shows no raw control character (escape sequences, C1, bidi) yet pastes back exactly', () => {
    for (const word of hostile) expect(hasRawControl(shq(word))).toBe(false)
  })
  test('leaves safe words bare', () => {
    expect(shq('/usr/bin/bwrap')).toBe('/usr/bin/bwrap')
    expect(shq('--ro-bind')).toBe('--ro-bind')
  })
})
