// The work trees in the project where the host's git runs (the top, submodules, linked worktrees
// checked out inside), and the files each one's configs make git take programs or more config from:
// core.hooksPath (relative to that work tree) and include files (relative to the config that names
// them, followed into further includes). Read from the files; git itself only for config syntax.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { lstatKind, realPathFrom, realPathOrUndefined } from './fs.js'
import { commandWords, expandHome } from './config-commands.js'
import { keepEntries, keptEntries, type ConfigEntries } from './config-cache.js'
import { commonDirOf, gitConfigRun, gitdirOf, readSmall, worktreeTop, type GitDirSearch, type RemoteSettings, type RemotesOf } from './git-dirs.js'
import { isWithinAny } from '../state/instance.js'
import type { GitFacts } from '../types.js'
import { GIT } from './system-programs.js'

/** Include files followed at most, nested or not, per probe (each may cost a git run). */
const MAX_CONFIG_FILES = 64

/**
 * The configs besides the repository's that git reads, as git finds them: the system's
 * ($GIT_CONFIG_SYSTEM or /etc/gitconfig, unless $GIT_CONFIG_NOSYSTEM) and the user's
 * ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config and ~/.gitconfig; red team, round 31:
 * a hooksPath in the XDG one was never read). A relative core.hooksPath there (`.githooks`) names
 * a folder in every work tree.
 */
export function userGitConfigFiles(home: string, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const system = env['GIT_CONFIG_NOSYSTEM'] ? [] : [env['GIT_CONFIG_SYSTEM'] || '/etc/gitconfig']
  const xdg = env['XDG_CONFIG_HOME'] && path.isAbsolute(env['XDG_CONFIG_HOME']) ? env['XDG_CONFIG_HOME'] : path.join(home, '.config')
  const global = env['GIT_CONFIG_GLOBAL'] ? [env['GIT_CONFIG_GLOBAL']] : [path.join(xdg, 'git/config'), path.join(home, '.gitconfig')]
  return [...system, ...global]
}

/**
 * Those files and the config the environment gives every git of the user's (GIT_CONFIG_COUNT
 * with its GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS: a direnv setup sets
 * them), named by ENVIRONMENT_CONFIG (red team, round 107: an include.path into the project
 * given so was neither read-only nor watched, 3 of 3).
 */
export function userGitConfigs(home: string, env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const given = env['GIT_CONFIG_COUNT'] || env['GIT_CONFIG_PARAMETERS'] || programVariables(env).length > 0
  return [...userGitConfigFiles(home, env), ...(given ? [ENVIRONMENT_CONFIG] : [])]
}

/**
 * The program variables set in `env`, each as a command and as the paths it is (git runs
 * GIT_SSH and GIT_ASKPASS without a shell, a path with a space and all; GIT_EXEC_PATH is put before
 * PATH, folders and all: round 109), and every GIT_TRACE* that names a file (git appends to it:
 * a session that made it a link to ~/.bashrc had the user's next git append there, round 109).
 */
function programVariables(env: Readonly<Record<string, string | undefined>>): [string, string][] {
  const set = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
  const commands = set.filter(([name]) => GIT_PROGRAM_VARIABLES.includes(name))
  // A trace target is a file, or a unix socket (`af_unix:[stream:|dgram:]<path>`; round 110).
  const traces = set.filter(([name]) => name.startsWith('GIT_TRACE')).map(([name, value]) => [name, value.replace(/^af_unix:((stream|dgram):)?/, '')] as [string, string]).filter(([, value]) => value.startsWith('/'))
  const entry = (name: string, value: string): [string, string] => [`environment.${name.toLowerCase()}`, value]
  const paths = [...commands, ...traces].flatMap(([name, value]) => (name === 'GIT_EXEC_PATH' ? value.split(':') : [value]).filter(part => part !== '').map(part => entry(name, quotedWhole(part))))
  return [...commands.map(([name, value]) => entry(name, value)), ...paths]
}

