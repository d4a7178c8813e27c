// Users of the bash claudebox: its sign-in ($CLAUDEBOX_HOME/.credentials.json), its CLAUDE.md and
// its instances (keyed by a SHA-256 of the top level, with or without echo's newline) are moved
// into place with consent: --yes takes them, no terminal moves nothing and says how, --check and
// --dry-run say what a launch would do. The conversations and the login are never copied twice.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { sanitizePath } from '../../src/state/adopt.js'
import { instanceId } from '../../src/state/instance.js'
import { spawnSync } from 'node:child_process'
import { BIN, claudebox, FIXTURES, git, HAVE_BWRAP, inSandbox, makeRepo, makeWorld, noticeGiven, type World, instancePath } from '../helpers/cli.js'

const LOGIN = JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-OLD', refreshToken: 'sk-ant-ort01-OLD', expiresAt: Date.now() + 3_600_000, scopes: ['user:inference'] } })

function bashEra(newline: boolean): { world: World; repo: string; oldInstance: string; conversation: string } {
  const world = makeWorld()
  const repo = makeRepo(world.home, 'src/notes')
  const id = createHash('sha256').update(newline ? `${repo}\n` : repo).digest('hex').slice(0, 16)
  const oldInstance = path.join(world.claudeboxHome, 'instances', id)
  const conversation = path.join(oldInstance, 'projects', sanitizePath(repo), '0f8fad5b-d9cb-469f-a165-70867728950e.jsonl')
  fs.mkdirSync(path.dirname(conversation), { recursive: true })
  fs.writeFileSync(path.join(oldInstance, 'project-root'), `${repo}\n`)
  fs.writeFileSync(conversation, `${JSON.stringify({ type: 'user', cwd: repo, message: { role: 'user', content: 'from bash days' } })}\n`)
  fs.writeFileSync(path.join(world.claudeboxHome, '.credentials.json'), LOGIN, { mode: 0o600 })
  fs.writeFileSync(path.join(world.claudeboxHome, 'CLAUDE.md'), 'old shared instructions\n')
  return { world, repo, oldInstance, conversation }
}

const store = (world: World): string => path.join(world.claudeboxHome, 'shared/credentials/.credentials.json')
const newInstance = (repo: string): string => instanceId(`${repo}/.git`)

