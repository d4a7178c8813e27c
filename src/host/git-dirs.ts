// Every git dir of a repository that the host's git may use, found from the files: the common
// dir, linked worktrees' admin dirs, submodule git dirs (below `modules/` of any git dir, with
// names of any number of parts, or embedded in the working tree), and repositories the config names
// as remotes by a local path. Each of them has a config and hooks that the host's git runs.
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { lstatKind, readNoFollow, realPathFrom } from './fs.js'
import { resolveChain } from './link-targets.js'
import { expandHome } from './config-commands.js'
import { COMMONDIR_PLACEHOLDER } from '../sandbox/git-guard.js'
import type { GitFacts } from '../types.js'
import { GIT } from './system-programs.js'

/** How deep `modules/` may nest (name parts and nested submodules together) before the launch refuses. */
export const MAX_MODULES_DEPTH = 40
/** How many git dirs the launch protects at most; more refuses (each is a mount, and a session could plant thousands). */
export const MAX_GIT_DIRS = 256

export interface GitDirEntry {
  dir: string
  /** Directories between the git dir that holds this one and it, outermost first: pinned first so the path cannot be swapped. */
  parents: string[]
  /** A linked worktree's admin dir (<git dir>/worktrees/<name>): commondir and gitdir belong there. */
  linked: boolean
  /** The git dir whose config is this repository's own (a linked admin dir's owner; itself otherwise). */
  common: string
}

/** The git dirs, or why the launch cannot protect them (a folder it cannot list, too deep, too many). */
export type GitDirSearch = {
  entries: GitDirEntry[]
  submodules: string[]
  /** Names where a git dir would take precedence if one appeared (git's earlier remote candidates): moved aside when they do. */
  forbidden: string[]
  /** Symlinks on the way to a local remote (`mirror -> store/mirror.git`): guarded, or the session re-points them. */
  links: { path: string; text: string }[]
  refusal?: string
}

/** What a repository's configs (its own, the user's, their includes) say of its remotes, for finding the local ones. */
export interface RemoteSettings {
  /** remote.<name>.url and pushurl. */
  urls: string[]
  /** The names of the remotes configured (remote.<name>.*). */
  names: string[]
  /** Remotes named by branch.*.remote, branch.*.pushRemote and remote.pushDefault; git takes one no remote has for a URL. */
  used: string[]
  /** url.<base>.insteadOf (fetch) and pushInsteadOf (push). */
  rewrites: { prefix: string; base: string; push: boolean }[]
}

export type RemotesOf = (repoConfig: string) => RemoteSettings

class Refusal extends Error {}

export function gitDirsOf(git: GitFacts, home: string, remotesOf: RemotesOf): GitDirSearch {
  const entries: GitDirEntry[] = []
  const submodules: string[] = []
  const forbidden: string[] = []
  const links: { path: string; text: string }[] = []
  const add = (entry: GitDirEntry): void => {
    if (entries.some(e => e.dir === entry.dir)) return
    if (entries.length >= MAX_GIT_DIRS) {
      throw new Refusal(`more than ${MAX_GIT_DIRS} git dirs in ${git.commonDir} and the project (last found: ${entry.dir}); remove the ones you do not use (often left in modules/ or worktrees/), then rerun claudebox`)
    }
    entries.push(entry)
    below(entry, add)
  }
  try {
    add({ dir: git.commonDir, parents: [], linked: false, common: git.commonDir })
    if (git.gitDir !== git.commonDir) add({ dir: git.gitDir, parents: [], linked: true, common: git.commonDir })
    // The submodules of the top and of each linked worktree (their .gitmodules are their own).
    const tops = [git.topLevel, ...entries.filter(e => e.linked).flatMap(e => worktreeTop(e.dir) ?? [])]
    for (const top of new Set(tops)) submodules.push(...submodulePaths(top).filter(sub => !submodules.includes(sub)))
    for (const sub of submodules) {
      const dotGit = path.join(sub, '.git')
      if (lstatKind(dotGit) === 'dir' && isGitDir(dotGit)) add({ dir: dotGit, parents: workTreeParents(git.topLevel, sub), linked: false, common: dotGit })
    }
    // A relative remote URL is taken from the top of the work tree git runs in (red team, round 36: from a linked worktree's).
    const trees = [...new Set([...tops, ...submodules])]
    for (const remote of localRemotes(entries, trees, home, remotesOf, { forbidden, links })) add(remote)
    return { entries, submodules, forbidden, links }
  } catch (error) {
    if (error instanceof Refusal) return { entries, submodules, forbidden, links, refusal: error.message }
    throw error
  }
}

