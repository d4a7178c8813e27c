// facts -> the bwrap command of a launch. Pure: everything it knows arrives in HostFacts.
import path from 'node:path'
import { describePolicy, type EgressPolicy } from '../network/policy.js'
import { API_PORT, API_SOCKET, BRIDGE_PORT, checkApiReachable, egressPlan, egressPolicy, PROXY_SOCKET, proxyEnv, SOCKETS_DIR } from '../network/egress-plan.js'
import { isPassedThrough, isUrlVariable, looksSecret, PROXY_VARIABLES, SECRET_VARIABLES, withoutUserinfo } from './env.js'
import { ClaudeboxError, EXIT, launchError, usageError } from '../errors.js'
import { canonicalRoot, instanceDir, instanceId, instancesDir, isWithin, PROJECT_ROOT_FILE, sharedPaths } from '../state/instance.js'
import { trustGit } from './git-trust.js'
import { planGitGuard, type GitGuardPlan } from './git-guard.js'
import { GIT_DIR_TODO_FILES, watchedPaths } from './persistence.js'
import { folderCacheFile, nestedRecordFile, OWN_DIR, QUARANTINE_DIR, SESSIONS_DIR } from '../state/registry.js'
import { dangerousRootReason, insideSessionSockets, launcherWithin, noCurrentDir, sandboxHomeRefusal } from './policy.js'
import { DEFAULT_SANDBOX, type SandboxOptions } from '../config/sandbox-options.js'
import { scopeHelper } from './landlock.js'
import { nativeBridge } from '../network/bridge-native.js'
import { planLimits } from './limits.js'
import { hostSeccompArch, seccompFilter } from './seccomp.js'
import { planTiers, SANDBOX_NOTE } from './tiers.js'
import type { SignInKind } from '../types.js'
import type { FileStep, GitWatchSpec, HostFacts, LaunchPlan, LaunchSummary } from '../types.js'
import { SandboxBuilder } from './builder.js'
import { bwrapArgv } from './arg-limit.js'
import { HOME_FILES_RO, newlineRefusal } from './host-paths.js'
import { namespaceArgs, rootOnlyRemounts, shellProgram, systemMounts } from './mounts.js'
import { extraBinds, type BoundGuard } from './user-binds.js'

/** bwrap writes {"child-pid": N} here: the launcher signals the sandboxed program through it. */
export const INFO_FD = 3
/**
 * The sandbox waits for the launcher's go here before its program runs: the launcher records the
 * session and starts its servers while bwrap builds the sandbox, so the program never runs without
 * them. A gate in front of the program (GO_GATE) reads it; an end of file without the go (the
 * launcher died or gave up) stops the sandbox, which then runs nothing.
 */
export const GO_FD = 7
/**
 * The go when the launcher relays stdout and stderr to one place (`2>&1`): the program's stderr
 * joins its stdout in the sandbox, so that their lines keep their order (bwrap's own errors still
 * come on stderr).
 */
export const GO_MERGED = 'go 2>&1'
/**
 * The gate says `ready` here first: bwrap has built the whole sandbox. The launcher then checks its
 * mounts (bind-fds.ts mountsProblem) before the go, and knows that a failure after this point is
 * the program's, not bwrap's.
 */
export const READY_FD = 8
export const GO_GATE = [
  'echo ready >&8',
  'exec 8>&-',
  'IFS= read -r go <&7 || go=',
  'exec 7<&-',
  `[ "$go" = '${GO_MERGED}' ] && { exec 2>&1; go=go; }`,
  '[ "$go" = go ] || { echo "claudebox: the launcher did not start the sandbox" >&2; exit 125; }',
  'exec "$@"',
].join('\n')
/** bwrap reads the seccomp program from here. */
export const SECCOMP_FD = 4

/** bwrap copies the Landlock scope helper from here to SCOPE_HELPER inside. */
export const SCOPE_FD = 5
export const SCOPE_HELPER = '/run/claudebox/scope'

/** --network=allow: where the bridge appears inside (its sockets and ports: network/egress-plan.ts). */
export const BRIDGE_FD = 6
export const BRIDGE_PROGRAM = '/run/claudebox/bridge'
export const BRIDGE_SCRIPT = '/run/claudebox/bridge.js'

/**
 * Starts the bridge in the background, waits for its "ok" on a fifo (EOF if it died), then
 * becomes the program: $1 node, $2 bridge, $3 SOCKET=PORT pairs, $4 the sockets' key, the rest
 * the program and its args.
 */
export const BRIDGE_WRAPPER = [
  'fifo=/tmp/.claudebox-bridge-ready',
  // The host's PATH may lack coreutils (a trimmed PATH): the system's are read-only inside. The
  // program then gets the PATH it was given.
  'path="$PATH"',
  'PATH="$PATH:/usr/bin:/bin"',
  'mkfifo -m 600 "$fifo" || exit 125',
  '"$1" "$2" "$3" "$4" 3>"$fifo" </dev/null >/dev/null 2>&1 &',
  'IFS= read -r ready <"$fifo"',
  'rm -f "$fifo"',
  'if [ "$ready" != ok ]; then echo "claudebox: the network bridge did not start inside the sandbox ($1 $2)" >&2; exit 125; fi',
  'shift 4',
  'PATH="$path"',
  'exec "$@"',
].join('\n')

export interface LaunchRequest {
  claudeArgs: readonly string[]
  sandbox?: SandboxOptions
  /** The shared tier: config.json's sharedEntries (undefined: the default list), read-only or not. */
  tiers?: { entries: readonly string[] | undefined; readOnly: boolean }
  /** Which config and profile were applied, for the audit. */
  applied?: readonly string[]
  /** --network=allow: the host path of the proxy's socket (the launcher creates it). */
  egressSocket?: string
  /**
   * With sockets bridged inside: the line the bridge sends first on each connection to them, this
   * session's own (random), which the launcher's servers require (network/lazy-server.ts).
   */
  socketsKey?: string
  /**
   * Secretless (the default): how Claude reaches the launcher's API gateway, which holds the real
   * credential. Its unix socket (bridged to 127.0.0.1:API_PORT inside), or with the open network a
   * port on the host's loopback; the session's placeholder and the kind of sign-in it stands for;
   * for a stored OAuth login, the placeholder credential file's content.
   */
  api?: { kind: SignInKind; placeholder: string; socket?: string; port?: number; credentialsFile?: string; storedKey?: true }
  /** Secretless without a login yet: the sandbox gets an empty credential store of its own (a /login lands there). */
  ownCredentialStore?: boolean
  /** The session's name for its own store (sessions of one project at once each have theirs). */
  storeSession?: string
}

