// Containment with the real Claude Code: a hook the agent writes into its user settings in project A
// runs in A's next session and never in B's; a model choice and an agent saved inside persist for
// that project only until promoted on the host; the account's claude.ai connectors stay off unless
// --connectors (Claude's own debug log says which).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld, type World } from '../helpers/cli.js'
import { toolResults, useMockApi } from '../helpers/messages-api.js'
import { isAgentTurn, runClaude, scripted } from '../helpers/e2e.js'

const api = useMockApi()

const claude = (world: World, cwd: string, args: string[], env: Record<string, string | undefined> = {}) => runClaude(world, cwd, args, api.url, env)

async function agentRuns(world: World, cwd: string, command: string): Promise<string> {
  await api.close()
  await api.start(scripted([{ name: 'Bash', input: { command, description: 'step' } }]))
  const r = await claude(world, cwd, ['-p', 'go', '--dangerously-skip-permissions'])
  expect(r.exitCode, r.stderr).toBe(0)
  return api.messages().filter(isAgentTurn).flatMap(req => toolResults(req)).map(t => t.content).join('\n')
}

const HOOK = JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'touch "$CLAUDE_PROJECT_DIR/HOOK-RAN"' }] }] } })

describe.skipIf(!HAVE_BWRAP)('containment with the real Claude Code', () => {
  test('a hook the agent plants in its user settings runs in its own project only', async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    const planted = await agentRuns(world, a, `printf '%s' '${HOOK}' > "$CLAUDE_CONFIG_DIR/settings.json" && echo PLANTED`)
    expect(planted).toContain('PLANTED')

    await api.start()
    const inB = await claude(world, b, ['-p', 'hello'])
    expect(inB.stdout).toBe('pong')
    expect(fs.existsSync(path.join(b, 'HOOK-RAN'))).toBe(false)
    // The same hook is live in A: the test would see it fire in B had it leaked.
    const inA = await claude(world, a, ['-p', 'hello'])
    expect(inA.stdout).toBe('pong')
    expect(fs.existsSync(path.join(a, 'HOOK-RAN'))).toBe(true)
    expect(inA.stderr + inB.stderr).not.toContain('HOOK')
  })

  test('a model choice and an agent saved inside persist for that project; promotion brings the agent to another project', async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    // As Claude writes its settings (temp file + rename) and an agent from the /agents screen.
    const saved = await agentRuns(
      world,
      a,
      `cd "$CLAUDE_CONFIG_DIR" && printf '{"model":"claude-owl-test"}' > .s.tmp && mv .s.tmp settings.json && mkdir -p agents && printf -- '---\\nname: owl-reviewer\\ndescription: Reviews code like an owl\\n---\\nReview.\\n' > agents/owl-reviewer.md && echo SAVED`,
    )
    expect(saved).toContain('SAVED')

    await api.start()
    await claude(world, a, ['-p', 'hello'])
    const bodyA = JSON.stringify(api.messages().at(-1)?.body)
    expect(bodyA).toContain('"model":"claude-owl-test"')
    expect(bodyA).toContain('owl-reviewer')
    await claude(world, b, ['-p', 'hello'])
    const bodyB = JSON.stringify(api.messages().at(-1)?.body)
    expect(bodyB).not.toContain('claude-owl-test')
    expect(bodyB).not.toContain('owl-reviewer')

    const list = await claudebox(world, ['--proposals', '--json'], { cwd: a })
    const ids = (JSON.parse(list.stdout) as { id: string; file: string }[]).map(p => p.id)
    const owl = ids.find(id => id.endsWith(':agents/owl-reviewer.md'))
    expect(ids.some(id => id.endsWith(':settings.json'))).toBe(true)
    const promoted = await claudebox(world, ['--promote', owl as string, '--yes'], { cwd: a })
    expect(promoted.exitCode, promoted.stderr).toBe(0)
    await claude(world, b, ['-p', 'hello'])
    const bodyB2 = JSON.stringify(api.messages().at(-1)?.body)
    expect(bodyB2).toContain('owl-reviewer')
    expect(bodyB2).not.toContain('claude-owl-test') // the model choice was not promoted
  })

  test("the account's claude.ai connectors are off unless --connectors (an agent's settings cannot turn them on)", async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const store = path.join(world.claudeboxHome, 'shared/credentials')
    fs.mkdirSync(store, { recursive: true, mode: 0o700 })
    const scopes = ['user:inference', 'user:profile', 'user:sessions:claude_code', 'user:mcp_servers']
    fs.writeFileSync(path.join(store, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-c', refreshToken: 'r', expiresAt: 4102444800000, scopes, subscriptionType: 'max' } }), { mode: 0o600 })
    await api.start()
    const port = new URL(api.url).port
    // Claude fetches connectors from api.anthropic.com: the proxy refuses it, so nothing leaves the machine.
    const base = ['--network=allow', '--allow-host', `127.0.0.1:${port}`, '--deny-host', 'api.anthropic.com']
    const off = await claude(world, a, [...base, '--', '-p', 'hello', '--debug'], { ANTHROPIC_API_KEY: undefined })
    expect(off.stdout, off.stderr).toContain('pong')
    const logs = (): string => readDebugLogs(world)
    expect(logs()).toContain('[claudeai-mcp] Disabled via env var')
    expect(logs()).not.toContain('[claudeai-mcp] Fetching from')
    // The agent's own settings ask for them (env and setting): still off.
    const instance = path.dirname(path.dirname(readDebugPaths(world)[0] as string))
    fs.writeFileSync(path.join(instance, 'settings.json'), JSON.stringify({ env: { ENABLE_CLAUDEAI_MCP_SERVERS: 'true' }, disableClaudeAiConnectors: false }))
    clearDebugLogs(world)
    const planted = await claude(world, a, [...base, '--', '-p', 'hello', '--debug'], { ANTHROPIC_API_KEY: undefined })
    expect(planted.stdout, planted.stderr).toContain('pong')
    expect(logs()).toMatch(/\[claudeai-mcp\] Disabled via (env var|disableClaudeAiConnectors setting)/)
    expect(logs()).not.toContain('[claudeai-mcp] Fetching from')
    const on = await claude(world, a, ['--connectors', ...base, '--', '-p', 'hello', '--debug'], { ANTHROPIC_API_KEY: undefined })
    expect(on.stdout, on.stderr).toContain('pong')
    expect(logs()).toContain('[claudeai-mcp] Fetching from')
  })
})

/** Claude's --debug logs, which it writes under its config dir (the instance). */
function readDebugPaths(world: World): string[] {
  const instances = path.join(world.claudeboxHome, 'instances')
  return fs.readdirSync(instances).flatMap(id => {
    const dir = path.join(instances, id, 'debug')
    return fs.existsSync(dir) ? fs.readdirSync(dir).map(name => path.join(dir, name)).filter(file => fs.lstatSync(file).isFile()) : []
  })
}

const readDebugLogs = (world: World): string => readDebugPaths(world).map(file => fs.readFileSync(file, 'utf8')).join('')
const clearDebugLogs = (world: World): void => readDebugPaths(world).forEach(file => fs.rmSync(file))
