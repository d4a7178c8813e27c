// What `git rev-parse --show-toplevel --absolute-git-dir --git-common-dir` prints, read from the
// files for the everyday layouts (a repository, a linked worktree, a submodule, --separate-git-dir)
// so that a launch does not pay for a git process (~5-20 ms). Anything this does not read exactly
// as git would is left to git itself ('ask-git'): the GIT_* variables, a config that moves the work
// tree or includes other files, a mount boundary, an owner other than this user (git's
// safe.directory), a cwd inside the git dir, a .git that is a symlink, and every file that is
// not what a valid repository has.
import fs from 'node:fs'
import path from 'node:path'
import { isDir, readNoFollow, realPathFrom } from './fs.js'
import { gitdirOf } from './git-dirs.js'
import type { GitFacts } from '../types.js'

export type Discovery = { kind: 'repo'; facts: GitFacts } | { kind: 'none' } | { kind: 'ask-git' }

const ASK_GIT: Discovery = { kind: 'ask-git' }

/** Variables that change git's discovery, or which files it reads. */
const GIT_DISCOVERY_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM', 'GIT_OBJECT_DIRECTORY', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM']

export function discoverGit(cwd: string, env: Readonly<Record<string, string | undefined>>, euid: number): Discovery {
  if (GIT_DISCOVERY_VARIABLES.some(name => env[name] !== undefined)) return ASK_GIT
  let dir: string
  try {
    dir = fs.realpathSync.native(cwd)
  } catch {
    return ASK_GIT
  }
  if (dir.split('/').includes('.git')) return ASK_GIT
  const device = fs.statSync(dir).dev
  for (;;) {
    const found = repositoryAt(dir, euid)
    if (found !== undefined) return found
    const parent = path.dirname(dir)
    if (parent === dir) return { kind: 'none' }
    // git stops at a mount boundary; whether it would have found more above is git's to say.
    if (statDev(parent) !== device) return ASK_GIT
    dir = parent
  }
}

/** The repository whose work tree is `dir`; undefined when `dir` has no .git at all. */
function repositoryAt(dir: string, euid: number): Discovery | undefined {
  const dotGit = path.join(dir, '.git')
  let st: fs.Stats
  try {
    st = fs.lstatSync(dotGit)
  } catch (error) {
    // No .git here: but a directory that is itself a git dir (a bare repository) is git's case.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || looksLikeGitDir(dir)) return ASK_GIT
    return undefined
  }
  let gitDir: string | undefined
  if (st.isDirectory()) gitDir = dotGit
  else if (st.isFile()) gitDir = gitFileTarget(dotGit, dir)
  if (gitDir === undefined) return ASK_GIT
  const facts = validRepository(dir, gitDir)
  if (facts === undefined) return ASK_GIT
  const owned = [dir, dotGit, facts.gitDir, facts.commonDir].every(p => ownerOf(p) === euid)
  return owned ? { kind: 'repo', facts } : ASK_GIT
}

/** A .git file's `gitdir: PATH` (relative to the work tree), resolved; undefined when it is anything else. */
function gitFileTarget(file: string, dir: string): string | undefined {
  const pointer = gitdirOf(readNoFollow(file, 4096))
  return pointer === undefined || pointer === '' ? undefined : pointer.startsWith('/') ? pointer : `${dir}/${pointer}`
}

/**
 * The facts when `gitDir` is a valid git dir (HEAD a ref or an object id; objects/ and refs/ in the
 * common dir) whose config neither moves the work tree nor includes other files.
 */
function validRepository(topLevel: string, gitDir: string): GitFacts | undefined {
  try {
    const realGitDir = fs.realpathSync.native(gitDir)
    const common = readNoFollow(path.join(realGitDir, 'commondir'), 4096)
    const commonDir = common === undefined ? realGitDir : realPathFrom(realGitDir, common.replace(/\n$/, ''))
    if (!validHead(path.join(realGitDir, 'HEAD'))) return undefined
    if (!isDir(path.join(commonDir, 'objects')) || !isDir(path.join(commonDir, 'refs'))) return undefined
    if (!plainConfig(path.join(commonDir, 'config')) || !plainConfig(path.join(realGitDir, 'config.worktree'), true)) return undefined
    return { topLevel, gitDir: realGitDir, commonDir }
  } catch {
    return undefined
  }
}

function validHead(file: string): boolean {
  const text = readNoFollow(file, 4096)
  return text !== undefined && /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(text)
}

/**
 * A config git reads the same way this module does: no worktree key, no bare key but a plain
 * `bare = false`, no include (any of them anywhere on a line). A
 * config that cannot be read is git's to judge (it may refuse the repository).
 */
function plainConfig(file: string, mayBeMissing = false): boolean {
  const text = readNoFollow(file)
  if (text === undefined) return mayBeMissing && !fs.existsSync(file)
  // Anywhere on a line (git takes `[core]worktree = X` too); a bare key that is not plainly false.
  return !/worktree\s*=|\[\s*include/i.test(text) && !/\bbare\b(?!\s*=\s*(false|no|off|0)\s*$)/im.test(text)
}

function looksLikeGitDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'HEAD')) && fs.existsSync(path.join(dir, 'objects'))
}

function ownerOf(p: string): number | undefined {
  try {
    return fs.lstatSync(p).uid
  } catch {
    return undefined
  }
}

function statDev(p: string): number | undefined {
  try {
    return fs.statSync(p).dev
  } catch {
    return undefined
  }
}