/** A git dir's linked worktrees' admin dirs and its submodules' git dirs. */
function below(entry: GitDirEntry, add: (e: GitDirEntry) => void): void {
  const chain = [...entry.parents, entry.dir]
  const worktrees = path.join(entry.dir, 'worktrees')
  for (const name of listHolder(worktrees)) {
    const dir = path.join(worktrees, name)
    if (isGitDir(dir)) add({ dir, parents: [...chain, worktrees], linked: true, common: entry.common })
  }
  searchModules(path.join(entry.dir, 'modules'), chain, 0, add)
}

/** Submodule git dirs under `modules`: a dir with HEAD is one; any other dir is part of a name (a/b). */
function searchModules(modules: string, parents: string[], depth: number, add: (e: GitDirEntry) => void): void {
  if (depth > MAX_MODULES_DEPTH) throw new Refusal(`${modules} nests deeper than ${MAX_MODULES_DEPTH} folders; claudebox cannot protect the git dirs in it: remove what you do not use, then rerun`)
  const chain = [...parents, modules]
  for (const name of listHolder(modules)) {
    const dir = path.join(modules, name)
    if (lstatKind(dir) !== 'dir') continue
    if (isGitDir(dir)) add({ dir, parents: chain, linked: false, common: dir })
    else searchModules(dir, chain, depth + 1, add)
  }
}

/**
 * The path a `.git` file names, read as git reads it (read_gitfile_gently): `gitdir: ` at its very
 * start, then the rest with trailing newlines and carriage returns dropped, spaces kept (red team,
 * round 30: `gitdir:  x/..` with a trimmed space walked a folder git never went through), up to a
 * NUL, where git's C string ends (red team, round 45: `gitdir: ../.git/x\0junk` was dropped as
 * leading nowhere, and git used ../.git/x).
 */
export function gitdirOf(text: string | undefined): string | undefined {
  const body = text?.replace(/[\r\n]+$/, '')
  return body?.startsWith('gitdir: ') ? body.slice('gitdir: '.length).split('\0')[0] : undefined
}

/**
 * The common dir of `gitDir` as git's get_common_dir_noenv reads it: `commondir`'s text without its
 * trailing newlines and carriage returns (spaces kept), from the git dir, walked as the kernel
 * walks it. The git dir itself when it has none; undefined when that text leads nowhere.
 */
export function commonDirOf(gitDir: string): string | undefined {
  const text = readSmall(path.join(gitDir, 'commondir'))
  if (text === undefined) return gitDir
  try {
    return realPathFrom(gitDir, text.replace(/[\r\n]+$/, ''))
  } catch {
    return undefined
  }
}

/** Whether `file` is a commondir placeholder (sandbox/git-guard.ts): a regular file, never a link, holding exactly that. */
export function isCommondirPlaceholder(file: string): boolean {
  return `${readNoFollow(file, COMMONDIR_PLACEHOLDER.length) ?? ''}\n` === COMMONDIR_PLACEHOLDER && fs.lstatSync(file, { throwIfNoEntry: false })?.size === COMMONDIR_PLACEHOLDER.length
}

/** A git dir as git takes one: HEAD present, as a file or a symlink (git follows a symlinked HEAD). */
export function isGitDir(dir: string): boolean {
  const head = lstatKind(path.join(dir, 'HEAD'))
  return head === 'file' || head === 'symlink'
}

/**
 * The names in a `worktrees` or `modules` folder. Missing: none. A symlink (git follows it, a bind
 * would too) or a folder the launcher cannot list (a session made it unreadable) hides git dirs:
 * the launch refuses, saying what to fix.
 */
function listHolder(holder: string): string[] {
  const kind = lstatKind(holder)
  if (kind === 'missing' || kind === 'file') return []
  if (kind !== 'dir') throw new Refusal(`${holder} is a ${kind === 'symlink' ? 'symlink' : 'special file'}, and git would look for repositories through it; make it a plain folder (or remove it), then rerun claudebox`)
  try {
    return fs.readdirSync(holder)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw new Refusal(`cannot list ${holder} (${code}), which holds git dirs claudebox must protect; chmod u+rwx it, then rerun claudebox`)
  }
}

