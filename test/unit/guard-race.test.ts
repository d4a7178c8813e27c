// The restore of a corrupt .claude.json reads Claude's backups/ in the instance, a folder a running
// session of the project writes. A session that keeps swapping it with a symlink to another folder
// (renameat2 RENAME_EXCHANGE) must never get that folder's copies restored into its own file (red
// team, round 35: the user's ~/.claude backups reached the sandbox that way).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { restoreNewestCopy } from '../../src/state/guard.js'
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
    const swapper = spawn('python3', [path.join(import.meta.dirname, '../fixtures/exchange-loop.py'), path.join(instance, 'backups'), path.join(instance, 'backups.lnk'), '4'], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise(resolve => swapper.stdout.once('data', resolve))
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
      swapper.kill()
    }
    // The loop really raced: the folder was seen both ways (its own copy, and nothing when it was the link).
    expect(from.get('{"own":true}')).toBeGreaterThan(0)
    expect(from.get('none')).toBeGreaterThan(0)
  }, 20_000)
})
