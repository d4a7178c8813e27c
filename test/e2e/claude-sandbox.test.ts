// Claude Code's own per-command sandbox (sandbox.enabled) cannot start inside claudebox (no nested
// user namespaces, by design). Users who turned it on must still get a working session: claudebox
// tells Claude for the session that claudebox is the sandbox, and says so in one line.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { HAVE_BWRAP, makeRepo, makeWorld, type World } from '../helpers/cli.js'
import { toolResults, useMockApi } from '../helpers/messages-api.js'
import { isAgentTurn, runClaude, scripted } from '../helpers/e2e.js'

const api = useMockApi()

const IN_FORCE = "Claude Code's own sandbox (sandbox.enabled) is off for this session: claudebox's sandbox is in force"

function worldWith(sandbox: Record<string, unknown>, where: 'user' | 'project'): { world: World; project: string } {
  const world = makeWorld()
  const project = makeRepo(world.home, 'src/p')
  const file = where === 'user' ? path.join(world.claudeboxHome, 'shared/settings.json') : path.join(project, '.claude/settings.json')
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify({ sandbox }))
  return { world, project }
}

describe.skipIf(!HAVE_BWRAP)("Claude Code's own sandbox inside claudebox", () => {
  test('failIfUnavailable in the user settings: Claude starts and answers; one line says which sandbox is in force', async () => {
    const { world, project } = worldWith({ enabled: true, failIfUnavailable: true }, 'user')
    await api.start()
    const r = await runClaude(world, project, ['-p', 'hello'], api.url)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('pong')
    expect(r.stderr).toContain(IN_FORCE)
    expect(r.stderr).not.toMatch(/Refusing to start|WITHOUT sandboxing/)
  })

  test('enabled in the project settings: Bash commands run, with no warning that restrictions are not enforced', async () => {
    const { world, project } = worldWith({ enabled: true }, 'project')
    await api.start(scripted([{ name: 'Bash', input: { command: 'echo RAN-$((40+2))', description: 'step' } }]))
    const r = await runClaude(world, project, ['-p', 'go', '--dangerously-skip-permissions'], api.url)
    expect(r.exitCode, r.stderr).toBe(0)
    const results = api.messages().filter(isAgentTurn).flatMap(req => toolResults(req)).map(t => t.content).join('\n')
    expect(results).toContain('RAN-42')
    expect(r.stderr).toContain(IN_FORCE)
    expect(r.stdout + r.stderr).not.toMatch(/WITHOUT sandboxing|No permissions to create new namespace/)
  })

  test('without sandbox.enabled anywhere, no line about it', async () => {
    const { world, project } = worldWith({ enabled: false }, 'user')
    await api.start()
    const r = await runClaude(world, project, ['-p', 'hello'], api.url)
    expect(r.stdout).toBe('pong')
    expect(r.stderr).not.toContain('sandbox.enabled')
  })
})
