// Resource limits of a sandbox: processes by default, memory and CPU on request. Pure planning;
// host/probe.ts finds the cgroups, host/cgroups.ts makes them and run.ts moves the sandbox in.
import { launchError, usageError } from '../errors.js'

/** Processes and threads inside, by default: room for `make -j`, node worker pools and Claude's own threads. */
export const DEFAULT_PIDS_LIMIT = 4096
/** The most a pids cgroup takes (the kernel's PID_MAX_LIMIT on 64-bit): more would fail only at the launch. */
export const MAX_PIDS_LIMIT = 4_194_304

export type Controller = 'pids' | 'memory' | 'cpu'

/** Cgroups claudebox may create a child in: the launcher's own, per controller, when writable. */
export interface CgroupFacts {
  version: 1 | 2
  dirs: Partial<Record<Controller, string>>
}

/** A child cgroup `claudebox-<launcher pid>` of `parent`, these files written, bwrap started in it. */
export interface CgroupStep {
  parent: string
  files: readonly (readonly [string, string])[]
}

export interface LimitRequest {
  /** 0: no limit. */
  pidsLimit: number
  /** SIZE with an optional K, M or G suffix. */
  memoryLimit?: string | undefined
  /** CPUs, e.g. 2 or 0.5. */
  cpuLimit?: number | undefined
}

export interface LimitsPlan {
  /** Runs the program with RLIMIT_NPROC set, inside the sandbox. */
  prefix: string[]
  cgroups: CgroupStep[]
  inForce: string[]
  notInForce: string[]
}

/**
 * RLIMIT_NPROC set inside (after bwrap made the user namespace) counts only the sandbox's own
 * processes: since Linux 5.14 it is counted per (user namespace, uid). The kernel exempts the
 * global uid 0 (copy_process: `real_cred->user != INIT_USER`), so for root only a pids cgroup
 * binds. Memory and CPU need a cgroup: requested where there is none, the launch is refused.
 */
export function planLimits(request: LimitRequest, uid: number, prlimit: string | undefined, cgroups: CgroupFacts | undefined): LimitsPlan {
  const plan: LimitsPlan = { prefix: [], cgroups: [], inForce: [], notInForce: [] }
  const files: Partial<Record<Controller, [string, string][]>> = {}
  const pids = request.pidsLimit
  if (pids === 0) plan.notInForce.push('processes: not limited (pidsLimit 0)')
  else if (uid !== 0 && prlimit !== undefined) {
    plan.prefix = [prlimit, `--nproc=${pids}`, '--']
    plan.inForce.push(`processes: at most ${pids} inside (RLIMIT_NPROC in the sandbox's user namespace)`)
  } else if (cgroups?.dirs.pids !== undefined) {
    files.pids = [['pids.max', String(pids)]]
    plan.inForce.push(`processes: at most ${pids} inside (pids cgroup)`)
  } else {
    const why = uid === 0 ? 'root is exempt from RLIMIT_NPROC and no writable pids cgroup was found' : 'prlimit (util-linux) was not found'
    plan.notInForce.push(`processes: not limited (${why})`)
  }
  if (request.memoryLimit !== undefined) {
    const bytes = parseSize(request.memoryLimit)
    needCgroup(cgroups, 'memory', '--memory-limit')
    files.memory = cgroups?.version === 2 ? [['memory.max', String(bytes)]] : [['memory.limit_in_bytes', String(bytes)]]
    plan.inForce.push(`memory: at most ${request.memoryLimit} (memory cgroup; /tmp and the empty home, which are in memory, count too)`)
  } else plan.notInForce.push(`memory: not limited (${offer(cgroups, 'memory', '--memory-limit')})`)
  if (request.cpuLimit !== undefined) {
    const quota = Math.round(request.cpuLimit * 100_000)
    if (!(quota >= 1000)) throw usageError(`--cpu-limit ${request.cpuLimit}: give a number of CPUs of at least 0.01, like 2 or 0.5`)
    needCgroup(cgroups, 'cpu', '--cpu-limit')
    files.cpu = cgroups?.version === 2 ? [['cpu.max', `${quota} 100000`]] : [['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', String(quota)]]
    plan.inForce.push(`CPU: at most ${request.cpuLimit} CPUs (cpu cgroup)`)
  } else plan.notInForce.push(`CPU: not limited (${offer(cgroups, 'cpu', '--cpu-limit')})`)
  for (const controller of ['pids', 'memory', 'cpu'] as const) {
    const parent = cgroups?.dirs[controller]
    const written = files[controller]
    if (parent === undefined || written === undefined) continue
    // cgroup v2: one tree; the controllers share one child.
    const same = plan.cgroups.find(step => step.parent === parent)
    if (same) plan.cgroups[plan.cgroups.indexOf(same)] = { parent, files: [...same.files, ...written] }
    else plan.cgroups.push({ parent, files: written })
  }
  return plan
}

/** Whether an option not given could be enforced here, for --check. */
function offer(cgroups: CgroupFacts | undefined, controller: Controller, option: string): string {
  return cgroups?.dirs[controller] !== undefined ? `${option} is available here` : `${option} is not available here: no ${controller} cgroup claudebox can use`
}

function needCgroup(cgroups: CgroupFacts | undefined, controller: Controller, option: string): void {
  if (cgroups?.dirs[controller] !== undefined) return
  throw launchError(
    `${option} cannot be enforced here: no ${controller} cgroup claudebox can create a child in (root with a writable cgroup tree; claudebox --check tells); remove the option to launch without it`,
  )
}

/** Bytes of SIZE (digits with an optional K, M or G suffix, powers of 1024). */
export function parseSize(size: string): number {
  const match = /^(\d+)([KMG]?)$/i.exec(size)
  if (match === null || Number(match[1]) === 0) throw usageError(`--memory-limit ${size}: give a size like 4G, 512M or 1048576 (bytes)`)
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(match[2] ?? '').toUpperCase() as '' | 'K' | 'M' | 'G']
  return Number(match[1]) * unit
}
