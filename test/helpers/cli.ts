// Runs the built claudebox CLI with a temporary HOME and CLAUDEBOX_HOME, and makes test projects.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { probeLandlockScope } from '../../src/host/probe.js'
import { TESTED_CLAUDE } from '../../src/config/tested-claude.js'
import { instanceId } from '../../src/state/instance.js'
import { tempDir } from './temp.js'

export const REPO = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(REPO, 'bin/claudebox.js')
export const FIXTURES = path.join(REPO, 'test/fixtures')
/** The real Claude Code of the end-to-end tests: the tested release `npm test` installed, or another (npm run compat). */
export const REAL_CLAUDE = process.env['CLAUDEBOX_TEST_CLAUDE'] ?? path.join(REPO, '.cache/claude-code', TESTED_CLAUDE.newest, 'node_modules/.bin/claude')

/** Whether `command args` runs and exits 0. */
export function toolWorks(command: string, args: readonly string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Whether a tool the tests need is here; in CI a missing one is a failure, never a skip. */
export function requiredTool(command: string, args: readonly string[], missing: string): boolean {
  const works = toolWorks(command, args)
  if (!works && process.env['CI']) throw new Error(`${missing} is required in CI`)
  return works
}

export const HAVE_BWRAP = requiredTool('bwrap', ['--version'], 'bwrap (apt-get install bubblewrap)')

export const IS_ROOT = process.getuid?.() === 0

// tempDir lives in temp.ts, which probes no tool when imported (unit tests take it from there).
export { tempDir }

export interface World {
  root: string
  home: string
  claudeboxHome: string
  env: Record<string, string>
}

/** A temporary machine: a HOME with secrets that must stay hidden, and a state dir. */
export function makeWorld(options: { cleanup?: boolean } = {}): World {
  const root = tempDir('cb-', options.cleanup ?? true)
  const home = path.join(root, 'home')
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true })
  fs.writeFileSync(path.join(home, '.ssh/id_ed25519'), 'PRIVATE KEY\n', { mode: 0o600 })
  fs.writeFileSync(path.join(home, '.bash_history'), 'secret history\n')
  fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Test User\n\temail = test@example.com\n')
  const claudeboxHome = path.join(home, '.claudebox')
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDEBOX_HOME: claudeboxHome,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
  }
  return { root, home, claudeboxHome, env }
}

export interface RunOptions {
  cwd: string
  env?: Record<string, string | undefined>
  input?: string
  timeout?: number
}

export interface CliResult {
  exitCode: number | undefined
  signal: string | undefined
  stdout: string
  stderr: string
}

/**
 * Marks the one-time word on the closed network default as given, for tests that compare a first
 * launch's stderr exactly or answer questions on a terminal (test/integration/network-default.test.ts
 * tests the notice itself).
 */
export function noticeGiven(world: World): void {
  fs.mkdirSync(world.claudeboxHome, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(world.claudeboxHome, 'network-default-notice'), 'test\n')
}

/** Runs `node bin/claudebox.js ARGS` with only the given environment. */
export async function claudebox(world: World, args: readonly string[], options: RunOptions): Promise<CliResult> {
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: { ...world.env, ...options.env },
    extendEnv: false,
    reject: false,
    timeout: options.timeout ?? 60_000,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
  })
  return { exitCode: result.exitCode, signal: result.signal, stdout: String(result.stdout), stderr: String(result.stderr) }
}

/** Runs a shell script inside the sandbox (CLAUDEBOX_CLAUDE=/bin/sh). */
export function inSandbox(world: World, cwd: string, script: string, env: Record<string, string> = {}): Promise<CliResult> {
  return claudebox(world, ['--', '-c', script], { cwd, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...env } })
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  }).trim()
}

/** A git repository with one commit. */
export function makeRepo(parent: string, name: string): string {
  const dir = path.join(parent, name)
  fs.mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(dir, 'README'), 'hello\n')
  git(dir, 'add', 'README')
  git(dir, 'commit', '-q', '-m', 'init')
  return dir
}

/** Whether this kernel supports the Landlock scope claudebox sets (the helper's probe mode). */
export const landlockScopeSupported = (): boolean => probeLandlockScope(process.arch) === 'supported'

/** The instance directory of the project whose canonical root is `root` (a repository's .git, or a plain directory). */
export function instancePath(world: World, root: string): string {
  return path.join(world.claudeboxHome, 'instances', instanceId(root))
}
