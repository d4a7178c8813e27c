// The probe: everything the planners need to know about the host, gathered into plain data.
// With run.ts, the only module that touches the file system or starts processes on the launch path.
import { execFileSync, spawnSync } from 'node:child_process'
import { launchError } from '../errors.js'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { scopeHelper } from '../sandbox/landlock.js'
import { controllingTerminalOnStdio, homeDir, hostTempDir, isDir, lstatKind, pidScope, randomHex, readConfigText, readNoFollow, realPathOrUndefined, resolveExisting, safeReaddir, SMALL_FILE_LIMIT } from './fs.js'
import { probeGitProtect } from './git-guard-probe.js'
import { gitConfig, gitdirOf, isGitDir } from './git-dirs.js'
import { discoverGit } from './git-discovery.js'
import { canonicalRoot, instanceDir, instanceId, isWithin, PROJECT_ROOT_FILE, sharedPaths, validProjectRoot } from '../state/instance.js'
import { SANDBOX_NOTE } from '../sandbox/tiers.js'
import { SESSION_SOCKETS_NAME } from '../sandbox/policy.js'
import { ETC_ENTRIES, HOME_FILES_RO, newlineRefusal, RUN_LINKS, SYSTEM_PATHS } from '../sandbox/host-paths.js'
import type { SandboxOptions } from '../config/sandbox-options.js'
import type { Settings } from '../config/settings.js'
import type { CgroupFacts, Controller } from '../sandbox/limits.js'
import { USERNS_SYSCTLS, type UsernsFacts } from '../sandbox/userns.js'
import type { BindGit, GitFacts, GitLayout, HostFacts, InstanceState, PathKind } from '../types.js'
import { findClaude, interpreterRoot } from './claude-install.js'
import { GIT, gitProgram, systemProgram, whichSync } from './system-programs.js'
import { launcherFiles, launcherGit, launcherPackage } from './launcher-files.js'

export { homeDir, lstatKind, readConfigText, readNoFollow, safeReaddir, SMALL_FILE_LIMIT }

/**
 * What a launch needs to know about the machine, before the options: withOptionFacts adds what
 * depends on them (setup.ts, once the project's file is read). --sessions and --adopt need no more.
 */
/** What names this project's instance: the directory, git's view of it, claudebox's home. */
export type ProjectFacts = Pick<HostFacts, 'cwd' | 'cwdNotText' | 'claudeboxHome' | 'git'>

/** Only the project's facts (--sessions, --adopt): no Claude install, kernel or /etc lookups. */
export function probeProject(settings: Settings, env: Readonly<Record<string, string | undefined>> = process.env): ProjectFacts {
  const cwd = currentDir()
  return { cwd, ...notText(cwd), claudeboxHome: resolveExisting(settings.claudeboxHome), git: cwd === undefined ? undefined : probeGit(cwd, env).facts }
}

/**
 * `inProject`: false for `--login`, which runs in an empty folder of its own and in no project:
 * no repository is looked for above it (red team, round 89: with TMPDIR inside a project, the
 * login ran in that project's instance, whose settings.json a session had written).
 */