/** `path` as one quoted word for commandWords, which takes a quoted string with a space whole. */
function quotedWhole(path: string): string {
  return path.includes("'") ? (path.includes('"') ? path : `"${path}"`) : `'${path}'`
}

/**
 * Variables whose value git runs, or runs what is in (GIT_EXEC_PATH's git-<command>s,
 * GIT_TEMPLATE_DIR's hooks copied into each new repository), as the configs' program values:
 * red team, round 108: a direnv setup's GIT_EXTERNAL_DIFF=$PWD/tools/difft stayed writable, and the
 * user's next git diff ran the session's, 3 of 3.
 */
const GIT_PROGRAM_VARIABLES = ['GIT_EXTERNAL_DIFF', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_EDITOR', 'VISUAL', 'EDITOR', 'GIT_SEQUENCE_EDITOR', 'GIT_PAGER', 'PAGER', 'GIT_PROXY_COMMAND', 'GIT_EXEC_PATH', 'GIT_TEMPLATE_DIR']

/** Names the config of the environment among config files: no file has this name (it is not absolute). */
export const ENVIRONMENT_CONFIG = "(the environment's GIT_CONFIG_COUNT and GIT_CONFIG_PARAMETERS)"

const ENVIRONMENT_CONFIG_VARIABLES = /^GIT_CONFIG_(COUNT|PARAMETERS|KEY_\d+|VALUE_\d+)$/

/**
 * The environment's config entries: GIT_CONFIG_* as git reads them (git is given those variables
 * alone, and no config file), and each program variable as a value git runs.
 */
function environmentEntries(): ConfigEntries | 'unreadable' {
  const programs = programVariables(process.env)
  if (!process.env['GIT_CONFIG_COUNT'] && !process.env['GIT_CONFIG_PARAMETERS']) return programs
  const entries = configVariableEntries()
  return entries === 'unreadable' ? entries : [...entries, ...programs]
}

function configVariableEntries(): ConfigEntries | 'unreadable' {
  const given = Object.fromEntries(Object.entries(process.env).filter(([name]) => ENVIRONMENT_CONFIG_VARIABLES.test(name)))
  const run = gitConfigRun()
  let out: string
  try {
    out = execFileSync(GIT(), ['config', '--no-includes', '--null', '--list', '--show-scope'], { ...run, env: { ...run.env, ...given }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000, maxBuffer: 8 << 20 })
  } catch {
    return 'unreadable'
  }
  const fields = out.split('\0')
  const entries: [string, string][] = []
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const entry = fields[i + 1] as string
    const newline = entry.indexOf('\n')
    if (fields[i] === 'command' && newline > 0) entries.push([entry.slice(0, newline), entry.slice(newline + 1)])
  }
  return entries
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
    return fs.realpathSync.native(p) === p && lstatKind(p) === 'dir'
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
  let gitDir: string
  try {
    gitDir = realPathFrom(tree, pointer) // as git walks it: `link/..` is not text (red team, round 43)
  } catch {
    return []
  }
  const common = commonDirOf(gitDir)
  return [...(common === undefined ? [] : [path.join(common, 'config')]), path.join(gitDir, 'config.worktree')]
}

export interface ConfigReader {
  /** The files `configs` make git take programs or config from, when git runs in `tree`. */
  targets(tree: string, configs: readonly (string | undefined)[]): string[]
  /** The work trees `configs` set (core.worktree, made absolute from the folder of the config that sets it). */
  workTrees(configs: readonly string[]): string[]
  /** What a repository's config, the user's configs and their includes say of its remotes. */
  remotesOf: RemotesOf
  /** Set when a config could not be read whole, or there were more than it reads: the launch refuses rather than skip one. */
  readonly refusal: string | undefined
}

