// The sandbox's opt-ins, as one value the planner reads (from the command line and config.json).

export interface SandboxOptions {
  /** Share the host's network (default) or unshare it (loopback only). */
  network: boolean
  /** Forward only the ssh-agent socket ($SSH_AUTH_SOCK). */
  sshAgent: boolean
  /** Extra host paths, shown read-only / read-write at their own path. */
  roBinds: readonly string[]
  binds: readonly string[]
  /** Extra environment: NAME (take the host's value) or NAME=VALUE. */
  env: readonly string[]
  /** Start a shell instead of Claude, in the same sandbox. */
  shell: boolean
  /** Let the agent change .git/config and .git/hooks (protected by default). */
  writableGitConfig: boolean
  /** Ask before the first launch in a project (after showing the audit); --yes answers. */
  confirmFirstLaunch: boolean
  /** Allow a project root that is /, $HOME, an ancestor of it, a system dir... (never the default). */
  allowDangerousRoot: boolean
}

export const DEFAULT_SANDBOX: SandboxOptions = {
  network: true,
  sshAgent: false,
  roBinds: [],
  binds: [],
  env: [],
  shell: false,
  writableGitConfig: false,
  allowDangerousRoot: false,
  confirmFirstLaunch: false,
}