export function probe(settings: Settings, env: Readonly<Record<string, string | undefined>> = process.env, inProject = true): HostFacts {
  const home = homeDir(env)
  const cwd = currentDir()
  const git = cwd === undefined || !inProject ? { facts: undefined, available: gitProgram() !== undefined } : probeGit(cwd, env)
  const claudeboxHome = resolveExisting(settings.claudeboxHome)
  const claude = findClaude(settings.claudeOverride, env, cwd)
  const id = cwd === undefined ? undefined : instanceId(canonicalRoot(cwd, git.facts))
  const instance = id === undefined ? undefined : instanceDir(claudeboxHome, id)
  const pkg = launcherPackage()
  const facts: HostFacts = {
    cwd,
    ...notText(cwd),
    home,
    uid: process.getuid?.() ?? -1,
    env,
    claudeboxHome,
    git: git.facts,
    gitAvailable: git.available,
    claude: undefined,
    bwrap: settings.bwrapOverride ? resolveProgram(settings.bwrapOverride, env['PATH'], cwd) : whichSync('bwrap', env['PATH']),
    systemPaths: Object.fromEntries(SYSTEM_PATHS.map(p => [p, lstatWithTarget(p)])),
    homeFiles: Object.fromEntries(HOME_FILES_RO.map(rel => path.join(home, rel)).map(p => [p, statKind(p)])),
    instance: instance === undefined ? { kind: 'missing' } : readInstanceState(instance),
    instanceEntries: {},
    sharedKinds: {},
    arch: process.arch,
    paths: {},
    gitProtect: probeGitProtect(git.facts, projectDirsOf(cwd, git.facts), home),
    gitLayout: cwd !== undefined && git.available && inProject ? probeGitLayout(cwd, env) : undefined,
    etcLinks: Object.fromEntries(
      ETC_ENTRIES.map(rel => `/etc/${rel}`)
        .filter(p => lstatKind(p) === 'symlink')
        .map(p => [p, realPathOrUndefined('/', p)])
        .filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    etcSecrets: etcSecrets(),
    rootOnlyDirs: [],
    launcherFiles: launcherFiles(env['PATH'], pkg),
    launcherGit: launcherGit(pkg),
    stdioTerminal: controllingTerminalOnStdio() !== undefined,
    runLinks: Object.fromEntries(
      RUN_LINKS.filter(p => lstatKind(p) === 'symlink').map(p => [p, fs.readlinkSync(p)]),
    ),
  }
  if ('problem' in claude) facts.claudeProblem = claude.problem
  else facts.claudeFound = claude.found
  // The system's: one found on PATH may be a folder of the project's (red team, round 110: a
  // planted `prlimit` file there dropped the next session's process limit, silently).
  const prlimit = systemProgram('prlimit')
  if (prlimit !== undefined) facts.prlimit = prlimit
  const cgroups = probeCgroups()
  if (cgroups !== undefined) facts.cgroups = cgroups
  if (git.facts && facts.instance.kind === 'missing') {
    const remote = gitConfig(path.join(git.facts.commonDir, 'config'), ['remote.origin.url'])
    if (remote) facts.gitRemote = remote
  }
  return facts
}

/**
 * The facts that depend on the options (which a project's .claudebox.json may change): the paths
 * named by binds and the ssh-agent, and the entries bound into the instance (lstat, to refuse
 * symlinks an agent planted), with the shared tier's entries as they are now.
 */
export function withOptionFacts(facts: HostFacts, options: SandboxOptions, sharedEntries: readonly string[]): HostFacts {
  const named = [...options.roBinds, ...options.binds].map(p => path.resolve(facts.cwd ?? '/', p))
  const runtime = facts.env['XDG_RUNTIME_DIR']
  const guarded = {
    state: [facts.claudeboxHome, resolveExisting(path.join(facts.home, '.claudebox'))],
    sockets: [...(runtime && path.isAbsolute(runtime) ? [resolveExisting(runtime)] : []), resolveExisting('/tmp')],
  }
  const socket = facts.env['SSH_AUTH_SOCK']
  if (options.sshAgent && socket) named.push(socket)
  const entries = ['.claude.json', '.credentials.json', SANDBOX_NOTE, ...sharedEntries]
  const instance = facts.cwd === undefined ? undefined : instanceDir(facts.claudeboxHome, instanceId(canonicalRoot(facts.cwd, facts.git)))
  const shared = sharedPaths(facts.claudeboxHome).dir
  const paths = Object.fromEntries(named.map(p => [p, realAndKind(p)]))
  const writable = options.binds.flatMap(p => {
    const info = paths[path.resolve(facts.cwd ?? '/', p)]
    return info?.real === undefined ? [] : [{ real: info.real, dir: info.kind === 'dir' }]
  })
  return {
    ...facts,
    paths,
    ...(writable.length > 0 ? withBindsWritable(facts, writable) : {}),
    ...(named.length > 0 ? { guarded } : {}),
    instanceEntries: instance === undefined ? {} : Object.fromEntries(entries.map(name => [path.join(instance, name), lstatKind(path.join(instance, name))])),
    sharedKinds: Object.fromEntries([SANDBOX_NOTE, ...sharedEntries].map(name => [name, statKind(path.join(shared, name))])),
    ...(options.network === 'allow' ? egressFacts() : {}),
  }
}

/**
 * What a writable --bind of the directory `real` needs on git's side, as the project does: a
 * repository's top gets the project's protections of its git dirs and host-run files; any other
 * folder, that a .git or HEAD made at its top is moved aside (git run there on the host would take
 * it). A git dir, or a folder inside one, is refused (plan.ts): its config and hooks are the point.
 */
function bindGitFacts(real: string, isDir: boolean, writable: readonly string[], facts: HostFacts): BindGit | undefined {
  for (let dir = real; ; dir = path.dirname(dir)) {
    if (path.basename(dir) === '.git' || (isGitDir(dir) && ['objects', 'commondir'].some(name => lstatKind(path.join(dir, name)) !== 'missing'))) {
      return { refusal: `would make the git dir ${dir} writable inside the sandbox, and the host's git runs its config and hooks; bind the repository's folder instead, use --ro-bind, or pass --writable-git-config if you accept that` }
    }
    if (dir === '/') break
  }
  if (!isDir) return undefined // a file of your choosing, not in a git dir
  // As for the project (refused there too): the session could point the link at a repository it made.
  const dotGit = path.join(real, '.git')
  if (lstatKind(dotGit) === 'symlink') return { refusal: `has a .git that is a symlink (${dotGit}), which the session could point at a repository it made, for the host's git to run; make it a directory or a gitdir: file, use --ro-bind, or pass --writable-git-config if you accept that` }
  const git = probeGit(real, facts.env).facts
  return { protect: probeGitProtect(git?.topLevel === real ? git : undefined, [real, ...writable.filter(p => p !== real)], facts.home) }
}

/**
 * With writable binds, what the sandbox writes is more than the project: a hook of the project
 * kept in a bound folder (`.git/hooks/pre-commit -> ../../lib/hook.sh`), or one of a bound
 * repository kept in the project, must be protected where it lies. The project's protections are
 * probed again with every writable place (one a bind would then cover refuses that bind, plan.ts),
 * and each bind's with the same.
 */
function withBindsWritable(facts: HostFacts, binds: readonly { real: string; dir: boolean }[]): Pick<HostFacts, 'bindGit' | 'gitProtect'> {
  const project = projectDirsOf(facts.cwd, facts.git)
  const writable = [...project, ...binds.filter(b => b.dir).map(b => b.real)]
  const bindGit = binds.flatMap(({ real, dir }) => {
    const found = bindGitFacts(real, dir, writable, facts)
    return found === undefined ? [] : [[real, found] as const]
  })
  return { bindGit: Object.fromEntries(bindGit), gitProtect: probeGitProtect(facts.git, writable, facts.home) }
}

/** --network=allow: the node running claudebox also runs the bridge inside; dist/bridge.js is the bridge. */
function egressFacts(): Pick<HostFacts, 'egress'> {
  const bridge = fileURLToPath(new URL('./bridge.js', import.meta.url))
  if (!fs.existsSync(bridge)) return {}
  const node = fs.realpathSync.native(process.execPath)
  return { egress: { node, nodeRoot: interpreterRoot(node), bridge } }
}

/**
 * Where the session's sockets go (the proxy's proxy.sock, the gateway's api.sock): a fresh
 * directory (0700, random name, created exclusively) under $XDG_RUNTIME_DIR when it is usable,
 * else claudebox's own run/, else /tmp (a base that gives a socket path too long for sockaddr_un
 * is passed over). Chosen before the plan, which binds it into the sandbox; created just before
 * bwrap starts (commands/session-servers.ts). Never under a path this sandbox writes
 * (`sandboxWrites`), nor where another project's sandbox may: not under $TMPDIR, which users point
 * into projects (direnv), and /tmp only last (a sandbox given /tmp reached another session's proxy
 * there, red team); claudebox's home is never bound into a sandbox.
 */
export function sessionSocketsDir(env: Readonly<Record<string, string | undefined>>, sandboxWrites: readonly string[], claudeboxHome: string): string {
  const runtime = env['XDG_RUNTIME_DIR']
  // The launcher's pid in the name, and where that pid means something: what a killed launcher left
  // is removed by the next (session-servers.ts) only from the same boot and pid namespace.
  const name = `claudebox-net-${pidScope()}-${process.pid}-${randomHex(6)}`
  const writes = sandboxWrites.map(resolveExisting)
  const own = path.join(resolveExisting(claudeboxHome), SOCKETS_BASE)
  const bases = [ownRuntimeDir(runtime), own, isDir('/tmp') ? resolveExisting('/tmp') : undefined]
  // sockaddr_un holds 108 bytes with the final NUL: a longer path would make the bind fail later.
  const usable = bases.flatMap(base => (base === undefined ? [] : [path.join(base, name)])).filter(dir => Buffer.byteLength(path.join(dir, 'proxy.sock')) < 108)
  // With none outside (claudebox's home inside a --bind too), the plan refuses that bind, saying why.
  const dir = usable.find(d => !writes.some(w => isWithin(d, w))) ?? usable.at(-1)
  if (dir === undefined) throw launchError(`no directory for the session's sockets gives a socket path under 108 bytes ($XDG_RUNTIME_DIR unusable, ${own} too long, /tmp missing); set CLAUDEBOX_HOME to a shorter path`)
  return dir
}

/** claudebox's own base for the sessions' sockets, in its home, when no other will do. */
export const SOCKETS_BASE = 'run'

/** `$XDG_RUNTIME_DIR` (`runtime`), resolved, when it is as the XDG spec has it: the user's own folder, mode 0700 (a project directory rarely is). */
export function ownRuntimeDir(runtime: string | undefined): string | undefined {
  if (runtime === undefined || !path.isAbsolute(runtime)) return undefined
  try {
    const st = fs.lstatSync(runtime)
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0 ? resolveExisting(runtime) : undefined
  } catch {
    return undefined
  }
}



/** The directories a launch makes writable: the working tree, and a linked worktree's common dir. */
function projectDirsOf(cwd: string | undefined, git: GitFacts | undefined): string[] {
  if (git === undefined) return cwd === undefined ? [] : [cwd]
  return isWithin(git.commonDir, git.topLevel) ? [git.topLevel] : [git.topLevel, git.commonDir]
}

/**
 * Why `home` cannot hold claudebox's state by default, or undefined. HOME=/ (services, some
 * containers) would create /.claudebox; a missing home or one of another user's would put the
 * state where the user does not expect it, or fail later inside bwrap without a word.
 */
export function homeProblem(home: string): string | undefined {
  if (home === '/') return 'is /, the whole system'
  let st: fs.Stats
  try {
    st = fs.statSync(home)
  } catch {
    return 'does not exist'
  }
  if (!st.isDirectory()) return 'is not a directory'
  if (st.uid !== process.getuid?.()) return `belongs to uid ${st.uid}, not to you`
  return undefined
}

/** A current directory that exists but whose path Node can only show with U+FFFD (not UTF-8). */
function notText(cwd: string | undefined): Pick<HostFacts, 'cwdNotText'> {
  if (cwd !== undefined) return {}
  try {
    const shown = process.cwd()
    return shown.includes('\uFFFD') && fs.statSync('.').isDirectory() ? { cwdNotText: shown } : {}
  } catch {
    return {}
  }
}

function currentDir(): string | undefined {
  try {
    return fs.realpathSync.native(process.cwd())
  } catch {
    return undefined // deleted under us (ENOENT from uv_cwd)
  }
}

function probeGit(cwd: string, env: Readonly<Record<string, string | undefined>>): { facts: GitFacts | undefined; available: boolean } {
  if (gitProgram() === undefined) return { facts: undefined, available: false }
  const found = discoverGit(cwd, env, process.geteuid?.() ?? -1)
  if (found.kind === 'none') return { facts: undefined, available: true }
  if (found.kind === 'repo') {
    if ([found.facts.topLevel, found.facts.gitDir, found.facts.commonDir].some(p => p.includes('\n'))) throw newlineRefusal(cwd)
    return { facts: found.facts, available: true }
  }
  return askGit(cwd)
}

/** The layouts git-discovery.ts leaves to git: git itself says. */
function askGit(cwd: string): { facts: GitFacts | undefined; available: boolean } {
  let out: string
  try {
    out = execFileSync(GIT(), ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      // A FIFO planted as .git/HEAD makes git block: then the .git is one git does not accept.
      timeout: 5_000,
      // The user's configs decide what git finds (safe.directory), but none of them may have this
      // git write anywhere: trace2's targets are files (red team, round 106: ~/.bashrc).
      env: { ...process.env, GIT_TRACE2: '0', GIT_TRACE2_EVENT: '0', GIT_TRACE2_PERF: '0' },
    })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { facts: undefined, available: code !== 'ENOENT' }
  }
  const lines = out.replace(/\n$/, '').split('\n')
  // One of the three paths holds a newline: the split cannot be trusted (a crafted name could
  // make a line look like another path).
  if (lines.length > 3) throw newlineRefusal(cwd)
  const [topLevel, gitDir, commonDir] = lines
  if (!topLevel || !gitDir || !commonDir) return { facts: undefined, available: true }
  return {
    facts: {
      topLevel: fs.realpathSync.native(topLevel),
      gitDir: fs.realpathSync.native(gitDir),
      // --git-common-dir is relative to the current directory unless git made it absolute.
      commonDir: fs.realpathSync.native(path.resolve(cwd, commonDir)),
    },
    available: true,
  }
}

