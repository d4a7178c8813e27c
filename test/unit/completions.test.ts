// Completion scripts: every option offered, claude's completion used for the rest; the bash script
// is run in bash, the zsh and fish ones parsed by their shells where installed (always in CI).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { completionScript, SHELLS } from '../../src/cli/completions.js'
import { PRESETS } from '../../src/network/policy.js'
import { OWN_OPTIONS } from '../../src/cli/options.js'
import { suiteTempDir, tempDir } from '../helpers/temp.js'

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

describe('options given as { flag, description, takesValue }', () => {
  const options = [
    { flag: '--alpha', description: "it's [x]", takesValue: true },
    { flag: '--beta', description: 'plain', takesValue: false },
  ]
  test('fish: a value-taking option requires one; quotes survive', () => {
    const script = completionScript('fish', options)
    expect(script).toContain(`complete -c claudebox -l alpha -x -d 'it\\'s [x]'`)
    expect(script).toContain(`complete -c claudebox -l beta -d 'plain'`)
  })
  test('zsh: a value-taking option gets a value spec', () => {
    const script = completionScript('zsh', options)
    expect(script).toContain(`'--alpha[its (x)]:value: '`)
    expect(script).toContain(`'--beta[plain]'`)
  })
  test('bash: nothing is offered after a value-taking option', () => {
    expect(completionScript('bash', options)).toContain('--alpha) COMPREPLY=(); return ;;')
  })
})

describe('bash completion, run in bash', () => {
  const dir = suiteTempDir('cb-comp-')
  let file = ''
  const withPresets = OWN_OPTIONS.map(o => (o.flag === '--allow-preset' ? { ...o, choices: Object.keys(PRESETS) } : o))
  beforeAll(() => {
    file = path.join(dir(), 'claudebox.bash')
    fs.writeFileSync(file, completionScript('bash', withPresets))
  })
  const complete = (words: string[], setup = ''): string[] =>
    execFileSync(
      'bash',
      [
        '-c',
        `${setup}\nsource '${file}'; COMP_WORDS=(${words.map(w => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_LINE='${words.join(' ')}'; COMP_POINT=\${#COMP_LINE}; _claudebox; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8', cwd: path.dirname(file) },
    )
      .trim()
      .split('\n')

  test('parses', () => {
    expect(() => execFileSync('bash', ['-n', file], { stdio: 'pipe' })).not.toThrow()
  })
  test('completes our options and their values', () => {
    expect(complete(['claudebox', '--dry'])).toEqual(['--dry-run'])
    expect(complete(['claudebox', '--completions', 'f'])).toEqual(['fish'])
    fs.mkdirSync(path.join(path.dirname(file), 'somedir'), { recursive: true })
    expect(complete(['claudebox', '--bind', 'some'])).toEqual(['somedir'])
  })
  test('offers the network modes, the preset names and the profiles of config.json (asked of claudebox --profiles)', () => {
    expect(complete(['claudebox', '--network', 'a'])).toEqual(['allow'])
    expect(complete(['claudebox', '--allow-preset', 'c'])).toEqual(['crates'])
    expect(complete(['claudebox', '--profile', 'o'], 'claudebox() { [ "$1" = --profiles ] && printf "offline\\nopus\\nweb\\n"; }')).toEqual(['offline', 'opus'])
  })
  test("delegates the rest to claude's completion, as if the command were claude", () => {
    const fake = `_fake_claude() { COMPREPLY=(--from-claude "line=$COMP_LINE" "point=$COMP_POINT"); }; complete -F _fake_claude claude`
    expect(complete(['claudebox', '-c', '--fr'], fake)).toEqual(['--from-claude', 'line=claude -c --fr', 'point=14'])
    // Our options and claude's, both, for a word starting with --.
    expect(complete(['claudebox', '--'], fake)).toEqual(expect.arrayContaining(['--dry-run', '--from-claude']))
  })
  test('uses a _claude function when no completion is registered for claude', () => {
    expect(complete(['claudebox', '--mo'], '_claude() { COMPREPLY=(--model); }')).toEqual(['--model'])
  })
  test('completes file names when claude has no completion', () => {
    fs.writeFileSync(path.join(path.dirname(file), 'notes.txt'), '')
    expect(complete(['claudebox', 'note'])).toEqual(['notes.txt'])
  })
  // CI installs zsh and fish, so there these never skip.
  test.skipIf(!has('zsh') && !process.env['CI'])('zsh script parses', () => {
    expect(() => execFileSync('zsh', ['-n', '-c', completionScript('zsh', OWN_OPTIONS)], { stdio: 'pipe' })).not.toThrow()
  })
  test.skipIf(!has('fish') && !process.env['CI'])('fish script parses and completes ours and claude\'s options', () => {
    expect(() => execFileSync('fish', ['--no-execute', '-c', completionScript('fish', OWN_OPTIONS)], { stdio: 'pipe' })).not.toThrow()
    const fishFile = path.join(path.dirname(file), 'claudebox.fish')
    fs.writeFileSync(fishFile, completionScript('fish', OWN_OPTIONS))
    const home = path.dirname(file) // fish may write its history and variables under HOME
    const out = execFileSync(
      'fish',
      ['--no-config', '-c', `source '${fishFile}'; complete -c claude -l model -d model; complete -C 'claudebox --dr'; complete -C 'claudebox --completions '; complete -C 'claudebox -c --mod'; complete -C 'claudebox --network '`],
      { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: home, XDG_CONFIG_HOME: home, XDG_DATA_HOME: home } },
    )
    const words = out.split('\n').map(line => line.split('\t')[0])
    expect(words).toEqual(expect.arrayContaining(['--dry-run', 'bash', 'zsh', 'fish', '--model', 'open', 'none', 'allow']))
  })
})

describe('claudebox --profiles', () => {
  test("prints config.json's profile names, one per line (what the completions offer)", () => {
    const home = tempDir('cb-prof-')
    const state = path.join(home, '.claudebox')
    fs.mkdirSync(state)
    fs.writeFileSync(path.join(state, 'config.json'), JSON.stringify({ profiles: { offline: { network: 'none' }, web: { network: 'open' } } }))
    const out = execFileSync(process.execPath, [path.join(import.meta.dirname, '../../bin/claudebox.js'), '--profiles'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: home, CLAUDEBOX_HOME: state } })
    expect(out).toBe('offline\nweb\n')
  })
})
