// The probe: everything the planners need to know about the host, gathered into plain data.
// With run.ts, the only module that touches the file system or starts processes on the launch path.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { canonicalRoot, instanceDir, instanceId, PROJECT_ROOT_FILE } from './instance.js'
import { HOME_FILES_RO, SYSTEM_PATHS } from './plan.js'
import type { Settings } from './settings.js'
import type { ClaudeFacts, GitFacts, HostFacts, InstanceState, PathKind } from './types.js'

export function probe(settings: Settings, env: Readonly<Record<string, string | undefined>> = process.env): HostFacts {
  const home = homeDir(env)
  const cwd = currentDir()
  const git = cwd === undefined ? { facts: undefined, available: whichSync('git', env['PATH']) !== undefined } : probeGit(cwd)
  const claudeboxHome = resolveExisting(settings.claudeboxHome)
  const claude = probeClaude(settings.claudeOverride, env, cwd)
  const facts: HostFacts = {
    cwd,
    home,
    uid: process.getuid?.() ?? -1,
    env,
    claudeboxHome,
    git: git.facts,
    gitAvailable: git.available,
    claude: claude.facts,
    bwrap: settings.bwrapOverride ? resolveProgram(settings.bwrapOverride, env['PATH'], cwd) : whichSync('bwrap', env['PATH']),
    systemPaths: Object.fromEntries(SYSTEM_PATHS.map(p => [p, lstatWithTarget(p)])),
    homeFiles: Object.fromEntries(HOME_FILES_RO.map(rel => path.join(home, rel)).map(p => [p, statKind(p)])),
    instance:
      cwd === undefined ? { kind: 'missing' } : readInstanceState(instanceDir(claudeboxHome, instanceId(canonicalRoot(cwd, git.facts)))),
  }
  if (claude.problem) facts.claudeProblem = claude.problem
  return facts
}

export function homeDir(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env['HOME']
  return path.resolve(fromEnv !== undefined && fromEnv !== '' ? fromEnv : os.userInfo().homedir)
}

function currentDir(): string | undefined {
  try {
    return fs.realpathSync(process.cwd())
  } catch {
    return undefined // deleted under us (ENOENT from uv_cwd)
  }
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
export function resolveExisting(p: string): string {
  try {
    return fs.realpathSync(p)
  } catch {
    const parent = path.dirname(p)
    return parent === p ? p : path.join(resolveExisting(parent), path.basename(p))
  }
}

function probeGit(cwd: string): { facts: GitFacts | undefined; available: boolean } {
  let out: string
  try {
    out = execFileSync('git', ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { facts: undefined, available: code !== 'ENOENT' }
  }
  const [topLevel, gitDir, commonDir] = out.replace(/\n$/, '').split('\n')
  if (!topLevel || !gitDir || !commonDir) return { facts: undefined, available: true }
  return {
    facts: {
      topLevel: fs.realpathSync(topLevel),
      gitDir: fs.realpathSync(gitDir),
      // --git-common-dir is relative to the current directory unless git made it absolute.
      commonDir: fs.realpathSync(path.resolve(cwd, commonDir)),
    },
    available: true,
  }
}

export function whichSync(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (dir === '') continue
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      if (fs.statSync(candidate).isFile()) return candidate
    } catch {
      // not here; keep looking
    }
  }
  return undefined
}

function resolveProgram(program: string, pathVar: string | undefined, cwd: string | undefined): string | undefined {
  if (!program.includes('/')) return whichSync(program, pathVar)
  const p = path.resolve(cwd ?? '/', program)
  return fs.existsSync(p) ? p : undefined
}

function probeClaude(
  override: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string | undefined,
): { facts?: ClaudeFacts; problem?: 'not-found' | 'not-executable' } {
  const name = override ?? 'claude'
  let found: string | undefined
  if (name.includes('/')) found = path.resolve(cwd ?? '/', name)
  else found = whichSync(name, env['PATH']) ?? findNotExecutable(name, env['PATH'])
  if (found === undefined) return { problem: 'not-found' }
  let resolved: string
  try {
    resolved = fs.realpathSync(found)
  } catch {
    return { problem: 'not-found' }
  }
  try {
    fs.accessSync(resolved, fs.constants.X_OK)
    if (!fs.statSync(resolved).isFile()) return { problem: 'not-executable' }
  } catch {
    return { problem: 'not-executable' }
  }
  const pkg = packageRoot(resolved)
  const facts: ClaudeFacts = { found, resolved, installRoot: pkg?.dir ?? resolved }
  const version = pkg?.version ?? nativeInstallerVersion(resolved)
  if (version !== undefined) facts.version = version
  const interpreter = scriptInterpreter(resolved, env['PATH'])
  if (interpreter !== undefined) facts.interpreter = { resolved: interpreter, installRoot: interpreterRoot(interpreter) }
  return { facts }
}

/** A `claude` on PATH that exists but cannot be executed still counts as found (exit 126, not 127). */
function findNotExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(':')) {
    if (dir !== '' && fs.existsSync(path.join(dir, name))) return path.join(dir, name)
  }
  return undefined
}

/**
 * The Claude Code npm package that holds `file`, looked for a few levels up. Only a package.json
 * that names Claude Code counts: any other (a home directory with a package.json, a project)
 * must never become a bind source.
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
    if (pkg.name !== '@anthropic-ai/claude-code') return undefined
    return typeof pkg.version === 'string' ? { dir, version: pkg.version } : { dir }
  }
  return undefined
}

/** The native installer keeps each release as ~/.local/share/claude/versions/<version>. */
function nativeInstallerVersion(resolved: string): string | undefined {
  const base = path.basename(resolved)
  return path.basename(path.dirname(resolved)) === 'versions' && /^\d+\.\d+\.\d+/.test(base) ? base : undefined
}

/** For a `#!` script, the resolved interpreter (following `/usr/bin/env NAME`). */
function scriptInterpreter(file: string, pathVar: string | undefined): string | undefined {
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
  const words = (head.slice(2).split('\n')[0] ?? '').trim().split(/\s+/)
  let program = words[0]
  if (program !== undefined && path.basename(program) === 'env') program = words.find((w, i) => i > 0 && !w.startsWith('-'))
  if (program === undefined || program === '') return undefined
  const located = program.includes('/') ? program : whichSync(program, pathVar)
  if (located === undefined) return undefined
  try {
    return fs.realpathSync(located)
  } catch {
    return undefined
  }
}

/** A node (or other interpreter) installation: the prefix above its bin/ directory. */
function interpreterRoot(interpreter: string): string {
  const dir = path.dirname(interpreter)
  return path.basename(dir) === 'bin' ? path.dirname(dir) : interpreter
}

function lstatWithTarget(p: string): { kind: PathKind; target?: string } {
  const kind = lstatKind(p)
  if (kind !== 'symlink') return { kind }
  return { kind, target: fs.readlinkSync(p) }
}

function lstatKind(p: string): PathKind {
  try {
    const st = fs.lstatSync(p)
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'file'
  } catch {
    return 'missing'
  }
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
  const recordedRoot = readNoFollow(path.join(dir, PROJECT_ROOT_FILE))
  return recordedRoot === undefined ? { kind: 'no-root-file' } : { kind: 'ok', recordedRoot }
}

/** Reads a regular file's text, refusing symlinks (O_NOFOLLOW); undefined when absent or unreadable. */
export function readNoFollow(file: string): string | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined
    return fs.readFileSync(fd, 'utf8').replace(/\n$/, '')
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}
