// End to end with the real Claude Code (pinned in package-lock.json), started by claudebox in a
// real sandbox and talking to a local mock of the Messages API: its files must land in the
// project's instance and nowhere else, and sign-in must be shared by every project.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { sanitizePath } from '../../src/state/adopt.js'
import { HAVE_BWRAP, makeRepo, makeWorld, type World, instancePath } from '../helpers/cli.js'
import { toolResults, useMockApi } from '../helpers/messages-api.js'
import { isAgentTurn, runClaude, scripted } from '../helpers/e2e.js'

const api = useMockApi()

const claude = (world: World, cwd: string, args: string[], env: Record<string, string | undefined> = {}) => runClaude(world, cwd, args, api.url, env)

const instanceOf = (world: World, repo: string): string => instancePath(world, `${repo}/.git`)

/** Every file under `dir`, relative, without following symlinks. */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter(d => !d.isDirectory())
    .map(d => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort()
}

interface AccountState {
  userID?: string
  firstStartTime?: string
  projects?: Record<string, unknown>
}
const readShared = (world: World): AccountState => JSON.parse(fs.readFileSync(path.join(world.claudeboxHome, 'shared/.claude.json'), 'utf8')) as AccountState

const oauth = (token: string): string =>
  JSON.stringify({
    claudeAiOauth: {
      accessToken: token,
      refreshToken: 'sk-ant-ort01-test',
      expiresAt: 4102444800000,
      scopes: ['user:inference', 'user:profile', 'user:sessions:claude_code'],
      subscriptionType: 'max',
    },
  })

