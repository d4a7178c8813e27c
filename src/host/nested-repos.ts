// A nested repository (a `.git` below a work tree's top, or a folder shaped as a git dir) as git
// takes it, written out as text: where its `.git` leads (every link and `gitdir:` on the way), its
// common dir, and what git reads or runs there (HEAD, config, config.worktree, the hooks, the
// folders and files its config names), each file by its identity and change time. The text of each
// is kept from one session's end to the next ($CLAUDEBOX_HOME/nested/<instance id>.json, out of
// every sandbox), and a repository whose text changed is reported however the change was made (red
// team, round 46: a config behind a symlink, a commondir's config, a link re-pointed in the middle
// of a chain, each changed in a second session that printed nothing). A repository is reported when
// its text differs from the one kept, when it has none while a record was kept (it appeared, by a
// rename say, which changes no time inside it: round 47), and whenever anything of it changed
// during this session, record or not (round 47: two sessions of the project at once each took the
// other's change for an old one). A file's change time cannot be set back.
import fs from 'node:fs'
import path from 'node:path'
import { sha256Hex } from '../sha256.js'
import { writeHomeFile } from './atomic-write.js'
import { entryIdentity, lstatKind, namesUpTo, readJsonObject, realPathFrom } from './fs.js'
import { gitConfig, gitdirOf, isCommondirPlaceholder, readSmall } from './git-dirs.js'
import { resolveChain, type LinkChain } from './link-targets.js'
import { isWithin, isWithinAny } from '../state/instance.js'

export interface NestedRepo {
  /** The git dir git takes (its index is checked) and its common dir. */
  gitDirs: string[]
  /** Where it leads and what git takes there, as text. */
  text: string
  /** That text's SHA-256, which the record keeps. */
  digest: string
  /** The SHA-256 of that text without the lines of HEADs: what git runs from it (a commit changes HEAD, not this). */
  runsDigest: string
  /**
   * Its `.git`, or its commondir, leads through /proc or /dev, whose links differ for each process
   * (red team, round 46: `gitdir: /proc/self/cwd/../.git/x` led the launcher elsewhere than git),
   * or names a path that is not UTF-8: where git goes cannot be known here. The file to move aside.
   */
  magic?: string | undefined
  /**
   * Not all of it could be looked at (a hooks folder of more entries than are listed, a config too
   * large to read or naming too many, a program named through /proc): reported at every session.
   */
  unlisted: boolean
  /** The newest change time among its `.git`, the links on the way and the files noted (ms). */
  newestMs: number
  /**
   * The same among what makes git run something there: the links on the way and the files noted
   * but HEAD (its config, hooks, what its config names), not its `.git` folder itself, whose time
   * any git run inside changes (a `git add` there).
   */
  runsNewestMs: number
  /** The change and birth time of each of those (ms): one in an earlier session's time may be that session's (session-times.ts). */
  runsTimes: number[]
}

/**
 * The files and folders its config names for the repository's work tree (hooksPath, includes,
 * programs), and why that is not all of them, when it is not (a config too large to read, too many).
 */
export type Configured = (tree: string, repoConfigs: string[]) => { targets: string[]; problem: string | undefined }

const MAX_LISTED = 256
/** The files and folders a repository's configs name that are looked at, and the lines of its text, at most. */
const MAX_TARGETS = 256
const MAX_LINES = 4_096
/** A path through /proc or /dev: another file to each process that opens it (round 46, round 48). */
export const MAGIC = /^\/(proc|dev)(\/|$)/

/**
 * `entry` is the repository's `.git` (`isGitDir` false) or a folder shaped as a git dir (true), in
 * the work tree `tree`.
 */