/** One reader per probe: each config file's values are read once, and the include files followed are bounded. */
export function configReader(home: string): ConfigReader {
  const values = new Map<string, ConfigValues>()
  let refusal: string | undefined
  const reader: ConfigReader = {
    get refusal() {
      return refusal
    },
    targets: (tree, configs) => {
      // As written, from the work tree: the kernel walks it (a link, then `..`), protectLink follows.
      const from = (p: string): string => (p.startsWith('/') ? p : `${tree}/${p}`)
      const known = visit(configs)
      return [...known.flatMap(k => [...(k.hooks ? [from(k.hooks)] : []), ...k.programs.map(from), ...k.includes]), ...extPrograms(known, home).map(from)]
    },
    workTrees: configs => visit(configs).flatMap(known => (known.worktree === undefined ? [] : [known.worktree])),
    remotesOf: repoConfig => {
      const all = visit([repoConfig, ...userGitConfigs(home)]).map(known => known.remotes)
      return { urls: all.flatMap(r => r.urls), names: all.flatMap(r => r.names), used: all.flatMap(r => r.used), rewrites: all.flatMap(r => r.rewrites) }
    },
  }
  // Each config, then the includes it names (their own includes count too), read once.
  const visit = (configs: readonly (string | undefined)[]): ConfigValues[] => {
    const queue = configs.filter((c): c is string => c !== undefined)
    const out: ConfigValues[] = []
    for (let i = 0; i < queue.length; i++) {
      const config = queue[i] as string
      let known = values.get(config)
      if (known === undefined) {
        if (values.size >= MAX_CONFIG_FILES) {
          refusal ??= `more than ${MAX_CONFIG_FILES} git config files to read (${config} and the includes before it), and any of them could make git run a file in the project; include fewer files, then rerun claudebox`
          break
        }
        const read = configValues(config, home)
        if (read === 'unreadable') {
          refusal ??= `git reads the config ${config}, and claudebox cannot (larger than 1 MiB, not a regular file, or git could not parse it in 5 s), so it cannot see what it makes git run in the project; make it a smaller regular file, then rerun claudebox`
          break
        }
        known = read
        values.set(config, known)
      }
      out.push(known)
      for (const include of known.includes) if (!queue.includes(include)) queue.push(include)
    }
    return out
  }
  return reader
}

interface ConfigValues {
  hooks?: string
  includes: string[]
  /** What its values may run, named by a path (`core.fsmonitor = tools/prog`, `sh tools/x`, an `ext::` URL's command), relative to the work tree. */
  programs: string[]
  /** core.worktree, absolute (a relative one is from the config's folder, the git dir). */
  worktree?: string
  /** Whether a remote's helper is `ext` (remote.*.vcs): its URL is then a command. */
  extVcs?: boolean
  remotes: RemoteSettings
}

/**
 * Keys whose values are data git never runs (URLs, refs, names, settings): their words are not
 * taken for programs. Every other value may be a command (core.fsmonitor, diff.external,
 * remote.*.receivepack, pager.*, gpg.ssh.defaultKeyCommand, submodule.*.update=!..., aliases ...).
 * Sets, not one regular expression: V8 compiles a pattern this large at its first use in every
 * process, ~0.4 ms of each launch (test/unit/git-config-keys.test.ts holds the two equal).
 */
export function isDataKey(key: string): boolean {
  const dot = key.indexOf('.')
  if (dot < 0) return false
  const section = key.slice(0, dot)
  if (DATA_SECTIONS.has(section) || DATA_KEYS.has(key)) return true
  // remote.<name>.url, submodule.<name>.path: a name of any text, even empty or dotted.
  const last = key.lastIndexOf('.')
  const named = section === 'remote' ? REMOTE_DATA : section === 'submodule' ? SUBMODULE_DATA : undefined
  return named !== undefined && last > dot && named.has(key.slice(last + 1))
}

