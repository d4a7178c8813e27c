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

/** The user's own git configs: a relative core.hooksPath there (`.githooks`) names a folder in every work tree. */
export const userGitConfigs = (home: string): string[] => [path.join(home, '.gitconfig'), path.join(home, '.config/git/config')]

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
  const values = new Map<string, { hooks?: string; includes: string[] }>()
  const read = (config: string): { hooks?: string; includes: string[] } => {
    let known = values.get(config)
    if (known === undefined) {
      known = values.size >= MAX_CONFIG_FILES ? { includes: [] } : configValues(config)
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
        const { hooks, includes } = read(config)
        if (hooks) out.push(path.resolve(tree, hooks))
        for (const include of includes) {
          out.push(include)
          if (!queue.includes(include)) queue.push(include) // an include's own includes and hooksPath count too
        }
      }
      return out
    },
  }
}

/** A config's core.hooksPath and its include files (include.path, includeIf.*.path, relative to it). */
function configValues(config: string): { hooks?: string; includes: string[] } {
  const text = readSmall(config)
  if (text === undefined || !/hookspath|include/i.test(text)) return { includes: [] }
  const hooks = gitConfig(config, ['--type=path', 'core.hooksPath']) || undefined
  const lines = gitConfig(config, ['--type=path', '--get-regexp', '^include(if\\..*)?\\.path$']) ?? ''
  const includes = lines.split('\n').flatMap(line => {
    const value = line.slice(line.indexOf(' ') + 1)
    return line.includes(' ') && value !== '' ? [path.resolve(path.dirname(config), value)] : []
  })
  return { ...(hooks === undefined ? {} : { hooks }), includes }
}