export function describeNested(entry: string, tree: string, isGitDir: boolean, configured: Configured, budget = { lines: MAX_LINES }): NestedRepo {
  const [lines, runsLines]: [string[], string[]] = [[], []]
  const state = { unlisted: false, magic: undefined as string | undefined, newestMs: changeTime(entry), runsTimes: [] as number[] }
  const walk = (start: string, magicAt: string): LinkChain => {
    const chain = resolveChain(start)
    for (const link of chain.links) {
      for (const kept of [lines, runsLines]) kept.push(`link ${link.path} -> ${link.text}`)
      state.newestMs = Math.max(state.newestMs, changeTime(link.path))
      state.runsTimes.push(changeTime(link.path), bornTime(link.path))
    }
    if ([start, ...chain.folders, ...chain.links.map(l => l.path), chain.end?.path ?? ''].some(p => MAGIC.test(p))) state.magic ??= magicAt
    return chain
  }
  /** `runs`: whether a change of it can make git run something (all but a git dir's HEAD). */
  const note = (file: string, runs = true): void => {
    // Bounded: a config naming 20,000 folders of 255 files each grew the text past V8's longest string (round 49).
    if (lines.length >= MAX_LINES || budget.lines <= 0) {
      state.unlisted = true
      return
    }
    budget.lines--
    const { text, ctimeMs, bornMs } = signature(file)
    for (const kept of runs ? [lines, runsLines] : [lines]) kept.push(`${file} ${text}`)
    state.newestMs = Math.max(state.newestMs, ctimeMs)
    if (runs) state.runsTimes.push(ctimeMs, bornMs)
  }
  const markMagic = (at: string): void => void (state.magic ??= at)
  const gitDir = isGitDir ? entry : gitDirOf(entry, walk, note, markMagic)
  const common = gitDir === undefined ? undefined : commonDirOf(gitDir, walk, note, markMagic)
  for (const dir of new Set([gitDir, common])) {
    if (dir !== undefined) for (const name of ['HEAD', 'config', 'config.worktree']) note(`${dir}/${name}`, name !== 'HEAD')
  }
  if (common !== undefined && gitDir !== undefined) {
    const configs = [`${common}/config`, `${gitDir}/config.worktree`]
    // A relative program or hooksPath runs from the work tree, which core.worktree may move (round 47).
    const trees = [tree, ...configs.flatMap(config => movedWorkTree(config, gitDir))]
    const named = trees.map(t => configured(t, configs))
    for (const problem of named.map(n => n.problem)) {
      if (problem === undefined) continue
      state.unlisted = true
      lines.push(`not all read: ${problem}`)
    }
    const all = named.flatMap(n => n.targets)
    if (all.length > MAX_TARGETS) state.unlisted = true
    const targets = all.slice(0, MAX_TARGETS)
    // A path through /proc or /dev means another file to git, run from another folder (round 48: `core.fsmonitor = /proc/self/cwd/fsm`).
    if (targets.some(t => MAGIC.test(t))) state.unlisted = true
    for (const dir of new Set([`${common}/hooks`, ...targets])) {
      note(dir)
      const names = namesIn(dir)
      if (names === undefined) state.unlisted = true
      else for (const name of names) note(path.join(dir, name))
    }
  }
  const text = lines.join('\n')
  return { gitDirs: [...new Set([gitDir, common].filter(d => d !== undefined))], text, digest: sha256Hex(text), runsDigest: sha256Hex(`${runsLines.join('\n')}\n${state.unlisted}`), runsNewestMs: Math.max(0, ...state.runsTimes), ...state }
}

/** Only the git dir git takes from a nested `.git` (or the folder itself): for the repositories past the bound. */
export function nestedGitDirOnly(entry: string, isGitDir: boolean): string | undefined {
  return isGitDir ? entry : gitDirOf(entry, start => resolveChain(start), () => {}, () => {})
}

/**
 * The `commondir` file of `gitDir` and the common dir it leads to as git takes it (`to` undefined
 * when it leads nowhere yet); undefined when the git dir has none.
 */
export function namedCommonDir(gitDir: string): { file: string; to: string | undefined } | undefined {
  const file = `${gitDir}/commondir`
  if (lstatKind(file) === 'missing' || isCommondirPlaceholder(file)) return undefined
  return { file, to: commonDirOf(gitDir, start => resolveChain(start), () => {}, () => {}) }
}

/**
 * The git dir a nested `.git` leads to: where a symlink leads, when that is a folder (git follows
 * it: red team, round 45, `sub/.git -> ../.git/x`); or the `gitdir:` of the file it is or leads to,
 * relative to the `.git`'s own folder, walked as the kernel walks it (`x/..` is the parent of where
 * the link `x` leads: round 43). Undefined when it leads nowhere (yet), or loops, where git finds
 * no repository either.
 */
