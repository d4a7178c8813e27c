// The closed network is the default: the one-time notice without a terminal, the preset offer on a
// real terminal (saved in config.json), and the upgrade wording for an existing state dir.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, FIXTURES, HAVE_BWRAP, inSandbox, makeRepo, makeWorld, type World } from '../helpers/cli.js'

/** A launch on a terminal (a pty) that types `answer` at the network question; its whole output and status. */
function answering(world: World, repo: string, answer: string, script: string, env: Record<string, string> = {}): { stdout: string; status: number | null } {
  return spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), '(names separated', answer, process.execPath, BIN, '--', '-c', script], {
    cwd: repo,
    env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', ...env },
    encoding: 'utf8',
    timeout: 40_000,
  })
}

const NOTICE = /^claudebox: network: the sandbox reaches only Claude's API \(through claudebox's proxy\); widen it with --allow-preset NAME/m

describe.skipIf(!HAVE_BWRAP)('the closed network by default', () => {
  test('without a terminal: one line, once, saying how to widen it; the launch goes on with the default list', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const first = await inSandbox(world, repo, 'echo RAN; curl -s -o /dev/null -w "%{http_code}" http://example.invalid/')
    expect(first.stdout).toBe('RAN\n403')
    expect(first.stderr).toMatch(NOTICE)
    const second = await inSandbox(world, repo, 'echo RAN')
    expect(second.stderr).not.toContain('network:')
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(dry.stdout).toContain('# network allow: api.anthropic.com, platform.claude.com, claude.ai, console.anthropic.com\n')
  })

  test('an explicit network (flag, config) gets no notice', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    expect((await claudebox(world, ['--network=open', '--', '-c', 'true'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).stderr).toBe('')
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"network": "allow"}')
    expect((await inSandbox(world, repo, 'true')).stderr).toBe('')
  })

  test('upgrading (instances from before): the notice says what changed', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    expect((await claudebox(world, ['--network=open', '--', '-c', 'true'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).exitCode).toBe(0)
    const r = await inSandbox(world, repo, 'true')
    expect(r.stderr).toMatch(/^claudebox: network: changed: the sandbox no longer shares the host's network; by default it reaches only Claude's API/m)
  })

  test('on a terminal: the presets are offered; the answer is saved in config.json and unknown names are said', () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    // With a sign-in, so that the API gateway already listens when the answer changes the plan
    // (red team: the new plan had other sockets and another key, and the launch failed).
    const r = answering(world, repo, 'npm github bogus', 'echo RAN', { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' })
    expect(r.stdout).toContain('npm     registry.npmjs.org')
    expect(r.stdout).toContain('not presets, ignored: bogus')
    expect(r.stdout).toContain('RAN')
    const config = JSON.parse(fs.readFileSync(path.join(world.claudeboxHome, 'config.json'), 'utf8')) as { allowPresets: string[] }
    expect(config.allowPresets).toEqual(['npm', 'github'])
    // Asked once.
    const again = answering(world, repo, '', 'echo AGAIN')
    expect(again.stdout).toContain('AGAIN')
    expect(again.stdout).not.toContain('names separated')
  })

  test('Ctrl-C at the question stops the launch (130): nothing runs, nothing is saved, and it is asked again', () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const r = answering(world, repo, '\x03', 'echo RAN')
    expect(r.status, r.stdout).toBe(130)
    expect(r.stdout).toContain('claudebox: interrupted')
    expect(r.stdout).not.toContain('RAN')
    expect(fs.existsSync(path.join(world.claudeboxHome, 'config.json'))).toBe(false)
    const again = answering(world, repo, '', 'echo AGAIN')
    expect(again.stdout).toContain('names separated')
    expect(again.stdout).toContain('AGAIN')
  })

  test('Ctrl-D at the question (no more input) stops the launch as Ctrl-C does (it ran the program before)', () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const r = answering(world, repo, '\x04', 'echo RAN')
    expect(r.status, r.stdout).toBe(130)
    expect(r.stdout).not.toContain('RAN')
  })

  test('a SIGTERM while the question waits ends the launch by that signal, with the terminal given back (it stayed raw as root)', () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const r = answering(world, repo, 'signal:SIGTERM', 'echo RAN')
    expect(r.status, r.stdout).toBe(256 - 15) // the fixture's status for a death by SIGTERM (-15)
    expect(r.stdout).toContain('terminal: normal')
    expect(r.stdout).not.toContain('RAN')
  })
})
