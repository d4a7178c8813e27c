import { describe, expect, test, vi } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { planAdopt, resumeId, sanitizePath } from '../../src/state/adopt.js'
import { renderConversations, summarizeTranscript, uniqueConversations, type Conversation } from '../../src/state/conversations.js'
import { instanceStatus, planGc, type ScannedEntry } from '../../src/state/gc.js'
import { listRows, renderTable } from '../../src/state/list.js'
import { HEARTBEAT_STALE_MS, isLive, recordKind, type SessionRecord } from '../../src/state/registry.js'
import { tempDir } from '../helpers/temp.js'
import { liveSessionRecords, sessionRecords } from '../../src/state/scan.js'
import { pidScope, processStartTime } from '../../src/host/fs.js'
import { registerSession } from '../../src/state/apply.js'
import type * as Probe from '../../src/host/probe.js'

const id = (n: number): string => n.toString(16).padStart(16, '0')
const entry = (n: number, over: Partial<ScannedEntry> = {}): ScannedEntry => ({
  name: id(n),
  kind: 'dir',
  recordedRoot: `/p/${n}/.git`,
  rootState: 'exists',
  liveSessions: 0,
  ...over,
})

describe('GC plan', () => {
  test('removes only instances whose root is missing on its recorded mount', () => {
    const plan = planGc(
      [
        entry(1),
        entry(2, { rootState: 'missing' }),
        entry(3, { rootState: 'unreachable' }),
        entry(4, { rootState: 'EACCES' }),
        entry(5, { rootState: 'missing', liveSessions: 1 }),
        entry(6, { recordedRoot: undefined, rootState: undefined }),
        { ...entry(7), name: 'notes' },
        entry(8, { kind: 'symlink' }),
        { ...entry(9), name: '.trash-x' },
        entry(10),
        entry(11),
      ],
      { broken: false, force: false },
    )
    expect(plan.remove).toEqual([{ id: id(2), root: '/p/2/.git', reason: '/p/2/.git no longer exists' }])
    expect(plan.keep.map(k => [k.name, k.reason.split(/[:(;]/)[0]?.trim()])).toEqual([
      [id(3), 'cannot reach /p/3/.git'],
      [id(4), 'cannot reach /p/4/.git'],
      [id(5), 'a session is live in it'],
      [id(6), 'broken'],
      ['notes', 'not an instance'],
      [id(8), 'not a directory'],
    ])
    expect(plan.refused).toBeUndefined()
  })

  test('--broken removes broken instances too', () => {
    const plan = planGc([entry(6, { recordedRoot: undefined, rootState: undefined })], { broken: true, force: false })
    expect(plan.remove.map(r => r.id)).toEqual([id(6)])
  })

  test('most roots gone at once: refused without --force', () => {
    const entries = [entry(1, { rootState: 'missing' }), entry(2, { rootState: 'missing' }), entry(3, { rootState: 'missing' }), entry(4)]
    expect(planGc(entries, { broken: false, force: false }).refused).toMatch(/3 of 4 recorded projects look gone at once.*--force/)
    expect(planGc(entries, { broken: false, force: true }).refused).toBeUndefined()
  })

  test.each<[Partial<ScannedEntry>, string]>([
    [{}, 'idle'],
    [{ liveSessions: 2 }, 'live'],
    [{ rootState: 'missing' }, 'root missing'],
    [{ rootState: 'unreachable' }, 'root unreachable'],
    [{ recordedRoot: undefined }, 'broken'],
  ])('status of %j is %s', (over, status) => {
    expect(instanceStatus(entry(1, over))).toBe(status)
  })
})

describe('stale sessions', () => {
  const record: SessionRecord = { pid: 42, startTime: '1000', tty: '/dev/pts/3', cwd: '/p', version: '0.1.0', started: '2026-11-23T00:00:00Z' }
  test.each([
    [{ startTime: '1000' }, true],
    [{ startTime: undefined }, false], // the process is gone
    [{ startTime: '2000' }, false], // the pid belongs to another program now
  ])('%j -> live %s', (probe, live) => {
    expect(isLive(record, probe)).toBe(live)
  })
})

describe('--list', () => {
  test('rows and table, newest first, JSON-ready', () => {
    const rows = listRows([
      entry(1, { lastUsed: Date.parse('2026-11-01T10:00:00Z'), size: 2048, conversations: 3 }),
      entry(2, { lastUsed: Date.parse('2026-11-20T10:00:00Z'), liveSessions: 2, size: 10, conversations: 0 }),
      entry(3, { recordedRoot: undefined }),
    ])
    expect(rows.map(r => [r.id, r.state])).toEqual([
      [id(2), 'live (2 sessions)'],
      [id(1), 'idle'],
      [id(3), 'broken'],
    ])
    const table = renderTable(rows)
    expect(table.split('\n')[0]).toMatch(/^ID +STATE +LAST USED +SIZE +CONVERSATIONS +PROJECT ROOT$/)
    expect(table).toContain('2.0K')
  })
})

describe('--sessions', () => {
  const c = (id: string, folder: string, modified: number): Conversation => ({ id, folder, modified, size: 176_000, firstMessage: 'hi', cwd: `/p/${folder}`, live: false })
  test('a transcript linked into two worktree folders is one conversation, the newest copy', () => {
    expect(uniqueConversations([c('a', 'main', 1), c('a', 'wt', 2), c('b', 'main', 3)]).map(x => [x.id, x.folder])).toEqual([
      ['b', 'main'],
      ['a', 'wt'],
    ])
  })
  test('sizes as --list shows them; none says so', () => {
    expect(renderConversations([c('a', 'main', 0)])).toMatch(/ 171\.9K /)
    expect(renderConversations([])).toBe('no conversations in this project yet\n')
  })
})

describe('--adopt plan', () => {
  const base = {
    oldRoot: '/old/shop',
    oldRootExists: false,
    entries: [entry(1, { recordedRoot: '/old/shop/.git', rootState: 'missing' })],
    newRoot: '/new/shop/.git',
    newId: id(99),
    newTopLevel: '/new/shop',
    target: undefined,
    projectFolders: [{ name: '-old-shop' }, { name: '-old-shop-web' }, { name: '-old-shopping' }],
  }
  test('moves the instance and renames the history folders of the old path', () => {
    const plan = planAdopt(base)
    expect(plan).toMatchObject({ fromId: id(1), toId: id(99), oldRoot: '/old/shop/.git', newRoot: '/new/shop/.git', replaceEmptyTarget: false })
    expect(plan.renames).toEqual([
      { from: '-old-shop', to: '-new-shop' },
      { from: '-old-shop-web', to: '-new-shop-web' },
    ])
  })
  test.each([
    [{ oldRootExists: true }, /still exists/],
    [{ entries: [] }, /no instance records \/old\/shop/],
    [{ entries: [entry(1, { recordedRoot: '/old/shop/.git' }), entry(2, { recordedRoot: '/old/shop' })] }, /several instances match/],
    [{ target: { conversations: 2, liveSessions: 0, dir: '/h/.claudebox/instances/abc', asideDir: '/h/.claudebox/aside' } }, /already has an instance with 2 conversation.*move the new one aside and rerun: mkdir -p \/h\/.claudebox\/aside && mv \/h\/.claudebox\/instances\/abc/],
    [{ entries: [entry(1, { recordedRoot: '/old/shop/.git', liveSessions: 1 })] }, /live session/],
    [{ target: { conversations: 0, liveSessions: 1, dir: '/x', asideDir: '/y' } }, /instance 0{14}63 has a live session/],
  ])('%j is refused', (over, message) => {
    expect(() => planAdopt({ ...base, ...over })).toThrow(message)
  })
  test("a folder whose transcript records a cwd outside the old place (a sibling worktree /old/shop-web) is left as it is; one inside it is renamed (red team, round 94)", () => {
    const folders = [{ name: '-old-shop', cwd: '/old/shop' }, { name: '-old-shop-web', cwd: '/old/shop-web' }, { name: '-old-shop-api', cwd: '/old/shop/api' }]
    expect(planAdopt({ ...base, projectFolders: folders }).renames).toEqual([
      { from: '-old-shop', to: '-new-shop' },
      { from: '-old-shop-api', to: '-new-shop-api' },
    ])
  })
  test('a cwd counts only while the folder is named after it: one an earlier --adopt renamed is renamed again (round 96)', () => {
    expect(planAdopt({ ...base, projectFolders: [{ name: '-old-shop', cwd: '/first/shop' }] }).renames).toEqual([{ from: '-old-shop', to: '-new-shop' }])
  })
  test('an empty instance at the new place is replaced', () => {
    expect(planAdopt({ ...base, target: { conversations: 0, liveSessions: 0, dir: '/x', asideDir: '/y' } }).replaceEmptyTarget).toBe(true)
  })
  test('sanitizing matches Claude Code: every non-alphanumeric character becomes -', () => {
    expect(sanitizePath('/home/ada/my proj.v2')).toBe('-home-ada-my-proj-v2')
  })
  test.each([
    [['--resume', '0f8fad5b-d9cb-469f-a165-70867728950e'], '0f8fad5b-d9cb-469f-a165-70867728950e'],
    [['-r', '0f8fad5b-d9cb-469f-a165-70867728950e', '-p', 'x'], '0f8fad5b-d9cb-469f-a165-70867728950e'],
    [['--resume=abc12345'], 'abc12345'],
    [['--resume'], undefined],
    [['-c'], undefined],
  ])('resume id of %j', (args, expected) => {
    expect(resumeId(args)).toBe(expected)
  })
})

describe('transcripts', () => {
  test('first user message and cwd', () => {
    const text = [
      JSON.stringify({ type: 'summary', summary: 'x' }),
      JSON.stringify({ type: 'user', cwd: '/p/web', message: { role: 'user', content: [{ type: 'text', text: 'fix   the\ntests' }] } }),
      'not json',
    ].join('\n')
    expect(summarizeTranscript(text)).toEqual({ firstMessage: 'fix the tests', cwd: '/p/web' })
  })
})

describe('the shared JSON guard and a huge file', () => {
  test('a file over the limit is neither read nor copied', async () => {
    const { guardJson, JSON_LIMIT } = await import('../../src/state/guard.js')
    const { default: fs } = await import('node:fs')
    const { default: path } = await import('node:path')
    const dir = tempDir('cb-guard-')
    const file = path.join(dir, '.claude.json')
    fs.writeFileSync(file, '{')
    fs.truncateSync(file, JSON_LIMIT + 1) // sparse: no disk used
    const result = guardJson(file, [], path.join(dir, 'good'), new Date())
    expect(result).toEqual({ kind: 'too-large', size: JSON_LIMIT + 1 })
    expect(fs.readdirSync(dir)).toEqual(['.claude.json'])
  })

  test('a corrupt file swapped for a symlink while the guard waits: nothing behind the link is copied or read, nothing rewritten', async () => {
    const dir = tempDir('cb-guard-')
    const secret = path.join(dir, 'host-secret.json')
    fs.writeFileSync(secret, '{"claudeAiOauth":{"accessToken":"HOST-SECRET"}}')
    const file = path.join(dir, '.claude.json')
    fs.writeFileSync(file, '{corrupt')
    // As the agent would: the moment the host looked, a symlink to a secret replaces the file. Done
    // at the guard's first read, not after a sleep (a swap by a shell came after the guard's wait
    // under load, 2 of 40); the second read is the real no-follow one.
    vi.resetModules()
    vi.doMock('../../src/host/probe.js', async importOriginal => {
      const real = await importOriginal<typeof Probe>()
      let swapped = false
      const readNoFollow: typeof real.readNoFollow = (p, limit) => {
        const text = real.readNoFollow(p, limit)
        if (p === file && !swapped) {
          swapped = true
          fs.symlinkSync(secret, `${file}.new`)
          fs.renameSync(`${file}.new`, file)
        }
        return text
      }
      return { ...real, readNoFollow }
    })
    const { guardJson } = await import('../../src/state/guard.js')
    const result = guardJson(file, [], path.join(dir, 'good'), new Date())
    vi.doUnmock('../../src/host/probe.js')
    vi.resetModules()
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true)
    expect(result).toEqual({ kind: 'missing' })
    for (const name of fs.readdirSync(dir).filter(n => n !== 'host-secret.json' && n !== '.claude.json')) {
      const p = path.join(dir, name)
      if (fs.lstatSync(p).isFile()) expect(fs.readFileSync(p, 'utf8')).not.toContain('HOST-SECRET')
    }
    expect(fs.readFileSync(secret, 'utf8')).toContain('HOST-SECRET') // not rewritten through the link
  })
})