function resolveProgram(program: string, pathVar: string | undefined, cwd: string | undefined): string | undefined {
  if (!program.includes('/')) return whichSync(program, pathVar)
  const p = path.resolve(cwd ?? '/', program)
  return fs.existsSync(p) ? p : undefined
}

function lstatWithTarget(p: string): { kind: PathKind; target?: string } {
  const kind = lstatKind(p)
  if (kind !== 'symlink') return { kind }
  return { kind, target: fs.readlinkSync(p) }
}


function statKind(p: string): PathKind {
  try {
    return fs.statSync(p).isDirectory() ? 'dir' : 'file'
  } catch {
    return 'missing'
  }
}

/** Reads an instance without following symlinks out of it. */
export function readInstanceState(dir: string): InstanceState {
  const kind = lstatKind(dir)
  if (kind === 'missing') return { kind: 'missing' }
  if (kind !== 'dir') return { kind: 'not-a-directory' }
  // A project-root that is not one clean absolute path is a broken instance, never another root.
  const recordedRoot = validProjectRoot(readNoFollow(path.join(dir, PROJECT_ROOT_FILE)))
  return recordedRoot === undefined ? { kind: 'no-root-file' } : { kind: 'ok', recordedRoot }
}

function realAndKind(p: string): { real: string | undefined; kind: PathKind | 'socket'; holdsSessions?: true } {
  try {
    const real = fs.realpathSync.native(p)
    const st = fs.statSync(real)
    const kind = st.isSocket() ? 'socket' : st.isDirectory() ? 'dir' : 'file'
    return { real, kind, ...(kind === 'dir' && holdsSessions(real) ? { holdsSessions: true as const } : {}) }
  } catch {
    return { real: undefined, kind: 'missing' }
  }
}

