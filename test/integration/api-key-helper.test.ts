// The apiKeyHelper runs on the host (sh -c): its key, its failure, and a helper that hangs, which
// is killed after its time with everything it started (a `sleep` it waits on outlived it before).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { helperCredential } from '../../src/network/api-session.js'
import { tempDir } from '../helpers/cli.js'

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  // A zombie waiting for its parent to reap it runs nothing any more.
  return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))
}

describe('apiKeyHelper on the host', () => {
  test('its output is the key; a failure names its status and the first line of its stderr, not the command', async () => {
    await expect(helperCredential('echo sk-ant-from-helper').header(undefined)).resolves.toEqual(['x-api-key', 'sk-ant-from-helper'])
    const failing = helperCredential('echo vault is sealed >&2; exit 3 # TOKEN=s3cr3t')
    await expect(failing.header(undefined)).rejects.toThrow(/apiKeyHelper failed on the host \(exit 3: vault is sealed\)/)
    await expect(failing.header(undefined)).rejects.not.toThrow(/s3cr3t/)
  })

  test('calls that need the key at once share one run of the helper; a 401 runs it again, once (red team, round 59: each dropped call started its own)', async () => {
    const runs = path.join(tempDir('cb-helper-'), 'runs')
    const credential = helperCredential(`echo run >> ${runs}; sleep 0.2; echo sk-ant-shared`)
    const keys = await Promise.all(Array.from({ length: 10 }, () => credential.header(undefined)))
    expect(keys.every(([, key]) => key === 'sk-ant-shared')).toBe(true)
    expect(fs.readFileSync(runs, 'utf8')).toBe('run\n')
    await Promise.all(Array.from({ length: 5 }, () => credential.header('sk-ant-shared')))
    expect(fs.readFileSync(runs, 'utf8')).toBe('run\nrun\n')
  })

  test('one that gives its key and leaves a process running that holds its output: the key is used at once, and nothing is killed later (its pid may be another\'s by then)', async () => {
    const pids = path.join(tempDir('cb-helper-'), 'pids')
    const leaving = helperCredential(`echo sk-ant-left; sleep 3 & echo $! > ${pids}`, 1000)
    const started = Date.now()
    await expect(leaving.header(undefined)).resolves.toEqual(['x-api-key', 'sk-ant-left'])
    expect(Date.now() - started).toBeLessThan(900)
    await new Promise(resolve => setTimeout(resolve, 1200))
    // Past the helper's time: the process it left is not killed by a timer of a helper that ended.
    expect(alive(Number(fs.readFileSync(pids, 'utf8')))).toBe(true)
    process.kill(Number(fs.readFileSync(pids, 'utf8')), 'SIGKILL')
  })

  test('one that prints without end (yes) is stopped at 64 KiB, with a clear reason, and the launcher lives on', async () => {
    const started = Date.now()
    await expect(helperCredential('yes', 10_000).header(undefined)).rejects.toThrow(/apiKeyHelper failed on the host \(it printed more than 64 KiB\)/)
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  test('one that hangs is killed after its time, with the processes it started', async () => {
    const pids = path.join(tempDir('cb-helper-'), 'pids')
    const hanging = helperCredential(`echo $$ > ${pids}; sleep 60 & echo $! >> ${pids}; wait`, 500)
    const started = Date.now()
    await expect(hanging.header(undefined)).rejects.toThrow(/did not finish within 0.5 s/)
    expect(Date.now() - started).toBeLessThan(5_000)
    const [shell, sleep] = fs.readFileSync(pids, 'utf8').trim().split('\n').map(Number)
    expect(shell).toBeGreaterThan(0)
    expect(sleep).toBeGreaterThan(0)
    for (let attempt = 0; attempt < 50 && (alive(shell as number) || alive(sleep as number)); attempt++) await new Promise(resolve => setTimeout(resolve, 20))
    expect(alive(shell as number), 'the helper').toBe(false)
    expect(alive(sleep as number), 'what the helper started').toBe(false)
  })
})