/** Where an older claudebox kept the sandboxes' stores, inside the instance (removed at launch). */
export const OLD_SANDBOX_STORE_DIR = '.claudebox-credentials'

/** The sandboxes' own credential stores (placeholders, or a login made inside), one per session. */
export const SESSION_STORES_DIR = 'session-stores'

/**
 * One session's own store, outside the instance and bound into that session's sandbox alone: two
 * sessions of a project at once must neither overwrite each other's placeholder nor read the login
 * `claudebox --login` makes in the other. Derived from the instance path: $CLAUDEBOX_HOME/instances/<id>.
 */
export const sandboxStore = (instance: string, session = 'session'): string =>
  path.join(path.dirname(path.dirname(instance)), SESSION_STORES_DIR, `${path.basename(instance)}-${session}`)

export function planLaunch(facts: HostFacts, request: LaunchRequest): LaunchPlan {
  const options = request.sandbox ?? DEFAULT_SANDBOX
  const { cwd, shell, bwrap } = launchable(facts, options)
  const { git } = facts
  const root = canonicalRoot(cwd, git)
  const id = instanceId(root)
  const instance = instanceDir(facts.claudeboxHome, id)
  checkInstance(facts, root, instance)
  const b = new SandboxBuilder()
  const projectDirs = projectDirsOf(facts, cwd, options, b.warnings)
  const writes = writablePlaces(facts, options, projectDirs)
  launcherOutOfReach(facts, writes, options, b.warnings)
  if (!facts.gitAvailable) b.warnings.push('git was not found; using the current directory as the project')

  b.add(...namespaceArgs(options.network))
  // The API endpoint named on the host is the gateway's business when there is one (secretless).
  const policy = options.network === 'allow' ? egressPolicy(options, request.api === undefined ? facts.env : {}) : undefined
  b.add('--info-fd', String(INFO_FD))
  b.fds.push({ fd: INFO_FD, kind: 'info' }, { fd: GO_FD, kind: 'go', merged: GO_MERGED }, { fd: READY_FD, kind: 'ready' })
  const scope = terminalAndSyscalls(b, facts, options)
  const system = systemAndHome(b, facts)
  const guard = projectAndGit(b, facts, options, projectDirs, instance)
  const bindGuards = extraBinds(b, facts, options, projectDirs)
  const state = instanceState(b, facts, request, instance)
  const environment = sandboxEnvironment(b, facts, request, { instance, storeDir: state.storeDir, policy, shell })
  const command = commandLine(b, facts, request, { policy, shell, scope, alreadyVisible: system.alreadyVisible })
  const remounts = rootOnlyRemounts(facts)
  if (remounts.length > 0) b.add(...remounts)
  b.add('--chdir', cwd)
  b.add('--', ...command.argv)

  return {
    file: bwrap,
    argv: bwrapArgv(b.groups, { user: options.binds.length + options.roBinds.length, git: guard.groups.length }),
    ...environment,
    groups: b.groups,
    mkdirs: [...b.mkdirs, ...state.tiers.mkdirs],
    files: [...state.tiers.files, ...b.files, ...guard.files, ...recordFiles(facts, root, instance), ...state.files],
    fds: b.fds,
    userBinds: b.userBinds,
    pinWithin: writes,
    warnings: b.warnings,
    ...watches(facts, options, { cwd, instance }, guard, bindGuards),
    ...(policy === undefined || request.egressSocket === undefined ? {} : { egress: egressPlan(request.egressSocket, request.socketsKey ?? '', policy, facts.env) }),
    cgroups: command.cgroups,
    ...(command.socketsDir === undefined ? {} : { socketsDir: command.socketsDir }),
    summary: {
      projectRoot: root,
      instanceId: id,
      instanceDir: instance,
      ...auditOf(b, options, policy),
      system: system.visible,
      limits: command.limits,
      credentials: state.credentials,
      shared: state.tiers.entries,
      applied: request.applied ?? [],
      claudeCode: shell === undefined && isClaudeCode(facts.claude),
    },
  }
}

/**
 * What the launcher looks at around the session: the host-run files of every work tree (the
 * project's, a writable bind's) for the report after it, and for the git watch the names to move
 * aside, the guarded links, the git dirs and the trees searched for nested repositories.
 */
function watches(facts: HostFacts, options: SandboxOptions, { cwd, instance }: { cwd: string; instance: string }, guard: GitGuardPlan, bindGuards: readonly BoundGuard[]): Pick<LaunchPlan, 'watch' | 'gitWatch'> {
  const top = facts.git?.topLevel ?? cwd
  const protects = [facts.gitProtect, ...bindGuards.map(g => g.protect)]
  const trees = [...(facts.gitProtect.workTrees.length > 0 ? [] : [top]), ...protects.flatMap(p => p.workTrees)]
  const todos = protects.flatMap(p => p.gitDirs).flatMap(dir => GIT_DIR_TODO_FILES.map(name => path.join(dir, name)))
  const watch = [...watchedPaths(trees), ...todos, ...protects.flatMap(p => p.symlinked)]
  if (options.writableGitConfig) watch.push(...facts.gitProtect.readOnly)
  const guards = [guard, ...bindGuards.map(g => g.plan)]
  return {
    watch,
    gitWatch: { forbidden: guards.flatMap(g => g.forbidden), placeholders: guards.flatMap(g => g.placeholders), headPlaceholders: guards.flatMap(g => g.headPlaceholders), links: guards.flatMap(g => g.links), gitDirs: guards.flatMap(g => g.gitDirs), workTrees: [top, ...bindGuards.map(g => g.real)], ways: [...new Set(protects.flatMap(p => [...p.pinned, ...p.workTrees]))], home: facts.home, quarantineDir: path.join(facts.claudeboxHome, QUARANTINE_DIR, path.basename(instance)), instance, folderCache: folderCacheFile(facts.claudeboxHome, path.basename(instance)), nestedRecord: nestedRecordFile(facts.claudeboxHome, path.basename(instance)), ...gitlinkWatch(facts, options) },
  }
}

