// Which host directories may be made writable or visible: pure rules with their reasons.
import path from 'node:path'
import { isWithin } from '../state/instance.js'

/** Directories whose whole tree belongs to the system: never a project, never bound writable. */
const SYSTEM_TREES = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/boot', '/proc', '/sys', '/dev', '/run', '/nix']
/** Directories that are not projects themselves, though projects may live below them. */
const SHARED_PARENTS = ['/', '/var', '/srv', '/opt', '/tmp', '/mnt', '/media', '/home', '/root', '/var/tmp']

/**
 * Why `dir` must not be bound read-write as a project, or undefined when it may.
 * A home directory that is a dotfiles repository makes git's top-level $HOME from any plain
 * subdirectory: this is the check that stops such a launch from exposing the whole home.
 */
export function dangerousRootReason(dir: string, home: string, claudeboxHome: string): string | undefined {
  if (dir === home) return 'it is your home directory'
  if (isWithin(home, dir)) return `it contains your home directory ${home}`
  if (isWithin(claudeboxHome, dir)) return `it contains claudebox's state (${claudeboxHome})`
  if (isWithin(dir, claudeboxHome)) return `it lies inside claudebox's state (${claudeboxHome})`
  if (SHARED_PARENTS.includes(dir)) return 'it is a system-wide directory, not a project'
  const tree = SYSTEM_TREES.find(t => isWithin(dir, t))
  if (tree !== undefined) return `it is part of the system (${tree})`
  return undefined
}

/** Why claudebox does not run a program of the host's (bwrap, git) found in a folder the sandbox writes. */
export function writableProgramRefusal(name: string, program: string): string {
  return `${name} would be run from ${program}, in a folder the sandbox can write (a session could replace it); put the system's folders (/usr/bin) before that one in PATH${name === 'bwrap' ? ' or set CLAUDEBOX_BWRAP' : ''}, and rerun`
}

/**
 * The first of the launcher's own files (HostFacts.launcherFiles) that lies in a place the sandbox
 * writes, with that place: the session could rewrite claudebox, or the node it runs on, and the
 * next `claudebox` in any project would run that on the host (red team, round 99: a project holding
 * a checkout claudebox ran from).
 */
export function launcherWithin(files: readonly string[], writes: readonly string[]): { file: string; place: string } | undefined {
  for (const file of files) {
    const place = writes.find(w => isWithin(file, w))
    if (place !== undefined) return { file, place }
  }
  return undefined
}

/**
 * Why an extra --bind/--ro-bind path is refused, or undefined when it is acceptable. Read-only
 * counts too where sockets live: connecting to a unix socket needs no write access to the mount,
 * and other sessions' proxies and gateways listen in $XDG_RUNTIME_DIR, claudebox's run/ or /tmp
 * (red team: a sandbox given /run/user/UID used another project's proxy and replaced its gateway's
 * socket). `guarded` (resolved by the probe) adds the real paths behind those names.
 */
export function bindRefusal(real: string | undefined, home: string, claudeboxHome: string, guarded: { state: readonly string[]; sockets: readonly string[] } = { state: [], sockets: [] }, holdsSessions = false): string | undefined {
  if (real === undefined) return 'it does not exist'
  if (real === '/') return 'it is the whole file system'
  if (real === home || isWithin(home, real)) return 'it is (or contains) your home directory'
  for (const state of [claudeboxHome, path.join(home, '.claudebox'), ...guarded.state]) {
    if (isWithin(real, state) || isWithin(state, real)) return "it is (or contains) claudebox's state, which holds every project's history and the sessions' sockets"
  }
  if (insideSessionSockets(real)) return "it is inside a claudebox session's sockets directory"
  // The sandbox has its own /proc and no cgroup tree: the host's would show every process's
  // command line (another session's bridge key among them, red team) or let it leave its limits.
  for (const tree of HOST_PROCESS_TREES) if (isWithin(tree, real) || isWithin(real, tree)) return `it is (or contains) the host's ${tree}, which would show the sandbox every process on the machine or let it leave its limits`
  if (path.dirname(real) === RUNTIME_DIRS) return `it is a login's runtime directory (${real}), where claudebox sessions keep their sockets; bind what you need inside it instead`
  for (const dir of [RUNTIME_DIRS, '/tmp', ...guarded.sockets]) {
    // A socket or directory of your own in there is fine (a rootless Docker socket, gnupg/); the
    // whole place, or a claudebox session's directory in it, is not.
    if (isWithin(dir, real)) return `it is (or contains) ${dir}, where other programs and other claudebox sessions keep their sockets; bind what you need inside it instead`
  }
  // Found by the probe (host/probe.ts holdsSessions): another $XDG_RUNTIME_DIR's or home's sessions.
  if (holdsSessions) return "it holds claudebox sessions' sockets or state (another $XDG_RUNTIME_DIR or $CLAUDEBOX_HOME)"
  return undefined
}

