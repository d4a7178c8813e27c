// Where the `claude` to run is, and what of the host it needs visible inside: its installation and,
// for a script, its interpreter's. Found on PATH by the probe; looked at once the folders the
// sandbox writes are known (setup.ts), since a `claude` there is the session's to replace: nothing
// of the host may be bound, or run, because of what it says.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { homeDir } from './fs.js'
import { hostProgramEnv, leadsInto, safePath } from './host-env.js'
import { whichSync } from './system-programs.js'
import type { ClaudeFacts, HostFacts } from '../types.js'

type Env = Readonly<Record<string, string | undefined>>
type ClaudeProblem = NonNullable<HostFacts['claudeProblem']>

/** The `claude` the user would run: CLAUDEBOX_CLAUDE's, else the first on PATH. */
export function findClaude(override: string | undefined, env: Env, cwd: string | undefined): { found: string } | { problem: ClaudeProblem } {
  const name = override ?? 'claude'
  const found = name.includes('/') ? path.resolve(cwd ?? '/', name) : (whichSync(name, env['PATH']) ?? findNotExecutable(name, env['PATH']))
  return found === undefined ? { problem: 'not-found' } : { found }
}

/** The facts with the Claude installation found by the probe looked at, `writes` being the folders the sandbox writes. */
export function withClaude(facts: HostFacts, writes: readonly string[]): HostFacts {
  if (facts.claudeFound === undefined || facts.claude !== undefined) return facts
  const claude = claudeAt(facts.claudeFound, facts.env, writes)
  return 'facts' in claude ? { ...facts, claude: claude.facts } : { ...facts, claudeProblem: claude.problem }
}

function claudeAt(found: string, env: Env, writes: readonly string[]): { facts: ClaudeFacts } | { problem: ClaudeProblem } {
  const manager = shimManager(found, homeDir(env))
  const real = manager === undefined ? found : askShimManager(found, manager, env, writes)
  if (real === undefined) return { problem: 'manager-in-reach' }
  let resolved: string
  try {
    resolved = fs.realpathSync.native(real)
  } catch {
    return { problem: 'not-found' }
  }
  if (!isExecutableFile(resolved)) return { problem: 'not-executable' }
  // Whether the session could change what it is: leadsInto walks every step (a PATH folder that is a
  // link into the project, `~/.local/bin -> dotfiles/.local/bin`, whose `claude` link the session
  // may point anywhere). A project of `/` (refused by the plan, saying why) would make every program the session's.
  if (!writes.includes('/') && [found, resolved].some(p => leadsInto(p, writes))) {
    // Reached through what the session writes, it may lead anywhere the session chose: what lies
    // outside is never shown for it (red team, round 108: `.venv/bin/claude -> ~/bin/deploy.sh` had
    // that script bound and run, its token read, 3 of 3).
    return leadsInto(resolved, writes) ? { facts: sessionsClaude(found, resolved, env, writes) } : { problem: 'leads-out' }
  }
  const pkg = packageRoot(resolved)
  const facts: ClaudeFacts = { found, resolved, installRoot: pkg?.dir ?? resolved }
  const version = pkg?.version ?? nativeInstallerVersion(resolved)
  if (version !== undefined) facts.version = version
  // As for the session's claude, the interpreter comes from outside the folders the sandbox writes
  // (red team, round 107: a `node` put in a PATH folder linked into the project, leading to
  // ~/.cargo/bin/cargo, had ~/.cargo bound for the user's own npm claude, 3 of 3).
  const interpreter = scriptInterpreter(resolved, safePath(env['PATH'] ?? '', writes))
  if (interpreter !== undefined && (writes.includes('/') || !leadsInto(interpreter.named, writes))) facts.interpreter = { resolved: interpreter.real, installRoot: interpreterRoot(interpreter.real) }
  return { facts }
}

/**
 * A `claude` in a folder the sandbox writes (an activated virtualenv's bin/, node_modules/.bin on
 * PATH): the session may have written it, so it shows nothing of the host but a node, the one on
 * PATH outside those folders, when its `#!` names node (Claude Code's npm package does). Red team,
 * round 106: a planted `#!/usr/bin/env -S -u <file> /bin/sh` had the next launch bind any host
 * file or folder read-only (~/.ssh, the login's store, other projects), 3 of 3.
 */
