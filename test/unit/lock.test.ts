// The lock files of state several launchers change (src/host/lock.ts), with real processes: a lock
// left by a dead holder is taken over by one waiter at a time (the one holding its takeover guard); a planted or ever-renewed one does
// not hold anybody for ever; a holder never removes a lock that is no longer its own.
import { execFile, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { describe, expect, test } from 'vitest'
import { takeLock, withLockSync } from '../../src/host/lock.js'
import { tempDir } from '../helpers/temp.js'

const HOUR_AGO = new Date(Date.now() - 3600_000)

describe('lock files', () => {
  test('a lock left by a dead holder: six waiters take it over one at a time, never two at once (four rounds)', async () => {
    const dir = tempDir()
    const bundle = path.join(dir, 'lock.cjs')
    await build({ entryPoints: [path.resolve('src/host/lock.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'error' })
    const waiter = `const { withLockSync } = require(process.argv[1]); const fs = require('fs'); const [,, lock, log, start] = process.argv
while (Date.now() < Number(start));
withLockSync(lock, 5000, () => { fs.appendFileSync(log, 'in\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60); fs.appendFileSync(log, 'out\\n') })`
    const [lock, log] = [path.join(dir, 'x.lock'), path.join(dir, 'log')]
    const overlaps: number[] = []
    for (let round = 0; round < 4; round++) {
      fs.writeFileSync(lock, '1\n')
      fs.utimesSync(lock, HOUR_AGO, HOUR_AGO)
      fs.writeFileSync(log, '')
      const start = String(Date.now() + 300)
      await Promise.all(Array.from({ length: 6 }, () => promisify(execFile)(process.execPath, ['-e', waiter, bundle, lock, log, start])))
      const lines = fs.readFileSync(log, 'utf8').trim().split('\n')
      expect(lines).toHaveLength(12)
      if (lines.some((line, i) => line !== (i % 2 === 0 ? 'in' : 'out'))) overlaps.push(round)
    }
    expect(overlaps).toEqual([])
    expect(fs.readdirSync(dir).filter(name => name.startsWith('x.lock'))).toEqual([])
  }, 60_000)

  test('a stale lock another waiter is taking away (its takeover guard there) is left to it; taken once that waiter is done', async () => {
    const lock = path.join(tempDir(), 'x.lock')
    fs.writeFileSync(lock, 'dead holder\n')
    fs.utimesSync(lock, HOUR_AGO, HOUR_AGO)
    fs.writeFileSync(`${lock}.takeover`, 'another waiter\n')
    const taking = takeLock(lock, 10_000)
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(fs.readFileSync(lock, 'utf8')).toBe('dead holder\n')
    fs.rmSync(`${lock}.takeover`)
    const release = await taking
    expect(fs.readFileSync(lock, 'utf8')).not.toBe('dead holder\n')
    release()
    expect(fs.readdirSync(path.dirname(lock))).toEqual([])
  })

  test('a takeover guard left by a waiter that died taking a stale lock away holds nobody: it is stale itself', () => {
    const lock = path.join(tempDir(), 'x.lock')
    for (const file of [lock, `${lock}.takeover`]) {
      fs.writeFileSync(file, 'dead\n')
      fs.utimesSync(file, HOUR_AGO, HOUR_AGO)
    }
    const started = Date.now()
    expect(withLockSync(lock, 10_000, () => fs.readFileSync(lock, 'utf8'))).not.toBe('dead\n')
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(fs.readdirSync(path.dirname(lock))).toEqual([])
  })

  test('a lock dated in the future (planted) is taken over at once', () => {
    const lock = path.join(tempDir(), 'x.lock')
    fs.writeFileSync(lock, 'planted\n')
    fs.utimesSync(lock, new Date('2099-01-01'), new Date('2099-01-01'))
    const started = Date.now()
    expect(withLockSync(lock, 10_000, () => 'ran')).toBe('ran')
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  test('a lock made anew all the time holds a waiter at most twice the stale time; then the step runs', async () => {
    const lock = path.join(tempDir(), 'x.lock')
    const renew = spawn(process.execPath, ['-e', `const fs = require('fs'); setInterval(() => { try { fs.writeFileSync(${JSON.stringify(lock)}, 'x') } catch {} }, 5)`], { stdio: 'ignore' })
    try {
      await new Promise(resolve => setTimeout(resolve, 300))
      const started = Date.now()
      expect(withLockSync(lock, 300, () => 'ran')).toBe('ran')
      expect(Date.now() - started).toBeLessThan(2_000)
      const release = await takeLock(lock, 300)
      release()
      expect(Date.now() - started).toBeLessThan(4_000)
    } finally {
      renew.kill()
    }
  })

  test('a holder whose lock was taken over meanwhile leaves the new holder its lock', async () => {
    const lock = path.join(tempDir(), 'x.lock')
    const release = await takeLock(lock, 10_000)
    fs.writeFileSync(lock, 'another holder\n')
    release()
    expect(fs.readFileSync(lock, 'utf8')).toBe('another holder\n')
  })
})

describe('lock files planted by a sandbox (the opt-out gives it the OAuth store directory)', () => {
  test('a stale empty directory in place of the lock is taken over and removed; the step runs', () => {
    const lock = path.join(tempDir(), 'x.lock')
    fs.mkdirSync(lock)
    fs.utimesSync(lock, HOUR_AGO, HOUR_AGO)
    expect(withLockSync(lock, 1000, () => 'ran')).toBe('ran')
    expect(fs.readdirSync(path.dirname(lock))).toEqual([])
  })

  test('round 125: a stale directory holding things in place of the lock is moved aside whole, never walked (a folder inside swapped for a link meanwhile led the walk out); the step runs', async () => {
    const lock = path.join(tempDir(), 'x.lock')
    fs.mkdirSync(path.join(lock, 'sub'), { recursive: true })
    fs.writeFileSync(path.join(lock, 'sub', 'kept'), 'kept\n')
    fs.utimesSync(lock, HOUR_AGO, HOUR_AGO)
    const release = await takeLock(lock, 1000)
    expect(fs.readFileSync(lock, 'utf8')).toMatch(/^\d+\./)
    release()
    const aside = fs.readdirSync(path.dirname(lock))
    expect(aside).toEqual([expect.stringMatching(/^x\.lock\.stale\./)])
    expect(fs.readFileSync(path.join(path.dirname(lock), aside[0] ?? '', 'sub', 'kept'), 'utf8')).toBe('kept\n')
  })
  test('a lock swapped for a FIFO while its holder runs: the release neither waits on it nor removes it', () => {
    const lock = path.join(tempDir(), 'x.lock')
    withLockSync(lock, 10_000, () => {
      fs.rmSync(lock)
      execFileSync('mkfifo', [lock])
    })
    expect(fs.lstatSync(lock).isFIFO()).toBe(true)
  })

  test('a stale takeover guard planted as a link to a folder: the link goes, the folder and what it holds stay', () => {
    const [dir, outside] = [tempDir(), tempDir()]
    fs.writeFileSync(path.join(outside, 'keep'), 'kept\n')
    const lock = path.join(dir, 'x.lock')
    fs.writeFileSync(lock, 'dead\n')
    fs.utimesSync(lock, HOUR_AGO, HOUR_AGO)
    fs.symlinkSync(outside, `${lock}.takeover`)
    fs.lutimesSync(`${lock}.takeover`, HOUR_AGO, HOUR_AGO)
    expect(withLockSync(lock, 10_000, () => 'ran')).toBe('ran')
    expect(fs.readdirSync(dir)).toEqual([])
    expect(fs.readFileSync(path.join(outside, 'keep'), 'utf8')).toBe('kept\n')
  })
})