/** The top's index, watched for gitlinks during the session; not with --writable-git-config, which lets the session make repositories. */
function gitlinkWatch(facts: HostFacts, options: SandboxOptions): Pick<GitWatchSpec, 'gitlinks'> {
  if (facts.git === undefined || options.writableGitConfig) return {}
  // The submodules there at the launch: their .git files, and git dirs kept in the work tree (emb/.git).
  const known = [...facts.gitProtect.readOnly, ...facts.gitProtect.gitDirs].filter(p => path.basename(p) === '.git' && p !== path.join(facts.git?.topLevel ?? '', '.git'))
  const repos = facts.gitProtect.repos.length > 0 ? facts.gitProtect.repos : [{ gitDir: facts.git.gitDir, workTree: facts.git.topLevel }]
  return { gitlinks: { repos, known } }
}

/** The instance's project-root (written once) and an empty shared account file when there is none. */
function recordFiles(facts: HostFacts, root: string, instance: string): FileStep[] {
  return [
    { path: path.join(instance, PROJECT_ROOT_FILE), content: `${root}\n`, mode: 0o600 },
    { path: sharedPaths(facts.claudeboxHome).claudeJson, content: '{}\n', mode: 0o600 },
  ]
}

/** What the audit and --check show of the sandbox the sections built. */
function auditOf(b: SandboxBuilder, options: SandboxOptions, policy: EgressPolicy | undefined): Pick<LaunchSummary, 'writable' | 'readOnly' | 'network' | 'egress' | 'protections'> {
  return { writable: b.writable, readOnly: b.readOnly, network: options.network, ...(policy === undefined ? {} : { egress: describePolicy(policy) }), protections: b.protections }
}

/** What must hold before anything is planned: a directory, a usable home, bwrap, and claude (or --shell). */
function launchable(facts: HostFacts, options: SandboxOptions): { cwd: string; shell: string | undefined; bwrap: string } {
  const { cwd, home } = facts
  if (cwd === undefined) throw launchError(noCurrentDir(facts, 'cd into your project again and rerun claudebox'))
  if (cwd.includes('\n')) throw newlineRefusal(cwd)
  const homeRefusal = sandboxHomeRefusal(home)
  if (homeRefusal !== undefined) throw launchError(`HOME=${home} cannot be the sandbox's home: ${homeRefusal}; set HOME to your home directory`)
  if (facts.bwrap === undefined) throw launchError(bwrapMissing(facts.env))
  const shell = options.shell ? shellProgram(facts) : undefined
  if (facts.claude === undefined && shell === undefined) throw claudeError(facts)
  if (facts.gitLayout) {
    const trust = trustGit(facts.git, facts.gitLayout)
    if (!trust.ok) throw launchError(trust.reason)
  }
  return { cwd, shell, bwrap: facts.bwrap }
}

/** The directories made writable: the work tree (or the directory) and a git dir outside it; dangerous ones refused. */
function projectDirsOf(facts: HostFacts, cwd: string, options: SandboxOptions, warnings: string[]): string[] {
  const { git, home } = facts
  const projectDirs = git ? [git.topLevel] : [cwd]
  if (git && !isWithin(git.commonDir, git.topLevel)) projectDirs.push(git.commonDir)
  for (const dir of projectDirs) {
    const reason = dangerousRootReason(dir, home, facts.claudeboxHome)
    if (reason === undefined) continue
    if (!options.allowDangerousRoot) {
      // A home kept in git: the user is in a project directory, but git's top level is above it.
      const above = git !== undefined && dir === git.topLevel && cwd !== dir
      throw launchError(
        above
          ? `refusing to make ${dir} writable: you are in ${cwd}, but git's top level here is ${dir} and ${reason}. Give the project a repository of its own (git init in it), or pass --allow-dangerous-root if you truly mean it`
          : `refusing to make ${dir} writable: ${reason}. Start claudebox in a project directory (or pass --allow-dangerous-root if you truly mean it)`,
      )
    }
    warnings.push(`--allow-dangerous-root: ${dir} is writable inside although ${reason}`)
  }
  return projectDirs
}

/** claudebox and the node it runs on must not lie where the session writes (policy.ts launcherWithin); the override is --allow-dangerous-root's. */
function launcherOutOfReach(facts: HostFacts, writes: readonly string[], options: SandboxOptions, warnings: string[]): void {
  const held = launcherWithin(facts.launcherFiles, writes)
  const gitHeld = launcherWithin(facts.launcherGit, writes)
  const where =
    held !== undefined
      ? `${held.file}, which runs claudebox itself, lies in ${held.place}, which the session may write`
      : gitHeld !== undefined
        ? `claudebox runs from a checkout whose git data (${gitHeld.file}) lies in ${gitHeld.place}, which the session may write for your next git checkout, reset or pull there to write out`
        : undefined
  if (where === undefined) return
  const what = `${where}: your next claudebox, in any project, would run on your host what the session put there`
  if (!options.allowDangerousRoot) throw launchError(`refusing to start: ${what}. Run claudebox from an installation outside it (scripts/setup.sh installs a copy), or pass --allow-dangerous-root if you truly mean it`)
  warnings.push(`--allow-dangerous-root: ${what}`)
}