function sessionsClaude(found: string, resolved: string, env: Env, writes: readonly string[]): ClaudeFacts {
  const facts: ClaudeFacts = { found, resolved, installRoot: resolved }
  const named = shebang(resolved)
  if (named === undefined || path.basename(named.program === 'env' ? (named.arg ?? '') : named.program) !== 'node') return facts
  const node = whichSync('node', safePath(env['PATH'] ?? '', writes))
  const real = node === undefined || leadsInto(node, writes) ? undefined : realExecutable(node)
  if (real !== undefined) facts.interpreter = { resolved: real, installRoot: interpreterRoot(real) }
  return facts
}

/** A `claude` on PATH that exists but cannot be executed still counts as found (exit 126, not 127). */
function findNotExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(':')) {
    if (dir !== '' && fs.existsSync(path.join(dir, name))) return path.resolve(dir, name)
  }
  return undefined
}

/**
 * The Claude Code npm package that holds `file`, looked for a few levels up. Only a package.json
 * that names Claude Code counts: any other (a home directory with a package.json, a project)
 * must never become a bind source. The whole `@anthropic-ai` scope is shown when the package
 * sits in one: its script launcher (cli-wrapper.cjs) runs the binary of the sibling platform
 * package (@anthropic-ai/claude-code-linux-x64).
 */
function packageRoot(file: string): { dir: string; version?: string } | undefined {
  let dir = path.dirname(file)
  for (let depth = 0; depth < 3 && dir !== '/'; depth++, dir = path.dirname(dir)) {
    let pkg: { name?: unknown; version?: unknown }
    try {
      pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as typeof pkg
    } catch {
      continue
    }
    if (typeof pkg.name !== 'string' || !pkg.name.startsWith('@anthropic-ai/claude-code')) return undefined
    const scope = path.dirname(dir)
    const root = path.basename(scope) === '@anthropic-ai' && path.basename(path.dirname(scope)) === 'node_modules' ? scope : dir
    return typeof pkg.version === 'string' ? { dir: root, version: pkg.version } : { dir: root }
  }
  return undefined
}

/**
 * Version managers put shims on PATH that run their own tool to find the real program (asdf, mise,
 * volta); the tool and its state are not inside the sandbox, so ask it outside, once, where the
 * real `claude` is. nvm needs nothing: its PATH entry holds real symlinks. `data`: the folders and
 * files the tool reads its plugins, configs and versions from (each may run commands).
 */
interface ShimManager {
  dir: string
  command: readonly string[]
  data: (home: string, env: Env) => (string | undefined)[]
}

const xdg = (env: Env, name: string, home: string, fallback: string): string => env[name] || path.join(home, fallback)

const SHIM_MANAGERS: readonly ShimManager[] = [
  { dir: '.asdf/shims', command: ['asdf', 'which', 'claude'], data: (home, env) => [path.join(home, '.asdf'), env['ASDF_DIR'], env['ASDF_DATA_DIR'], env['ASDF_CONFIG_FILE'] ?? path.join(home, '.asdfrc'), path.join(home, '.tool-versions')] },
  {
    dir: '.local/share/mise/shims',
    command: ['mise', 'which', 'claude'],
    data: (home, env) => [path.join(xdg(env, 'XDG_DATA_HOME', home, '.local/share'), 'mise'), path.join(xdg(env, 'XDG_CONFIG_HOME', home, '.config'), 'mise'), env['MISE_DATA_DIR'], env['MISE_CONFIG_DIR'], env['MISE_CACHE_DIR'], path.join(home, '.tool-versions')],
  },
  { dir: '.volta/bin', command: ['volta', 'which', 'claude'], data: (home, env) => [path.join(home, '.volta'), env['VOLTA_HOME']] },
]

function shimManager(found: string, home: string): ShimManager | undefined {
  return SHIM_MANAGERS.find(m => path.dirname(found) === path.join(home, m.dir))
}

/**
 * The real `claude` behind `found`, as the manager says; `found` when the manager is not there or
 * says nothing usable; undefined when the manager, or what it reads, lies where the sandbox writes:
 * it runs on the host (red team, round 92: a planted .venv/bin/volta ran at each launch; round
 * 106: a ~/.local/bin/volta linked into a checkout of it in the project, 3 of 3).
 */