/** The `.git` file of a linked worktree, as its admin dir's `gitdir` names it (absolute). */
export function worktreeDotGit(adminDir: string): string | undefined {
  const dotGit = readSmall(path.join(adminDir, 'gitdir'))?.trim()
  return dotGit !== undefined && path.isAbsolute(dotGit) ? path.normalize(dotGit) : undefined
}

/** A linked worktree's top: the folder of that `.git` file. */
export function worktreeTop(adminDir: string): string | undefined {
  const dotGit = worktreeDotGit(adminDir)
  return dotGit === undefined ? undefined : path.dirname(dotGit)
}

/** How many submodule paths `.gitmodules` files may list in all (nested ones included) before the launch refuses. */
const MAX_SUBMODULE_PATHS = 256

/**
 * The submodule paths in the working tree, as `.gitmodules` files list them (nested submodules'
 * own too), each once: a git dir kept there (`lib/.git` as a folder, from `git submodule add` of an
 * existing clone) and each `.git` file name what git uses. Bounded: repeated or nested paths a
 * session wrote made the next launch run git 10^8 times (red team).
 */
function submodulePaths(top: string): string[] {
  const seen = new Set<string>()
  const queue = [{ workTree: top, depth: 0 }]
  while (queue.length > 0) {
    const { workTree, depth } = queue.shift() as { workTree: string; depth: number }
    if (depth > 8) continue
    for (const sub of gitmodulesPaths(workTree)) {
      if (seen.has(sub)) continue
      seen.add(sub)
      if (seen.size > MAX_SUBMODULE_PATHS) throw new Refusal(`the .gitmodules files in ${top} list more than ${MAX_SUBMODULE_PATHS} submodule paths (last: ${sub}); remove what you do not use, then rerun claudebox`)
      if (lstatKind(sub) === 'dir') queue.push({ workTree: sub, depth: depth + 1 })
    }
  }
  return [...seen]
}

/** The submodule paths `.gitmodules` lists, inside `workTree` (others are ignored, as git does). */
function gitmodulesPaths(workTree: string): string[] {
  const file = path.join(workTree, '.gitmodules')
  if (lstatKind(file) === 'missing') return []
  // A FIFO (or anything but a small file) would hide the submodules and hang git (red team).
  if (readSmall(file) === undefined) throw new Refusal(`${file} is not a regular file git can read, and it decides which submodules git uses; restore it (git checkout -- .gitmodules), then rerun claudebox`)
  const lines = gitConfig(file, ['--get-regexp', '^submodule\\..*\\.path$']) ?? ''
  return lines.split('\n').flatMap(line => {
    const value = line.slice(line.indexOf(' ') + 1)
    const sub = path.resolve(workTree, value)
    return line.includes(' ') && value !== '' && sub.startsWith(`${workTree}/`) ? [sub] : []
  })
}

/** The working-tree folders from below `top` down to `dir`, outermost first. */
export function workTreeParents(top: string, dir: string): string[] {
  const out: string[] = []
  for (let p = dir; p !== top && p.startsWith(`${top}/`); p = path.dirname(p)) out.unshift(p)
  return out
}

/**
 * Repositories a remote names by a local path (`url = ../mirror.git`): `git push` there runs that
 * repository's hooks on the host. Relative URLs are taken from the top of the working tree, where
 * git runs them; `~/` is the home; the names git tries are tried (a `./mirror` remote reaches
 * mirror.git), and each is taken by its real path (one through a symlink counts).
 */
function localRemotes(entries: readonly GitDirEntry[], trees: readonly string[], home: string, remotesOf: RemotesOf, watched: { forbidden: string[]; links: { path: string; text: string }[] }): GitDirEntry[] {
  const out: GitDirEntry[] = []
  const top = trees[0] as string
  for (const config of new Set(entries.map(e => path.join(e.common, 'config')))) {
    for (const url of remoteUrls(remotesOf(config))) {
      const local = localPath(url, home)
      if (local === undefined) continue
      // Joined as text, not path.resolve'd: git walks `link/..` through the link, and so does resolveChain.
      for (const at of local.startsWith('/') ? [local] : trees.map(tree => `${tree}/${local}`)) out.push(...remoteGitDir(at, top, watched))
    }
  }
  return out
}