describe.skipIf(!HAVE_BWRAP)('the real Claude Code inside claudebox', () => {
  test("claudebox -p hello: the answer comes back, Claude's files land in this project's instance only", async () => {
    await api.start()
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    const homeBefore = tree(world.home).filter(p => !p.startsWith('.claudebox') && !p.startsWith('src/'))

    const r = await claude(world, a, ['-p', 'hello'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('pong')
    expect(api.messages()).toHaveLength(1)

    const instA = instanceOf(world, a)
    const transcripts = tree(path.join(instA, 'projects')).filter(p => p.endsWith('.jsonl'))
    expect(transcripts).toHaveLength(1)
    expect(transcripts[0]).toMatch(new RegExp(`^${sanitizePath(a)}/[0-9a-f-]{36}\\.jsonl$`))
    // Claude wrote its own .claude.json in the instance; only the account keys may reach the shared
    // file, never the identity Claude made inside (its userID stays in the project).
    const shared = readShared(world)
    const ownA = JSON.parse(fs.readFileSync(path.join(instA, '.claude.json'), 'utf8')) as AccountState
    expect(ownA.userID).toMatch(/^[0-9a-f]{64}$/)
    expect(shared.userID).toBeUndefined()
    expect(ownA.firstStartTime).toBeDefined()
    expect(shared.firstStartTime).toBeUndefined()
    expect(shared.projects).toBeUndefined()
    expect(Object.keys(shared).every(key => ['oauthAccount', 'userID', 'hasCompletedOnboarding', 'lastOnboardingVersion', 'theme'].includes(key))).toBe(true)
    // Nowhere else: not the real home, not the project, not another project.
    expect(tree(world.home).filter(p => !p.startsWith('.claudebox') && !p.startsWith('src/'))).toEqual(homeBefore)
    expect(tree(a).filter(p => !p.startsWith('.git/'))).toEqual(['README'])
    expect(fs.existsSync(instanceOf(world, b))).toBe(false)

    // A second project gets its own transcript, and reads what the first wrote to .claude.json.
    const r2 = await claude(world, b, ['-p', 'hello'])
    expect(r2.stdout).toBe('pong')
    const transcriptsB = tree(path.join(instanceOf(world, b), 'projects')).filter(p => p.endsWith('.jsonl'))
    expect(transcriptsB).toHaveLength(1)
    expect(transcriptsB[0]).toMatch(new RegExp(`^${sanitizePath(b)}/`))
    expect(tree(path.join(instA, 'projects')).filter(p => p.endsWith('.jsonl'))).toEqual(transcripts)
    // B's Claude made an identity of its own: what A's made inside did not travel (only
    // claudebox --login carries an identity to every project), nor did A's per-path project map.
    const ownB = JSON.parse(fs.readFileSync(path.join(instanceOf(world, b), '.claude.json'), 'utf8')) as AccountState
    expect(ownB.userID).toMatch(/^[0-9a-f]{64}$/)
    expect(ownB.userID).not.toBe(ownA.userID)
    expect(Object.keys(ownB.projects ?? {})).not.toContain(a)
    expect(readShared(world).userID).toBeUndefined()
  })

  test('one credential store on the host: its token is what every project sends; a token planted inside one project never reaches another or the store', async () => {
    await api.start()
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    const store = path.join(world.claudeboxHome, 'shared/credentials')
    fs.mkdirSync(store, { recursive: true, mode: 0o700 })
    fs.writeFileSync(path.join(store, '.credentials.json'), oauth('sk-ant-oat01-first'), { mode: 0o600 })

    const ra = await claude(world, a, ['-p', 'hello'], { ANTHROPIC_API_KEY: undefined })
    expect(ra.exitCode, ra.stderr).toBe(0)
    expect(api.messages().at(-1)?.headers['authorization']).toBe('Bearer sk-ant-oat01-first')

    // The agent in project A writes another account's token where Claude keeps its login.
    api.close().catch(() => undefined)
    await api.start(
      scripted([
        {
          name: 'Bash',
          input: { command: `printf '%s' '${oauth('sk-ant-oat01-planted')}' > "$CLAUDE_SECURESTORAGE_CONFIG_DIR/.credentials.json" && echo written`, description: 'plant' },
        },
      ]),
    )
    const plant = await claude(world, a, ['-p', 'plant', '--dangerously-skip-permissions'], { ANTHROPIC_API_KEY: undefined })
    // Claude rereads its credential file and tries the planted token: the gateway refuses it, so it never reaches the API.
    expect(api.requests.map(r => String(r.headers['authorization'] ?? ''))).not.toContainEqual(expect.stringContaining('planted'))
    expect(plant.stderr).toContain('a sign-in made inside this session was moved out of the sandbox and is used for this project only')

    // B still sends the host's token; the host's store is unchanged; the host changes reach B.
    const rb = await claude(world, b, ['-p', 'hello'], { ANTHROPIC_API_KEY: undefined })
    expect(rb.exitCode, rb.stderr).toBe(0)
    expect(api.messages().at(-1)?.headers['authorization']).toBe('Bearer sk-ant-oat01-first')
    expect(fs.readFileSync(path.join(store, '.credentials.json'), 'utf8')).toBe(oauth('sk-ant-oat01-first'))
    fs.writeFileSync(path.join(store, '.credentials.json'), oauth('sk-ant-oat01-second'), { mode: 0o600 })
    await claude(world, b, ['-p', 'hello'], { ANTHROPIC_API_KEY: undefined })
    expect(api.messages().at(-1)?.headers['authorization']).toBe('Bearer sk-ant-oat01-second')
    expect(fs.existsSync(path.join(instanceOf(world, b), '.credentials.json'))).toBe(false)
  })

  test('escape attempts made by the agent itself fail: ~/.ssh, outside the project, another instance', async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'src/a')
    const b = makeRepo(world.home, 'src/b')
    await api.start()
    expect((await claude(world, b, ['-p', 'hello'])).exitCode).toBe(0) // b's instance exists
    const otherInstance = instanceOf(world, b)
    const outside = path.join(world.home, 'planted-by-agent')
    await api.close()
    const steps = [
      { name: 'Bash', input: { command: `cat ${world.home}/.ssh/id_ed25519`, description: 'read key' } },
      { name: 'Read', input: { file_path: `${world.home}/.ssh/id_ed25519` } },
      { name: 'Write', input: { file_path: outside, content: 'evil' } },
      { name: 'Bash', input: { command: `ls '${otherInstance}/projects'`, description: 'peek' } },
      { name: 'Bash', input: { command: 'echo "[core] fsmonitor = touch /tmp/pwned" >> .git/config', description: 'persist' } },
    ]
    await api.start(scripted(steps))
    const r = await claude(world, a, ['-p', 'try to escape', '--dangerously-skip-permissions'])
    expect(r.exitCode, r.stderr).toBe(0)
    // Each agent request carries the previous step's result; a request may repeat it (Claude
    // sends a note without a new result), so keep one per step.
    const results = [...new Map(api.messages().filter(isAgentTurn).flatMap(req => toolResults(req)).map(r => [r.content, r])).values()]
    expect(results, JSON.stringify(results)).toHaveLength(steps.length)
    for (const result of results) expect(result?.content ?? '').not.toContain('PRIVATE KEY')
    expect(results[0]?.content).toMatch(/No such file or directory/)
    expect(results[3]?.content).toMatch(/No such file or directory/)
    expect(results[4]?.content).toMatch(/read-only file system/i)
    // The host shows the attempts failed.
    expect(fs.existsSync(outside)).toBe(false)
    expect(fs.readFileSync(path.join(a, '.git/config'), 'utf8')).not.toContain('fsmonitor')
    expect(tree(path.join(otherInstance, 'projects')).filter(p => p.endsWith('.jsonl'))).toHaveLength(1)
  })
})
