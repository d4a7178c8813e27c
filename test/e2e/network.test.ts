// The real Claude Code under --network=allow: its API calls go through claudebox's proxy when the
// API is allowed, claudebox refuses to start it (quickly, with the fix) when it is not, and the
// agent's own tools meet the same allowlist.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { listenOnLoopback } from '../helpers/servers.js'
import { HAVE_BWRAP, makeRepo, makeWorld, type World, instancePath } from '../helpers/cli.js'
import { toolResults, type MockApi, useMockApi } from '../helpers/messages-api.js'
import { isAgentTurn, runClaude, scripted } from '../helpers/e2e.js'

const api = useMockApi()


/** A host service on 127.0.0.1 that records whether anybody reached it. */
async function hostService(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '')
    res.end('secret from the host\n')
  })
  return { port: await listenOnLoopback(server), hits }
}

const apiPort = (mock: MockApi): number => Number(new URL(mock.url).port)
const deniedLogs = (world: World, repo: string): string[] => {
  const dir = path.join(instancePath(world, `${repo}/.git`), 'claudebox/network')
  return fs.existsSync(dir) ? fs.readdirSync(dir).map(name => fs.readFileSync(path.join(dir, name), 'utf8')) : []
}

describe.skipIf(!HAVE_BWRAP)('the real Claude Code with --network=allow', () => {
  /** Without the gateway (secretless: false), Claude's API traffic goes through the egress proxy. */
  const optOut = (world: World): void => {
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"secretless": false}')
  }

  test('secretless off: the mock API allowed, a whole turn goes through the proxy', async () => {
    await api.start()
    const world = makeWorld()
    optOut(world)
    const repo = makeRepo(world.home, 'src/app')
    const r = await runClaude(world, repo, ['--network=allow', '--allow-host', `127.0.0.1:${apiPort(api)}`, '-p', 'hello'], api.url)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('pong')
    expect(api.messages()).toHaveLength(1)
    expect(r.stderr).not.toMatch(/blocked/)
    expect(deniedLogs(world, repo)).toEqual([])
  })

  test('secretless off: the API endpoint named on the host is reached through the proxy with no option, even on loopback; denied, claudebox says so at once', async () => {
    await api.start()
    const world = makeWorld()
    optOut(world)
    const repo = makeRepo(world.home, 'src/app')
    const ok = await runClaude(world, repo, ['-p', 'hello'], api.url)
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(ok.stdout).toBe('pong')
    const started = Date.now()
    const r = await runClaude(world, repo, ['--deny-host', `127.0.0.1:${apiPort(api)}`, '-p', 'hello'], api.url)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(`does not admit ANTHROPIC_BASE_URL (${api.url}): in the deny list`)
    expect(api.messages()).toHaveLength(1)
  })

  test("the agent's own tools meet the allowlist: a host service not listed is refused and logged, direct connections fail", async () => {
    const service = await hostService()
    const probe = [
      `curl -sS -m 5 -w ' code=%{http_code}' http://127.0.0.1:${service.port}/via-proxy`,
      `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${service.port}/direct; echo " direct=$?"`,
    ].join('; ')
    await api.start(scripted([{ name: 'Bash', input: { command: probe, description: 'reach the host' } }]))
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    const r = await runClaude(world, repo, ['--network=allow', '--allow-host', `127.0.0.1:${apiPort(api)}`, '-p', 'go', '--dangerously-skip-permissions'], api.url)
    expect(r.exitCode, r.stderr).toBe(0)
    const output = api.messages().filter(isAgentTurn).flatMap(req => toolResults(req)).map(t => t.content).join('\n')
    expect(output).toContain(`127.0.0.1:${service.port} is blocked: not in the allowlist`)
    expect(output).toMatch(/code=403/)
    expect(output).toMatch(/direct=7/)
    expect(service.hits).toEqual([])
    expect(r.stderr).toMatch(/1 connection blocked by the network allowlist; see .*claudebox\/network\/denied-.*\.log/)
    expect(deniedLogs(world, repo).join('')).toMatch(new RegExp(`\\t127\\.0\\.0\\.1\\t${service.port}\\tnot in the allowlist\\n`))
  })
})