/**
 * A seccomp filter (not --new-session, which stops window-size changes reaching Claude:
 * bubblewrap#573) makes TIOCSTI/TIOCLINUX fail (CVE-2017-5226, CVE-2019-10063) and blocks mount,
 * keyring and namespace syscalls (seccomp.ts). The host's abstract unix sockets (X11's
 * @/tmp/.X11-unix/X0) are reachable wherever the network namespace is shared: a Landlock scope set
 * by a small helper refuses them (landlock.ts); it reaches the sandbox as a copy on bwrap's own
 * tmpfs, so a noexec home cannot stop it. Returns the helper, when there is one for this machine.
 */
function terminalAndSyscalls(b: SandboxBuilder, facts: HostFacts, options: SandboxOptions): Uint8Array | undefined {
  if (!facts.stdioTerminal) b.protections.push('no terminal on stdin, stdout or stderr: none inside either (/dev/tty is /dev/null, unopenable)')
  const arch = hostSeccompArch(facts.arch)
  if (arch !== undefined) {
    const filter = seccompFilter(arch, { ioUring: options.ioUring, hardLinks: options.hardLinks })
    const filterPath = path.join(facts.claudeboxHome, 'seccomp', `${arch}-${contentTag(filter)}.bpf`)
    b.files.push({ path: filterPath, content: filter, mode: 0o600, replace: true })
    b.fds.push({ fd: SECCOMP_FD, kind: 'file', path: filterPath })
    b.add('--seccomp', String(SECCOMP_FD))
    b.protections.push(`seccomp filter: TIOCSTI/TIOCLINUX, mount, keyring, namespace, clone3${options.ioUring ? '' : ', io_uring'}${options.hardLinks ? '' : ', hard-link'} syscalls and rare socket families (vsock) fail`)
    if (options.hardLinks) b.warnings.push("--hard-links: programs inside may make hard links, through which a file of yours changed by the session can later look unchanged to claudebox's checks of nested repositories, after your own git removes its other name")
    if (options.ioUring) b.warnings.push('--io-uring: programs inside may use io_uring, whose operations make sockets of any family (vsock, which leaves the network namespace on a virtual machine) and set extended attributes past the filter')
  } else {
    b.warnings.push(`no seccomp filter for ${facts.arch}: terminal injection (TIOCSTI) is not blocked by claudebox`)
  }
  b.protections.push('no nested user namespaces (--disable-userns), no capabilities (--cap-drop ALL), /proc/sys read-only')
  const scope = scopeHelper(facts.arch)
  if (scope !== undefined) {
    copyProgramIn(b, facts, 'landlock', scope, SCOPE_FD, SCOPE_HELPER)
    b.protections.push("Landlock scope: the host's abstract unix sockets (X11...) refused, on Linux 6.12+ (claudebox --check tells)")
  }
  // No helper for this architecture (aarch64 for now): --check warns, not every launch.
  return scope
}

/**
 * One of claudebox's own programs, written content-addressed under $CLAUDEBOX_HOME/DIR and copied
 * by bwrap from an fd onto its own tmpfs (executable, read-only): a noexec home cannot stop it,
 * and nothing inside can change the copy the next launch runs.
 */
function copyProgramIn(b: SandboxBuilder, facts: HostFacts, dir: string, program: Uint8Array, fd: number, inside: string): void {
  const file = path.join(facts.claudeboxHome, dir, `${facts.arch}-${contentTag(program)}`)
  b.files.push({ path: file, content: program, mode: 0o600, replace: true })
  b.fds.push({ fd, kind: 'file', path: file })
  b.add('--perms', '0555', '--file', String(fd), inside)
}

/** The system read-only, an empty home (but the listed files), and Claude Code's installation read-only. */
function systemAndHome(b: SandboxBuilder, facts: HostFacts): { visible: readonly string[]; alreadyVisible: (p: string) => boolean } {
  const system = systemMounts(facts)
  b.groups.push(...system.groups)
  b.readOnly.push(...system.extraReadOnly)
  // The tmpfs comes first: every later bind under $HOME lands on top of it.
  b.add('--tmpfs', facts.home)
  for (const rel of HOME_FILES_RO) {
    const p = path.join(facts.home, rel)
    if (facts.homeFiles[p] === 'file') b.roBind(p)
  }
  const alreadyVisible = (p: string): boolean => system.visible.some(dir => isWithin(p, dir))
  for (const p of [facts.claude?.installRoot, facts.claude?.interpreter?.installRoot]) {
    if (p !== undefined && !alreadyVisible(p) && !b.readOnly.includes(p)) b.roBind(p)
  }
  return { visible: system.visible, alreadyVisible }
}

/** The project read-write; its git dirs pinned and git's config, hooks and host-run files read-only (git-guard.ts). */
function projectAndGit(b: SandboxBuilder, facts: HostFacts, options: SandboxOptions, projectDirs: readonly string[], instance: string): ReturnType<typeof planGitGuard> {
  for (const p of projectDirs) b.bind(p)
  const shared = sharedPaths(facts.claudeboxHome)
  const own = path.join(instance, OWN_DIR)
  for (const p of [facts.claudeboxHome, instancesDir(facts.claudeboxHome), instance, own, path.join(instance, SESSIONS_DIR), shared.dir, shared.secureStorage]) b.mkdirs.push({ path: p, mode: 0o700 })
  const guard = planGitGuard(facts.gitProtect, options.writableGitConfig)
  if (options.writableGitConfig) b.warnings.push('--writable-git-config: the agent can change .git/config and .git/hooks, which run outside the sandbox')
  b.groups.push(...guard.groups)
  b.readOnly.push(...guard.readOnly)
  b.mkdirs.push(...guard.mkdirs)
  b.protections.push(...guard.protections)
  b.protections.push(
    options.connectors
      ? "claude.ai connectors: ON for this launch (--connectors): the agent can use your account's connected services"
      : 'claude.ai connectors of your account (mail, drive...): off (--connectors turns them on for one launch)',
  )
  b.protections.push('shared settings, CLAUDE.md, agents, commands, skills: a per-project copy; changes stay in this project until you promote them (claudebox --proposals)')
  return guard
}