function gitDirOf(dotGit: string, walk: (start: string, magicAt: string) => LinkChain, note: (file: string) => void, markMagic: (at: string) => void): string | undefined {
  const end = walk(dotGit, dotGit).end
  if (end?.kind === 'dir') return end.path
  if (end?.kind !== 'file') return undefined
  note(end.path) // its text is the pointer
  const pointer = utf8(gitdirOf(readSmall(end.path, 'latin1')))
  if (pointer === 'not UTF-8') markMagic(dotGit)
  if (pointer === undefined || pointer === 'not UTF-8') return undefined
  const target = walk(pointer.startsWith('/') ? pointer : `${path.dirname(dotGit)}/${pointer}`, dotGit).end
  return target?.kind === 'dir' ? target.path : undefined
}

/** The work tree a config's core.worktree names (from the git dir, walked as the kernel walks it), if it names one. */
function movedWorkTree(config: string, gitDir: string): string[] {
  if (!/worktree/i.test(readSmall(config) ?? '')) return []
  const value = gitConfig(config, ['core.worktree'])
  if (value === undefined || value === '') return []
  try {
    return [realPathFrom(gitDir, value)]
  } catch {
    return []
  }
}

/** The common dir git takes for `gitDir` (its `commondir`, as git reads it), where config and hooks are. */
function commonDirOf(gitDir: string, walk: (start: string, magicAt: string) => LinkChain, note: (file: string) => void, markMagic: (at: string) => void): string | undefined {
  // A placeholder (a launch makes one in each git dir of the project, new each time) is no commondir to git.
  if (isCommondirPlaceholder(`${gitDir}/commondir`)) return gitDir
  note(`${gitDir}/commondir`)
  const text = utf8(readSmall(`${gitDir}/commondir`, 'latin1')?.replace(/[\r\n]+$/, ''))
  if (text === undefined) return gitDir
  if (text === 'not UTF-8') {
    markMagic(`${gitDir}/commondir`)
    return undefined
  }
  const end = walk(text.startsWith('/') ? text : `${gitDir}/${text}`, `${gitDir}/commondir`).end
  return end?.kind === 'dir' ? end.path : undefined
}

/** Text read as latin1 (a character per byte), as UTF-8 again; 'not UTF-8' when its bytes are not (git would take them as they are). */
function utf8(latin1: string | undefined): string | undefined {
  if (latin1 === undefined) return undefined
  const bytes = Buffer.from(latin1, 'latin1')
  const text = bytes.toString()
  return Buffer.from(text).equals(bytes) ? text : 'not UTF-8'
}

/** A file as git reaches it (through links): its kind, identity, size, times and mode. */
function signature(file: string): { text: string; ctimeMs: number; bornMs: number } {
  let st: fs.Stats
  try {
    st = fs.statSync(file)
  } catch {
    return { text: 'missing', ctimeMs: changeTime(file), bornMs: bornTime(file) } // a link that leads nowhere still has a time
  }
  const kind = st.isFile() ? 'file' : st.isDirectory() ? 'folder' : 'special'
  return { text: `${kind} ${st.dev}:${st.ino} ${st.size} ${st.ctimeMs} ${st.mtimeMs} ${st.mode}`, ctimeMs: Math.max(st.ctimeMs, changeTime(file)), bornMs: Math.max(st.birthtimeMs, bornTime(file)) }
}

/** The change time of `p` itself (a link's own), 0 when missing. */
function changeTime(p: string): number {
  try {
    return fs.lstatSync(p).ctimeMs
  } catch {
    return 0
  }
}

/**
 * When `p` itself was made (statx's birth time; 0 where the file system keeps none): no rename,
 * link or write changes it (red team, round 132: a change time moved out of every session's by
 * the host's git checkout of a hard link; an inode a session freed and got again).
 */
export function bornTime(p: string): number {
  try {
    return fs.lstatSync(p).birthtimeMs
  } catch {
    return 0
  }
}

/**
 * The change and birth times of a nested repository's `.git` (`entry`) and of the folders that make
 * its way to each of its git dirs: each git dir and the folders above it, up to where its path parts
 * from the `.git`'s folder (for `a/sub/.git` -> `../.git/modules/dep`: `a/.git`, `a/.git/modules`,
 * `a/.git/modules/dep`). Putting a folder there (a rename, a new one) changes its time, which none of
 * the host's git work at the top moves again, unlike a file's (red team, round 133: old folders and
 * files of the user's, renamed and hard-linked into a git dir in one session, their files' times
 * moved out of every session's by the host's git checkout .). Only those within `inside`, where a
 * session could have put them: the host's own work changes the times of folders elsewhere.
 */
