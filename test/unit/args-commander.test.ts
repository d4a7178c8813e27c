// parseOwn reads claudebox's own options as commander would read the same table (options.ts):
// commander is the oracle here, so the launch path need not load it.
import { CommanderError } from 'commander'
import { describe, expect, test } from 'vitest'
import { parseOwn } from '../../src/cli/args.js'
import { buildProgram } from '../../src/cli/help.js'
import { splitArgs } from '../../src/cli/options.js'

async function commanderReads(own: readonly string[]): Promise<unknown> {
  const program = await buildProgram()
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
    ['--ssh-agent', '--connectors', '--shell', '--writable-git-config', '--io-uring', '--allow-dangerous-root', '--yes', '--login'],
    ['--adopt', '/old', '--dry-run', '--yes'],
    ['--promote', 'x', '--dismiss=y', '--proposals', '--sessions', '--profiles', '--completions', 'zsh', '--help', '--version', '--broken', '--force'],
  ])('%j: as commander reads it', async (...argv) => {
    const { own } = splitArgs(argv)
    expect(own.length).toBeGreaterThan(0)
    expect(parseOwnReads(own)).toEqual(await commanderReads(own))
  })

  test('a value given to an option that takes none is named plainly', () => {
    expect(() => parseOwn(['--check=yes'])).toThrow("option '--check' takes no value (got '--check=yes'); see claudebox --help")
    expect(() => parseOwn(['--check=yes'])).toThrow(expect.objectContaining({ exitCode: 2 }))
  })
})
