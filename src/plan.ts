// facts -> the bwrap command of a launch. Pure: everything it knows arrives in HostFacts.
import path from 'node:path'
import { isPassedThrough } from './env-allowlist.js'
import { ClaudeboxError, EXIT, launchError } from './errors.js'
import { canonicalRoot, instanceDir, instanceId, instancesDir, isWithin, PROJECT_ROOT_FILE, sharedPaths } from './instance.js'
import type { HostFacts, LaunchPlan } from './types.js'

/** System directories shown read-only when present; symlinks (merged /usr) are recreated as symlinks. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/nix/store'] as const

/** Host files under $HOME that are shown read-only when present, so git behaves as outside. */
export const HOME_FILES_RO = ['.gitconfig', '.config/git/config', '.config/git/ignore', '.config/git/attributes'] as const

/** Names whose values must not appear in argv; they are passed in bwrap's own environment. */
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PROXY/i

/** bwrap writes {"child-pid": N} here: the launcher signals the sandboxed program through it. */
export const INFO_FD = 3

export interface LaunchRequest {
  claudeArgs: readonly string[]
}

export function planLaunch(facts: HostFacts, request: LaunchRequest): LaunchPlan {
  const { cwd, git, claude, home } = facts
  if (cwd === undefined) throw launchError('the current directory no longer exists; cd into your project again and rerun claudebox')
  if (facts.bwrap === undefined) {
    throw launchError('bwrap (bubblewrap) was not found on PATH; install it (Debian/Ubuntu: apt install bubblewrap) or set CLAUDEBOX_BWRAP')
  }
  if (claude === undefined) throw claudeError(facts)

  const root = canonicalRoot(cwd, git)
  const id = instanceId(root)
  const instance = instanceDir(facts.claudeboxHome, id)
  const shared = sharedPaths(facts.claudeboxHome)
  checkInstance(facts, root, instance)

  const warnings: string[] = []
  if (!facts.gitAvailable) warnings.push('git was not found; using the current directory as the project')

  const groups: string[][] = []
  const readOnly: string[] = []
  const writable: string[] = []
  const add = (...words: string[]): void => void groups.push(words)
  const roBind = (p: string): void => {
    add('--ro-bind', p, p)
    readOnly.push(p)
  }
  const bind = (p: string): void => {
    add('--bind', p, p)
    writable.push(p)
  }

  // Namespaces: all unshared but the network; the sandbox dies with the launcher.
  add('--unshare-all', '--share-net', '--die-with-parent')
  add('--info-fd', String(INFO_FD))

  // ========== SYSTEM (read-only) ==========
  const visibleSystem: string[] = []
  for (const p of SYSTEM_PATHS) {
    const entry = facts.systemPaths[p]
    if (entry?.kind === 'dir') {
      add('--ro-bind', p, p)
      visibleSystem.push(p)
    } else if (entry?.kind === 'symlink' && entry.target !== undefined) {
      add('--symlink', entry.target, p)
    }
  }
  add('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp')

  // ========== HOME: empty, except what is listed ==========
  // The tmpfs comes first: every later bind under $HOME lands on top of it.
  add('--tmpfs', home)
  for (const rel of HOME_FILES_RO) {
    const p = path.join(home, rel)
    if (facts.homeFiles[p] === 'file') roBind(p)
  }

  // ========== CLAUDE CODE INSTALLATION (read-only) ==========
  const alreadyVisible = (p: string): boolean => visibleSystem.some(dir => isWithin(p, dir))
  for (const p of [claude.installRoot, claude.interpreter?.installRoot]) {
    if (p !== undefined && !alreadyVisible(p) && !readOnly.includes(p)) roBind(p)
  }

  // ========== PROJECT (read-write) ==========
  const projectDirs = git ? [git.topLevel] : [cwd]
  if (git && !isWithin(git.commonDir, git.topLevel)) projectDirs.push(git.commonDir)
  for (const p of projectDirs) bind(p)

  // ========== STATE: this instance and the shared tier ==========
  bind(instance)
  // Credentials: one directory for every instance (CLAUDE_SECURESTORAGE_CONFIG_DIR). Claude writes
  // them with temp file + rename, which works in a bound directory but not on a bound file.
  bind(shared.secureStorage)
  // Account state: Claude reads CLAUDE_CONFIG_DIR/.claude.json. A single-file bind survives its
  // writes because its rename fails with EBUSY and it falls back to writing in place (measured,
  // shared/research/claude-code-facts.md). The source is created first: a missing source must
  // never make bwrap create something in its place.
  add('--bind', shared.claudeJson, path.join(instance, '.claude.json'))
  add('--symlink', instance, path.join(home, '.claude'))

  // ========== ENVIRONMENT: an allowlist, nothing else ==========
  // bwrap is started with an environment holding only the allowlisted secrets (below), so the
  // sandbox sees exactly those plus the --setenv pairs; --clearenv would drop the secrets too.
  const env: [string, string][] = []
  for (const [name, value] of Object.entries(facts.env)) {
    if (value !== undefined && isPassedThrough(name)) env.push([name, value])
  }
  if (facts.env['PATH'] === undefined) env.push(['PATH', '/usr/local/bin:/usr/bin:/bin'])
  env.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  env.push(
    ['HOME', home],
    ['CLAUDE_CONFIG_DIR', instance],
    ['CLAUDE_SECURESTORAGE_CONFIG_DIR', shared.secureStorage],
    // Claude Code allows --dangerously-skip-permissions as root only when it knows it is sandboxed.
    ['IS_SANDBOX', '1'],
    // The installation is read-only inside: a self-update could only fail.
    ['DISABLE_AUTOUPDATER', '1'],
    ['CLAUDEBOX', '1'],
  )
  // Secrets (API keys, tokens, proxy URLs that may carry a password) reach bwrap through its
  // environment, not its argv: any local user can read a process's argv in /proc/<pid>/cmdline.
  const secretEnv: Record<string, string> = {}
  for (const [name, value] of env) {
    if (SECRET_NAME.test(name)) secretEnv[name] = value
    else add('--setenv', name, value)
  }

  add('--chdir', cwd)
  add('--', claude.resolved, ...request.claudeArgs)

  return {
    file: facts.bwrap,
    argv: groups.flat(),
    env: secretEnv,
    groups,
    mkdirs: [facts.claudeboxHome, instancesDir(facts.claudeboxHome), instance, shared.dir, shared.secureStorage].map(p => ({
      path: p,
      mode: 0o700,
    })),
    files: [
      { path: path.join(instance, PROJECT_ROOT_FILE), content: `${root}\n`, mode: 0o600 },
      { path: shared.claudeJson, content: '{}\n', mode: 0o600 },
    ],
    fds: [{ fd: INFO_FD, kind: 'info' }],
    warnings,
    summary: { projectRoot: root, instanceId: id, instanceDir: instance, writable, readOnly, system: visibleSystem, network: 'shared' },
  }
}

function claudeError(facts: HostFacts): ClaudeboxError {
  const name = facts.env['CLAUDEBOX_CLAUDE'] || 'claude'
  if (facts.claudeProblem === 'not-executable') {
    return new ClaudeboxError(`${name} was found but cannot be executed; check its permissions (chmod +x) or set CLAUDEBOX_CLAUDE`, EXIT.cannotRun)
  }
  return new ClaudeboxError(
    `${name} was not found on PATH; install Claude Code (npm install -g @anthropic-ai/claude-code) or set CLAUDEBOX_CLAUDE`,
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