describe('session records of another pid namespace', () => {
  test('count as live: their pid cannot be checked here (a container sharing the home), and one of ours whose process is gone does not', () => {
    const instance = tempDir()
    const dir = path.join(instance, 'claudebox/sessions')
    fs.mkdirSync(dir, { recursive: true })
    const base = { pid: 999_999_999, startTime: '1', cwd: '/p', version: 'x', started: '2026-11-26T00:00:00Z' }
    fs.writeFileSync(path.join(dir, '999999999-0000ffff.json'), JSON.stringify({ ...base, scope: '0000ffff' }))
    fs.writeFileSync(path.join(dir, `999999999-${pidScope()}.json`), JSON.stringify({ ...base, scope: pidScope() }))
    fs.writeFileSync(path.join(dir, '999999999.json'), JSON.stringify(base))
    expect(liveSessionRecords(instance).map(r => r.scope)).toEqual(['0000ffff'])
  })

  test("one of another pid namespace or boot whose launcher stopped beating 5 minutes ago is gone (red team, rounds 55 to 57: a crash left such records live for good)", () => {
    const instance = tempDir()
    const dir = path.join(instance, 'claudebox/sessions')
    fs.mkdirSync(dir, { recursive: true })
    const base = { pid: 999_999_999, startTime: '1', cwd: '/p', version: 'x', started: '2026-11-26T00:00:00Z', heartbeat: true }
    const write = (name: string, record: object, ageMs: number): void => {
      const file = path.join(dir, name)
      fs.writeFileSync(file, JSON.stringify(record))
      const time = new Date(Date.now() - ageMs)
      fs.utimesSync(file, time, time)
    }
    write('999999999-0000ffff.json', { ...base, scope: '0000ffff' }, HEARTBEAT_STALE_MS + 60_000)
    write('999999998-0000fffe.json', { ...base, pid: 999_999_998, scope: '0000fffe' }, HEARTBEAT_STALE_MS - 60_000)
    // Of a version without the heartbeat: its time says nothing, so live.
    write('999999997-0000fffd.json', { ...base, pid: 999_999_997, scope: '0000fffd', heartbeat: undefined }, 24 * 3600_000)
    expect(liveSessionRecords(instance).map(r => r.pid).sort()).toEqual([999_999_997, 999_999_998])
  })

  test("gone, for the checks its end never made: ours whose pid is no longer its launcher, another namespace's that stopped beating; not one whose launcher runs on after its terminal closed, nor a foreign one still beating", () => {
    const instance = tempDir()
    const dir = path.join(instance, 'claudebox/sessions')
    fs.mkdirSync(dir, { recursive: true })
    const base = { cwd: '/p', version: 'x', started: '2026-11-26T00:00:00Z', heartbeat: true, scope: pidScope() }
    const write = (name: string, record: object, ageMs = 0): void => {
      const file = path.join(dir, name)
      fs.writeFileSync(file, JSON.stringify({ ...base, ...record }))
      const time = new Date(Date.now() - ageMs)
      fs.utimesSync(file, time, time)
    }
    const self = processStartTime('self') ?? ''
    write('a.json', { pid: 999_999_999, startTime: '1' })
    write('b.json', { pid: process.pid, startTime: `${self}0` }) // our pid, another process's start
    write('c.json', { pid: process.pid, startTime: self, tty: '/dev/pts/999999' }) // alive, its terminal gone: live (round 90)
    write('d.json', { pid: process.pid, startTime: self })
    write('e.json', { pid: 999_999_998, startTime: '1', scope: '0000fffe' }, HEARTBEAT_STALE_MS + 60_000)
    write('f.json', { pid: 999_999_997, startTime: '1', scope: '0000fffd' })
    const { live, gone } = sessionRecords(instance)
    expect(gone.map(g => path.basename(g.file)).sort()).toEqual(['a.json', 'b.json', 'e.json'])
    expect(live.map(r => r.pid).sort((a, b) => a - b)).toEqual([process.pid, process.pid, 999_999_997])
  })

  test('recordKind: ours by pid; another pid namespace by its heartbeat (its time asked only then)', () => {
    const older = { pid: 1, startTime: '1', cwd: '/p', version: 'x', started: '' }
    const base = { ...older, heartbeat: true }
    const now = Date.parse('2026-11-26T12:00:00Z')
    const never = (): number => {
      throw new Error('its time was asked')
    }
    expect(recordKind({ ...base, scope: 'aaaaaaaa' }, 'aaaaaaaa', now, never)).toBe('ours')
    expect(recordKind(older, 'aaaaaaaa', now, never)).toBe('ours')
    expect(recordKind({ ...older, scope: 'bbbbbbbb' }, 'aaaaaaaa', now, never)).toBe('foreign')
    expect(recordKind({ ...base, scope: 'bbbbbbbb' }, 'aaaaaaaa', now, () => now - HEARTBEAT_STALE_MS - 1)).toBe('gone')
    expect(recordKind({ ...base, scope: 'bbbbbbbb' }, 'aaaaaaaa', now, () => now - HEARTBEAT_STALE_MS)).toBe('foreign')
    // A writer's clock ahead of ours, and a record gone meanwhile: live, when in doubt.
    expect(recordKind({ ...base, scope: 'bbbbbbbb' }, 'aaaaaaaa', now, () => now + 3600_000)).toBe('foreign')
    expect(recordKind({ ...base, scope: 'bbbbbbbb' }, 'aaaaaaaa', now, () => undefined)).toBe('foreign')
  })

  test("a launcher refreshes its record's time while its session runs, and stops when it ends", async () => {
    const instance = tempDir()
    fs.mkdirSync(path.join(instance, 'claudebox/sessions'), { recursive: true })
    const unregister = registerSession(instance, '/p', 'x', {}, 50)
    const [name] = fs.readdirSync(path.join(instance, 'claudebox/sessions'))
    const file = path.join(instance, 'claudebox/sessions', name ?? '')
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, scope: pidScope(), heartbeat: true })
    const old = new Date(Date.now() - 3600_000)
    fs.utimesSync(file, old, old)
    for (const end = Date.now() + 3000; Date.now() < end && fs.statSync(file).mtimeMs < Date.now() - 60_000; ) await new Promise(r => setTimeout(r, 20))
    expect(fs.statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000)
    unregister()
    expect(fs.existsSync(file)).toBe(false)
  })
})
