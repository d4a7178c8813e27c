// How the launcher sees the sandbox's processes when it stops them (host/fs.ts): which thread
// states count as stopped (pure), and the whole tree of a deep chain of real processes.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildSync } from 'esbuild'
import { describe, expect, test } from 'vitest'
import { countsAsStopped } from '../../src/host/fs.js'
import { tempDir } from '../helpers/temp.js'

describe('countsAsStopped', () => {
  const d = (wchan: string | undefined, stopPending: boolean) => () => ({ wchan, stopPending })
  test.each([
    ['T', true],
    ['t', true],
    ['Z', true],
    ['X', true],
    ['R', false],
    ['S', false],
  ])('state %s: %s', (state, stopped) => {
    expect(countsAsStopped(state, d('kernel_clone', true))).toBe(stopped)
  })

  test("D counts only in a vfork's wait (kernel_clone) with SIGSTOP pending (red team, round 80: an io_uring worker in a long fsync ran its linked requests after)", () => {
    expect(countsAsStopped('D', d('kernel_clone', true))).toBe(true)
    expect(countsAsStopped('D', d('kernel_clone', false))).toBe(false)
    for (const wchan of ['io_wq_worker', 'jbd2_log_wait_commit', 'folio_wait_bit_common', '0', undefined]) expect(countsAsStopped('D', d(wchan, true)), String(wchan)).toBe(false)
  })
})

describe('walkTree', () => {
  // The walk once recursed, a level a process: 2,700 processes one under the other ran Node out of
  // stack, the error was taken for "no children", and the deepest ran on unseen while claudebox was
  // stopped (red team, round 80). Such a chain takes a minute to make, so this one is 300 deep, and
  // the walk runs in a Node with a stack a tenth of the usual, where recursion gave out at ~130.
  test('a chain of 300 processes, one under the other: every one is found, in a Node with a small stack', async () => {
    const dir = tempDir()
    const ready = path.join(dir, 'ready')
    const chain = spawn('python3', ['-c', CHAIN, '300', ready], { detached: true, stdio: 'ignore' })
    try {
      for (let i = 0; i < 600 && !fs.existsSync(ready); i++) await sleep(50)
      expect(fs.existsSync(ready)).toBe(true)
      const walker = path.join(dir, 'walk.cjs')
      buildSync({ stdin: { contents: `import { walkTree } from './src/host/fs.ts'; const t = walkTree(Number(process.argv[2])); console.log(JSON.stringify({ count: t.pids.length, whole: t.whole }))`, resolveDir: process.cwd(), loader: 'ts' }, bundle: true, platform: 'node', format: 'cjs', outfile: walker, logLevel: 'error' })
      const r = spawnSync(process.execPath, ['--stack-size=100', walker, String(chain.pid)], { encoding: 'utf8' })
      expect(r.status, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ count: 301, whole: true })
    } finally {
      process.kill(-(chain.pid ?? 0), 'SIGKILL')
    }
  }, 60_000)
})

/** Forks `depth` times, each child under the one before; the deepest writes `ready` and waits. */
const CHAIN = `
import os, sys, time
for _ in range(int(sys.argv[1])):
    child = os.fork()
    if child:
        os.waitpid(child, 0)
        os._exit(0)
open(sys.argv[2], 'w').write('ready')
time.sleep(60)
`
