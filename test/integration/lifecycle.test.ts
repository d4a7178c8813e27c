// Instance lifecycle with real directories, real bwrap and real git: live sessions, --list,
// GC refusals, the unmounted-root case, a GC racing a launch, --adopt and --sessions.
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { sanitizePath } from '../../src/state/adopt.js'
import { instanceId } from '../../src/state/instance.js'
import { pidScope } from '../../src/host/fs.js'
import { spawnSync } from 'node:child_process'
import { BIN, claudebox, FIXTURES, git, HAVE_BWRAP, inSandbox, makeRepo, makeWorld, noticeGiven, type World, instancePath } from '../helpers/cli.js'

/**
 * A moved project (movedWithConversation) that was also used in its new place, `script` run in a
 * session there, with its old instance out of sight meanwhile (no takeover was offered).
 */
async function usedInNewPlace(world: World, script: string): ReturnType<typeof movedWithConversation> {
  const moved = await movedWithConversation(world)
  const hidden = path.join(world.home, 'old-instance-hidden')
  fs.renameSync(moved.oldInstance, hidden)
  expect((await inSandbox(world, moved.moved, script)).exitCode).toBe(0)
  fs.renameSync(hidden, moved.oldInstance)
  return moved
}

/** A project with one conversation in its instance, then moved from src/shop to work/shop. */
async function movedWithConversation(world: World, remote?: string): Promise<{ old: string; oldInstance: string; moved: string }> {
  const old = makeRepo(world.home, 'src/shop')
  if (remote !== undefined) git(old, 'remote', 'add', 'origin', remote)
  expect((await inSandbox(world, old, 'true')).exitCode).toBe(0)
  const oldInstance = instancePath(world, `${old}/.git`)
  fs.mkdirSync(path.join(oldInstance, 'projects', sanitizePath(old)), { recursive: true })
  fs.writeFileSync(path.join(oldInstance, 'projects', sanitizePath(old), 'c.jsonl'), '{}\n')
  const moved = path.join(world.home, 'work/shop')
  fs.mkdirSync(path.dirname(moved), { recursive: true })
  fs.renameSync(old, moved)
  return { old, oldInstance, moved }
}

/** Starts a session that stays until `release` is written into the project. */
function startSession(world: World, cwd: string) {
  const child = execa(process.execPath, [BIN, '--', '-c', 'echo started > .started; while [ ! -e .release ]; do sleep 0.05; done'], {
    cwd,
    env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  })
  const ready = (async () => {
    while (!fs.existsSync(path.join(cwd, '.started'))) await new Promise(r => setTimeout(r, 20))
  })()
  return { child, ready }
}

