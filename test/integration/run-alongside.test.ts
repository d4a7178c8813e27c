// host/run.ts's `alongside` step, with real bwrap: the launcher's servers start after the go, while
// the program starts, and a server that cannot start must not leave the program running without
// it. The plan is a small hand-made one (the gate and the info pipe as the planner makes them).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { runForeground } from '../../src/host/run.js'
import { GO_FD, GO_GATE, INFO_FD } from '../../src/sandbox/plan.js'
import type { LaunchPlan } from '../../src/types.js'
import { HAVE_BWRAP, tempDir } from '../helpers/cli.js'

function plan(dir: string, script: string): LaunchPlan {
  const argv = ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', dir, dir, '--info-fd', String(INFO_FD), '--', '/bin/sh', '-c', GO_GATE, 'claudebox-go', '/bin/sh', '-c', script]
  const fds = [
    { fd: INFO_FD, kind: 'info' },
    { fd: GO_FD, kind: 'go', merged: 'go 2>&1' },
  ]
  return { file: 'bwrap', argv, env: { PATH: '/usr/bin:/bin' }, fds, cgroups: [] } as unknown as LaunchPlan
}

describe.skipIf(!HAVE_BWRAP)('the work alongside the program (the servers)', () => {
  test('runs after the go, while the program runs; the program ends as it would without it', async () => {
    const dir = tempDir('cb-alongside-')
    const order: string[] = []
    const result = await runForeground(
      plan(dir, `echo ran > ${dir}/ran; exit 3`),
      () => Promise.resolve(void order.push('started')),
      () => Promise.resolve(void order.push('alongside')),
    )
    expect(order).toEqual(['started', 'alongside'])
    expect(result).toMatchObject({ status: 3, sandboxStarted: true })
    expect(fs.readFileSync(path.join(dir, 'ran'), 'utf8')).toBe('ran\n')
  })

  test('when it fails, the sandbox is killed at once and the failure is the launch\'s', async () => {
    const dir = tempDir('cb-alongside-')
    const begun = Date.now()
    const run = runForeground(
      plan(dir, `sleep 20; echo still > ${dir}/still`),
      () => Promise.resolve(),
      async () => {
        await new Promise(resolve => setTimeout(resolve, 100))
        throw new Error('the proxy could not start')
      },
    )
    await expect(run).rejects.toThrow('the proxy could not start')
    // runForeground returns only once bwrap has ended (and with it the sandbox's pid namespace).
    expect(Date.now() - begun).toBeLessThan(10_000)
    expect(fs.existsSync(path.join(dir, 'still'))).toBe(false)
  }, 30_000)

  test('a step that throws at once counts as one that fails: before the go the program never runs, after it the sandbox is killed', async () => {
    const dir = tempDir('cb-alongside-')
    const fail = (): Promise<void> => {
      throw new Error('no room for the session record')
    }
    await expect(runForeground(plan(dir, `echo ran > ${dir}/ran`), fail)).rejects.toThrow('no room for the session record')
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
    const begun = Date.now()
    await expect(runForeground(plan(dir, `sleep 20; echo still > ${dir}/still`), () => Promise.resolve(), fail)).rejects.toThrow('no room')
    expect(Date.now() - begun).toBeLessThan(10_000)
    expect(fs.existsSync(path.join(dir, 'still'))).toBe(false)
  }, 30_000)
})
