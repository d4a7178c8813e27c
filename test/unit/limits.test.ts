// planLimits: which mechanism enforces each limit, for root and for a user, and what is refused.
import { describe, expect, test } from 'vitest'
import { planLimits, parseSize, type CgroupFacts } from '../../src/sandbox/limits.js'

const v1: CgroupFacts = { version: 1, dirs: { pids: '/sys/fs/cgroup/pids/u', memory: '/sys/fs/cgroup/memory/u', cpu: '/sys/fs/cgroup/cpu,cpuacct/u' } }
const v2: CgroupFacts = { version: 2, dirs: { pids: '/sys/fs/cgroup/u', memory: '/sys/fs/cgroup/u', cpu: '/sys/fs/cgroup/u' } }

describe('planLimits', () => {
  test('a user: RLIMIT_NPROC through prlimit inside, no cgroup needed', () => {
    const plan = planLimits({ pidsLimit: 4096 }, 1000, '/usr/bin/prlimit', undefined)
    expect(plan.prefix).toEqual(['/usr/bin/prlimit', '--nproc=4096', '--'])
    expect(plan.cgroups).toEqual([])
    expect(plan.inForce).toEqual(["processes: at most 4096 inside (RLIMIT_NPROC in the sandbox's user namespace)"])
  })

  test('root: the kernel exempts uid 0 from RLIMIT_NPROC, so a pids cgroup, or a warning', () => {
    expect(planLimits({ pidsLimit: 100 }, 0, '/usr/bin/prlimit', v1)).toMatchObject({ prefix: [], cgroups: [{ parent: '/sys/fs/cgroup/pids/u', files: [['pids.max', '100']] }] })
    expect(planLimits({ pidsLimit: 100 }, 0, '/usr/bin/prlimit', undefined).notInForce).toContain(
      'processes: not limited (root is exempt from RLIMIT_NPROC and no writable pids cgroup was found)',
    )
  })

  test('memory and CPU: v1 files per hierarchy, v2 one child with every file', () => {
    expect(planLimits({ pidsLimit: 0, memoryLimit: '2G', cpuLimit: 1.5 }, 0, undefined, v1).cgroups).toEqual([
      { parent: '/sys/fs/cgroup/memory/u', files: [['memory.limit_in_bytes', String(2 * 1024 ** 3)]] },
      { parent: '/sys/fs/cgroup/cpu,cpuacct/u', files: [['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', '150000']] },
    ])
    expect(planLimits({ pidsLimit: 64, memoryLimit: '512M', cpuLimit: 2 }, 0, undefined, v2).cgroups).toEqual([
      { parent: '/sys/fs/cgroup/u', files: [['pids.max', '64'], ['memory.max', String(512 * 1024 ** 2)], ['cpu.max', '200000 100000']] },
    ])
  })

  test('memory or CPU without a cgroup: refused (125), never silently ignored', () => {
    expect(() => planLimits({ pidsLimit: 4096, memoryLimit: '1G' }, 1000, '/usr/bin/prlimit', undefined)).toThrow(/--memory-limit cannot be enforced here/)
    expect(() => planLimits({ pidsLimit: 4096, cpuLimit: 1 }, 1000, '/usr/bin/prlimit', { version: 1, dirs: { pids: '/x' } })).toThrow(/--cpu-limit cannot be enforced here/)
  })

  test.each([['4G', 4 * 1024 ** 3], ['512m', 512 * 1024 ** 2], ['1048576', 1048576]])('parseSize(%s) = %d', (size, bytes) => {
    expect(parseSize(size)).toBe(bytes)
  })
  test.each([['0'], ['4GB'], ['-1'], ['']])('parseSize(%j) is a usage error', size => {
    expect(() => parseSize(size)).toThrow(/--memory-limit/)
  })
})

describe('the limit options', () => {
  test('parsed into the sandbox options; a bad value is a usage error (2)', async () => {
    const { parseArgs } = await import('../../src/cli/args.js')
    expect(parseArgs(['--pids-limit', '512', '--memory-limit=4G', '--cpu-limit', '0.5']).sandbox).toMatchObject({ pidsLimit: 512, memoryLimit: '4G', cpuLimit: 0.5 })
    for (const args of [['--pids-limit', 'many'], ['--memory-limit', '4 GB'], ['--cpu-limit', '0']]) {
      expect(() => parseArgs(args)).toThrow(expect.objectContaining({ exitCode: 2 }))
    }
  })
})