describe.skipIf(!HAVE_BWRAP)('live sessions', () => {
  test('a launch records itself while it runs, two at once both show, and the records go away', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const sessions = path.join(instancePath(world, `${repo}/.git`), 'claudebox/sessions')
    const a = startSession(world, repo)
    await a.ready
    fs.rmSync(path.join(repo, '.started'))
    const b = startSession(world, repo)
    await b.ready
    const records = fs.readdirSync(sessions).map(name => JSON.parse(fs.readFileSync(path.join(sessions, name), 'utf8')) as Record<string, unknown>)
    expect(records).toHaveLength(2)
    for (const record of records) {
      expect(record['cwd']).toBe(repo)
      expect(record['version']).toMatch(/^\d+\.\d+\.\d+$/)
      expect(record['startTime']).toMatch(/^\d+$/)
      expect(record).toMatchObject({ scope: pidScope(), heartbeat: true })
    }
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(list.stdout)).toMatchObject([{ root: `${repo}/.git`, state: 'live (2 sessions)', liveSessions: 2 }])
    // The record cannot be forged or removed from inside: claudebox/ is read-only there.
    const forge = await inSandbox(world, repo, 'echo x > "$CLAUDE_CONFIG_DIR/claudebox/sessions/1.json" 2>/dev/null && echo ESCAPED || echo BLOCKED')
    expect(forge.stdout).toBe('BLOCKED')
    // Nor removed, nor its folder moved away: the next launch makes the checks of a killed
    // session's end from its record (commands/unfinished.ts), which a session would rather lose.
    const erase = await inSandbox(world, repo, 'd="$CLAUDE_CONFIG_DIR/claudebox"; rm -f "$d"/sessions/*.json 2>/dev/null; mv "$d/sessions" "$d/s" 2>/dev/null && echo MOVED; mv "$d" "$CLAUDE_CONFIG_DIR/x" 2>/dev/null && echo MOVED; echo done')
    expect(erase.stdout).toBe('done')
    expect(fs.readdirSync(sessions)).toHaveLength(2)
    fs.writeFileSync(path.join(repo, '.release'), '')
    await Promise.all([a.child, b.child])
    expect(fs.readdirSync(sessions)).toEqual([])
    // Ended: the session left its usage record and did not rewrite the --list cache (one file for
    // every instance: its cost grew with each); --list reads the record and remembers it there.
    const cache = path.join(world.claudeboxHome, 'list-cache.json')
    expect(fs.existsSync(cache)).toBe(false)
    const idle = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(idle.stdout)).toMatchObject([{ root: `${repo}/.git`, state: 'idle', liveSessions: 0, conversations: 0 }])
    expect(Object.keys(JSON.parse(fs.readFileSync(cache, 'utf8')) as object)).toEqual([path.basename(path.dirname(path.dirname(sessions)))])
    fs.rmSync(path.join(repo, '.release'))
    fs.rmSync(path.join(repo, '.started'))
    const c = startSession(world, repo)
    await c.ready
    const live = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(live.stdout)).toMatchObject([{ state: 'live (1 session)', liveSessions: 1 }])
    fs.writeFileSync(path.join(repo, '.release'), '')
    await c.child
  })

  test("a record left by a launcher killed before the machine rebooted is stale once its heartbeat stopped: --list says idle and the shared tier reaches the project again (red team, round 55: 'live' for good)", async () => {
    const world = makeWorld()
    noticeGiven(world)
    const repo = makeRepo(world.home, 'p')
    const sessions = path.join(instancePath(world, `${repo}/.git`), 'claudebox/sessions')
    const s = startSession(world, repo)
    await s.ready
    // Killed without its clean-up (power lost); its sandbox ends with it (--die-with-parent).
    s.child.kill('SIGKILL')
    await s.child
    const [name] = fs.readdirSync(sessions)
    const record = JSON.parse(fs.readFileSync(path.join(sessions, name ?? ''), 'utf8')) as Record<string, unknown>
    // As the next boot sees it: another boot id, so another scope in its name (fs.ts pidScope); its
    // launcher last refreshed it before the crash, 6 minutes ago.
    fs.rmSync(path.join(sessions, name ?? ''))
    const moved = path.join(sessions, `${String(record['pid'])}-0badb007.json`)
    fs.writeFileSync(moved, JSON.stringify({ ...record, scope: '0badb007' }))
    // Just refreshed, it could be a live session of another pid namespace or kernel: kept as live.
    const fresh = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(fresh.stdout)).toMatchObject([{ state: 'live (1 session)', liveSessions: 1 }])
    const beat = new Date(Date.now() - 6 * 60_000)
    fs.utimesSync(moved, beat, beat)
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(list.stdout)).toMatchObject([{ state: 'idle', liveSessions: 0 }])
    fs.mkdirSync(path.join(world.claudeboxHome, 'shared'), { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'shared/CLAUDE.md'), '# after the reboot\n')
    const seen = await inSandbox(world, repo, 'cat "$CLAUDE_CONFIG_DIR/CLAUDE.md"')
    expect(seen.stdout).toBe('# after the reboot')
  })

  test('a session of the same project starting while one ends never undoes what the ending one carries back (fifteen rounds)', async () => {
    const world = makeWorld()
    noticeGiven(world)
    const repo = makeRepo(world.home, 'p')
    // A large working tree (a node_modules) makes the ending launcher's look for nested .git take a while.
    for (let d = 0; d < 100; d++) {
      fs.mkdirSync(path.join(repo, 'node_modules', `m${d}`), { recursive: true })
      for (let f = 0; f < 300; f++) fs.writeFileSync(path.join(repo, 'node_modules', `m${d}`, `f${f}.js`), '')
    }
    expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const shared = path.join(world.claudeboxHome, 'shared/.claude.json')
    const env = { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }
    const lost: number[] = []
    for (let round = 0; round < 15; round++) {
      fs.writeFileSync(shared, '{"theme": "light"}\n')
      fs.writeFileSync(path.join(repo, '.ending.json'), JSON.stringify({ theme: `dark-${round}` }))
      for (const name of ['.started', '.go']) fs.rmSync(path.join(repo, name), { force: true })
      // The ending session chooses a theme inside, then ends when told to; the other starts meanwhile.
      const ending = execa(process.execPath, [BIN, '--', '-c', 'echo > .started; while [ ! -e .go ]; do sleep 0.01; done; cp .ending.json "$CLAUDE_CONFIG_DIR/.claude.json"'], { cwd: repo, env, extendEnv: false, reject: false, stdin: 'ignore' })
      while (!fs.existsSync(path.join(repo, '.started'))) await new Promise(r => setTimeout(r, 20))
      const starting = execa(process.execPath, [BIN, '--', '-c', 'true'], { cwd: repo, env, extendEnv: false, reject: false, stdin: 'ignore' })
      await new Promise(r => setTimeout(r, 40 * round))
      fs.writeFileSync(path.join(repo, '.go'), '')
      await Promise.all([ending, starting])
      if ((JSON.parse(fs.readFileSync(shared, 'utf8')) as { theme?: string }).theme !== `dark-${round}`) lost.push(round)
    }
    expect(lost).toEqual([])
  }, 180_000)

  test('a stale record (process gone) is ignored', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const sessions = path.join(instancePath(world, `${repo}/.git`), 'claudebox/sessions')
    fs.writeFileSync(path.join(sessions, '999999.json'), JSON.stringify({ pid: 999999, startTime: '1', cwd: repo, version: 'x', started: 'x' }))
    fs.writeFileSync(path.join(sessions, `${process.pid}.json`), JSON.stringify({ pid: process.pid, startTime: '1', cwd: repo, version: 'x', started: 'x' }))
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(list.stdout)).toMatchObject([{ state: 'idle', liveSessions: 0 }])
  })
})

