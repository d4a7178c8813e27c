// The login never enters the sandbox, with the real Claude Code: a whole turn works while the API
// receives the real credential, and a scan from inside (files under every bound path, the
// environment, every /proc/*/environ and cmdline) finds no token; an expired OAuth login is
// refreshed once on the host for two sessions at once.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { BIN, HAVE_BWRAP, makeRepo, makeWorld, type World } from '../helpers/cli.js'
import { toolResults, useMockApi } from '../helpers/messages-api.js'
import { isAgentTurn, runClaude, scripted } from '../helpers/e2e.js'

const api = useMockApi()

const closers: (() => void)[] = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

const oauth = (access: string, refresh: string, expiresAt = 4102444800000): string =>
  JSON.stringify({ claudeAiOauth: { accessToken: access, refreshToken: refresh, expiresAt, scopes: ['user:inference', 'user:profile'], subscriptionType: 'max' } })

function storeLogin(world: World, content: string): string {
  const store = path.join(world.claudeboxHome, 'shared/credentials')
  fs.mkdirSync(store, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(store, '.credentials.json'), content, { mode: 0o600 })
  return path.join(store, '.credentials.json')
}

/** Searches everything the sandbox can see that could hold a secret, for the words given in pieces. */
const scan = (pieces: string[][]): string => {
  const words = pieces.map(([a, b]) => `"${a}""${b}"`).join(' ')
  return [
    `for w in ${words}; do`,
    '  grep -rlF -- "$w" "$HOME" "$CLAUDE_CONFIG_DIR" "$PWD" /tmp /run 2>/dev/null | sed "s/^/FILE /"',
    '  for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do grep -qF -- "$w" "$f" 2>/dev/null && echo "PROC $f"; done',
    '  env | grep -F -- "$w" | sed "s/^/ENV /"',
    'done',
    'echo SCAN-DONE',
  ].join('\n')
}

async function scanInside(world: World, repo: string, pieces: string[][], env: Record<string, string | undefined>): Promise<string> {
  await api.start(scripted([{ name: 'Bash', input: { command: scan(pieces), description: 'scan' } }]))
  const r = await runClaude(world, repo, ['-p', 'scan', '--dangerously-skip-permissions'], api.url, env)
  expect(r.exitCode, r.stderr).toBe(0)
  return api.messages().filter(isAgentTurn).flatMap(req => toolResults(req)).map(t => t.content).join('\n')
}

