// The sandbox runs its program only on the launcher's go (plan.ts GO_FD), given once the session
// is recorded and its servers listen. A signal that reaches the launcher first, even in the
// milliseconds right after bwrap is spawned, abandons the launch: the program never runs
// unsupervised, nothing is left running. And the sandbox holds none of the launcher's descriptors.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, HAVE_BWRAP, makeRepo, makeWorld } from '../helpers/cli.js'

/** Processes whose command line names `marker` (what a launch under the test's HOME left running). */
function leftRunning(marker: string): string[] {
  return fs.readdirSync('/proc').filter(pid => /^\d+$/.test(pid)).flatMap(pid => {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
      return cmdline.includes(marker) ? [`${pid} ${cmdline.slice(0, 120)}`] : []
    } catch {
      return []
    }
  })
}

describe.skipIf(!HAVE_BWRAP)('signals while the sandbox starts', () => {
  test.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s as soon as bwrap is spawned: the program never runs, nothing is left', async signal => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const marker = path.join(world.root, 'program-ran')
    // Python polls without sleeping (a JavaScript timer is too slow for the window right after the
    // fork) and signals the launcher the moment its child is bwrap.
    const race = [
      'import os, signal, subprocess, sys, time',
      'p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
      'f = "/proc/%d/task/%d/children" % (p.pid, p.pid)',
      'deadline = time.time() + 20',
      'def bwrap_started():',
      '    for kid in open(f).read().split():',
      '        try:',
      '            if b"bwrap" in open("/proc/%s/cmdline" % kid, "rb").read().split(b"\\0")[0]: return True',
      '        except OSError: pass',
      '    return False',
      'while time.time() < deadline and p.poll() is None:',
      '    try:',
      '        if bwrap_started(): break',
      '    except OSError: break',
      'p.send_signal(getattr(signal, sys.argv[1]))',
      'print(p.wait())',
    ].join('\n')
    for (let attempt = 0; attempt < 4; attempt++) {
      const run = spawnSync('python3', ['-c', race, signal, process.execPath, BIN, '--', '-c', `sleep 0.5; touch ${marker}`], { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
      expect(run.stdout.trim(), run.stderr).not.toBe('0')
      await sleep(800)
      expect(fs.existsSync(marker), `attempt ${attempt}: the program ran`).toBe(false)
      expect(leftRunning(world.root)).toEqual([])
    }
  }, 60_000)

  test.each(['allow', 'none', 'open'])('--network=%s: the sandbox holds no descriptor of the launcher', async network => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const r = await claudebox(world, [`--network=${network}`, '--', '-c', 'ls /proc/self/fd'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    // 0-2 and ls's own directory handle (3); nothing from the launcher's range (4 and up).
    expect(r.stdout.split('\n').map(Number).filter(fd => fd >= 4 && fd < 64)).toEqual([])
  })
})