/**
 * The host paths a sandbox of this user can write, or more (this one or another session's): the
 * project, its git dirs, every instance, store and shared entry of claudebox's home, the user's
 * binds. What is bound from inside them is pinned to a descriptor just before bwrap starts
 * (host/bind-fds.ts); the session's sockets stay out of them (setup.ts).
 */
export function writablePlaces(facts: HostFacts, options: SandboxOptions, projectDirs: readonly string[] = [facts.git?.topLevel ?? facts.cwd ?? '/']): string[] {
  const { git, claudeboxHome } = facts
  const userBinds = options.binds.map(p => path.resolve(facts.cwd ?? '/', p)).map(p => facts.paths[p]?.real ?? p)
  const state = [instancesDir(claudeboxHome), path.join(claudeboxHome, SESSION_STORES_DIR), sharedPaths(claudeboxHome).dir]
  return [...projectDirs, ...(git === undefined ? [] : [git.gitDir, git.commonDir]), ...state, ...userBinds]
}

/** This instance read-write (its records and project-root read-only), the shared tier's binds, the credential store. */
function instanceState(b: SandboxBuilder, facts: HostFacts, request: LaunchRequest, instance: string): { tiers: ReturnType<typeof planTiers> } & ReturnType<typeof credentialStore> {
  const tiers = planTiers(sharedPaths(facts.claudeboxHome).dir, instance, request.tiers?.entries, request.tiers?.readOnly ?? false, facts.sharedKinds)
  for (const entry of ['.claude.json', '.credentials.json', SANDBOX_NOTE, ...(request.tiers?.readOnly ? tiers.entries : [])]) {
    // An agent can replace what is in its instance; never bind through a symlink it planted
    // (flatpak CVE-2024-42472). A plain file or directory there is bwrap's own mount point.
    // (The composed copies are not bound; tier-sync.ts never follows a symlink among them.)
    if (facts.instanceEntries[path.join(instance, entry)] === 'symlink') {
      throw launchError(`${path.join(instance, entry)} was replaced by a symlink; remove it and rerun claudebox`)
    }
  }
  b.bind(instance)
  // claudebox's own records (live sessions, metadata): readable inside, never writable.
  const own = path.join(instance, OWN_DIR)
  b.add('--ro-bind', own, own)
  // project-root decides what --gc removes and which project owns the instance: never writable
  // inside (an agent that wrote another path into it made --gc delete a live project's state).
  b.add('--ro-bind', path.join(instance, PROJECT_ROOT_FILE), path.join(instance, PROJECT_ROOT_FILE))
  // The shared tier reaches the instance as its own copy (tiers.ts, tier-sync.ts): only SANDBOX.md
  // is bound, read-only; with sharedReadOnly the instance's copies are too (-try: composed just before).
  for (const [source, target] of tiers.binds) {
    b.add(source === target ? '--ro-bind-try' : '--ro-bind', source, target)
    b.readOnly.push(target)
  }
  const store = credentialStore(b, facts, request, instance)
  // Account state: the instance's own .claude.json, with the account keys carried in and out by
  // the launcher (state/account-state.ts); the shared account file is never bound.
  b.add('--symlink', instance, path.join(facts.home, '.claude'))
  return { tiers, ...store }
}

/**
 * Credentials. Secretless (request.api): the session's own store, outside the instance and bound
 * into this sandbox alone, holding at most a placeholder; the real login never enters. Otherwise
 * (the opt-out) one directory for every instance (CLAUDE_SECURESTORAGE_CONFIG_DIR): Claude writes
 * it with temp file + rename, which works in a bound directory but not on a bound file.
 */
function credentialStore(b: SandboxBuilder, facts: HostFacts, request: LaunchRequest, instance: string): { storeDir: string; files: FileStep[]; credentials: LaunchSummary['credentials'] } {
  const shared = sharedPaths(facts.claudeboxHome)
  const api = request.api
  const ownStore = api !== undefined || request.ownCredentialStore === true
  const storeDir = ownStore ? sandboxStore(instance, request.storeSession) : shared.secureStorage
  if (!ownStore) b.bind(shared.secureStorage)
  const credentialFile = path.join(storeDir, '.credentials.json')
  const mechanism = credentialMechanism(facts.claude?.version)
  const files: FileStep[] = []
  if (ownStore) {
    b.mkdirs.push({ path: path.dirname(storeDir), mode: 0o700 }, { path: storeDir, mode: 0o700 })
    b.bind(storeDir)
  }
  if (api?.credentialsFile !== undefined) files.push({ path: credentialFile, content: api.credentialsFile, mode: 0o600, replace: true })
  if (api !== undefined) b.protections.push("your login stays on the host: the sandbox holds this session's placeholder; claudebox's gateway adds the real credential to Claude's API calls only")
  if (!ownStore && mechanism === 'file-bind') {
    // Older Claude Code reads CLAUDE_CONFIG_DIR/.credentials.json only: bind the one shared file
    // there (its write falls back to in place on EBUSY, as for .claude.json).
    files.push({ path: credentialFile, content: '{}\n', mode: 0o600 })
    b.add('--bind', credentialFile, path.join(instance, '.credentials.json'))
  }
  const held = api !== undefined ? 'host' : ownStore ? 'none-yet' : 'inside'
  return { storeDir, files, credentials: { mechanism, path: credentialFile, held, ...(api === undefined ? {} : { kind: api.kind }) } }
}

interface EnvContext {
  instance: string
  storeDir: string
  policy: EgressPolicy | undefined
  shell: string | undefined
}

/**
 * The sandbox's environment: an allowlist of the host's, the user's --env, and claudebox's own.
 * Every value reaches the sandbox through bwrap's own environment, never its argv: any local user
 * can read a process's argv in /proc/<pid>/cmdline, and a value that looks harmless by its name
 * can hold a secret (ANTHROPIC_CUSTOM_HEADERS, a password in ANTHROPIC_BASE_URL). bwrap starts
 * with exactly this environment and passes it on unchanged.
 */