describe.skipIf(!HAVE_BWRAP)('secretless: the login stays on the host', () => {
  test('an OAuth login: the API receives the real token, nothing inside holds the access or refresh token', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    storeLogin(world, oauth('sk-ant-oat01-REALACCESS', 'sk-ant-ort01-REALREFRESH'))
    const found = await scanInside(world, repo, [['REAL', 'ACCESS'], ['REAL', 'REFRESH']], { ANTHROPIC_API_KEY: undefined })
    expect(found.trim()).toBe('SCAN-DONE')
    for (const request of api.messages()) expect(request.headers['authorization']).toBe('Bearer sk-ant-oat01-REALACCESS')
    // The same scan with the opt-out finds the login inside: it can see a token where there is one.
    await api.close()
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"secretless": false}')
    const exposed = await scanInside(world, repo, [['REAL', 'ACCESS']], { ANTHROPIC_API_KEY: undefined })
    expect(exposed).toMatch(/^FILE .*\/shared\/credentials\/\.credentials\.json$/m)
  })

  test('an API key (and custom headers): the API receives them, nothing inside holds them', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"apiLog": true}')
    const found = await scanInside(world, repo, [['sk-ant-api03-REAL', 'KEY'], ['corp-', 'SECRET']], { ANTHROPIC_API_KEY: 'sk-ant-api03-REALKEY', ANTHROPIC_CUSTOM_HEADERS: 'X-Corp-Auth: corp-SECRET' })
    expect(found.trim()).toBe('SCAN-DONE')
    for (const request of api.messages()) {
      expect(request.headers['x-api-key']).toBe('sk-ant-api03-REALKEY')
      expect(request.headers['x-corp-auth']).toBe('corp-SECRET')
    }
    // The optional log: one line per call, path, status and tokens, never a header or a body.
    const instances = path.join(world.claudeboxHome, 'instances')
    const logDir = path.join(instances, fs.readdirSync(instances)[0] as string, 'claudebox/api')
    const lines = fs.readdirSync(logDir).flatMap(f => fs.readFileSync(path.join(logDir, f), 'utf8').trim().split('\n'))
    expect(lines.length).toBe(api.messages().length)
    for (const line of lines) expect(Object.keys(JSON.parse(line) as object).sort()).toEqual(['inputTokens', 'method', 'outputTokens', 'path', 'status', 'time'])
    expect(lines.join('\n')).not.toContain('REAL')
  })

  test('every network mode: Claude reaches the API only through the gateway, which adds the key', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    await api.start()
    for (const network of ['open', 'none', 'allow']) {
      const r = await runClaude(world, repo, [`--network=${network}`, '-p', 'hello'], api.url, { ANTHROPIC_API_KEY: 'sk-ant-api03-REALKEY' })
      expect(r.stdout, `${network}: ${r.stderr}`).toBe('pong')
      expect(r.stderr).toMatch(/^claudebox: API: 1 request, \d+ input and \d+ output tokens \(the credential stayed on the host\)$/m)
    }
    expect(api.messages().map(m => m.headers['x-api-key'])).toEqual(['sk-ant-api03-REALKEY', 'sk-ant-api03-REALKEY', 'sk-ant-api03-REALKEY'])
  })

  test("apiKeyHelper runs on the host, in your home: the API receives its key, the sandbox's settings hold no helper and nothing inside holds the key", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    fs.mkdirSync(path.join(world.claudeboxHome, 'shared'), { recursive: true })
    // Round 89: the helper runs in your home, never in the project a session writes (a ./keyring.py
    // there ran on the host for `python3 -c "import keyring ..."`): a key file planted there is not read.
    fs.writeFileSync(path.join(world.claudeboxHome, 'shared/settings.json'), JSON.stringify({ apiKeyHelper: 'cat ./helper-key 2>/dev/null || echo sk-ant-api03-HELPER""KEY', model: 'claude-test-model' }))
    fs.writeFileSync(path.join(repo, 'helper-key'), 'sk-ant-api03-PLANTED\n')
    // Round 91: nor from an activated virtualenv of the project on PATH (the session wrote its cat).
    fs.mkdirSync(path.join(repo, '.venv/bin'), { recursive: true })
    fs.writeFileSync(path.join(repo, '.venv/bin/cat'), '#!/bin/sh\necho sk-ant-api03-PLANTED\n', { mode: 0o755 })
    const venv = { PATH: `${path.join(repo, '.venv/bin')}:${process.env['PATH'] ?? ''}`, VIRTUAL_ENV: path.join(repo, '.venv') }
    const found = await scanInside(world, repo, [['HELPER', 'KEY'], ['apiKey', 'Helper']], { ANTHROPIC_API_KEY: undefined, ...venv })
    expect(found.trim()).toBe('SCAN-DONE')
    const requests = api.messages()
    expect(requests.length).toBeGreaterThan(0)
    for (const request of requests) expect(request.headers['x-api-key']).toBe('sk-ant-api03-HELPERKEY')
    // The rest of the shared settings still reach the project.
    expect(JSON.stringify(requests[0]?.body)).toContain('claude-test-model')
  })

  test("a Console login (primaryApiKey in the account file) is served by the gateway: the key and the approvals naming real keys never reach the sandbox", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    fs.mkdirSync(path.join(world.claudeboxHome, 'shared'), { recursive: true })
    const account = { oauthAccount: { emailAddress: 'u@example.com' }, primaryApiKey: 'sk-ant-api03-CONSOLEKEY', customApiKeyResponses: { approved: ['TAILOFAREALKEY000000'] } }
    fs.writeFileSync(path.join(world.claudeboxHome, 'shared/.claude.json'), JSON.stringify(account))
    const found = await scanInside(world, repo, [['CONSOLE', 'KEY'], ['TAILOFA', 'REALKEY']], { ANTHROPIC_API_KEY: undefined })
    expect(found.trim()).toBe('SCAN-DONE')
    const requests = api.messages()
    expect(requests.length).toBeGreaterThan(0)
    for (const request of requests) expect(request.headers['x-api-key']).toBe('sk-ant-api03-CONSOLEKEY')
  })

  test('an expired token: the host refreshes once for two sessions at once, the turns complete, the new tokens are stored once', async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    const file = storeLogin(world, oauth('sk-ant-oat01-EXPIRED', 'sk-ant-ort01-ONCE'))
    let refreshes = 0
    const endpoint = http.createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        refreshes++
        const ok = (JSON.parse(body) as { refresh_token?: string }).refresh_token === 'sk-ant-ort01-ONCE' && refreshes === 1
        setTimeout(() => res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' }).end(ok ? JSON.stringify({ access_token: 'sk-ant-oat01-FRESH', refresh_token: 'sk-ant-ort01-NEXT', expires_in: 28800 }) : '{}'), 300)
      })
    })
    await new Promise<void>(resolve => endpoint.listen(0, '127.0.0.1', resolve))
    closers.push(() => endpoint.close())
    await api.start(undefined, request => request.headers['authorization'] === 'Bearer sk-ant-oat01-EXPIRED')
    const env = { ANTHROPIC_API_KEY: undefined, CLAUDEBOX_TEST_OAUTH_TOKEN_URL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1/oauth/token` }
    const [ra, rb] = await Promise.all([runClaude(world, a, ['-p', 'hello'], api.url, env), runClaude(world, b, ['-p', 'hello'], api.url, env)])
    expect(ra.stdout, ra.stderr).toBe('pong')
    expect(rb.stdout, rb.stderr).toBe('pong')
    expect(refreshes).toBe(1)
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ claudeAiOauth: { accessToken: 'sk-ant-oat01-FRESH', refreshToken: 'sk-ant-ort01-NEXT' } })
    const sent = api.messages().map(r => r.headers['authorization'])
    expect(sent.filter(h => h === 'Bearer sk-ant-oat01-FRESH')).toHaveLength(2)
  })

  test('round 91: a signal right after the session does not cut short the refresh it brought about: the new tokens are stored, then the launcher ends by the signal', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    const file = storeLogin(world, oauth('sk-ant-oat01-REFUSED', 'sk-ant-ort01-ONCE'))
    // The refresh takes 3 s: the signal comes while it is under way, however slow the machine.
    let asked = false
    const endpoint = http.createServer((req, res) => {
      asked = true
      req.resume()
      req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'sk-ant-oat01-FRESH', refresh_token: 'sk-ant-ort01-NEXT', expires_in: 28800 })), 3000))
    })
    await new Promise<void>(resolve => endpoint.listen(0, '127.0.0.1', resolve))
    closers.push(() => endpoint.close())
    await api.start(undefined, request => request.headers['authorization'] === 'Bearer sk-ant-oat01-REFUSED')
    // Inside: one call the API refuses (the gateway starts a refresh), then the session ends as soon
    // as the refresh has reached the token endpoint (a sleep lost that race under load).
    const script = [
      `t=$(sed 's/.*"accessToken":"\\([^"]*\\)".*/\\1/' "$CLAUDE_SECURESTORAGE_CONFIG_DIR/.credentials.json")`,
      `curl -s -m 10 -o /dev/null -H "authorization: Bearer $t" -H 'content-type: application/json' -d '{}' "$ANTHROPIC_BASE_URL/v1/messages" &`,
      'i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; touch ended',
    ].join('\n')
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', ANTHROPIC_BASE_URL: api.url, CLAUDEBOX_TEST_OAUTH_TOKEN_URL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1/oauth/token` }
    const launcher = spawn(process.execPath, [BIN, '--', '-c', script], { cwd: repo, env, stdio: 'ignore' })
    const ended = new Promise<NodeJS.Signals | null>(resolve => launcher.on('exit', (_code, signal) => resolve(signal)))
    for (let i = 0; i < 1000 && !asked; i++) await new Promise(resolve => setTimeout(resolve, 20))
    expect(asked).toBe(true)
    fs.writeFileSync(path.join(repo, 'go'), '')
    for (let i = 0; i < 1500 && !fs.existsSync(path.join(repo, 'ended')); i++) await new Promise(resolve => setTimeout(resolve, 20))
    expect(fs.existsSync(path.join(repo, 'ended'))).toBe(true)
    await new Promise(resolve => setTimeout(resolve, 50))
    launcher.kill('SIGTERM')
    expect(await ended).toBe('SIGTERM')
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ claudeAiOauth: { accessToken: 'sk-ant-oat01-FRESH', refreshToken: 'sk-ant-ort01-NEXT' } })
  })

  test('a refresh the host cannot do: Claude gets the reason at once and claudebox prints one line naming the fix', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    storeLogin(world, oauth('sk-ant-oat01-EXPIRED', 'sk-ant-ort01-DEAD', Date.now() - 1000))
    await api.start()
    const started = Date.now()
    const r = await runClaude(world, repo, ['-p', 'hello'], api.url, { ANTHROPIC_API_KEY: undefined, CLAUDEBOX_TEST_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/v1/oauth/token' })
    expect(Date.now() - started).toBeLessThan(60_000)
    expect(r.stderr).toMatch(/^claudebox: could not refresh the login at .*; check the network, or run claudebox --login$/m)
    expect(api.messages()).toHaveLength(0)
  })
})
