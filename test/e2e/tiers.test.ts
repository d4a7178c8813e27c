// Tiers, first-run login import, guarded shared state, profiles and SANDBOX.md, with the real
// Claude Code against the local Messages API mock.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, inSandbox, makeRepo, makeWorld, type World } from '../helpers/cli.js'
import { useMockApi } from '../helpers/messages-api.js'
import { runClaude } from '../helpers/e2e.js'

const api = useMockApi()

const claude = (world: World, cwd: string, args: string[], env: Record<string, string | undefined> = {}) => runClaude(world, cwd, args, api.url, env)

const lastBody = (): string => JSON.stringify(api.messages().at(-1)?.body ?? '')

describe.skipIf(!HAVE_BWRAP)('tiers and shared state with the real Claude Code', () => {
  test('an agent the user puts in the shared tier on the host reaches every project; SANDBOX.md reaches Claude', async () => {
    await api.start()
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    expect((await claude(world, a, ['-p', 'hello'])).stdout).toBe('pong')
    fs.writeFileSync(path.join(world.claudeboxHome, 'shared/agents/owl-reviewer.md'), '---\nname: owl-reviewer\ndescription: Reviews code like an owl\n---\nReview.\n')
    for (const repo of [a, b]) {
      const r = await claude(world, repo, ['-p', 'hello'])
      expect(r.stdout).toBe('pong')
      expect(lastBody()).toContain('owl-reviewer')
      expect(lastBody()).toContain('You are running inside claudebox')
    }
  })

  test('sharedReadOnly: shared entries cannot be changed inside', async () => {
    const world = makeWorld()
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"sharedReadOnly": true}\n')
    const r = await inSandbox(world, makeRepo(world.home, 'p'), 'echo x > "$CLAUDE_CONFIG_DIR/agents/x.md" 2>/dev/null && echo WROTE || echo BLOCKED')
    expect(r.stdout).toBe('BLOCKED')
  })

  test("first run: an OAuth login of the normal Claude Code is never copied (its refresh token works once: the first refresh by either copy signed the other out, red team round 94); said once, with claudebox --login", async () => {
    await api.start()
    const world = makeWorld()
    const hostClaude = path.join(world.home, '.claude')
    fs.mkdirSync(hostClaude, { mode: 0o700 })
    const credentials = JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-hosts', refreshToken: 'r', expiresAt: 4102444800000, scopes: ['user:inference'], subscriptionType: 'pro' } })
    fs.writeFileSync(path.join(hostClaude, '.credentials.json'), credentials, { mode: 0o600 })
    fs.writeFileSync(path.join(world.home, '.claude.json'), JSON.stringify({ oauthAccount: { emailAddress: 'ada@example.com' }, hasCompletedOnboarding: true }))
    const before = fs.statSync(path.join(hostClaude, '.credentials.json'))
    const repo = makeRepo(world.home, 'p')

    const r = await claude(world, repo, ['--yes', '-p', 'hello'], { ANTHROPIC_API_KEY: 'sk-ant-api03-ENVKEY' })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(`claudebox: your Claude Code login in ${hostClaude}/.credentials.json is not copied: its refresh token works once, so the first refresh by either copy would sign the other out; sign claudebox in with a login of its own: claudebox --login`)
    expect(api.messages().at(-1)?.headers['authorization']).toBeUndefined()
    expect(fs.existsSync(path.join(world.claudeboxHome, 'shared/credentials/.credentials.json'))).toBe(false)
    expect(fs.readFileSync(path.join(hostClaude, '.credentials.json'), 'utf8')).toBe(credentials)
    expect(fs.statSync(path.join(hostClaude, '.credentials.json')).mtimeMs).toBe(before.mtimeMs)
    const again = await claude(world, repo, ['-p', 'hello'], { ANTHROPIC_API_KEY: 'sk-ant-api03-ENVKEY' })
    expect(again.stderr).not.toContain('login')
  })

  test('first run: a Console login (an API key in the account file) of the normal Claude Code is copied once with --yes, and is what the gateway sends', async () => {
    await api.start()
    const world = makeWorld()
    fs.writeFileSync(path.join(world.home, '.claude.json'), JSON.stringify({ oauthAccount: { emailAddress: 'ada@example.com' }, primaryApiKey: 'sk-ant-api03-IMPORTED', hasCompletedOnboarding: true, projects: { '/secret/path': {} } }))
    const repo = makeRepo(world.home, 'p')

    // Without a terminal and without --yes: nothing copied, and it says how.
    const quiet = await claude(world, repo, ['-p', 'hello'])
    expect(quiet.stderr).toContain(`claudebox: found a Claude Code login in ${world.home}/.claude.json; run claudebox --yes once`)
    expect(fs.existsSync(path.join(world.claudeboxHome, 'shared/.claude.json')) && fs.readFileSync(path.join(world.claudeboxHome, 'shared/.claude.json'), 'utf8').includes('IMPORTED')).toBe(false)

    const r = await claude(world, repo, ['--yes', '-p', 'hello'], { ANTHROPIC_API_KEY: undefined })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain('copied your Claude Code login')
    expect(api.messages().at(-1)?.headers['x-api-key']).toBe('sk-ant-api03-IMPORTED')
    const account = JSON.parse(fs.readFileSync(path.join(world.claudeboxHome, 'shared/.claude.json'), 'utf8')) as Record<string, unknown>
    expect(account['oauthAccount']).toEqual({ emailAddress: 'ada@example.com' })
    expect(account['projects']).toBeUndefined() // the user's per-path map is not carried over
    const again = await claude(world, repo, ['-p', 'hello'])
    expect(again.stderr).not.toContain('login')
  })

  test('a corrupt shared .claude.json is set aside and restored, and the session starts', async () => {
    await api.start()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const file = path.join(world.claudeboxHome, 'shared/.claude.json')
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify({ userID: 'u1', theme: 'dark' }))
    expect((await claude(world, repo, ['-p', 'hello'])).stdout).toBe('pong')
    const good = fs.readFileSync(file, 'utf8')
    fs.writeFileSync(file, '{"truncated": ')
    const r = await claude(world, repo, ['-p', 'hello'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('pong')
    expect(r.stderr).toMatch(/claudebox: .*\.claude\.json was corrupt: set aside as \.claude\.json\.corrupt-[0-9TZ-]+, restored from /)
    const aside = fs.readdirSync(path.dirname(file)).filter(f => f.startsWith('.claude.json.corrupt-'))
    expect(aside).toHaveLength(1)
    expect(fs.readFileSync(path.join(path.dirname(file), aside[0] as string), 'utf8')).toBe('{"truncated": ')
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ userID: (JSON.parse(good) as { userID: string }).userID })
    // Last good copies are kept, and bounded.
    expect(fs.readdirSync(path.join(world.claudeboxHome, 'shared/good')).length).toBeLessThanOrEqual(5)
  })

  test("a hostile .claudebox.json that adds a bind of ~/.ssh is refused; one that narrows is applied", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    fs.writeFileSync(path.join(repo, '.claudebox.json'), JSON.stringify({ bind: [`${world.home}/.ssh`] }))
    const r = await inSandbox(world, repo, `cat ${world.home}/.ssh/id_ed25519`)
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(`claudebox: ${repo}/.claudebox.json: a file in the repository would widen the sandbox (adds --bind ${world.home}/.ssh), and may only narrow it unless you approve`)

    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), JSON.stringify({ profiles: { keys: { bind: [`${world.home}/.ssh`] }, offline: { network: false } } }))
    fs.writeFileSync(path.join(repo, '.claudebox.json'), JSON.stringify({ profile: 'keys' }))
    expect((await inSandbox(world, repo, 'true')).stderr).toMatch(/profile "keys": a file in the repository would widen the sandbox \(adds --bind .*\.ssh\)/)

    fs.writeFileSync(path.join(repo, '.claudebox.json'), JSON.stringify({ profile: 'offline' }))
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(dry.stdout).toContain(`# applied: ${repo}/.claudebox.json (profile offline), narrowing only`)
    expect(dry.stdout).not.toContain('--share-net')
    const check = await claudebox(world, ['--check'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(check.stdout).toMatch(/^ok +config: config .*config.json; .*\.claudebox\.json \(profile offline\), narrowing only$/m)
  })
})