function sandboxEnvironment(b: SandboxBuilder, facts: HostFacts, request: LaunchRequest, context: EnvContext): { env: Record<string, string>; hostEnv: string[] } {
  const options = request.sandbox ?? DEFAULT_SANDBOX
  const env = passedEnvironment(facts, options, b.warnings)
  keptOut(facts, options, env, request.api !== undefined, b.warnings)
  if (request.api !== undefined) {
    // The real values stay on the host; Claude inside talks to the gateway with the placeholder.
    for (const name of [...SECRET_VARIABLES, 'ANTHROPIC_BASE_URL']) env.delete(name)
  } else if (context.policy !== undefined && context.shell === undefined) checkApiReachable(context.policy, env)
  if (options.sshAgent) sshAgent(b, facts, env)
  const owned = ownedEnvironment(facts, request, context)
  for (const [name] of owned) {
    if (options.env.some(spec => spec.split('=', 1)[0] === name)) b.warnings.push(`--env ${name}: claudebox sets it itself${context.policy ? ' (--network=allow: the proxy inside)' : ''}; yours is not used`)
    env.delete(name)
  }
  const sandboxEnv: Record<string, string> = {}
  for (const [name, value] of [...[...env.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)), ...owned]) sandboxEnv[name] = value
  // --dry-run names the host's values ("$NAME") instead of printing them; claudebox's own are literal.
  const hostEnv = Object.keys(sandboxEnv).filter(name => !owned.some(([o]) => o === name) && facts.env[name] === sandboxEnv[name])
  return { env: sandboxEnv, hostEnv }
}

/** The host's variables on the allowlist (env.ts), then the user's --env NAME or NAME=VALUE. */
function passedEnvironment(facts: HostFacts, options: SandboxOptions, warnings: string[]): Map<string, string> {
  const env = new Map<string, string>()
  for (const [name, value] of Object.entries(facts.env)) {
    if (value !== undefined && isPassedThrough(name)) env.set(name, value)
  }
  if (!env.has('PATH')) env.set('PATH', '/usr/local/bin:/usr/bin:/bin')
  for (const spec of options.env) {
    const eq = spec.indexOf('=')
    const name = eq === -1 ? spec : spec.slice(0, eq)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw usageError(`--env ${spec}: ${JSON.stringify(name)} is not a variable name`)
    const value = eq === -1 ? facts.env[name] : spec.slice(eq + 1)
    if (value === undefined) warnings.push(`--env ${name}: not set on the host, so not set inside`)
    else env.set(name, value)
  }
  return env
}

/**
 * What the host's values may hold that the sandbox has no use for, kept out unless passed with
 * --env (red team, rounds 140 and 141): a password in a URL (ANTHROPIC_BASE_URL, with the gateway,
 * stays on the host whole), and with --network=none the proxy variables, whose URL may hold one.
 * The variables whose names say they hold a secret are named, once a launch, as kept out.
 */
function keptOut(facts: HostFacts, options: SandboxOptions, env: Map<string, string>, gateway: boolean, warnings: string[]): void {
  const passed = new Set(options.env.map(spec => spec.split('=', 1)[0]))
  // ANTHROPIC_BASE_URL with the gateway stays on the host whole; the others (Bedrock's, Vertex's, Foundry's) have no gateway.
  for (const [name, url] of env) {
    if (!isUrlVariable(name) || passed.has(name) || (gateway && name === 'ANTHROPIC_BASE_URL') || withoutUserinfo(url) === url) continue
    env.set(name, withoutUserinfo(url))
    warnings.push(`${name} holds a user name and password: the sandbox gets the URL without them (--env ${name} passes it whole)`)
  }
  if (options.network === 'none') for (const name of PROXY_VARIABLES) if (!passed.has(name)) env.delete(name)
  const secret = Object.keys(facts.env).filter(name => looksSecret(name) && !passed.has(name)).sort()
  if (secret.length > 0) warnings.push(`kept out of the sandbox, as their names say they hold secrets: ${secret.join(', ')} (--env NAME passes one)`)
}

/** --ssh-agent: only the socket, so the agent can ask for signatures and never read the keys. */
function sshAgent(b: SandboxBuilder, facts: HostFacts, env: Map<string, string>): void {
  const socket = facts.env['SSH_AUTH_SOCK']
  const info = socket === undefined ? undefined : facts.paths[socket]
  if (socket === undefined || info?.kind !== 'socket' || info.real === undefined) {
    throw usageError('--ssh-agent: SSH_AUTH_SOCK does not name an ssh-agent socket; start ssh-agent (eval $(ssh-agent)) and rerun')
  }
  if (insideSessionSockets(info.real)) throw usageError("--ssh-agent: SSH_AUTH_SOCK names a claudebox session's socket, not an ssh-agent; point it at your agent and rerun")
  b.add('--bind', info.real, socket)
  b.writable.push(socket)
  env.set('SSH_AUTH_SOCK', socket)
}

/** The variables claudebox sets itself, whatever the host or --env say. */
function ownedEnvironment(facts: HostFacts, request: LaunchRequest, context: EnvContext): [string, string][] {
  const options = request.sandbox ?? DEFAULT_SANDBOX
  return [
    ['HOME', facts.home],
    ['CLAUDE_CONFIG_DIR', context.instance],
    ['CLAUDE_SECURESTORAGE_CONFIG_DIR', context.storeDir],
    ...apiEnv(request.api),
    // Claude Code allows --dangerously-skip-permissions as root only when it knows it is sandboxed.
    ['IS_SANDBOX', '1'],
    // The installation is read-only inside: a self-update could only fail.
    ['DISABLE_AUTOUPDATER', '1'],
    // The account's claude.ai connectors (mail, drive...) are not loaded unless asked for: a
    // prompt-injected agent in any repository could read them. Claude Code honours this variable
    // before any settings file (measured with 2.1.330: "[claudeai-mcp] Disabled via env var").
    ...(options.connectors ? [] : ([['ENABLE_CLAUDEAI_MCP_SERVERS', 'false']] as [string, string][])),
    ['CLAUDEBOX', '1'],
    ...(context.policy === undefined ? [] : proxyEnv(context.policy)),
  ]
}