describe.skipIf(!HAVE_BWRAP)('--gc keeps what the user may still want', () => {
  test('an instance with a live session is kept even when its root is gone', async () => {
    const world = makeWorld()
    // A session's own project cannot be gone while it runs: moved or removed, the session is ended
    // (held-folder.ts). The live record of a session running elsewhere, put in the instance of a
    // project since removed, is what --gc sees of one that runs there.
    const gone = path.join(world.home, 'gone')
    fs.mkdirSync(gone)
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: gone, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).exitCode).toBe(0)
    const instance = instancePath(world, gone)
    fs.rmSync(gone, { recursive: true })
    const live = path.join(world.home, 'live')
    fs.mkdirSync(live)
    const s = startSession(world, live)
    await s.ready
    const records = path.join(instancePath(world, live), 'claudebox/sessions')
    for (const name of fs.readdirSync(records)) fs.copyFileSync(path.join(records, name), path.join(instance, 'claudebox/sessions', name))
    const r = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(r.stderr).toMatch(/keeping .*: a session is live in it/)
    expect(fs.existsSync(instance)).toBe(true)
    fs.writeFileSync(path.join(live, '.release'), '')
    await s.child
    const after = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(after.stderr).toMatch(/removed /)
    expect(fs.existsSync(instance)).toBe(false)
  })

  test('a root on a drive that is no longer mounted is unreachable, not gone', async () => {
    const world = makeWorld()
    const drive = path.join(world.root, 'usb')
    fs.mkdirSync(drive)
    const project = path.join(drive, 'proj')
    // A private mount namespace: the tmpfs "drive" disappears when the command ends.
    const r = await execa('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs none '${drive}' && mkdir '${project}' && cd '${project}' && '${process.execPath}' '${BIN}' -- -c true`], {
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
      extendEnv: false,
      reject: false,
    })
    expect(r.exitCode, r.stderr).toBe(0)
    const instance = instancePath(world, project)
    expect(fs.readFileSync(path.join(instance, 'project-root'), 'utf8')).toBe(`${project}\n`)
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(list.stdout)).toMatchObject([{ state: 'root unreachable' }])
    const gc = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(gc.stderr).toMatch(/cannot reach .*\(unreachable\); kept/)
    expect(fs.existsSync(instance)).toBe(true)
  })

  test("a project at the top of a drive whose mount point went with it (udisks removes it at unplug) is unreachable, not gone (red team, round 94: --gc removed it)", async () => {
    const world = makeWorld()
    const drive = path.join(world.root, 'media', 'USB')
    fs.mkdirSync(drive, { recursive: true })
    const r = await execa('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs none '${drive}' && cd '${drive}' && '${process.execPath}' '${BIN}' -- -c true`], {
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
      extendEnv: false,
      reject: false,
    })
    expect(r.exitCode, r.stderr).toBe(0)
    fs.rmdirSync(drive)
    const instance = instancePath(world, drive)
    const gc = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(gc.stderr).toMatch(/cannot reach .*\(unreachable\); kept/)
    expect(fs.existsSync(instance)).toBe(true)
  })

  test('most roots gone at once: refused without --force', async () => {
    const world = makeWorld()
    const parent = path.join(world.home, 'src')
    for (const name of ['a', 'b', 'c']) expect((await inSandbox(world, makeRepo(parent, name), 'true')).exitCode).toBe(0)
    fs.renameSync(parent, path.join(world.home, 'source')) // a renamed parent directory
    const r = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/3 of 3 recorded projects look gone at once/)
    expect(fs.readdirSync(path.join(world.claudeboxHome, 'instances'))).toHaveLength(3)
    const forced = await claudebox(world, ['--gc', '--yes', '--force'], { cwd: world.home })
    expect(forced.exitCode).toBe(0)
    expect(fs.readdirSync(path.join(world.claudeboxHome, 'instances'))).toHaveLength(0)
  })

  test('broken instances are reported, and removed only with --broken', async () => {
    const world = makeWorld()
    const broken = path.join(world.claudeboxHome, 'instances', '0123456789abcdef')
    fs.mkdirSync(broken, { recursive: true })
    const unreadable = path.join(world.claudeboxHome, 'instances', 'fedcba9876543210')
    fs.mkdirSync(path.join(unreadable, 'project-root'), { recursive: true }) // not a regular file
    const r = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(r.stderr).toMatch(/keeping 0123456789abcdef: broken/)
    expect(fs.existsSync(broken)).toBe(true)
    const list = await claudebox(world, ['--list'], { cwd: world.home })
    expect(list.stdout).toMatch(/0123456789abcdef +broken/)
    const b = await claudebox(world, ['--gc', '--yes', '--broken'], { cwd: world.home })
    expect(b.exitCode).toBe(0)
    expect(fs.existsSync(broken)).toBe(false)
    expect(fs.existsSync(unreadable)).toBe(false)
  })

  test('an interrupted GC leaves only .trash-* behind, which no launch uses and the next GC shows and removes only with consent (red team, round 94: a plain --gc removed it unlisted)', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const instances = path.join(world.claudeboxHome, 'instances')
    const id = instanceId(`${repo}/.git`)
    fs.renameSync(path.join(instances, id), path.join(instances, `.trash-${id}-1-2`)) // killed right after the rename
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect(JSON.parse(list.stdout)).toEqual([])
    expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0) // a fresh instance, not the trash
    const dry = await claudebox(world, ['--gc', '--dry-run'], { cwd: world.home })
    expect(dry.stdout).toBe(`would remove .trash-${id}-1-2 (what an interrupted --gc or --adopt left)`)
    const plain = await claudebox(world, ['--gc'], { cwd: world.home })
    expect(plain.exitCode).toBe(1)
    expect(plain.stderr).toContain(`.trash-${id}-1-2  what an interrupted --gc or --adopt left`)
    expect(fs.readdirSync(instances).sort()).toEqual([`.trash-${id}-1-2`, id].sort())
    await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(fs.readdirSync(instances)).toEqual([id])
  })

  test('a GC racing a first launch of the same project never loses what the launch wrote', async () => {
    const world = makeWorld()
    const project = path.join(world.home, 'race')
    let launched = 0
    for (let round = 0; round < 12; round++) {
      fs.mkdirSync(project, { recursive: true })
      expect((await inSandbox(world, project, 'true')).exitCode).toBe(0)
      fs.rmSync(project, { recursive: true }) // orphaned: GC will want it
      const gc = claudebox(world, ['--gc', '--yes', '--force'], { cwd: world.home })
      await new Promise(r => setTimeout(r, round * 7))
      fs.mkdirSync(project, { recursive: true })
      const launch = await inSandbox(world, project, `echo round${round} > "$CLAUDE_CONFIG_DIR/fresh"; sleep 0.1`)
      await gc
      // A launch that lost the race to the GC says so (125) and wrote nothing; one that ran keeps what it wrote.
      expect([0, 125], `round ${round}: ${launch.stderr}`).toContain(launch.exitCode)
      if (launch.exitCode === 125) expect(launch.stderr).toMatch(/^claudebox: /m)
      else {
        launched++
        expect(fs.readFileSync(path.join(instancePath(world, project), 'fresh'), 'utf8'), `round ${round}`).toBe(`round${round}\n`)
      }
      fs.rmSync(project, { recursive: true })
      await claudebox(world, ['--gc', '--yes', '--force'], { cwd: world.home })
    }
    // Most rounds launch: the check above was made, not skipped.
    expect(launched).toBeGreaterThanOrEqual(6)
  })
})