/** Sections all of whose keys are data, with or without a subsection. */
const DATA_SECTIONS = new Set(['branch', 'url', 'http', 'user', 'author', 'committer', 'safe', 'includeif', 'extensions', 'gc', 'pack', 'fetch', 'pull', 'push', 'rebase', 'color', 'log', 'status', 'advice', 'maintenance', 'format', 'blame'])
const CORE_DATA = ['worktree', 'excludesfile', 'attributesfile', 'hookspath', 'bare', 'filemode', 'repositoryformatversion', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks', 'autocrlf', 'eol', 'abbrev', 'compression']
const DIFF_DATA = ['algorithm', 'renames', 'colormoved', 'mnemonicprefix', 'noprefix', 'submodule']
/** Single keys that are data (no subsection). */
const DATA_KEYS = new Set(['init.defaultbranch', 'commit.template', 'include.path', 'merge.conflictstyle', ...CORE_DATA.map(k => `core.${k}`), ...DIFF_DATA.map(k => `diff.${k}`)])
const REMOTE_DATA = new Set(['url', 'pushurl', 'fetch', 'push', 'mirror', 'tagopt', 'prune', 'proxy'])
const SUBMODULE_DATA = new Set(['url', 'path', 'branch', 'active', 'ignore'])

/**
 * Keys whose value is a file git trusts or writes, named with or without a slash (red team, round
 * 112: `gpg.ssh.allowedSignersFile = allowed_signers`, writable inside, let a session's key verify
 * as the maintainer's, 3 of 3): protected as a program's file is. A literal key (`key::...`, a key
 * with its type) names none.
 */
const FILE_KEYS = /^(gpg\.ssh\.(allowedsignersfile|revocationfile)|user\.signingkey|http\.(.+\.)?(cookiefile|sslcert|sslkey|sslcainfo|sslcapath|proxysslcert|proxysslkey|proxysslcainfo)|core\.(excludesfile|attributesfile)|commit\.template|blame\.ignorerevsfile|mailmap\.file)$/

/**
 * A config's core.hooksPath, its include files (include.path, includeIf.*.path) and the files its
 * other values may run, from git's own reading of it (`git config --list`: quotes, escapes,
 * continuation lines and keys on a section's line as git reads them; red team, round 33, found a
 * text scan splitting where git joins). An include is relative to the folder of the config as git
 * opened it: the kernel walks `conf/link/../x` through the link (round 31), so that folder's real
 * path is used.
 */
function configValues(config: string, home: string): ConfigValues | 'unreadable' {
  const values: ConfigValues = { includes: [], programs: [], remotes: { urls: [], names: [], used: [], rewrites: [] } }
  const entries = configEntries(config)
  if (entries === 'unreadable') return entries
  for (const [key, value] of entries) {
    addRemoteSetting(values.remotes, key, value)
    const ext = extCommand(urlOf(key, value))
    if (ext !== undefined) values.programs.push(...commandWords(ext, home))
    if (/^remote\..+\.vcs$/.test(key) && value === 'ext') values.extVcs = true
    if (key === 'core.worktree' && value !== '') values.worktree = value.startsWith('/') ? value : `${path.dirname(config)}/${value}`
    if (key === 'core.hookspath') values.hooks = expandHome(value, home)
    else if (FILE_KEYS.test(key) && !/^key::|\s/.test(value)) values.programs.push(expandHome(value, home))
    else if (key === 'include.path' || /^includeif\..*\.path$/.test(key)) {
      const include = expandHome(value, home)
      values.includes.push(include.startsWith('/') ? include : `${realFolderOf(config)}/${include}`)
    } else if (!isDataKey(key)) values.programs.push(...commandWords(value, home))
  }
  return values
}

/**
 * The URL an entry names that extPrograms does not take: a submodule's, or the base a rewrite
 * (insteadOf) makes, as it stands. A remote's URL is taken there, with every rewrite of it.
 */
function urlOf(key: string, value: string): string | undefined {
  if (/^submodule\..+\.url$/.test(key)) return value
  return /^url\.(.+)\.(insteadof|pushinsteadof)$/.exec(key)?.[1]
}

/**
 * The command an `ext::` URL runs (git-remote-ext, once protocol.ext.allow lets it: round 73, a
 * partial clone's lazy fetch at the top's git status ran it): its words, `% ` a space within one,
 * `%%` a percent sign, `%s` `%S` `%G...` what git puts there.
 */
function extCommand(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('ext::')) return undefined
  return url.slice('ext::'.length).replace(/%(.)/g, (_whole, c: string) => (c === ' ' ? ' ' : c === '%' ? '%' : 'x'))
}

