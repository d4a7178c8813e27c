// The object format the host's git reads a repository's index in: the one its config names, as
// git itself reads that config (extensions.objectformat counts only with repositoryformatversion
// 1; a comment does not count). Asked of git, in a folder of claudebox's own holding a copy of the
// config's bytes: git never runs on the config the session wrote (index-git.ts says why). A
// look at the text was fooled (red team, round 119: `# objectformat = sha256` had claudebox's git
// read an index as SHA-256, in which it listed one clean path, while the host's git read it as
// SHA-1, listing .git/hooks/pre-commit, for `git checkout .` to write). When git cannot tell, the
// index is read in both formats, and a path refused in either counts.
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { GIT, SYSTEM_PATH } from './system-programs.js'

/** The formats to read an index in (true: SHA-256). */
export type Formats = readonly boolean[]
export const BOTH: Formats = [false, true]

/** A repository's config as read for its format: its bytes, null when there is none (git then takes SHA-1), undefined when it cannot be read as git would. */
export type ConfigBytes = Buffer | null | undefined

/** How long git may take to tell (an include naming a FIFO would hold it). */
const ASK_MS = 2000

/** The config of the repository `gitDir` belongs to (its common dir's), read through a symlink as git reads it, never blocking on a FIFO. */
export function configBytes(configFile: string): ConfigBytes {
  let fd: number | undefined
  try {
    fd = fs.openSync(configFile, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const st = fs.fstatSync(fd)
    return st.isFile() && st.size <= 1 << 20 ? fs.readFileSync(fd) : undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The formats git reads an index in under `config`, asked in a git dir made in `work`. */
export function formatsOf(config: ConfigBytes, work: string): Formats {
  if (config === undefined) return BOTH
  try {
    const env = askingEnv(config, work)
    return formatsFrom(execFileSync(GIT(), ['rev-parse', '--show-object-format'], { env, cwd: env['GIT_DIR'], encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: ASK_MS }))
  } catch {
    return BOTH
  }
}

/** formatsOf, without blocking the launcher's loop (the gitlink watch, during the session). */
export async function formatsOfAsync(config: ConfigBytes, work: string): Promise<Formats> {
  if (config === undefined) return BOTH
  let env: Record<string, string>
  try {
    env = askingEnv(config, work)
  } catch {
    return BOTH
  }
  return new Promise(resolve => {
    execFile(GIT(), ['rev-parse', '--show-object-format'], { env, cwd: env['GIT_DIR'], encoding: 'utf8', timeout: ASK_MS }, (error, out) => resolve(error ? BOTH : formatsFrom(out)))
  })
}

const formatsFrom = (out: string): Formats => (out.trim() === 'sha256' ? [true] : out.trim() === 'sha1' ? [false] : BOTH)

/** An empty git dir in `work` with `config` as its config, and the environment of a git run there (no system or global config). */
function askingEnv(config: Buffer | null, work: string): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(work, 'format-'))
  return bareGitDirEnv(dir, config, SYSTEM_PATH)
}

/**
 * Makes `dir` (there, empty) a git dir of claudebox's own with `config` as its config (none: null),
 * and gives the environment of a git run there: no system or global config, no lazy fetch, no
 * prompt. Shared with index-git.ts's runs on an index.
 */
export function bareGitDirEnv(dir: string, config: Buffer | string | null, pathVar: string): Record<string, string> {
  for (const sub of ['objects', 'refs']) fs.mkdirSync(path.join(dir, sub))
  fs.writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n')
  if (config !== null) fs.writeFileSync(path.join(dir, 'config'), config)
  return { PATH: pathVar, HOME: dir, LC_ALL: 'C', GIT_DIR: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_NO_LAZY_FETCH: '1', GIT_TERMINAL_PROMPT: '0' }
}