/**
 * Whether a directory holds claudebox sessions' sockets or state, one level down: a base of their
 * sockets directories (another session's $XDG_RUNTIME_DIR or run/) or a claudebox home (another
 * $CLAUDEBOX_HOME). Deeper ancestors are not searched (README: Options).
 */
function holdsSessions(dir: string): boolean {
  const names = safeReaddir(dir)
  const home = ['instances', 'shared'].every(name => names.includes(name)) && (names.includes('run') || names.includes('session-stores'))
  return home || [dir, path.join(dir, 'run'), path.join(dir, '.claudebox', 'run')].some(d => safeReaddir(d).some(name => SESSION_SOCKETS_NAME.test(name)))
}

/** Identity (inode, size, mtime) of each watched path that exists; directories are walked one level. */
export function snapshot(paths: readonly string[]): Record<string, string> {
  const result: Record<string, string> = {}
  // The change time too: a hard link made and removed by another session's sandbox can put a file
  // back with the same inode, size and mtime (red team), and no one can set ctime back.
  const record = (p: string, st: fs.Stats): void => void (result[p] = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`)
  // Most watched paths do not exist: asked without an exception for them (~20 µs each).
  const lstat = (p: string): fs.Stats | undefined => {
    try {
      return fs.lstatSync(p, { throwIfNoEntry: false })
    } catch {
      return undefined
    }
  }
  for (const p of paths) {
    const st = lstat(p)
    if (st === undefined) continue
    record(p, st)
    if (!st.isDirectory()) continue
    for (const name of safeReaddir(p)) {
      const child = path.join(p, name)
      const inside = lstat(child) // undefined: vanished between readdir and lstat
      if (inside !== undefined) record(child, inside)
    }
  }
  return result
}


/** What the file system says about the `.git` entry git discovered from `cwd` (see git-trust.ts). */
export function probeGitLayout(cwd: string, env: Readonly<Record<string, string | undefined>>): GitLayout {
  if (env['GIT_DIR'] !== undefined || env['GIT_WORK_TREE'] !== undefined) return { kind: 'env' }
  return layoutFrom(cwd, 0)
}

function layoutFrom(start: string, depth: number): GitLayout {
  let worktree = start
  for (;;) {
    const kind = lstatKind(path.join(worktree, '.git'))
    if (kind === 'dir' || kind === 'file') break
    const parent = path.dirname(worktree)
    if (parent === worktree) return { kind: 'none' }
    worktree = parent
  }
  const dotGit = path.join(worktree, '.git')
  if (lstatKind(dotGit) === 'dir') return { kind: 'dir', worktree }
  const pointer = gitdirOf(readNoFollow(dotGit))
  const target = pointer === undefined ? undefined : realPathOrUndefined(worktree, pointer)
  if (target === undefined) return { kind: 'file', worktree }
  const back = readNoFollow(path.join(target, 'gitdir'))
  if (back !== undefined) {
    return { kind: 'file', worktree, target, backPointer: realPathOrUndefined(target, back.trim()) ?? back.trim() }
  }
  const layout: GitLayout = { kind: 'file', worktree, target }
  const coreWorktree = gitConfig(path.join(target, 'config'), ['core.worktree'])
  if (coreWorktree !== undefined) {
    const resolved = realPathOrUndefined(target, coreWorktree)
    if (resolved !== undefined) layout.coreWorktree = resolved
  }
  if (target.includes('/modules/') && depth < 8 && path.dirname(worktree) !== worktree) {
    const outer = layoutFrom(path.dirname(worktree), depth + 1)
    layout.superproject = outer
    if (outer.kind === 'dir') layout.superGitDir = path.join(outer.worktree, '.git')
    else if (outer.kind === 'file' && outer.target !== undefined) layout.superGitDir = outer.target
  }
  return layout
}

/**
 * The launcher's own cgroup for each controller, where claudebox can create a child that has the
 * controller: v1, a writable own directory in the controller's hierarchy; v2 (one tree), a writable
 * own directory that hands the controller to its children. Mostly root's; undefined when none.
 */
export function probeCgroups(base = '/sys/fs/cgroup'): CgroupFacts | undefined {
  let lines: string[]
  try {
    lines = fs.readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n')
  } catch {
    return undefined
  }
  const v1: Partial<Record<Controller, string>> = {}
  const v2: Partial<Record<Controller, string>> = {}
  for (const line of lines) {
    const [, names = '', own = ''] = /^\d+:([^:]*):(.*)$/.exec(line) ?? []
    for (const controller of ['pids', 'memory', 'cpu'] as const) {
      if (names.split(',').includes(controller)) {
        const dir = path.resolve(base, names, `.${own}`)
        if (isWritableDir(dir)) v1[controller] = dir
      } else if (names === '' && isWritableDir(path.resolve(base, `.${own}`))) {
        const dir = path.resolve(base, `.${own}`)
        if (readNoFollow(path.join(dir, 'cgroup.subtree_control'))?.split(' ').includes(controller)) v2[controller] = dir
      }
    }
  }
  if (Object.keys(v1).length > 0) return { version: 1, dirs: v1 }
  return Object.keys(v2).length > 0 ? { version: 2, dirs: v2 } : undefined
}

/**
 * A cgroup the launcher can make a child in and come back to: the directory and its cgroup.procs
 * writable (a delegated one whose cgroup.procs is not left the launcher in the child, red team).
 */
function isWritableDir(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK)
    return fs.statSync(dir).isDirectory()
  } catch {
    return false
  }
}

/** Kernel settings and bwrap's install mode, for diagnosing a sandbox that cannot start. */
export function probeUserns(bwrap: string | undefined, env: Readonly<Record<string, string | undefined>>): UsernsFacts {
  // CLAUDEBOX_PROC_SYS lets tests read kernel settings from a fixture directory.
  const procSys = env['CLAUDEBOX_PROC_SYS'] || '/proc/sys'
  const sysctl: Record<string, string | undefined> = {}
  for (const name of USERNS_SYSCTLS) {
    try {
      sysctl[name] = fs.readFileSync(path.join(procSys, name), 'utf8').trim()
    } catch {
      sysctl[name] = undefined
    }
  }
  let bwrapSetuid = false
  try {
    if (bwrap !== undefined) bwrapSetuid = (fs.statSync(bwrap).mode & 0o4000) !== 0
  } catch {
    // unreadable: not setuid as far as we can tell
  }
  const container = ['/.dockerenv', '/run/.containerenv'].some(p => fs.existsSync(p)) || env['container'] !== undefined
  return { sysctl, bwrapSetuid, container, insideClaudebox: env['CLAUDEBOX'] === '1', uid: process.getuid?.() ?? -1 }
}

/** Files under /etc that hold secrets a process running as root inside could otherwise read. */
function etcSecrets(): string[] {
  const fixed = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/security/opasswd']
  const hostKeys = safeReaddir('/etc/ssh')
    .filter(name => /^ssh_host_.*_key$/.test(name))
    .map(name => `/etc/ssh/${name}`)
  return [...fixed, ...hostKeys].filter(p => lstatKind(p) === 'file')
}

/**
 * Whether this kernel supports the Landlock scope the launch sets: runs the helper without a
 * program, from a temporary copy (it exits 0 when the scope is supported). For --check and tests.
 */
export function probeLandlockScope(arch: string): 'supported' | 'unsupported' | 'no-helper' {
  const helper = scopeHelper(arch)
  if (helper === undefined) return 'no-helper'
  const dir = fs.mkdtempSync(path.join(hostTempDir(), 'claudebox-landlock-'))
  try {
    const file = path.join(dir, 'scope')
    fs.writeFileSync(file, helper, { mode: 0o700 })
    return spawnSync(file, [], { stdio: 'ignore', timeout: 5_000 }).status === 0 ? 'supported' : 'unsupported'
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
