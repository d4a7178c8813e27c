// The escape suite, terminal injection through claudebox's own output: text the agent or a cloned
// repository controls (a project-root, a directory name, a transcript, a .claudebox.json value)
// never reaches the terminal with a raw control character, in any mode.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { hasRawControl } from '../../src/cli/terminal-safe.js'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld, instancePath } from '../helpers/cli.js'

const OSC52 = '\x1b]52;c;cHduZWQ=\x07'
const CLEAR = '\x1b[2J'
const sh = { CLAUDEBOX_CLAUDE: '/bin/sh' }

function expectClean(r: { stdout: string; stderr: string }, what: string): void {
  expect(hasRawControl(r.stdout), `${what} stdout`).toBe(false)
  expect(hasRawControl(r.stderr), `${what} stderr`).toBe(false)
}

describe.skipIf(!HAVE_BWRAP)('no raw control character reaches the terminal', () => {
  test('a planted project-root: --list, --list --json, --gc --dry-run', async () => {
    const world = makeWorld()
    const dir = path.join(world.claudeboxHome, 'instances', 'abcdef0123456789')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'project-root'), `/gone/${OSC52}${CLEAR}\u202eexe\n`)
    for (const args of [['--list'], ['--list', '--json'], ['--gc', '--dry-run'], ['--gc']]) {
      const r = await claudebox(world, args, { cwd: world.home })
      expectClean(r, args.join(' '))
      expect(r.stdout + r.stderr).toMatch(/\\(x1b|u001b)\]52;c;/)
    }
    expect(JSON.parse((await claudebox(world, ['--list', '--json'], { cwd: world.home })).stdout)).toBeInstanceOf(Array)
  })

  test('a project directory whose name holds escape sequences: --dry-run (still pastes), --check, a launch error', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, `src/p${CLEAR}${OSC52}`)
    const dry = await claudebox(world, ['--dry-run', '--network=open', '--', '-c', 'pwd'], { cwd: project, env: sh })
    expect(dry.exitCode).toBe(0)
    expectClean(dry, '--dry-run')
    // Pasted into sh, the escaped path is the real one again.
    const pasted = execFileSync('sh', ['-c', dry.stdout], { cwd: project, env: { ...world.env, ...sh }, encoding: 'utf8' })
    expect(pasted.trim()).toBe(project)
    const check = await claudebox(world, ['--check'], { cwd: project, env: sh })
    expectClean(check, '--check')
    const failed = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: { CLAUDEBOX_CLAUDE: `/nonexistent${CLEAR}` } })
    expect(failed.exitCode).toBe(127)
    expectClean(failed, 'launch error')
  })

  test('a .claudebox.json value in an error', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/p')
    fs.writeFileSync(path.join(project, '.claudebox.json'), JSON.stringify({ [`net${OSC52}work`]: 'x', profile: `p${CLEAR}` }))
    const r = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(r.exitCode).toBe(2)
    expectClean(r, 'config error')
  })

  test("a transcript's first message: --sessions", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/p')
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })).exitCode).toBe(0)
    const folder = path.join(instancePath(world, `${project}/.git`), 'projects', project.replaceAll('/', '-'))
    fs.mkdirSync(folder, { recursive: true })
    const entry = { type: 'user', cwd: project, message: { role: 'user', content: `hello ${OSC52}${CLEAR}\u009b2J` } }
    fs.writeFileSync(path.join(folder, '0b8a4b8e-0000-4000-8000-000000000000.jsonl'), `${JSON.stringify(entry)}\n`)
    for (const args of [['--sessions'], ['--sessions', '--json']]) {
      const r = await claudebox(world, args, { cwd: project })
      expect(r.stdout).toContain('hello')
      expectClean(r, args.join(' '))
    }
  })
})
