import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { completionScript, SHELLS } from '../../src/completions.js'
import { OWN_OPTIONS } from '../../src/options.js'

const has = (program: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe.each(SHELLS)('%s completion', shell => {
  const script = completionScript(shell, OWN_OPTIONS)
  test('offers every claudebox option', () => {
    for (const option of OWN_OPTIONS) expect(script).toContain(shell === 'fish' ? `-l ${option.flag.slice(2)}` : option.flag)
  })
  test("falls back to claude's completion", () => {
    expect(script).toMatch(shell === 'fish' ? /complete -c claudebox -w claude/ : shell === 'zsh' ? /\$\+functions\[_claude\]/ : /complete -p claude/)
  })
})

describe('bash completion, run in bash', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cb-comp-')), 'claudebox.bash')
  fs.writeFileSync(file, completionScript('bash', OWN_OPTIONS))
  const complete = (words: string[], setup = ''): string =>
    execFileSync('bash', ['-c', `${setup}\nsource '${file}'; COMP_WORDS=(${words.map(w => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _claudebox; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' }).trim()

  test('parses', () => {
    execFileSync('bash', ['-n', file])
  })
  test('completes our options', () => {
    expect(complete(['claudebox', '--dry']).split('\n')).toEqual(['--dry-run'])
    expect(complete(['claudebox', '--completions', 'f'])).toBe('fish')
  })
  test("delegates the rest to claude's completion function when one is loaded", () => {
    const fake = '_fake_claude() { COMPREPLY=(--from-claude); }; complete -F _fake_claude claude'
    expect(complete(['claudebox', '-c', '--fr'], fake).split('\n')).toContain('--from-claude')
  })
  // CI installs zsh and fish, so there these never skip.
  test.skipIf(!has('zsh') && !process.env['CI'])('zsh script parses', () => {
    execFileSync('zsh', ['-n', '-c', completionScript('zsh', OWN_OPTIONS)])
  })
  test.skipIf(!has('fish') && !process.env['CI'])('fish script parses', () => {
    execFileSync('fish', ['--no-execute', '-c', completionScript('fish', OWN_OPTIONS)])
  })
})
