// parseOwn reads claudebox's own options as commander would read the same table (options.ts):
// commander is the oracle here, so the launch path need not load it.
import { Command, CommanderError, Option } from 'commander'
import { describe, expect, test } from 'vitest'
import { parseOwn } from '../../src/cli/args.js'
import { OWN_OPTIONS, splitArgs } from '../../src/cli/options.js'

function commanderReads(own: readonly string[]): unknown {
  const program = new Command('claudebox').helpOption(false).exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} })
  for (const own of OWN_OPTIONS) {
    const option = new Option(own.value ? `${own.flag} <${own.value}>` : own.flag, own.description)
    if (own.conflicts) option.conflicts([...own.conflicts])
    if (own.choices) option.choices([...own.choices])
    if (own.repeatable) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    program.addOption(option)
  }
  try {
    program.parse(own, { from: 'user' })
    return program.opts()
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
    return `${error.message.replace(/^error: /, '').replace(/\.$/, '')}; see claudebox --help`
  }
}

function parseOwnReads(own: readonly string[]): unknown {
  try {
    return { ...parseOwn(own) }
  } catch (error) {
    return (error as Error).message
  }
}

describe('parseOwn', () => {
  test.each<string[]>([
    ['--dry-run'],
    ['--network=open'],
    ['--network', 'none', '--no-network'],
    ['--no-network', '--network=open'],
    ['--network=alow'],
    ['--network='],
    ['--allow-host', 'a.example', '--allow-host=b.example:8443', '--deny-host', 'c', '--allow-preset', 'npm', '--allow-preset=pypi'],
    ['--profile', 'a', '--profile=b'],
    ['--profile='],
    ['--check', '--gc'],
    ['--gc', '--check'],
    ['--list', '--dry-run'],
    ['--check', '--list', '--gc'],
    ['--list', '--check'],
    ['--gc', '--list', '--json'],
    ['--ro-bind', '/a', '--bind=/b', '--env', 'X=1', '--env=Y', '--pids-limit', '10', '--memory-limit=4G', '--cpu-limit', '0.5'],
    ['--ssh-agent', '--connectors', '--shell', '--writable-git-config', '--allow-dangerous-root', '--yes', '--login'],
    ['--adopt', '/old', '--dry-run', '--yes'],
    ['--promote', 'x', '--dismiss=y', '--proposals', '--sessions', '--profiles', '--completions', 'zsh', '--help', '--version', '--broken', '--force'],
  ])('%j: as commander reads it', (...argv) => {
    const { own } = splitArgs(argv)
    expect(own.length).toBeGreaterThan(0)
    expect(parseOwnReads(own)).toEqual(commanderReads(own))
  })

  test('a value given to an option that takes none is named plainly', () => {
    expect(() => parseOwn(['--check=yes'])).toThrow("option '--check' takes no value (got '--check=yes'); see claudebox --help")
    expect(() => parseOwn(['--check=yes'])).toThrow(expect.objectContaining({ exitCode: 2 }))
  })
})
