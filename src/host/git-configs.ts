// The work trees in the project where the host's git runs (the top, submodules, linked worktrees
// checked out inside), and the files each one's configs make git take programs or more config from:
// core.hooksPath (relative to that work tree) and include files (relative to the config that names
// them, followed into further includes). Read from the files; git itself only for config syntax.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind } from './fs.js'
import { gitConfig, gitdirOf, readSmall, worktreeTop, type GitDirSearch } from './git-dirs.js'
import { isWithinAny } from '../state/instance.js'
import type { GitFacts } from '../types.js'

/** Include files followed at most, nested or not, per probe (each may cost a git run). */
const MAX_CONFIG_FILES = 64

/**
 * The configs besides the repository's that git reads, as git finds them: the system's
 * ($GIT_CONFIG_SYSTEM or /etc/gitconfig, unless $GIT_CONFIG_NOSYSTEM) and the user's
 * ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config and ~/.gitconfig; red team, round 31:
 * a hooksPath in the XDG one was never read). A relative core.hooksPath there (`.githooks`) names
 * a folder in every work tree.
 */
export function userGitConfigs(home: string, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const system = env['GIT_CONFIG_NOSYSTEM'] ? [] : [env['GIT_CONFIG_SYSTEM'] || '/etc/gitconfig']
  const xdg = env['XDG_CONFIG_HOME'] && path.isAbsolute(env['XDG_CONFIG_HOME']) ? env['XDG_CONFIG_HOME'] : path.join(home, '.config')
  const global = env['GIT_CONFIG_GLOBAL'] ? [env['GIT_CONFIG_GLOBAL']] : [path.join(xdg, 'git/config'), path.join(home, '.gitconfig')]
  return [...system, ...global]
}

/** The top and, inside the project, each submodule's and each linked worktree's own top. */
export function workTreesIn(git: GitFacts, search: GitDirSearch, projectDirs: readonly string[]): string[] {
  const linked = search.entries.filter(e => e.linked).flatMap(e => worktreeTop(e.dir) ?? [])
  const subs = search.submodules.filter(sub => lstatKind(path.join(sub, '.git')) !== 'missing')
  // Only trees reached without a link (their host-run files are bound by these paths).
  const trees = [git.topLevel, ...subs, ...linked].filter(tree => isWithinAny(tree, projectDirs) && realPathIs(tree))
  return [...new Set(trees)]
}

function realPathIs(p: string): boolean {
  try {
    return fs.realpathSync(p) === p && lstatKind(p) === 'dir'
  } catch {
    return false
  }
}

/** The config of the repository checked out at `tree` (its git dir's, or its common dir's for a linked worktree). */
export function repoConfigOf(tree: string, git: GitFacts): string | undefined {
  if (tree === git.topLevel) return path.join(git.commonDir, 'config')
  const dotGit = path.join(tree, '.git')
  if (lstatKind(dotGit) === 'dir') return path.join(dotGit, 'config')
  const pointer = gitdirOf(readSmall(dotGit))
  if (pointer === undefined) return undefined
  const gitDir = path.resolve(tree, pointer)
  const common = readSmall(path.join(gitDir, 'commondir'))?.trim()
  return path.join(common === undefined ? gitDir : path.resolve(gitDir, common), 'config')
}

export interface ConfigReader {
  /** The files `configs` make git take programs or config from, when git runs in `tree`. */
  targets(tree: string, configs: readonly (string | undefined)[]): string[]
}

/** One reader per probe: each config file's values are read once, and the include files followed are bounded. */
export function configReader(): ConfigReader {
  const values = new Map<string, ConfigValues>()
  const read = (config: string): ConfigValues => {
    let known = values.get(config)
    if (known === undefined) {
      known = values.size >= MAX_CONFIG_FILES ? { includes: [], programs: [] } : configValues(config)
      values.set(config, known)
    }
    return known
  }
  return {
    targets(tree, configs) {
      const out: string[] = []
      const queue = configs.filter((c): c is string => c !== undefined)
      for (let i = 0; i < queue.length && i < MAX_CONFIG_FILES; i++) {
        const config = queue[i] as string
        const { hooks, includes, programs } = read(config)
        // As written, from the work tree: the kernel walks it (a link, then `..`), protectLink follows.
        if (hooks) out.push(hooks.startsWith('/') ? hooks : `${tree}/${hooks}`)
        for (const program of programs) out.push(program.startsWith('/') ? program : `${tree}/${program}`)
        for (const include of includes) {
          out.push(include)
          if (!queue.includes(include)) queue.push(include) // an include's own includes and hooksPath count too
        }
      }
      return out
    },
  }
}

interface ConfigValues {
  hooks?: string
  includes: string[]
  /** Programs the config runs named by a path (`core.fsmonitor = tools/prog`), relative to the work tree. */
  programs: string[]
}

/** Keys whose value is a command git runs (the first word of it, a path when it holds a slash). */
const PROGRAM_KEYS = '^(core\\.(fsmonitor|sshcommand|pager|editor|askpass)|sequence\\.editor|gpg\\.(.*\\.)?program|credential\\.(.*\\.)?helper|(filter|diff|merge)\\..*\\.(clean|smudge|process|textconv|command|driver)|alias\\..*)$'

/**
 * A config's core.hooksPath, its include files (include.path, includeIf.*.path) and the programs
 * it runs by path (red team, round 31: `core.fsmonitor = tools/prog`, rewritten inside, ran at the
 * host's git status). An include is relative to the folder of the config as git opened it: the
 * kernel walks `conf/link/../x` through the link (round 31), so that folder's real path is used.
 */
function configValues(config: string): ConfigValues {
  const text = readSmall(config)
  const values: ConfigValues = { includes: [], programs: [] }
  if (text === undefined) return values
  if (/hookspath/i.test(text)) {
    const hooks = gitConfig(config, ['--type=path', 'core.hooksPath'])
    if (hooks) values.hooks = hooks
  }
  if (/include/i.test(text)) {
    const base = realFolderOf(config)
    for (const value of valuesOf(gitConfig(config, ['--type=path', '--get-regexp', '^include(if\\..*)?\\.path$']))) values.includes.push(value.startsWith('/') ? value : `${base}/${value}`)
  }
  if (/fsmonitor|command|pager|editor|askpass|program|helper|clean|smudge|process|textconv|driver|alias/i.test(text)) {
    for (const value of valuesOf(gitConfig(config, ['--get-regexp', PROGRAM_KEYS]))) {
      const word = value.replace(/^!/, '').trim().split(/\s+/)[0] ?? ''
      if (word.includes('/') && !word.startsWith('~')) values.programs.push(word)
    }
  }
  return values
}

/** The values of `git config --get-regexp` output (one `key value` a line). */
const valuesOf = (lines: string | undefined): string[] => (lines ?? '').split('\n').flatMap(line => (line.includes(' ') && line.slice(line.indexOf(' ') + 1) !== '' ? [line.slice(line.indexOf(' ') + 1)] : []))

function realFolderOf(file: string): string {
  try {
    return fs.realpathSync(path.dirname(file))
  } catch {
    return path.dirname(file)
  }
}
