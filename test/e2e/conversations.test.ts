// Conversations with the real Claude Code's own transcript files: --adopt after `mv`, and
// resuming in one worktree a conversation started in another.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, git, HAVE_BWRAP, makeRepo, makeWorld, type World } from '../helpers/cli.js'
import { useMockApi } from '../helpers/messages-api.js'
import { runClaude } from '../helpers/e2e.js'

const api = useMockApi()

const claude = (world: World, cwd: string, args: string[], env: Record<string, string | undefined> = {}) => runClaude(world, cwd, args, api.url, env)

/** The conversation id of the only transcript listed by --sessions. */
async function onlySession(world: World, cwd: string): Promise<{ id: string; firstMessage: string }> {
  const r = await claudebox(world, ['--sessions', '--json'], { cwd })
  const sessions = JSON.parse(r.stdout) as { id: string; firstMessage: string }[]
  expect(sessions).toHaveLength(1)
  return sessions[0] as { id: string; firstMessage: string }
}

/** True when the last request to the API carried the earlier turn (the resumed conversation). */
const resumedWith = (text: string): boolean => JSON.stringify(api.messages().at(-1)?.body ?? '').includes(text)

describe.skipIf(!HAVE_BWRAP)('conversations', () => {
  test('--adopt after mv: Claude finds the old conversation at the new path', async () => {
    await api.start()
    const world = makeWorld()
    const old = makeRepo(world.home, 'src/shop')
    expect((await claude(world, old, ['-p', 'remember the word TANGERINE'])).stdout).toBe('pong')
    const { id } = await onlySession(world, old)

    const moved = path.join(world.home, 'work/shop')
    fs.mkdirSync(path.dirname(moved), { recursive: true })
    fs.renameSync(old, moved)
    const adopt = await claudebox(world, ['--adopt', old], { cwd: moved })
    expect(adopt.exitCode, adopt.stderr).toBe(0)
    expect((await onlySession(world, moved)).firstMessage).toBe('remember the word TANGERINE')

    const resumed = await claude(world, moved, ['--resume', id, '-p', 'what was the word?'])
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    expect(resumedWith('TANGERINE')).toBe(true)
  })

  test('a conversation started in one worktree resumes in another', async () => {
    await api.start()
    const world = makeWorld()
    const main = makeRepo(world.home, 'src/shop')
    const wt = path.join(world.home, 'wt/feature')
    git(main, 'worktree', 'add', '-q', wt)
    expect((await claude(world, main, ['-p', 'the secret is PAPAYA'])).stdout).toBe('pong')
    const { id } = await onlySession(world, wt) // --sessions lists it from the other worktree too
    // This worktree already has a history folder of its own: the link goes into it.
    expect((await claude(world, wt, ['-p', 'something else'])).stdout).toBe('pong')
    const r = await claude(world, wt, ['--resume', id, '-p', 'what was the secret?'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(resumedWith('PAPAYA')).toBe(true)
    // The transcript is now linked into both worktrees' folders: listed once, times as ISO strings.
    const listed = JSON.parse((await claudebox(world, ['--sessions', '--json'], { cwd: wt })).stdout) as { id: string; modified: string }[]
    expect(listed.filter(c => c.id === id)).toHaveLength(1)
    expect(new Set(listed.map(c => c.id)).size).toBe(listed.length)
    expect(listed[0]?.modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const table = (await claudebox(world, ['--sessions'], { cwd: wt })).stdout
    expect(table.split('\n').filter(line => line.includes(id))).toHaveLength(1)
    expect(table).toMatch(/ \d+(\.\d)?[KM]? +(live)? /)
  })
})
