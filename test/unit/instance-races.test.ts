// Host-side steps that read folders of the instance a running session of the project writes: the
// restore of a corrupt .claude.json from Claude's backups/, and the link of a transcript for
// --resume from another worktree's projects/ folder. A session that keeps swapping such a folder
// with a symlink to another one (renameat2 RENAME_EXCHANGE) must never lead them out of the
// instance (red team, round 35: the user's ~/.claude backups reached the sandbox that way).
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { restoreNewestCopy } from '../../src/state/guard.js'
import { linkResumedTranscript } from '../../src/state/apply.js'
import { sanitizePath } from '../../src/state/adopt.js'
import { measureUsage } from '../../src/state/scan.js'
import { listConversations } from '../../src/commands/sessions.js'
import { tempDir } from '../helpers/temp.js'

describe('restoring .claude.json from backups a session can swap', () => {
  test('a backups folder swapped with a symlink thousands of times: no copy from the other folder is ever restored', async () => {
    const root = tempDir()
    const instance = path.join(root, 'instance')
    const secret = path.join(root, 'host-claude/backups')
    fs.mkdirSync(path.join(instance, 'backups'), { recursive: true })
    fs.mkdirSync(secret, { recursive: true })
    fs.writeFileSync(path.join(instance, 'backups/.claude.json.backup.1000'), '{"own":true}')
    fs.writeFileSync(path.join(secret, '.claude.json.backup.2000'), '{"primaryApiKey":"HOST-SECRET"}')
    fs.symlinkSync(secret, path.join(instance, 'backups.lnk'))
    const file = path.join(instance, '.claude.json')
    const swapper = await swapping(path.join(instance, 'backups'), path.join(instance, 'backups.lnk'))
    const from = new Map<string, number>()
    try {
      for (let i = 0; i < 3000 && swapper.exitCode === null; i++) {
        fs.writeFileSync(file, '{broken')
        const restored = restoreNewestCopy(file, [{ dir: path.join(instance, 'backups'), prefix: '.claude.json.backup.' }])
        const text = fs.readFileSync(file, 'utf8')
        expect(text).not.toContain('HOST-SECRET')
        const key = restored === undefined ? 'none' : text
        from.set(key, (from.get(key) ?? 0) + 1)
      }
    } finally {
      await stopped(swapper)
    }
    // The loop really raced: the folder was seen both ways (its own copy, and nothing when it was the link).
    expect(from.get('{"own":true}')).toBeGreaterThan(0)
    expect(from.get('none')).toBeGreaterThan(0)
  }, 20_000)

  test('--resume from another worktree: a transcript in another folder is linked here; one through a symlinked folder, or into one, is not', () => {
    const { projects, outside, id } = transcripts()
    fs.symlinkSync(outside, path.join(projects, 'linked'))
    linkResumedTranscript(path.dirname(projects), '/work/here', id)
    expect(fs.readFileSync(path.join(projects, sanitizePath('/work/here'), `${id}.jsonl`), 'utf8')).toBe('own\n')
    fs.rmSync(path.join(projects, sanitizePath('/work/here')), { recursive: true })
    fs.rmSync(path.join(projects, 'other'), { recursive: true })
    linkResumedTranscript(path.dirname(projects), '/work/here', id)
    expect(fs.existsSync(path.join(projects, sanitizePath('/work/here'), `${id}.jsonl`))).toBe(false)
    fs.rmSync(path.join(projects, sanitizePath('/work/here')), { recursive: true, force: true })
    fs.mkdirSync(path.join(projects, 'other'))
    fs.writeFileSync(path.join(projects, 'other', `${id}.jsonl`), 'own\n')
    fs.symlinkSync(outside, path.join(projects, sanitizePath('/work/here')))
    linkResumedTranscript(path.dirname(projects), '/work/here', id)
    expect(fs.readdirSync(outside)).toEqual([`${id}.jsonl`])
  })

  test('--resume while a session swaps the source folder with a symlink to another place: nothing from that place is ever linked in', async () => {
    const { projects, outside, id } = transcripts()
    fs.symlinkSync(outside, path.join(projects, 'other.lnk'))
    const here = path.join(projects, sanitizePath('/work/here'), `${id}.jsonl`)
    const swapper = await swapping(path.join(projects, 'other'), path.join(projects, 'other.lnk'))
    const seen = new Set<string>()
    try {
      for (let i = 0; i < 3000 && swapper.exitCode === null; i++) {
        linkResumedTranscript(path.dirname(projects), '/work/here', id)
        const text = fs.existsSync(here) ? fs.readFileSync(here, 'utf8') : 'none'
        expect(text).not.toContain('HOST')
        seen.add(text)
        fs.rmSync(here, { force: true })
      }
    } finally {
      await stopped(swapper)
    }
    expect([...seen].sort()).toEqual(['none', 'own\n'])
  }, 20_000)
})

