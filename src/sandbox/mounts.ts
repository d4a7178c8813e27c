// The system a sandbox sees (read-only /usr, /etc, ..., fresh /dev, /proc and /tmp) and its
// namespaces: shared by a launch's plan and --check's probe sandbox.
import type { NetworkMode } from '../network/policy.js'
import { isWithin } from '../state/instance.js'
import type { HostFacts } from '../types.js'
import { SYSTEM_PATHS } from './host-paths.js'

/**
 * Namespaces: all unshared, the network only on request. An explicit user namespace (also for
 * root) lets --disable-userns stop nested ones; --cap-drop ALL because bwrap started by root keeps
 * every capability inside its user namespace.
 */
export function namespaceArgs(network: NetworkMode): string[] {
  return ['--unshare-all', '--unshare-user', '--disable-userns', ...(network === 'open' ? ['--share-net'] : []), '--die-with-parent', '--cap-drop', 'ALL']
}

/** The read-only system: /usr, /etc, ..., fresh /dev, /proc and /tmp, and /etc's symlink targets. */
export function systemMounts(facts: HostFacts): { groups: string[][]; visible: string[]; extraReadOnly: string[] } {
  const groups: string[][] = []
  const visible: string[] = []
  const extraReadOnly: string[] = []
  for (const p of SYSTEM_PATHS) {
    const entry = facts.systemPaths[p]
    if (entry?.kind === 'dir') {
      groups.push(['--ro-bind', p, p])
      visible.push(p)
    } else if (entry?.kind === 'symlink' && entry.target !== undefined) {
      groups.push(['--symlink', entry.target, p])
    }
  }
  // Password hashes and host keys, and for root all that only root may read in /etc and /opt:
  // root inside (uid 0 is mapped for root) could read them. Folders after files: a file the
  // probe lists may lie in a folder the search hides. Each folder is made read-only last
  // (rootOnlyRemounts): the project or another bind may lie in it, whose mount point bwrap makes.
  for (const secret of facts.etcSecrets) groups.push(['--ro-bind', '/dev/null', secret])
  for (const dir of facts.rootOnlyDirs) groups.push(['--tmpfs', dir])
  groups.push(['--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'])
  // The launcher's controlling terminal not on stdin, stdout or stderr (`claudebox -p ... </dev/null
  // >log 2>&1` typed at one; output to another terminal, round 95): nothing inside needs it, yet through
  // /dev/tty it was the session's: it changed the terminal's settings for good, and made the
  // terminal interrupt the script that ran claudebox (red team, round 93). /dev/null in its place,
  // on a mount without devices, cannot be opened. (Not --new-session: the sandbox keeps the
  // launcher's process group, which its stop of the group relies on, run.ts.)
  if (!facts.stdioTerminal) groups.push(['--ro-bind', '/dev/null', '/dev/tty'])
  // Sysctls check only that the writer is (host) uid 0, not its capabilities: for root, whose uid 0
  // is mapped into the sandbox, a writable /proc/sys would let the agent set kernel.core_pattern
  // (a program the host kernel runs as root) or trigger sysrq. bwrap 0.8 leaves /proc/sys writable
  // when its access(2) probe is refused, so cover both explicitly (measured here as root).
  groups.push(['--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger'])
  for (const [link, target] of Object.entries(facts.runLinks)) groups.push(['--symlink', target, link])
  for (const target of new Set(Object.values(facts.etcLinks))) {
    if (!visible.some(dir => isWithin(target, dir))) {
      groups.push(['--ro-bind', target, target])
      extraReadOnly.push(target)
    }
  }
  return { groups, visible, extraReadOnly }
}

/** The folders root's sandbox shows empty, made read-only after every bind (review of round 96: /opt/app/src as the project). */
export function rootOnlyRemounts(facts: Pick<HostFacts, 'rootOnlyDirs'>): string[] {
  return facts.rootOnlyDirs.flatMap(dir => ['--remount-ro', dir])
}

/**
 * A sandbox with the launch's namespaces and system view but no state, for --check's probes
 * (it must create nothing): runs `/bin/sh -c script`.
 */
export function planProbeSandbox(facts: HostFacts, script: string, network: NetworkMode): { file: string; argv: string[] } | undefined {
  if (facts.bwrap === undefined) return undefined
  const groups = [namespaceArgs(network), ...systemMounts(facts).groups, rootOnlyRemounts(facts)]
  return { file: facts.bwrap, argv: [...groups.flat(), '--', '/bin/sh', '-c', script] }
}

/** The user's shell for --shell, when it is visible inside; else /bin/sh. */
export function shellProgram(facts: HostFacts): string {
  const shell = facts.env['SHELL']
  const visible = shell !== undefined && SYSTEM_PATHS.some(dir => facts.systemPaths[dir]?.kind === 'dir' && isWithin(shell, dir))
  return visible ? shell : '/bin/sh'
}