/**
 * What a writable --bind may not cover. The user's binds are mounted after the project's
 * protections, so a writable bind of a folder holding the project mounts the tree again on top of
 * the git guard's pins and read-only binds: the agent could then write .git/hooks/pre-commit,
 * which the host's git runs later, unreported.
 */
export interface KeptFromBinds {
  /** The project's directories and the git dirs the guard pins; none without git or with --writable-git-config (which accepts a writable git config). */
  project: readonly string[]
  gitDirs: readonly string[]
  /** What the plan keeps read-only before the user's binds: git's config and hooks, host-run files, Claude's installation... */
  readOnly: readonly string[]
}

/** Why a writable bind of `real` would uncover a protection (the rest of a sentence after "--bind X"), or undefined. */
export function writableBindRefusal(real: string, kept: KeptFromBinds): string | undefined {
  const relation = (p: string): string => (p === real ? 'it is' : 'it holds')
  const gitDir = kept.gitDirs.find(dir => isWithin(dir, real))
  const accept = 'bind a folder beside the project instead, use --ro-bind, or pass --writable-git-config if you accept that'
  if (gitDir !== undefined) return `would make the project's git config and hooks writable inside the sandbox, and the host's git runs them (${relation(gitDir)} the project's git dir ${gitDir}); ${accept}`
  const project = kept.project.find(dir => isWithin(dir, real))
  if (project !== undefined) return `would mount the project again inside the sandbox, writable over the git files it keeps read-only, or let the session make a repository above it for the host's git to use there (${relation(project)} the project ${project}); ${accept}`
  const held = kept.readOnly.find(p => isWithin(p, real))
  const holder = held === undefined ? kept.readOnly.find(p => isWithin(real, p)) : undefined
  if (held === undefined && holder === undefined) return undefined
  const what = held === real ? 'it' : held !== undefined ? `${held}, which it holds,` : `part of ${holder ?? ''}`
  return `would make ${what} writable inside the sandbox, where claudebox keeps it read-only because the host runs or reads it; bind a folder that holds none of it instead, or use --ro-bind`
}

/** Why there is no current directory to work in: gone, or not nameable as text. */
export function noCurrentDir(facts: { cwdNotText?: string }, next: string): string {
  if (facts.cwdNotText === undefined) return `the current directory no longer exists; ${next}`
  return `the current directory's path is not UTF-8 (${facts.cwdNotText}), and claudebox names paths to bwrap, git and Claude as text; rename the folder to a UTF-8 name, then rerun`
}

/** Whether a path lies in a claudebox session's sockets directory, wherever that is. */
export const insideSessionSockets = (real: string): boolean => real.split(path.sep).some(part => SESSION_SOCKETS_NAME.test(part))

/**
 * A session's sockets directory: claudebox-net-<scope>-<pid>-<random> (host/probe.ts
 * sessionSocketsDir; groups 1 and 2), or an older version's claudebox-net-<random>.
 */
export const SESSION_SOCKETS_NAME = /^claudebox-net-(?:([0-9a-f]{8}|unknown)-(\d+)-)?[0-9a-f]{12}$/

/** The host's views of its processes (`--proc` gives the sandbox its own /proc). */
const HOST_PROCESS_TREES = ['/proc', '/sys/fs/cgroup']

/** Where each login's $XDG_RUNTIME_DIR lives. */
const RUNTIME_DIRS = '/run/user'

/** Normalises a user-supplied path relative to the current directory. */
export const absolute = (p: string, cwd: string): string => path.resolve(cwd, p)

/**
 * Why `home` cannot be the sandbox's empty $HOME (a tmpfs mounted over it), or undefined: over /
 * or a system tree it would hide the system, or claudebox's helpers in /run.
 */
export function sandboxHomeRefusal(home: string): string | undefined {
  if (home === '/') return 'it is /, and the empty home inside would hide the whole system'
  const tree = SYSTEM_TREES.find(t => isWithin(home, t))
  return tree === undefined ? undefined : `it is part of the system (${tree}), which the empty home inside would hide`
}