describe.skipIf(!HAVE_BWRAP)('--adopt and --sessions', () => {
  test('a repository moved with mv keeps its conversations', async () => {
    const world = makeWorld()
    const old = makeRepo(world.home, 'src/shop')
    git(old, 'remote', 'add', 'origin', 'https://example.com/shop.git')
    fs.mkdirSync(path.join(old, 'web'))
    expect((await inSandbox(world, path.join(old, 'web'), 'true')).exitCode).toBe(0)
    const oldInstance = instancePath(world, `${old}/.git`)
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'
    const folder = path.join(oldInstance, 'projects', sanitizePath(path.join(old, 'web')))
    fs.mkdirSync(folder, { recursive: true })
    fs.writeFileSync(path.join(folder, `${uuid}.jsonl`), `${JSON.stringify({ type: 'user', cwd: path.join(old, 'web'), message: { role: 'user', content: 'hello there' } })}\n`)

    // The project's own sign-in, kept by instance id outside the instance, follows it.
    const logins = path.join(world.claudeboxHome, 'logins')
    fs.mkdirSync(logins, { mode: 0o700 })
    fs.writeFileSync(path.join(logins, `${path.basename(oldInstance)}.json`), 'the login\n', { mode: 0o600 })

    const moved = path.join(world.home, 'work/shop')
    fs.mkdirSync(path.dirname(moved), { recursive: true })
    fs.renameSync(old, moved)
    // Without a terminal the first launch stops rather than split the history, and says how.
    const first = await inSandbox(world, moved, 'true')
    expect(first.exitCode).toBe(125)
    expect(first.stderr).toContain(`this project looks like ${old}, which moved: claudebox --adopt ${old} brings its conversations (or rerun on a terminal to be asked; to start empty instead: mkdir -p ${world.claudeboxHome}/aside && mv ${oldInstance} ${world.claudeboxHome}/aside/)`)
    expect(fs.existsSync(instancePath(world, `${moved}/.git`))).toBe(false)

    const dry = await claudebox(world, ['--adopt', old, '--dry-run'], { cwd: moved })
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`rename projects/${sanitizePath(path.join(old, 'web'))} -> projects/${sanitizePath(path.join(moved, 'web'))}`)
    expect(fs.existsSync(oldInstance)).toBe(true)

    const r = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(r.exitCode, r.stderr).toBe(0)
    const newInstance = instancePath(world, `${moved}/.git`)
    expect(fs.existsSync(oldInstance)).toBe(false)
    expect(fs.readFileSync(path.join(newInstance, 'project-root'), 'utf8')).toBe(`${moved}/.git\n`)
    expect(fs.existsSync(path.join(newInstance, 'projects', sanitizePath(path.join(moved, 'web')), `${uuid}.jsonl`))).toBe(true)
    expect(fs.readdirSync(logins)).toEqual([`${path.basename(newInstance)}.json`])

    const sessions = await claudebox(world, ['--sessions', '--json'], { cwd: moved })
    expect(JSON.parse(sessions.stdout)).toMatchObject([{ id: uuid, firstMessage: 'hello there', live: false }])

    // A refusal (the old root exists again) reaches the user; planAdopt's others are unit tests.
    fs.mkdirSync(old, { recursive: true })
    const refused = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toMatch(/still exists/)
  })

  test("--adopt never removes the new place's instance while a session runs in it", async () => {
    const world = makeWorld()
    noticeGiven(world)
    const { old, oldInstance, moved } = await movedWithConversation(world)
    // The user started empty in the new place (as "n" to the takeover does), then asks to adopt.
    const aside = path.join(world.home, 'aside')
    fs.renameSync(oldInstance, aside)
    const session = startSession(world, moved)
    await session.ready
    fs.renameSync(aside, oldInstance)
    const target = instancePath(world, `${moved}/.git`)
    const r = await claudebox(world, ['--adopt', old], { cwd: moved })
    const kept = fs.existsSync(path.join(target, 'claudebox/sessions', `${session.child.pid ?? 0}-${pidScope()}.json`))
    fs.writeFileSync(path.join(moved, '.release'), '')
    await session.child
    expect(r.exitCode, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/live session/)
    expect(kept).toBe(true)
    expect(fs.existsSync(path.join(oldInstance, 'projects', sanitizePath(old), 'c.jsonl'))).toBe(true)
  })

  test('--list measures an instance used since its cache; --adopt measures before it removes, whatever that cache says', async () => {
    const world = makeWorld()
    noticeGiven(world)
    // The user started in the new place and had a conversation.
    const { old, oldInstance, moved } = await usedInNewPlace(world, 'mkdir -p "$CLAUDE_CONFIG_DIR/projects/-w" && echo "{}" > "$CLAUDE_CONFIG_DIR/projects/-w/precious.jsonl"')
    const target = instancePath(world, `${moved}/.git`)
    const list = await claudebox(world, ['--list', '--json'], { cwd: world.home })
    expect((JSON.parse(list.stdout) as { root: string; conversations: number }[]).find(e => e.root === `${moved}/.git`)?.conversations).toBe(1)
    // A cache entry that matches the sessions dir and says none (forged here): measured before removing.
    const cacheFile = path.join(world.claudeboxHome, 'list-cache.json')
    const cache = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as Record<string, { conversations: number; size: number }>
    for (const entry of Object.values(cache)) Object.assign(entry, { conversations: 0, size: 0 })
    fs.writeFileSync(cacheFile, JSON.stringify(cache))
    const r = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toMatch(/holds 1 conversation\(s\) after all/)
    expect(fs.readFileSync(path.join(target, 'projects/-w/precious.jsonl'), 'utf8')).toBe('{}\n')
    expect(fs.existsSync(path.join(oldInstance, 'projects', sanitizePath(old), 'c.jsonl'))).toBe(true)
  })

  test("--adopt keeps the new place's instance it replaces (no conversations, but settings of the user's) in aside/, never removed (red team, round 94)", async () => {
    const world = makeWorld()
    noticeGiven(world)
    const { old, moved } = await usedInNewPlace(world, 'mkdir -p "$CLAUDE_CONFIG_DIR/todos" && echo "[]" > "$CLAUDE_CONFIG_DIR/todos/t.json"')
    const r = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(r.exitCode, r.stderr).toBe(0)
    const keptLine = /the new location's instance before it \(no conversations\) is kept in (\S+);/.exec(r.stderr)
    expect(keptLine, r.stderr).not.toBeNull()
    const kept = keptLine?.[1] ?? ''
    expect(path.dirname(kept)).toBe(path.join(world.claudeboxHome, 'aside'))
    expect(fs.readFileSync(path.join(kept, 'todos/t.json'), 'utf8')).toBe('[]\n')
    expect(fs.existsSync(path.join(instancePath(world, `${moved}/.git`), 'projects', sanitizePath(moved), 'c.jsonl'))).toBe(true)
    const gc = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(gc.exitCode, gc.stderr).toBe(0)
    expect(fs.existsSync(kept)).toBe(true)
  })

  test("--adopt leaves a sibling worktree's history where it is (/w/shop-feat beside /w/shop sanitizes like a subfolder): its transcript says where it ran (red team, round 94)", async () => {
    const world = makeWorld()
    noticeGiven(world)
    const old = makeRepo(world.home, 'w/shop')
    const sibling = path.join(world.home, 'w/shop-feat')
    git(old, 'worktree', 'add', '-q', sibling)
    const transcript = (cwd: string): string => `mkdir -p "$CLAUDE_CONFIG_DIR/projects/${sanitizePath(cwd)}" && echo '{"cwd":"${cwd}"}' > "$CLAUDE_CONFIG_DIR/projects/${sanitizePath(cwd)}/c.jsonl"`
    expect((await inSandbox(world, old, transcript(old))).exitCode).toBe(0)
    expect((await inSandbox(world, sibling, transcript(sibling))).exitCode).toBe(0)
    const moved = path.join(world.home, 'w/shop2')
    fs.renameSync(old, moved)
    const r = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(r.exitCode, r.stderr).toBe(0)
    const projects = path.join(instancePath(world, `${moved}/.git`), 'projects')
    expect(fs.readdirSync(projects).sort()).toEqual([sanitizePath(moved), sanitizePath(sibling)].sort())
  })

  test('a moved project launched with --yes takes its instance over before starting', async () => {
    const world = makeWorld()
    const { oldInstance, moved } = await movedWithConversation(world, 'https://example.com/shop.git')
    const r = await claudebox(world, ['--yes', '--', '-c', 'echo STARTED'], { cwd: moved, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('STARTED')
    expect(r.stderr).toContain('took over instance')
    expect(fs.existsSync(oldInstance)).toBe(false)
    expect(fs.existsSync(path.join(instancePath(world, `${moved}/.git`), 'projects', sanitizePath(moved), 'c.jsonl'))).toBe(true)
  })

  test('on a terminal the first launch of a moved project asks: Enter adopts, n starts empty', () => {
    const moved = (answer: string): { world: World; oldInstance: string; target: string; out: string } => {
      const world = makeWorld()
      noticeGiven(world)
      const old = makeRepo(world.home, 'src/shop')
      git(old, 'remote', 'add', 'origin', 'https://example.com/shop.git')
      const first = spawnSync(process.execPath, [BIN, '--yes', '--', '-c', 'true'], { cwd: old, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 40_000 })
      expect(first.status, first.stderr).toBe(0)
      const target = path.join(world.home, 'work/shop')
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.renameSync(old, target)
      const r = spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), 'take it over', answer, process.execPath, BIN, '--', '-c', 'echo RAN'], {
        cwd: target,
        env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
        encoding: 'utf8',
        timeout: 40_000,
      })
      return { world, oldInstance: instancePath(world, `${old}/.git`), target, out: r.stdout }
    }
    const adopted = moved('')
    expect(adopted.out).toContain('which moved; its conversations are in')
    expect(adopted.out).toContain('took over instance')
    expect(adopted.out).toContain('RAN')
    expect(fs.existsSync(adopted.oldInstance)).toBe(false)
    const declined = moved('n')
    expect(declined.out).toContain('RAN')
    expect(declined.out).not.toContain('took over')
    expect(fs.existsSync(declined.oldInstance)).toBe(true)
    expect(fs.existsSync(instancePath(declined.world, `${declined.target}/.git`))).toBe(true)
  })

  test("--resume and --sessions never follow a symlink the agent planted in the instance's projects/", async () => {
    const world = makeWorld()
    const a = makeRepo(world.home, 'a')
    const b = makeRepo(world.home, 'b')
    for (const repo of [a, b]) expect((await inSandbox(world, repo, 'true')).exitCode).toBe(0)
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'
    const bHistory = path.join(instancePath(world, `${b}/.git`), 'projects', sanitizePath(b))
    fs.mkdirSync(bHistory, { recursive: true })
    fs.writeFileSync(path.join(bHistory, `${uuid}.jsonl`), `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'secret of b' } })}\n`)
    const aProjects = path.join(instancePath(world, `${a}/.git`), 'projects')
    fs.mkdirSync(aProjects, { recursive: true })
    fs.symlinkSync(bHistory, path.join(aProjects, 'planted'))
    const r = await claudebox(world, ['--resume', uuid], { cwd: a, env: { CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(fs.existsSync(path.join(aProjects, sanitizePath(a), `${uuid}.jsonl`))).toBe(false)
    const sessions = await claudebox(world, ['--sessions', '--json'], { cwd: a })
    expect(JSON.parse(sessions.stdout)).toEqual([])
  })
})