interface CommandContext {
  policy: EgressPolicy | undefined
  shell: string | undefined
  scope: Uint8Array | undefined
  alreadyVisible: (p: string) => boolean
}

/**
 * The program bwrap runs: Claude (or the shell) with its arguments; with no network but loopback,
 * behind the bridge that carries each of the launcher's unix sockets (proxy, API gateway) to a
 * port on loopback inside; under the process limit; after the Landlock scope helper.
 */
function commandLine(b: SandboxBuilder, facts: HostFacts, request: LaunchRequest, context: CommandContext): { argv: string[]; cgroups: LaunchPlan['cgroups']; limits: LaunchSummary['limits']; socketsDir?: string } {
  const options = request.sandbox ?? DEFAULT_SANDBOX
  const { shell, policy } = context
  let command = [shell ?? facts.claude?.resolved ?? '/bin/sh', ...(shell === undefined ? sessionSettingsArgs(options.connectors, facts.claude, request.claudeArgs, b.warnings) : []), ...request.claudeArgs]
  const bridged: [string, string, number][] = []
  if (policy !== undefined) {
    if (request.egressSocket === undefined) throw new Error('planLaunch: --network=allow without a proxy socket')
    bridged.push([request.egressSocket, PROXY_SOCKET, BRIDGE_PORT])
  }
  if (request.api?.socket !== undefined) bridged.push([request.api.socket, API_SOCKET, API_PORT])
  const bridging = bridged.length > 0 ? bridge(b, facts, bridged, request.socketsKey, context.alreadyVisible) : undefined
  if (bridging !== undefined) command = [...bridging.prefix, ...command]
  // The gate first (nothing runs before the launcher's go), then the process limit, which wraps the
  // bridge too; the scope helper stays first of all (it must run before anything).
  const limits = planLimits(options, facts.uid, facts.prlimit !== undefined && context.alreadyVisible(facts.prlimit) ? facts.prlimit : undefined, facts.cgroups)
  command = ['/bin/sh', '-c', GO_GATE, 'claudebox-go', ...limits.prefix, ...command]
  if (context.scope !== undefined) command = [SCOPE_HELPER, ...command]
  return { argv: command, cgroups: limits.cgroups, limits: { inForce: limits.inForce, notInForce: limits.notInForce }, ...(bridging === undefined ? {} : { socketsDir: bridging.socketsDir }) }
}

const WRITABLE_BINDS = new Set(['--bind', '--bind-try', '--dev-bind', '--dev-bind-try'])

/** The directory of the launcher's sockets bound read-only inside, and the bridge in front of the program. */
function bridge(b: SandboxBuilder, facts: HostFacts, bridged: readonly [string, string, number][], key: string | undefined, alreadyVisible: (p: string) => boolean): { prefix: string[]; socketsDir: string } {
  if (key === undefined || !/^[0-9a-f]{32}$/.test(key)) throw new Error('planLaunch: bridged sockets need request.socketsKey (32 hex digits)')
  const dirs = [...new Set(bridged.map(([host, inside]) => (path.basename(host) === path.basename(inside) ? path.dirname(host) : '')))]
  const socketsDir = dirs[0]
  if (dirs.length !== 1 || !socketsDir) throw new Error(`planLaunch: the launcher's sockets must share one directory, named as inside: ${JSON.stringify(bridged)}`)
  // Where the sandbox writes, it could rename or swap that directory (probe.ts sessionSocketsDir keeps it out).
  const writable = b.groups.find(([option, source]) => WRITABLE_BINDS.has(option ?? '') && source !== undefined && isWithin(socketsDir, source))
  if (writable !== undefined) throw launchError(`the session's sockets directory ${socketsDir} is inside ${writable[1]}, which the sandbox can write; drop that --bind (or set XDG_RUNTIME_DIR to a private directory outside it)`)
  b.add('--ro-bind', socketsDir, SOCKETS_DIR)
  return { prefix: bridgeCommand(b, facts, bridged, key, alreadyVisible), socketsDir }
}

/**
 * x86_64: the native bridge (bridge.x86_64.c), copied in like the scope helper; it listens, then
 * executes the program. Elsewhere: bridge.js under the host's node behind a shell wrapper that
 * waits for it. Either connects to the launcher's socket for each connection; the launcher's
 * servers listen before its go, so the socket is there before the program's first instruction.
 */
function bridgeCommand(b: SandboxBuilder, facts: HostFacts, bridged: readonly [string, string, number][], key: string, alreadyVisible: (p: string) => boolean): string[] {
  const native = nativeBridge(facts.arch)
  if (native !== undefined) {
    copyProgramIn(b, facts, 'bridge', native, BRIDGE_FD, BRIDGE_PROGRAM)
    return [BRIDGE_PROGRAM, key, ...bridged.flatMap(([, inside, port]) => [inside, String(port)]), '--']
  }
  const egress = facts.egress
  if (egress === undefined) throw launchError("the sandbox's network bridge needs node inside the sandbox, and node was not found; reinstall claudebox")
  if (!alreadyVisible(egress.node) && !b.readOnly.includes(egress.nodeRoot)) b.roBind(egress.nodeRoot)
  b.add('--ro-bind', egress.bridge, BRIDGE_SCRIPT)
  const pairs = bridged.map(([, inside, port]) => `${inside}=${port}`).join(',')
  return ['/bin/sh', '-c', BRIDGE_WRAPPER, 'claudebox-bridge', egress.node, BRIDGE_SCRIPT, pairs, key]
}

/**
 * The settings claudebox gives Claude Code for the session, in a source the agent cannot write:
 * the account's claude.ai connectors off, and Claude's own per-command sandbox off, because it
 * cannot start inside (it needs user namespaces, which claudebox denies) and would otherwise refuse
 * to start (failIfUnavailable), warn that nothing is enforced, or fail every Bash command.
 */