/**
 * Every URL git may fetch from or push to: the remotes' URLs from the repository's config and the
 * user's (red team, round 34: only the repository's were read), and each name branch.*.remote,
 * branch.*.pushRemote or remote.pushDefault gives that no remote has (git takes `./mirror.git`
 * there for a URL); each as written and as the longest url.*.insteadOf and pushInsteadOf rewrite it.
 */
export function remoteUrls(settings: RemoteSettings): string[] {
  const urls = [...settings.urls, ...settings.used.filter(name => !settings.names.includes(name))]
  const rewritten = urls.flatMap(url =>
    [false, true].flatMap(push => {
      const matches = settings.rewrites.filter(r => r.push === push && url.startsWith(r.prefix))
      const longest = matches.sort((a, b) => b.prefix.length - a.prefix.length)[0]
      return longest === undefined ? [] : [longest.base + url.slice(longest.prefix.length)]
    }),
  )
  return [...new Set([...urls, ...rewritten])]
}

/**
 * The git dir git's enter_repo takes for a local remote: the first of these names that is one.
 * Each name before it could become one during a session and take precedence (red team: a bare
 * layout created at ./mirror took over a ./mirror remote meant for mirror.git): a missing one is
 * watched (its first missing name), an existing folder's HEAD must not appear.
 */
function remoteGitDir(local: string, top: string, watched: { forbidden: string[]; links: { path: string; text: string }[] }): GitDirEntry[] {
  for (const candidate of [`${local}/.git`, local, `${local}.git/.git`, `${local}.git`]) {
    // The links on the way are the user's (red team, round 31: `mirror -> store/mirror.git`, re-pointed inside, ran at git push).
    // Walked as the kernel walks it, `link/..` included; its end is the real path.
    const chain = resolveChain(candidate)
    const dir = chain.end?.kind === 'dir' ? chain.end.path : undefined
    watched.links.push(...chain.links)
    if (dir !== undefined && isGitDir(dir)) return [{ dir, parents: workTreeParents(top, dir).slice(0, -1), linked: false, common: dir }]
    if (chain.end?.kind === 'missing' && chain.firstMissing !== undefined) watched.forbidden.push(chain.firstMissing)
    else if (dir !== undefined) watched.forbidden.push(path.join(dir, 'HEAD'))
  }
  return []
}

/**
 * The path a local remote URL names: absolute, or relative to the work tree's top; undefined for
 * another transport. `file://HOST/path` is `/path` (git ignores the host; red team, round 36:
 * `file://localhost/...` was read as a relative path), `~` and `~user` are expanded as git's
 * enter_repo does.
 */
function localPath(url: string, home: string): string | undefined {
  if (url.startsWith('file://')) {
    const rest = url.slice('file://'.length)
    return decodeURIComponent(rest.startsWith('/') ? rest : rest.slice(Math.max(rest.indexOf('/'), 0)))
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return undefined // another transport
  // scp-like host:path, unless a path component holds the colon (git's own rule)
  const colon = url.indexOf(':')
  if (colon > 0 && !url.slice(0, colon).includes('/')) return undefined
  return expandHome(url, home)
}

/**
 * How claudebox runs `git config` on a file or on text: from `/`, with a git dir that is none, so git
 * does not look for the repository of the launcher's folder (red team, round 45: a session made
 * a subfolder's .git a repository whose HEAD was a FIFO, and every such run waited out its
 * timeout), and with no system or global config.
 */
export function gitConfigRun(): { cwd: string; env: NodeJS.ProcessEnv } {
  return { cwd: '/', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', GIT_DIR: '/nonexistent/claudebox-no-repository', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }
}

export function gitConfig(file: string, args: string[]): string | undefined {
  if (readSmall(file) === undefined) return undefined // a FIFO planted as a config would block git
  const get = args.includes('--get-regexp') ? [] : ['--get']
  try {
    return execFileSync(GIT(), ['config', '--file', file, ...get, ...args], { ...gitConfigRun(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim()
  } catch {
    return undefined
  }
}

/**
 * A config file's text when it is a regular file under 1 MiB, read through symlinks (a
 * stow-managed ~/.gitconfig, a .git/config kept in the project: git reads through them too) and
 * never blocking on a FIFO planted in its place; undefined otherwise.
 */
export function readSmall(file: string, encoding: 'utf8' | 'latin1' = 'utf8'): string | undefined {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const st = fs.fstatSync(fd)
    return st.isFile() && st.size < 1 << 20 ? fs.readFileSync(fd, encoding) : undefined
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}
