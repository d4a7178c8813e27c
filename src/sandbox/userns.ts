// Why bwrap could not create its namespaces on this machine, and the fix: pure, from kernel
// settings (read from /proc/sys, or a fixture directory in tests) and what bwrap printed.

export interface UsernsFacts {
  /** Values of the sysctls below, as read (trimmed); undefined when the file does not exist. */
  sysctl: Readonly<Record<string, string | undefined>>
  /** bwrap is installed setuid root (then it makes its namespaces itself, without user ones). */
  bwrapSetuid: boolean
  /** Running inside a container (docker, podman, LXC...). */
  container: boolean
  /** Running inside a claudebox sandbox (CLAUDEBOX=1), which forbids nested user namespaces. */
  insideClaudebox: boolean
  uid: number
}

export const USERNS_SYSCTLS = [
  'kernel/apparmor_restrict_unprivileged_userns',
  'kernel/unprivileged_userns_clone',
  'user/max_user_namespaces',
  'dev/tty/legacy_tiocsti',
] as const

export interface Diagnosis {
  cause: string
  fix: string
}

export function diagnoseUserns(facts: UsernsFacts, bwrapMessage: string): Diagnosis {
  const s = facts.sysctl
  // bwrap --disable-userns (claudebox's own) makes a nested namespace fail with ENOSPC.
  if (facts.insideClaudebox) {
    return { cause: 'this is already inside a claudebox sandbox, which forbids nested user namespaces (--disable-userns)', fix: 'run claudebox on the host, outside the sandbox' }
  }
  if (s['user/max_user_namespaces'] === '0') {
    return { cause: 'user namespaces are disabled (user.max_user_namespaces = 0)', fix: 'sudo sysctl -w user.max_user_namespaces=15000 (and set it in /etc/sysctl.d/ to keep it)' }
  }
  if (s['kernel/unprivileged_userns_clone'] === '0' && facts.uid !== 0) {
    return { cause: 'unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)', fix: 'sudo sysctl -w kernel.unprivileged_userns_clone=1 (and set it in /etc/sysctl.d/ to keep it)' }
  }
  if (s['kernel/apparmor_restrict_unprivileged_userns'] === '1' && facts.uid !== 0) {
    return {
      cause: 'AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10 and later)',
      fix: 'install an AppArmor profile that allows userns for bwrap: see the README section "Ubuntu and AppArmor"',
    }
  }
  if (facts.bwrapSetuid) {
    return { cause: 'bwrap is setuid root, which cannot create the user namespace claudebox needs', fix: 'use a non-setuid bwrap (sudo chmod u-s $(command -v bwrap)) on a kernel with user namespaces' }
  }
  if (/No space left on device|max.*namespaces/i.test(bwrapMessage)) {
    return {
      cause: `the limit on user namespaces is reached (bwrap: ${bwrapMessage}): an enclosing sandbox forbids nested ones, or too many are in use`,
      fix: 'run claudebox outside the enclosing sandbox, or raise user.max_user_namespaces (sudo sysctl -w user.max_user_namespaces=15000)',
    }
  }
  if (facts.container) {
    return { cause: 'this is a container without the privileges to create namespaces', fix: 'run claudebox on the host, or give the container user namespaces (docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined)' }
  }
  return { cause: `bwrap failed: ${bwrapMessage || 'no message'}`, fix: 'check that your kernel allows user namespaces (claudebox --check)' }
}