export function sessionSettings(connectorsOn: boolean): string {
  return JSON.stringify({ ...(connectorsOn ? {} : { disableClaudeAiConnectors: true }), sandbox: { enabled: false } })
}

/**
 * The environment variable alone is not enough: a settings file's "env" (the agent can write its
 * user settings) overrides it (measured, 2.1.330). `disableClaudeAiConnectors` set true in any
 * settings source wins, and --settings is a source only the launcher writes. Only for Claude Code
 * itself (by its name or a known version): another program named by CLAUDEBOX_CLAUDE gets its
 * arguments untouched. Claude keeps the last --settings, so one of the user's own replaces this.
 */
function sessionSettingsArgs(connectorsOn: boolean, claude: HostFacts['claude'], args: readonly string[], warnings: string[]): string[] {
  if (!isClaudeCode(claude)) return []
  if (args.some(arg => arg === '--settings' || arg.startsWith('--settings='))) {
    warnings.push(`your --settings replaces the one claudebox passes (${sessionSettings(connectorsOn)}); add those keys to yours`)
  }
  return ['--settings', sessionSettings(connectorsOn)]
}

export function isClaudeCode(claude: HostFacts['claude']): claude is NonNullable<HostFacts['claude']> {
  if (claude === undefined) return false
  return claude.version !== undefined || /^claude(\.exe)?$/.test(path.basename(claude.resolved)) || /^claude$/.test(path.basename(claude.found))
}

/** Claude Code honours CLAUDE_SECURESTORAGE_CONFIG_DIR since about 2.1.220 (claude-code-facts.md). */
const SECURE_STORAGE_SINCE = [2, 1, 220]

/** How the shared credentials reach Claude: a shared store directory, or (older) a bound file. */
export function credentialMechanism(version: string | undefined): 'store-dir' | 'file-bind' {
  const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '')?.slice(1).map(Number)
  if (parts === undefined) return 'store-dir' // unknown: assume a current Claude Code
  for (let i = 0; i < 3; i++) {
    const [have, need] = [parts[i] ?? 0, SECURE_STORAGE_SINCE[i] ?? 0]
    if (have !== need) return have > need ? 'store-dir' : 'file-bind'
  }
  return 'store-dir'
}

/** What Claude inside needs to reach the gateway: its URL and the placeholder in the kind's own variable. */
function apiEnv(api: LaunchRequest['api']): [string, string][] {
  if (api === undefined) return []
  const variable = { 'api-key': 'ANTHROPIC_API_KEY', 'auth-token': 'ANTHROPIC_AUTH_TOKEN', 'oauth-token': 'CLAUDE_CODE_OAUTH_TOKEN', 'oauth-store': undefined }[api.kind]
  return [['ANTHROPIC_BASE_URL', `http://127.0.0.1:${api.port ?? API_PORT}`], ...(variable === undefined ? [] : ([[variable, api.placeholder]] as [string, string][]))]
}

/**
 * A short tag of a binary's content, so a changed filter gets a new file name. An index loop: a
 * launch runs this before V8 has optimized anything, and the interpreter's for...of over the
 * bytes took ~0.7 ms for the three programs (a tenth of that now).
 */
function contentTag(data: Uint8Array): string {
  let hash = 2166136261
  for (let i = 0; i < data.length; i++) hash = Math.imul(hash ^ (data[i] as number), 16777619) >>> 0
  return hash.toString(16).padStart(8, '0')
}

export function bwrapMissing(env: HostFacts['env']): string {
  const named = env['CLAUDEBOX_BWRAP']
  return named
    ? `CLAUDEBOX_BWRAP names ${named}, which does not exist; point it at a bwrap program or unset it to use the one on PATH`
    : 'bwrap (bubblewrap) was not found on PATH; install it (Debian/Ubuntu: apt install bubblewrap) or set CLAUDEBOX_BWRAP'
}

export function claudeError(facts: Pick<HostFacts, 'env' | 'claudeProblem' | 'claudeFound'>): ClaudeboxError {
  const name = facts.env['CLAUDEBOX_CLAUDE'] || 'claude'
  if (facts.claudeProblem === 'leads-out') {
    return new ClaudeboxError(`${facts.claudeFound ?? name} lies in, or leads through, a folder the sandbox can write, and leads out of it: a session may have pointed it there, so claudebox will not show what it leads to; set CLAUDEBOX_CLAUDE to the claude you mean, or take that folder off PATH`, EXIT.cannotLaunch)
  }
  if (facts.claudeProblem === 'manager-in-reach') {
    return new ClaudeboxError(`${name} is a version manager's shim (asdf, mise, volta) whose own program or data lies in a folder the sandbox can write, so claudebox will not run it on the host to find the real claude; set CLAUDEBOX_CLAUDE to the real claude's path`, EXIT.cannotLaunch)
  }
  if (facts.claudeProblem === 'not-executable') {
    return new ClaudeboxError(`${name} was found but cannot be executed; check its permissions (chmod +x) or set CLAUDEBOX_CLAUDE`, EXIT.cannotRun)
  }
  return new ClaudeboxError(
    name.includes('/')
      ? `CLAUDEBOX_CLAUDE names ${name}, which does not exist; point it at the claude program or unset it to use the one on PATH`
      : `${name} was not found on PATH; install Claude Code (npm install -g @anthropic-ai/claude-code) or set CLAUDEBOX_CLAUDE`,
    EXIT.notFound,
  )
}

function checkInstance(facts: HostFacts, root: string, instance: string): void {
  const state = facts.instance
  if (state.kind === 'not-a-directory') {
    throw launchError(`${instance} is not a directory (a symlink or a file); move it away and rerun claudebox`)
  }
  if (state.kind === 'ok' && state.recordedRoot !== root) {
    throw launchError(
      `instance ${instance} belongs to ${state.recordedRoot}, not ${root}; move that directory away (or run claudebox --gc) and rerun`,
    )
  }
}
