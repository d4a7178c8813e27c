// The sandbox's opt-ins, as one value the planner reads (from the command line and config.json).
import type { NetworkMode } from '../network/policy.js'
import { DEFAULT_PIDS_LIMIT } from '../sandbox/limits.js'

export interface SandboxOptions {
  /** allow (default): only the allowlist, via the proxy; open: the host's network; none: loopback only. */
  network: NetworkMode
  /** --network=allow: extra destinations (HOST[:PORT], *.DOMAIN), named presets, and a deny list that wins. */
  allowHosts: readonly string[]
  allowPresets: readonly string[]
  denyHosts: readonly string[]
  /** Forward only the ssh-agent socket ($SSH_AUTH_SOCK). */
  sshAgent: boolean
  /** Let Claude load the account's claude.ai connectors (off: ENABLE_CLAUDEAI_MCP_SERVERS=false inside). */
  connectors: boolean
  /** Keep the login on the host (a placeholder inside, the gateway adds the credential); false: the opt-out. */
  secretless: boolean
  /** Keep a JSONL log of the session's API calls (time, path, status, tokens; never bodies or headers). */
  apiLog: boolean
  /** Extra host paths, shown read-only / read-write at their own path. */
  roBinds: readonly string[]
  binds: readonly string[]
  /** Extra environment: NAME (take the host's value) or NAME=VALUE. */
  env: readonly string[]
  /** Start a shell instead of Claude, in the same sandbox. */
  shell: boolean
  /** Let the agent change .git/config and .git/hooks (protected by default). */
  writableGitConfig: boolean
  /** Let io_uring through the seccomp filter (refused by default: its sockets escape the rules, vsock the network namespace). */
  ioUring: boolean
  /** Let hard links through the seccomp filter (refused by default: a second name lets the session's change of a file look like the user's later). */
  hardLinks: boolean
  /** Ask before the first launch in a project (after showing the audit); --yes answers. */
  confirmFirstLaunch: boolean
  /** Allow a project root that is /, $HOME, an ancestor of it, a system dir... (never the default). */
  allowDangerousRoot: boolean
  /** Processes and threads inside (0: no limit); memory (SIZE) and CPUs only where a cgroup enforces them. */
  pidsLimit: number
  memoryLimit: string | undefined
  cpuLimit: number | undefined
}

export const DEFAULT_SANDBOX: SandboxOptions = {
  network: 'allow',
  allowHosts: [],
  allowPresets: [],
  denyHosts: [],
  sshAgent: false,
  connectors: false,
  secretless: true,
  apiLog: false,
  roBinds: [],
  binds: [],
  env: [],
  shell: false,
  writableGitConfig: false,
  ioUring: false,
  hardLinks: false,
  allowDangerousRoot: false,
  confirmFirstLaunch: false,
  pidsLimit: DEFAULT_PIDS_LIMIT,
  memoryLimit: undefined,
  cpuLimit: undefined,
}