export function wayTimes(entry: string, gitDirs: readonly string[], inside: readonly string[]): number[] {
  let from = path.dirname(entry)
  try {
    from = fs.realpathSync(from)
  } catch {
    // gone: the way is looked at from where it was named
  }
  const folders = new Set([entry])
  for (const dir of gitDirs) for (let f = dir; !isWithin(from, f); f = path.dirname(f)) folders.add(f)
  return [...folders].filter(f => isWithinAny(f, inside)).flatMap(f => {
    try {
      const st = fs.lstatSync(f)
      return [st.ctimeMs, st.birthtimeMs]
    } catch {
      return []
    }
  })
}

/** A folder's names, sorted; none when it is missing or no folder; undefined when it holds more than are listed. */
function namesIn(dir: string): string[] | undefined {
  // Read one at a time: a hooks folder of 100,000 entries must not be listed whole (red team, round 46).
  const names = namesUpTo(dir, { entries: MAX_LISTED + 1 })
  return names.length > MAX_LISTED ? undefined : names.sort()
}

/** The texts kept at the last session's end, by entry; this session's, written at its end. */
export interface NestedRecord {
  /** Whether there was a record (a first session, or one after --gc or a lost file, has none). */
  known: boolean
  previous(entry: string): string | undefined
  /** The device and inode its `.git` had then (none in a record written before they were kept). */
  previousIdentity(entry: string): string | undefined
  /**
   * Whether the `.git` at `entry`, as `repo` is now, is the one kept then, with what git runs from
   * it as it was, and kept as vouched for: a session's end that found its way to its git dirs put
   * in place during a session vouches for it only when the end before vouched for it, as it is
   * (wayTimes). Its HEAD may differ: a branch Claude checked out there runs nothing.
   */
  vouchedFor(entry: string, repo: NestedRepo): boolean
  /** Whether the `.git` at `entry` is the one kept then, vouched for, whatever git ran from it (for one not looked into). */
  vouchedAt(entry: string): boolean
  keep(entry: string, repo: NestedRepo, vouched: boolean): void
  save(): void
}

/** The record's word for a repository whose way to its git dirs no session put in place, or that was vouched for before, with what git ran from it then. */
const VOUCHED = 'vouched:'

/**
 * Each repository is kept as the SHA-256 of its text: a record of texts grew past what is read back
 * (red team, round 48: 17 MB of long paths and hooks, read as no record, turned off the rule for a
 * repository that appeared). A record file that is there but cannot be read counts as a record in
 * which no repository is: each is reported once.
 */
export function nestedRecord(file: string | undefined): NestedRecord {
  const known = file !== undefined && lstatKind(file) !== 'missing'
  const kept = (known ? readJsonObject(file, 16 << 20) : undefined) ?? {} // damaged: known, and empty
  const now: Record<string, string> = {}
  // `digest dev:ino [vouched:<runsDigest>]`, as kept at the last end.
  const fieldsOf = (entry: string): (string | undefined)[] => (typeof kept[entry] === 'string' ? kept[entry].split(' ') : [])
  /** The vouch kept for the `.git` at `entry`, when it is still the same `.git`. */
  const vouchedWord = (entry: string): string | undefined => {
    const [, identity, vouched] = fieldsOf(entry)
    return identity === entryIdentity(entry) ? vouched : undefined
  }
  return {
    known,
    // `digest dev:ino`: the identity tells a `.git` swapped in at a path the record holds (red team, round 131).
    previous: entry => fieldsOf(entry)[0],
    previousIdentity: entry => fieldsOf(entry)[1],
    vouchedFor: (entry, repo) => vouchedWord(entry) === `${VOUCHED}${repo.runsDigest}`,
    vouchedAt: entry => vouchedWord(entry)?.startsWith(VOUCHED) === true,
    keep(entry, repo, vouched) {
      now[entry] = `${repo.digest} ${entryIdentity(entry) ?? ''}${vouched ? ` ${VOUCHED}${repo.runsDigest}` : ''}`
    },
    save() {
      // Unwritten, the next session has no record: it reports what changed during it only.
      if (file !== undefined && JSON.stringify(now) !== JSON.stringify(kept)) writeHomeFile(file, JSON.stringify(now))
    },
  }
}