function askShimManager(found: string, manager: ShimManager, env: Env, writes: readonly string[]): string | undefined {
  const [command, ...args] = manager.command as [string, ...string[]]
  // The project's own tool config (.mise.toml, .tool-versions) can run commands: run from `/`,
  // with nothing of the environment that leads where the sandbox writes.
  const outside = hostProgramEnv(env, writes, '/')
  const program = whichSync(command, outside['PATH'])
  if (program === undefined) return found
  const home = homeDir(env)
  if ([program, ...manager.data(home, env)].some(p => p !== undefined && path.isAbsolute(p) && leadsInto(p, writes))) return undefined
  try {
    const real = execFileSync(program, args, { cwd: '/', encoding: 'utf8', env: outside, stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim()
    return real !== '' && path.isAbsolute(real) ? real : found
  } catch {
    return found
  }
}

/** The native installer keeps each release as ~/.local/share/claude/versions/<version>. */
function nativeInstallerVersion(resolved: string): string | undefined {
  const base = path.basename(resolved)
  return path.basename(path.dirname(resolved)) === 'versions' && /^\d+\.\d+\.\d+/.test(base) ? base : undefined
}

/**
 * A script's `#!` line as the kernel splits it: the interpreter, and everything after it as one
 * argument.
 */
function shebang(file: string): { program: string; arg?: string } | undefined {
  const buffer = Buffer.alloc(256)
  let length: number
  const fd = fs.openSync(file, 'r')
  try {
    length = fs.readSync(fd, buffer, 0, buffer.length, 0)
  } finally {
    fs.closeSync(fd)
  }
  const head = buffer.subarray(0, length).toString('utf8')
  if (!head.startsWith('#!')) return undefined
  const line = (head.slice(2).split('\n')[0] ?? '').trim()
  const match = /^(\S+)(?:[ \t]+(.*))?$/.exec(line)
  if (match?.[1] === undefined) return undefined
  const program = path.basename(match[1]) === 'env' ? 'env' : match[1]
  return match[2] === undefined ? { program } : { program, arg: match[2].trim() }
}

/**
 * For a `#!` script, the resolved interpreter: an executable file, `/usr/bin/env NAME` looked up
 * on PATH (and `env -S NAME ...`); none for env given anything else (options, assignments), which
 * is not guessed at.
 */
function scriptInterpreter(file: string, pathVar: string | undefined): { named: string; real: string } | undefined {
  const named = shebang(file)
  if (named === undefined) return undefined
  let program: string | undefined = named.program
  if (program === 'env') {
    const words = (named.arg ?? '').split(/[ \t]+/)
    if (words[0] === '-S') words.shift()
    program = words[0] !== undefined && words[0] !== '' && !words[0].startsWith('-') && !words[0].includes('=') ? words[0] : undefined
  }
  if (program === undefined) return undefined
  const located = program.includes('/') ? program : whichSync(program, pathVar)
  const real = located === undefined ? undefined : realExecutable(located)
  return located === undefined || real === undefined ? undefined : { named: located, real }
}

/** `p` with its links resolved, when that is an executable regular file. */
function realExecutable(p: string): string | undefined {
  try {
    const real = fs.realpathSync.native(p)
    return isExecutableFile(real) ? real : undefined
  } catch {
    return undefined
  }
}

function isExecutableFile(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK)
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/**
 * What of an interpreter's installation the sandbox is shown: the prefix above its bin/ when that
 * holds a node installation and nothing else (nvm's, volta's, fnm's version folders, node's own
 * tarball unpacked in a folder of its own), else the interpreter file alone, which for node is all
 * it needs. Red team, round 108: a node in ~/.local/bin (the tarball unpacked there, `n` with
 * N_PREFIX) had all of ~/.local shown, keyrings and shell history, to every session.
 */
export function interpreterRoot(interpreter: string): string {
  const dir = path.dirname(interpreter)
  if (path.basename(dir) !== 'bin') return interpreter
  const prefix = path.dirname(dir)
  return holdsOnly(prefix, NODE_PREFIX) && holdsOnly(path.join(prefix, 'lib'), ['node_modules']) && holdsOnly(path.join(prefix, 'share'), ['doc', 'man', 'systemtap']) && holdsOnly(path.join(prefix, 'include'), ['node']) ? prefix : interpreter
}

/** The entries of node's tarball at its top. */
const NODE_PREFIX = ['bin', 'include', 'lib', 'share', 'CHANGELOG.md', 'LICENSE', 'README.md']

/** Whether `dir` holds no entry but those `allowed` (a missing one holds none). */
function holdsOnly(dir: string, allowed: readonly string[]): boolean {
  try {
    return fs.readdirSync(dir).every(name => allowed.includes(name))
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}
