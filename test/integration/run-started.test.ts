// host/run.ts's `started` step, with real bwrap: the launcher's work that overlaps bwrap's (the
// session record, the servers) comes before the go, and a step that fails, even one that throws at
// once, means the program never runs and nothing is left waiting. The plan is a small hand-made
// one (the gate and the info pipe as the planner makes them).
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
  const at = argv.indexOf('--')
  return { file: 'bwrap', argv, groups: [argv.slice(0, at), argv.slice(at)], env: { PATH: '/usr/bin:/bin' }, fds, cgroups: [], userBinds: [], pinWithin: [], gitWatch: { workTrees: [], gitDirs: [], ways: [] } } as unknown as LaunchPlan
}

/** Live processes whose command line names `text` (zombies have none). */
function processesNaming(text: string): string[] {
  return fs.readdirSync('/proc').filter(pid => {
    try {
      return /^\d+$/.test(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)
    } catch {
      return false
    }
  })
}

describe.skipIf(!HAVE_BWRAP)("the launcher's work before the go", () => {
  test('runs before the program, which then runs and ends with its own status', async () => {
    const dir = tempDir('cb-started-')
    const result = await runForeground(plan(dir, `cat ${dir}/started > ${dir}/ran; exit 3`), () => Promise.resolve(fs.writeFileSync(path.join(dir, 'started'), 'first\n')))
    expect(result).toMatchObject({ status: 3, sandboxStarted: true })
    expect(fs.readFileSync(path.join(dir, 'ran'), 'utf8')).toBe('first\n')
  })

  test.each([
    ['rejects', (): Promise<void> => Promise.reject(new Error('no room for the session record'))],
    [
      'throws at once',
      (): Promise<void> => {
        throw new Error('no room for the session record')
      },
    ],
  ])('when it %s, the program never runs, the failure is the launch\'s and bwrap is gone', async (_, started) => {
    const dir = tempDir('cb-started-')
    await expect(runForeground(plan(dir, `echo ran > ${dir}/ran`), started)).rejects.toThrow('no room for the session record')
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
    // runForeground returns once bwrap has ended: nothing of this sandbox runs (a step that threw
    // at once used to return at once, leaving bwrap waiting at the gate).
    expect(processesNaming(dir)).toEqual([])
  })

  test('a signal that comes while it runs abandons the launch: the program never runs (red team: it ran after a Ctrl-C)', async () => {
    const dir = tempDir('cb-started-')
    // The signal is pending when the step returns (it is handled in a later turn of the event loop).
    const started = (): Promise<void> => Promise.resolve(void process.kill(process.pid, 'SIGINT'))
    // bwrap and the sandbox ignore SIGINT (inherited through exec), so that a program the go
    // started would not die of the signal the launcher forwards to it, and would say it ran.
    const ignoring = plan(dir, `echo ran > ${dir}/ran`)
    const result = await runForeground({ ...ignoring, file: '/bin/sh', argv: ['-c', 'trap "" INT; exec bwrap "$@"', 'sh', ...ignoring.argv] }, started)
    expect(result).toMatchObject({ status: 130, signal: 'SIGINT' })
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
    expect(processesNaming(dir)).toEqual([])
  })
})

describe.skipIf(!HAVE_BWRAP)("the user's binds, pinned just before bwrap (host/bind-fds.ts)", () => {
  /** The hand-made plan with `real` bound read-only at its own path, as a user's --ro-bind is. */
  function withBind(dir: string, real: string, script: string): LaunchPlan {
    const base = plan(dir, script)
    const [options = [], program = []] = base.groups
    return { ...base, groups: [options, ['--ro-bind', real, real], program], userBinds: [real] }
  }

  test('bound through a descriptor of what the plan checked: the program sees it', async () => {
    const dir = tempDir('cb-pinned-')
    const real = path.join(dir, 'data')
    fs.mkdirSync(real)
    fs.writeFileSync(path.join(real, 'f'), 'planned\n')
    const result = await runForeground(withBind(dir, real, `cat ${real}/f > ${dir}/ran`))
    expect(result).toMatchObject({ status: 0 })
    expect(fs.readFileSync(path.join(dir, 'ran'), 'utf8')).toBe('planned\n')
  })

  test("swapped for a symlink after the check (to the host's /proc, as a running sandbox could): refused, nothing runs (red team)", async () => {
    const dir = tempDir('cb-pinned-')
    const real = path.join(dir, 'data')
    fs.mkdirSync(real)
    const swapped = withBind(dir, real, `echo ran > ${dir}/ran`)
    fs.renameSync(real, `${real}.old`)
    fs.symlinkSync('/proc', real)
    await expect(runForeground(swapped)).rejects.toThrow(`${real} is a symlink now, where claudebox binds a directory or file`)
    // And a directory put in its place whose path leads elsewhere (a parent swapped).
    fs.rmSync(real)
    fs.mkdirSync(path.join(dir, 'elsewhere', 'data'), { recursive: true })
    const parent = withBind(dir, path.join(dir, 'link', 'data'), `echo ran > ${dir}/ran`)
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'link'))
    await expect(runForeground(parent)).rejects.toThrow(/changed while claudebox started \(it now leads to .*elsewhere\/data\)/)
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
  })

  test("a bind from a place a sandbox writes, reached through a symlink a running session put above it (.git/worktrees -> the home, red team): refused", async () => {
    const dir = tempDir('cb-pinned-')
    const home = path.join(dir, 'home')
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true })
    const project = path.join(dir, 'project')
    fs.mkdirSync(path.join(project, '.git'), { recursive: true })
    // The plan pins .git/worktrees/.ssh (it was a directory when probed); now worktrees leads home.
    fs.symlinkSync('../../home', path.join(project, '.git', 'worktrees'))
    const source = path.join(project, '.git', 'worktrees', '.ssh')
    const base = plan(dir, `echo ran > ${dir}/ran`)
    const [options = [], program = []] = base.groups
    const swapped = { ...base, groups: [options, ['--bind', source, source], program], pinWithin: [project] }
    await expect(runForeground(swapped)).rejects.toThrow(/changed while claudebox started \(it now leads to .*\/home\/\.ssh\)/)
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false)
  })

  test("round 115: a folder above the project swapped for a link to another repository of the user's (a session of a project holding it can), between the probe and the pinning: refused, that repository is not bound", async () => {
    const dir = tempDir('cb-pinned-')
    const project = path.join(dir, 'outer/a/inner')
    fs.mkdirSync(project, { recursive: true })
    fs.mkdirSync(path.join(dir, 'v/inner'), { recursive: true })
    fs.renameSync(path.join(dir, 'outer/a'), path.join(dir, 'outer/a-real'))
    fs.symlinkSync(path.join(dir, 'v'), path.join(dir, 'outer/a'))
    const base = plan(dir, `echo ran > ${project}/ran`)
    const [options = [], program = []] = base.groups
    const swapped = { ...base, groups: [options, ['--bind', project, project], program], pinWithin: [project] }
    await expect(runForeground(swapped)).rejects.toThrow(/changed while claudebox started \(it now leads to .*\/v\/inner\)/)
    expect(fs.existsSync(path.join(dir, 'v/inner/ran'))).toBe(false)
  })
})