describe.skipIf(!HAVE_BWRAP)('coming from the bash claudebox', () => {
  test.each([true, false])('echo newline in the hashed root: %s; without a terminal nothing moves, the launch stops and says how; --check and --dry-run tell', async newline => {
    const { world, repo, oldInstance, conversation } = bashEra(newline)
    const dry = await claudebox(world, ['--dry-run'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`# before this launch claudebox would ask to: move the bash claudebox's sign-in ${world.claudeboxHome}/.credentials.json -> ${store(world)}`)
    expect(dry.stdout).toContain(`an older instance of this project (the bash claudebox's, or from before it was a git repository) is in ${oldInstance}: take it over`)
    const check = await claudebox(world, ['--check'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(check.stdout).toContain(`warn take over: move the bash claudebox's ${world.claudeboxHome}/CLAUDE.md -> ${world.claudeboxHome}/shared/CLAUDE.md`)

    const r = await inSandbox(world, repo, 'echo STARTED')
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain("run claudebox --yes once to move them (nothing moved)")
    expect(r.stderr).toContain(`this project has an older instance (the bash claudebox's, or from before it was a git repository) in ${oldInstance}; rerun on a terminal to be asked, or with --yes to take it over`)
    expect(fs.readFileSync(path.join(world.claudeboxHome, '.credentials.json'), 'utf8')).toBe(LOGIN)
    expect(fs.existsSync(store(world))).toBe(false)
    expect(fs.existsSync(conversation)).toBe(true)
    expect(fs.existsSync(path.join(world.claudeboxHome, 'instances', newInstance(repo)))).toBe(false)
  })

  test('--yes moves the login (one copy), the CLAUDE.md into the shared tier and the instance with its conversations', async () => {
    const { world, repo, oldInstance } = bashEra(true)
    const r = await claudebox(world, ['--yes', '--', '-c', 'cat "$CLAUDE_CONFIG_DIR/CLAUDE.md"; echo STARTED'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain('old shared instructions')
    expect(r.stdout).toContain('STARTED')
    expect(r.stderr).toContain("moved the bash claudebox's files")
    expect(r.stderr).toContain('took over instance')
    expect(fs.existsSync(path.join(world.claudeboxHome, '.credentials.json'))).toBe(false)
    expect(fs.readFileSync(store(world), 'utf8')).toBe(LOGIN)
    expect(fs.statSync(store(world)).mode & 0o777).toBe(0o600)
    expect(fs.existsSync(oldInstance)).toBe(false)
    const sessions = await claudebox(world, ['--sessions', '--json'], { cwd: repo })
    expect(JSON.parse(sessions.stdout)).toMatchObject([{ firstMessage: 'from bash days' }])
    // Asked once: the next launch says nothing of it.
    const again = await inSandbox(world, repo, 'true')
    expect(again.stderr).not.toContain('bash claudebox')
  })

  test('a store that already has a login keeps it: the old file stays, said once', async () => {
    const { world, repo } = bashEra(false)
    fs.mkdirSync(path.dirname(store(world)), { recursive: true })
    fs.writeFileSync(store(world), '{"claudeAiOauth":{"accessToken":"NEWER"}}')
    fs.writeFileSync(path.join(world.claudeboxHome, 'shared/CLAUDE.md'), 'newer instructions\n')
    const r = await claudebox(world, ['--yes', '--', '-c', 'true'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(`leave ${world.claudeboxHome}/.credentials.json (the new place already has one`)
    expect(fs.readFileSync(store(world), 'utf8')).toContain('NEWER')
    expect(fs.readFileSync(path.join(world.claudeboxHome, '.credentials.json'), 'utf8')).toBe(LOGIN)
    expect(fs.readFileSync(path.join(world.claudeboxHome, 'shared/CLAUDE.md'), 'utf8')).toBe('newer instructions\n')
    expect((await inSandbox(world, repo, 'true')).stderr).not.toContain('bash claudebox')
  })

  test('a directory used before it was a git repository: its instance is offered the same way', async () => {
    const world = makeWorld()
    const dir = path.join(world.home, 'src/plain')
    fs.mkdirSync(dir, { recursive: true })
    expect((await inSandbox(world, dir, 'echo hi > "$CLAUDE_CONFIG_DIR/marker"')).exitCode).toBe(0)
    const before = instancePath(world, dir)
    git(dir, 'init', '-q')
    const r = await claudebox(world, ['--yes', '--', '-c', 'cat "$CLAUDE_CONFIG_DIR/marker"'], { cwd: dir, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('hi')
    expect(fs.existsSync(before)).toBe(false)
    expect(fs.readFileSync(path.join(instancePath(world, `${dir}/.git`), 'project-root'), 'utf8')).toBe(`${dir}/.git\n`)
  })

  test('on a terminal: n leaves the files where they are, the launch goes on, and it is not asked again', () => {
    const { world, repo, oldInstance } = bashEra(true)
    fs.rmSync(oldInstance, { recursive: true }) // the files' question alone
    noticeGiven(world)
    const run = (answer: string) =>
      spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), 'moved, not copied', answer, process.execPath, BIN, '--', '-c', 'echo RAN'], {
        cwd: repo,
        env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
        encoding: 'utf8',
        timeout: 40_000,
      }).stdout
    const first = run('n')
    expect(first).toContain("left the bash claudebox's files where they are; not asked again")
    expect(first).toContain('RAN')
    expect(fs.readFileSync(path.join(world.claudeboxHome, '.credentials.json'), 'utf8')).toBe(LOGIN)
    const second = run('y')
    expect(second).not.toContain('bash claudebox')
    expect(second).toContain('RAN')
  })
})