describe('--sessions while a session swaps a folder of projects/', () => {
  test('a transcript folder swapped with a link to another place: --sessions never lists what is there (red team, round 37: it printed a file outside the instance)', async () => {
    const { projects, outside } = transcripts()
    fs.symlinkSync(outside, path.join(projects, 'other.lnk'))
    const swapper = await swapping(path.join(projects, 'other'), path.join(projects, 'other.lnk'))
    const seen = new Set<string>()
    try {
      for (let i = 0; i < 3000 && swapper.exitCode === null; i++) for (const c of listConversations(projects, [])) seen.add(`${c.folder} ${c.size}`)
    } finally {
      await stopped(swapper)
    }
    // own\n is 4 bytes, HOST\n 5: only the instance's own transcript was ever read, under whichever name it had.
    expect(seen.size).toBeGreaterThan(0)
    expect([...seen].filter(entry => !/^other(\.lnk)? 4$/.test(entry))).toEqual([])
  }, 20_000)
})

describe('measuring an instance a session writes', () => {
  test('a folder swapped with a link to a big tree while --list measures: the tree is never counted (red team, round 36: --list walked / for 30 s)', async () => {
    const root = tempDir()
    const instance = path.join(root, 'instance')
    const big = path.join(root, 'big')
    fs.mkdirSync(path.join(instance, 'zz'), { recursive: true })
    fs.mkdirSync(big)
    fs.writeFileSync(path.join(instance, 'zz/own'), 'x')
    const sparse = fs.openSync(path.join(big, 'huge'), 'w')
    fs.ftruncateSync(sparse, 1 << 30)
    fs.closeSync(sparse)
    fs.symlinkSync(big, path.join(instance, 'zzl'))
    const swapper = await swapping(path.join(instance, 'zz'), path.join(instance, 'zzl'))
    let largest = 0
    try {
      for (let i = 0; i < 3000 && swapper.exitCode === null; i++) largest = Math.max(largest, measureUsage(instance).size)
    } finally {
      await stopped(swapper)
    }
    expect(largest).toBeLessThan(1 << 20)
  }, 20_000)
})

/** An instance's projects/ with a transcript in another worktree's folder, and one outside the instance. */
function transcripts(): { projects: string; outside: string; id: string } {
  const root = tempDir()
  const projects = path.join(root, 'instance/projects')
  const outside = path.join(root, 'elsewhere')
  const id = '0b7c5e1a-1111-2222-3333-444455556666'
  fs.mkdirSync(path.join(projects, 'other'), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(projects, 'other', `${id}.jsonl`), 'own\n')
  fs.writeFileSync(path.join(outside, `${id}.jsonl`), 'HOST\n')
  return { projects, outside, id }
}

/** Swaps two names with renameat2 for 4 s, in a child; resolves once it swaps. */
async function swapping(a: string, b: string): Promise<ChildProcess> {
  const swapper = spawn('python3', [path.join(import.meta.dirname, '../fixtures/exchange-loop.py'), a, b, '4'], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise(resolve => swapper.stdout?.once('data', resolve))
  return swapper
}

/** Ends the swapper and waits for its end: a swap while the test's folder is removed afterwards made that removal fail (ENOTDIR). */
async function stopped(swapper: ChildProcess): Promise<void> {
  const exited = swapper.exitCode !== null || swapper.signalCode !== null ? Promise.resolve() : new Promise(resolve => swapper.once('exit', resolve))
  swapper.kill()
  await exited
}
