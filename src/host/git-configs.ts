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

/**
 * The configs of the repository checked out at `tree`: its common dir's, and its own git dir's
 * config.worktree, which git reads with extensions.worktreeConfig (red team, round 32: a
 * `git config --worktree core.hooksPath hk` went unread; reading it without the extension only
 * protects more).
 */
export function repoConfigsOf(tree: string, git: GitFacts): string[] {
  if (tree === git.topLevel) return [path.join(git.commonDir, 'config'), path.join(git.gitDir, 'config.worktree')]
  const dotGit = path.join(tree, '.git')
  if (lstatKind(dotGit) === 'dir') return [path.join(dotGit, 'config'), path.join(dotGit, 'config.worktree')]
  const pointer = gitdirOf(readSmall(dotGit))
  if (pointer === undefined) return []
  const gitDir = path.resolve(tree, pointer)
  const common = readSmall(path.join(gitDir, 'commondir'))?.trim()
  return [path.join(common === undefined ? gitDir : path.resolve(gitDir, common), 'config'), path.join(gitDir, 'config.worktree')]
}

export interface ConfigReader {
  /** The files `configs` make git take programs or config from, when git runs in `tree`. */
  targets(tree: string, configs: readonly (string | undefined)[]): string[]
  /** Paths named anywhere in those configs (`sh tools/x`, `-c core.fsmonitor=tools/x`): protected when they exist. */
  mentioned(tree: string, configs: readonly (string | undefined)[]): string[]
  /** Set when there were more config files than it reads: the launch refuses rather than skip one. */
  readonly overflow: string | undefined
}

/** One reader per probe: each config file's values are read once, and the include files followed are bounded. */
export function configReader(home: string): ConfigReader {
  const values = new Map<string, ConfigValues>()
  const reader = {
    overflow: undefined as string | undefined,
    targets: (tree: string, configs: readonly (string | undefined)[]): string[] => walk(tree, configs).flatMap(v => v.targets),
    mentioned: (tree: string, configs: readonly (string | undefined)[]): string[] => walk(tree, configs).flatMap(v => v.mentioned),
  }
  // Each config, then the includes it names (their own includes, hooksPath and programs count too).
  const walk = (tree: string, configs: readonly (string | undefined)[]): { targets: string[]; mentioned: string[] }[] => {
    const queue = configs.filter((c): c is string => c !== undefined)
    const out: { targets: string[]; mentioned: string[] }[] = []
    for (let i = 0; i < queue.length; i++) {
      const config = queue[i] as string
      let known = values.get(config)
      if (known === undefined) {
        if (values.size >= MAX_CONFIG_FILES) {
          reader.overflow ??= `more than ${MAX_CONFIG_FILES} git config files to read (${config} and the includes before it), and any of them could make git run a file in the project; include fewer files, then rerun claudebox`
          break
        }
        known = configValues(config, home)
        values.set(config, known)
      }
      // As written, from the work tree: the kernel walks it (a link, then `..`), protectLink follows.
      const from = (p: string): string => (p.startsWith('/') ? p : `${tree}/${p}`)
      out.push({ targets: [...(known.hooks ? [from(known.hooks)] : []), ...known.programs.map(from), ...known.includes], mentioned: known.mentioned.map(from) })
      for (const include of known.includes) if (!queue.includes(include)) queue.push(include)
    }
    return out
  }
  return reader
}

interface ConfigValues {
  hooks?: string
  includes: string[]
  /** Programs the config runs named by a path (`core.fsmonitor = tools/prog`), relative to the work tree. */
  programs: string[]
  /** Every path-like word in it (with a slash), `~` and $HOME expanded: what a command there may run. */
  mentioned: string[]
}

/** Keys whose value is a command git runs (the first word of it, a path when it holds a slash). */
const PROGRAM_KEYS = '^(core\\.(fsmonitor|sshcommand|pager|editor|askpass)|sequence\\.editor|gpg\\.(.*\\.)?program|credential\\.(.*\\.)?helper|(filter|diff|merge)\\..*\\.(clean|smudge|process|textconv|command|driver)|alias\\..*)$'

/**
 * A config's core.hooksPath, its include files (include.path, includeIf.*.path) and the programs
 * it runs by path (red team, round 31: `core.fsmonitor = tools/prog`, rewritten inside, ran at the
 * host's git status). An include is relative to the folder of the config as git opened it: the
 * kernel walks `conf/link/../x` through the link (round 31), so that folder's real path is used.
 */
function configValues(config: string, home: string): ConfigValues {
  const text = readSmall(config)
  const values: ConfigValues = { includes: [], programs: [], mentioned: [] }
  if (text === undefined) return values
  values.mentioned = pathWords(text, home)
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
      const word = expandHome(value.replace(/^!/, '').trim().split(/\s+/)[0] ?? '', home)
      if (word.includes('/')) values.programs.push(word)
    }
  }
  return values
}

/**
 * The words of a config that could name a file a command runs (red team, round 32: `sh tools/x`,
 * `"tools/x"`, `$HOME/p/tools/x`, `~/p/tools/x`, `-c core.fsmonitor=tools/x` in an alias, keys
 * such as diff.external or remote.*.receivepack): any word with a slash in a value, read from the
 * text without git (backslash escapes, comment lines and section headers left out); only those
 * that exist in the project are kept.
 */
function pathWords(text: string, home: string): string[] {
  const values = text.split('\n').filter(line => !/^\s*[#;[]/.test(line))
  const words = values.join('\n').split(/[\s\\"'=;,()!`]+/).map(word => expandHome(word, home))
  return [...new Set(words.filter(word => word.includes('/') && !word.includes('://') && !/[*$]/.test(word)))]
}

const expandHome = (word: string, home: string): string => word.replace(/^(~|\$HOME|\$\{HOME\})(?=\/)/, home)

/** The values of `git config --get-regexp` output (one `key value` a line). */
const valuesOf = (lines: string | undefined): string[] => (lines ?? '').split('\n').flatMap(line => (line.includes(' ') && line.slice(line.indexOf(' ') + 1) !== '' ? [line.slice(line.indexOf(' ') + 1)] : []))

function realFolderOf(file: string): string {
  try {
    return fs.realpathSync(path.dirname(file))
  } catch {
    return path.dirname(file)
  }
}