/**
 * What `ext::` URLs run, as git makes each remote's URL: every URL (a remote's, or a name used as
 * one) as written and as each insteadOf whose prefix it starts with rewrites it, across all the
 * configs read; with `remote.*.vcs = ext`, every URL is a command (round 74: `zz:sh /tmp/x` with
 * `url."ext::".insteadOf = zz:`, and the vcs, got past the look at each value alone).
 */
function extPrograms(known: readonly ConfigValues[], home: string): string[] {
  const urls = known.flatMap(k => [...k.remotes.urls, ...k.remotes.used])
  const rewrites = known.flatMap(k => k.remotes.rewrites)
  const vcsExt = known.some(k => k.extVcs === true)
  const rewritten = urls.flatMap(url => [url, ...rewrites.filter(r => url.startsWith(r.prefix)).map(r => `${r.base}${url.slice(r.prefix.length)}`)])
  return rewritten.flatMap(url => extCommand(url) ?? (vcsExt ? url : [])).flatMap(command => commandWords(command, home))
}

/** What one entry says of remotes: a configured remote's name and URLs, a remote named where git also takes a path, a URL rewrite. */
function addRemoteSetting(remotes: RemoteSettings, key: string, value: string): void {
  const remote = /^remote\.(.+)\.([a-z]+)$/.exec(key)
  if (remote !== null) {
    remotes.names.push(remote[1] as string)
    if (remote[2] === 'url' || remote[2] === 'pushurl') remotes.urls.push(value)
  } else if (key === 'remote.pushdefault' || /^branch\..+\.(remote|pushremote)$/.test(key)) remotes.used.push(value)
  const rewrite = /^url\.(.+)\.(insteadof|pushinsteadof)$/.exec(key)
  if (rewrite !== null) remotes.rewrites.push({ prefix: value, base: rewrite[1] as string, push: rewrite[2] === 'pushinsteadof' })
}

/**
 * A config's entries as git reads it; none when there is no such file. One that is there but
 * cannot be read whole (over 1 MiB, a FIFO that would block git, git failing on it) is
 * 'unreadable': skipping it silently let a padded ~/.gitconfig's fsmonitor run (red team, round 34).
 */
function configEntries(config: string): ConfigEntries | 'unreadable' {
  if (config === ENVIRONMENT_CONFIG) return environmentEntries()
  // GIT_CONFIG_GLOBAL=/dev/null, the way to run git without one: git reads it as empty (round 109:
  // every launch was refused, /dev/null being no regular file).
  if (statKindOf(config) === 'missing' || realPathOrUndefined('/', config) === '/dev/null') return []
  const text = readSmall(config)
  if (text === undefined) return 'unreadable'
  const kept = keptEntries(config, text)
  if (kept !== undefined) return kept
  let out: string
  try {
    // The text read, on stdin: what git makes of it is what is kept for it (--file follows no includes).
    out = execFileSync(GIT(), ['config', '--no-includes', '--file', '-', '--null', '--list'], { ...gitConfigRun(), input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'], timeout: 5_000, maxBuffer: 8 << 20 })
  } catch {
    return 'unreadable'
  }
  const entries = out.split('\0').flatMap(entry => {
    const newline = entry.indexOf('\n')
    // git prints section and key in lower case and a subsection as written (a remote's name, a url base).
    return newline > 0 ? [[entry.slice(0, newline), entry.slice(newline + 1)] as [string, string]] : []
  })
  keepEntries(config, text, entries)
  return entries
}

/** Whether `file` is there, through links (configs are read through them); a dangling link is missing, as to git. */
function statKindOf(file: string): 'missing' | 'present' {
  try {
    return fs.statSync(file, { throwIfNoEntry: false }) === undefined ? 'missing' : 'present'
  } catch {
    return 'present' // there, but not to be looked at (EACCES): git would fail on it too, and it is refused
  }
}

function realFolderOf(file: string): string {
  try {
    return fs.realpathSync.native(path.dirname(file)) // native: the JavaScript one takes `link/..` as text
  } catch {
    return path.dirname(file)
  }
}
