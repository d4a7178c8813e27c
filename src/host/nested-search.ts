// The search at a session's end for what the host's git would take from the project besides its
// own git dirs: nested repositories the session made or changed (their configs and hooks run where
// git is used), FIFOs and sockets git would hang on, links in git dirs git would write through,
// folders left writable for others. Every work tree, the git dirs outside them and the instance,
// through the folder cache (folder-cache.ts).
import fs from 'node:fs'
import path from 'node:path'
import { changedSince, entryIdentity, lstatKind } from './fs.js'
import type { Judge, UsersRepo } from './gitlink-watch.js'
import type { ModeGuard } from './mode-guard.js'
import { configReader, userGitConfigs } from './git-configs.js'
import { resolveChain } from './link-targets.js'
import { outOfOthersReach } from './out-of-reach.js'
import { listFolder, type EntryKind, type FolderCache, type Listing } from './folder-cache.js'
import { bornTime, describeNested, MAGIC, namedCommonDir, nestedGitDirOnly, nestedRecord, wayTimes, type Configured, type NestedRecord, type NestedRepo } from './nested-repos.js'
import { named } from './report-list.js'
import { reportedBefore, reportedFile } from './reported-repos.js'
import { sessionTimes, sessionTimesFile } from './session-times.js'
import { WRITTEN_THROUGH } from './write-through-watch.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { isWithin, isWithinAny } from '../state/instance.js'
import type { GitWatchSpec } from '../types.js'

/** How many folders (and names searched for) the after-session search for nested `.git` looks at, at most. */
const SCAN_LIMIT = 300_000
/** Nested repositories looked into at the session's end, at most; the others are reported as they are found. */
const MAX_DESCRIBED = 512

/**
 * What the folder cache keeps besides folders and the names searched for: in git dirs (the
 * launch's, and every `.git` folder) their links, FIFOs, sockets and devices, for the sweep; in a
 * work tree, FIFOs, sockets and devices only (a project's links are many: pnpm makes one for each
 * dependency).
 */
export function keptIn(gitDirs: readonly string[]): (dir: string, name: string, kind: EntryKind) => boolean {
  return (dir, name, kind) => SEARCHED_NAMES.has(name) || SPECIAL_KINDS.has(kind) || (kind === 'l' && inGitDir(dir, gitDirs))
}

/** Whether the folder `dir` (latin1) is in a git dir: one of `gitDirs`, or below a folder named .git. */
const inGitDir = (dir: string, gitDirs: readonly string[]): boolean => dir.endsWith('/.git') || dir.includes('/.git/') || isWithinAny(Buffer.from(dir, 'latin1').toString(), gitDirs)

/** Files git opens in every folder of the work tree: a FIFO there hangs the host's git (red team). */
const READ_BY_GIT = new Set(['.gitignore', '.gitattributes', '.gitmodules', '.mailmap'])
/** A FIFO, socket or device: git blocks on, or cannot read, what it expects to be a file. */
const SPECIAL_KINDS = new Set<EntryKind>(['p', 's', 'b', 'c'])
/** The names the nested-repository search looks at besides folders: a `.git`, what git reads in every folder, what makes a folder a git dir. */
const SEARCHED_NAMES = new Set(['.git', ...READ_BY_GIT, 'HEAD', 'commondir', 'objects', 'refs'])

/**
 * A `.git` file or directory created in a subdirectory, or a nested repository whose config or
 * hooks changed, runs its own config for git started there (a shell prompt does) and, registered as
 * a gitlink, for `git status` at the top. The tree is searched without following symlinks.
 */
function nestedGit(workTree: string, search: NestedSearch, folders: FolderCache, ownTop = true): string[] {
  // Names are bytes: a folder named in something other than UTF-8 (d\377) must still be entered (red team:
  // a string path lost the byte, its repository went unreported); latin1 strings on the way (folder-cache.ts).
  const lists: NestedLists = { found: [], unreadable: [], unchecked: [] }
  const bytes = (latin1: string): Buffer => Buffer.from(latin1, 'latin1')
  const top = Buffer.from(workTree).toString('latin1')
  const stack = [top]
  let seen = 0
  // Only the work trees' folders for their modes: those the session changed (round 68).
  const modes = ownTop && search.modes.trees.includes(workTree) ? search.modes : undefined
  while (stack.length > 0 && seen < SCAN_LIMIT) {
    const dir = stack.pop() as string
    const listing = listedFor(dir, folders, lists, modes, search.sinceMs)
    if (listing === undefined) continue
    // Folders and the names searched for count, not every file, link or FIFO: 300,001 of them in one
    // folder ended the search before a repository, or a folder writable for others, beside them
    // (red team, rounds 50 and 69).
    seen += listing.entries.filter(e => e[0] === 'd' || SEARCHED_NAMES.has(e.slice(1))).length
    // Left writable for others by the session: any local user could make a .git in it, which your
    // git would take (at the top too, for a gitlink there, in the index or a commit: round 68).
    if (modes !== undefined && (listing.changedMs ?? 0) >= search.sinceMs && modes.guard.wider(listing.mode ?? 0)) modes.wide.push(bytes(dir))
    // A folder shaped like a git dir (HEAD, objects/, refs/) is a repository to git run there, or
    // below when a .git is rejected (red team: the top's own config then ran at git status).
    // A folder shaped like a git dir is looked at as a repository of its own unless it is a `.git`
    // (the repository whose .git it is is looked at from that entry; the top's is the project's) or a
    // git dir claudebox knows (the top's, its submodules' and worktrees').
    const own = dir.endsWith('/.git') || search.known.has(bytes(dir).toString())
    if (!own && looksLikeGitDir(dir, listing.entries) && nestedChanged(bytes(dir), bytes(dir).toString(), true, search, lists.unchecked)) lists.found.push(bytes(dir))
    for (const entry of listing.entries) {
      const kind = entry[0] as EntryKind
      const name = entry.slice(1)
      const p = `${dir}/${name}`
      // git opens these through a link too (red team, round 46: `.gitmodules -> fifo` hung git status).
      if (READ_BY_GIT.has(name) && (SPECIAL_KINDS.has(kind) || (kind === 'l' && leadsToSpecial(bytes(p))))) search.moveAside(bytes(p).toString())
      // The project's own .git is not a nested one; the instance has none of its own.
      if (name === '.git' && (!ownTop || dir !== top) && nestedChanged(bytes(p), bytes(dir).toString(), false, search, lists.unchecked)) lists.found.push(bytes(p))
      // Into .git folders too: a repository kept in one and reached by a symlink from the work tree
      // runs its config at git status there (red team, round 47: `tools -> .git/stash/r`).
      if (kind === 'd') stack.push(p)
    }
  }
  return nestedWarnings(workTree, lists, stack.slice(-3).map(bytes))
}

/** What the search found in one tree, for its warnings. */
interface NestedLists {
  found: Buffer[]
  unreadable: Buffer[]
  /** Repositories at paths that are not UTF-8: git's index of them cannot be read here. */
  unchecked: Buffer[]
}

/**
 * The listing of `dir` (latin1), or undefined when it cannot be had. A folder that can be entered
 * but not listed (chmod 111) still lets git reach a .git in it by name: it is reported, or, in a work
 * tree and made so by the session, made readable to you again and listed (round 68).
 */
function listedFor(dir: string, folders: FolderCache, lists: NestedLists, modes: NestedSearch['modes'] | undefined, sinceMs: number): Listing | undefined {
  for (let again = modes !== undefined; ; again = false) {
    try {
      return folders.list(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (code === 'EACCES' && again && modes?.guard.reopen(Buffer.from(dir, 'latin1'), sinceMs) === true) continue
      if (!['ENOENT', 'ENOTDIR'].includes(code)) lists.unreadable.push(Buffer.from(dir, 'latin1'))
      return undefined
    }
  }
}

/** The warnings of the search of `workTree`; `left`, the folders it did not get to (none when it finished). */
function nestedWarnings(workTree: string, { found, unreadable, unchecked }: NestedLists, left: Buffer[]): string[] {
  // At most REPORTED paths a line (round 68: 40,000 long ones made a string longer than V8's longest).
  const shown = (paths: Buffer[]): string => named(paths, p => inlineSafe(p.toString()))
  const out: string[] = []
  if (found.length > 0) {
    out.push(`the session created or changed nested git repositories, whose config and hooks run when git is used there (or at the top, for a submodule): ${shown(found)}; inspect them (cat <dir>/config, ls <dir>/hooks and the folder its core.hooksPath names) before running git in or above them`)
  }
  if (unreadable.length > 0) {
    out.push(`folders the search for nested git repositories could not list (a repository in them would run its config and hooks unseen): ${shown(unreadable)}; make them readable (chmod u+rx) and look inside before running git here`)
  }
  if (unchecked.length > 0) out.push(`nested git repositories at paths that are not UTF-8, whose index claudebox cannot have git read (git checkout there could write what it lists anywhere): ${shown(unchecked)}; rename them, then run git reset in them before any git checkout`)
  if (left.length > 0) {
    out.push(`the search for nested git repositories stopped after ${SCAN_LIMIT} folders in ${inlineSafe(workTree)}; not searched: ${shown(left)} and more, whose repositories' configs, hooks and indexes were not checked, nor folders left writable for others: look for them (find ${inlineSafe(workTree)} -name .git -o -name HEAD -o -type p -o -type d -perm /022) before you run git there`)
  }
  return out
}

/** A path as text, for git; one that is not UTF-8 is noted in `unchecked` (and its text will not be found). */
function textPath(p: Buffer, unchecked: Buffer[]): string {
  const text = p.toString()
  if (!Buffer.from(text).equals(p)) unchecked.push(p)
  return text
}

/** What the search for nested repositories carries from folder to folder. */
interface NestedSearch {
  sinceMs: number
  moveAside: (p: string) => void
  configured: Configured
  /** Every git dir found, for the index and operation checks. */
  gitDirs: string[]
  /** What each repository was at the last session's end. */
  record: NestedRecord
  /** The repositories what git runs in changed during the session (or past the bound, whose .git did), to mark for every project (reported-repos.ts). */
  marked: Buffer[]
  /** The `.git` of the gitlinks the watch took for the user's, as they were before the session changed them (gitlink-watch.ts). */
  takenForUsers: ReadonlyMap<string, string>
  /** How many repositories were looked into, and the files still to be looked at for all of them. */
  described: number
  budget: { lines: number }
  /** The git dirs claudebox knows (the top's, its submodules' and worktrees'), not nested repositories. */
  known: Set<string>
  /** Where a nested repository's git dir may be: the work trees, the launch's git dirs, the instance (Claude keeps plugins' clones there). */
  inside: readonly string[]
  /** The user's home, for what a config's `~` names. */
  home: string
  /** The instance folder, writable inside and outside the work trees. */
  instance: string
  /** When sessions ran (session-times.ts), read at the first repository looked into. */
  sessionsFile: string | undefined
  times?: { during(ms: number): boolean } | undefined
  /** The work trees whose folders' modes are looked at, the guard, and the folders it is to narrow. */
  modes: { trees: readonly string[]; guard: ModeGuard; wide: Buffer[] }
}

/**
 * A nested repository at `entry` (its `.git`, or a folder shaped as a git dir) in the work tree
 * `tree`: its git dirs go to the search's (their index and operation files are checked), and
 * whether to report it: what git takes from it differs from the last session's end, or, with no
 * record of it, changed during this session. One that leads where git's own walk cannot be known
 * (through /proc) is moved aside.
 */
function nestedChanged(entry: Buffer, tree: string, isGitDir: boolean, search: NestedSearch, unchecked: Buffer[]): boolean {
  const text = textPath(entry, unchecked)
  // Into the instance, by its git dir or its common dir, whatever its times and past the bound too:
  // what is there the sweep may not be able to list or move (round 138: a git dir made there;
  // round 139: a commondir there, and a link on the way re-pointed there among 1,200 decoys).
  if (intoTheInstance(text, isGitDir, search.instance)) {
    search.moveAside(text)
    return true
  }
  // A .git or commondir the session made or changed that leads out of the project, or to nothing
  // yet, is moved aside, past the bound below too (round 70: 88 of 600 went unmoved).
  const out = waysOut(text, isGitDir, search)
  if (out.length > 0 && (changedSince(entry, search.sinceMs) || out.some(p => changedSince(Buffer.from(p), search.sinceMs)))) {
    out.forEach(search.moveAside)
    return true
  }
  // Each costs a few dozen stats: thousands a session made are reported unread, not read for
  // minutes (a folder's own index still counts for the index check's bound and its warning).
  if (search.described++ >= MAX_DESCRIBED) {
    pastTheBound(entry, text, isGitDir, search)
    return true
  }
  let repo: NestedRepo
  try {
    repo = describeNested(text, tree, isGitDir, search.configured, search.budget)
  } catch {
    if (changedSince(entry, search.sinceMs)) search.marked.push(entry)
    return true // not looked into: reported
  }
  // Marked too: a `.git` that appeared, or was renamed into place, during the session, new to the
  // record, or other than the `.git` it held there (red team, round 130: a config planted earlier,
  // its time moved out of every session's by the host's git checkout of a file hard-linked to it,
  // renamed into a .git in the next session; round 131: at a path the record held).
  // A session's git work in a repository the record knows, or that the watch took for the user's
  // before, changes its `.git` too, and marks nothing.
  const before = search.record.previous(text)
  const sameGit = before !== undefined && search.record.previousIdentity(text) === entryIdentity(text)
  const appearedNow = !sameGit && changedSince(entry, search.sinceMs) && !search.takenForUsers.has(text)
  if (repo.runsNewestMs >= search.sinceMs - 1 || repo.unlisted || appearedNow) search.marked.push(entry)
  // Changed on the way to it (a link re-pointed) during the session, too.
  if (out.length > 0 && repo.newestMs >= search.sinceMs - 1) {
    out.forEach(search.moveAside)
    return true
  }
  search.gitDirs.push(...repo.gitDirs)
  if (repo.magic !== undefined) {
    search.moveAside(repo.magic)
    return true
  }
  const appeared = search.record.known && before === undefined
  const reported = appeared || (before !== undefined && before !== repo.digest) || repo.newestMs >= search.sinceMs - 1 || repo.unlisted
  search.record.keep(text, repo, vouched(text, repo, search))
  // Its configs as git reads them now, whichever file of them changed (round 72: an include file
  // in the work tree, rewritten in a second session, named a program another user made).
  const gitDir = reported ? nestedGitDirOnly(text, isGitDir) : undefined
  if (gitDir !== undefined) configsOut(gitDir, namedCommonDir(gitDir)?.to ?? gitDir, path.dirname(text), search, false).forEach(search.moveAside)
  return reported
}

/** A nested repository past the bound: its git dir swept, not looked into. */
function pastTheBound(entry: Buffer, text: string, isGitDir: boolean, search: NestedSearch): void {
  const gitDir = nestedGitDirOnly(text, isGitDir)
  if (gitDir !== undefined) search.gitDirs.push(gitDir)
  // Marked too when the last end did not vouch for it at this path (red team, round 134: the
  // user's clone moved past the bound, where it was never kept, and back in the next session).
  if (changedSince(entry, search.sinceMs) || !search.record.vouchedAt(text)) search.marked.push(entry) // round 126: 700 made, 512 kept in the record
}

/**
 * Whether this session's end vouches for a nested repository: no session put its way to its git
 * dirs in place (wayTimes), or the end before vouched for it as it is now (a session's git work in a
 * vendored repository changes its git dir's time). One this end never looked at, past the search's
 * bound (red team, round 133: a repository planted among 300,100 folders), is vouched for by none.
 */
function vouched(entry: string, repo: NestedRepo, search: NestedSearch): boolean {
  search.times ??= search.sessionsFile === undefined ? undefined : sessionTimes(search.sessionsFile)
  const placed = wayTimes(entry, repo.gitDirs, search.inside).some(ms => ms >= search.sinceMs - 1 || search.times?.during(ms) === true)
  return !placed || search.record.vouchedFor(entry, repo)
}

/**
 * Whether a nested repository outside the instance has its git dir or its common dir in it: the
 * instance is writable inside, and the search can neither reopen nor move what is there (round
 * 138: `git init --separate-git-dir` there, its COMMIT_EDITMSG and logs/HEAD links to ~/.bashrc,
 * which your commit in that folder wrote through). Claude's own clones there (plugins) are inside it.
 */
function intoTheInstance(entry: string, isGitDir: boolean, instance: string): boolean {
  if (isWithin(entry, instance)) return false
  const gitDir = nestedGitDirOnly(entry, isGitDir)
  if (gitDir === undefined) return false
  return [gitDir, namedCommonDir(gitDir)?.to].some(dir => dir !== undefined && isWithin(dir, instance))
}

/**
 * What to move aside where a nested repository leads out of the project (`inside`), or to nothing
 * yet: another local user can make what it names later, and your git then takes it. Its `.git`
 * (round 68: `gitdir: /tmp/x`; one made with --separate-git-dir in the sandbox's own /tmp); its
 * `commondir` (round 70: it named /tmp/x, and git status at the top took that through a gitlink;
 * round 71: a link as commondir); a link among the names git reads there (round 71: config ->
 * /tmp/c); a config the session changed that includes a file, names a hooks folder (round 71) or a
 * program (round 72) outside that another user could make.
 */
function waysOut(entry: string, isGitDir: boolean, search: NestedSearch): string[] {
  const { inside } = search
  const gitDir = nestedGitDirOnly(entry, isGitDir)
  if (gitDir === undefined || !isWithinAny(gitDir, inside)) return [entry]
  const common = namedCommonDir(gitDir)
  if (common !== undefined && (lstatKind(common.file) !== 'file' || common.to === undefined || !isWithinAny(common.to, inside))) return [common.file]
  const dirs = [...new Set([gitDir, common?.to ?? gitDir])]
  const leadsOut = (p: string): boolean => {
    const end = resolveChain(p).end
    return end === undefined || end.kind === 'missing' || !isWithinAny(end.path, inside)
  }
  const links = dirs.flatMap(dir => GIT_READ.map(name => `${dir}/${name}`)).filter(p => lstatKind(p) === 'symlink' && leadsOut(p))
  return [...links, ...configsOut(gitDir, common?.to ?? gitDir, path.dirname(entry), search, true).filter(c => !links.includes(c))]
}

/**
 * A nested repository's configs (its common dir's config, its git dir's config.worktree), as git
 * reads them with their includes from the work tree `tree`, when they make git take a program,
 * hooks or a file from outside the project that another user could make; `changedOnly`, only if
 * one of them changed during the session (a git run each).
 */
function configsOut(gitDir: string, common: string, tree: string, search: NestedSearch, changedOnly: boolean): string[] {
  const configs = [`${common}/config`, `${gitDir}/config.worktree`].filter(c => lstatKind(c) === 'file')
  if (configs.length === 0 || (changedOnly && !configs.some(c => changedSince(Buffer.from(c), search.sinceMs)))) return []
  return configLeadsOut(configs, tree, search) ? configs : []
}

/** The names git reads in a git dir that a link could lead elsewhere from. */
const GIT_READ = ['config', 'config.worktree', 'HEAD', 'hooks', 'objects', 'refs', 'info', 'packed-refs']

/**
 * Whether `configs` (and what they include) make git run a program, take hooks or include a file
 * from outside the project that another local user could make or change (outOfOthersReach): one
 * not there yet, or one they could replace on the way to it (round 72: core.fsmonitor = /tmp/x;
 * round 73: a link of theirs on the way, an `ext::` remote's command, a work tree outside).
 * Programs in folders only root or you can write (/usr/bin) are not.
 */
function configLeadsOut(configs: readonly string[], tree: string, search: NestedSearch): boolean {
  const reader = configReader(search.home)
  const targets = reader.targets(tree, configs)
  // Where each leads, links followed as far as they go (round 72: an include `../settings.inc`, a
  // link in the project to /tmp/x that another user made later).
  const leadsOut = (t: string, entries: boolean): boolean => {
    // Through /proc or /dev a path is another file to git, run from another folder (round 48).
    if (MAGIC.test(t)) return true
    const chain = resolveChain(t)
    const inside = isWithinAny(chain.end?.path ?? t, search.inside) && chain.links.every(link => isWithinAny(link.path, search.inside))
    return !inside && !outOfOthersReach(t, { entries }, chain)
  }
  return reader.refusal !== undefined || targets.some(t => leadsOut(t, true)) || reader.workTrees(configs).some(t => leadsOut(t, false))
}

/**
 * The links a git dir's top may hold that a user makes (a config or hooks from dotfiles, objects or
 * LFS storage on another disk, a linked logs/; Android's repo links rr-cache, shallow and svn too):
 * git makes none of the others, and writes COMMIT_EDITMSG, FETCH_HEAD, MERGE_MSG and more through one.
 */
const USERS_LINKS = new Set(['config', 'config.worktree', 'hooks', 'info', 'objects', 'refs', 'logs', 'description', 'packed-refs', 'HEAD', 'modules', 'worktrees', 'lfs', 'annex', 'rr-cache', 'shallow', 'svn'])

/**
 * Whether git would write through the link at `p` (`inGitDir`, its path in the git dir, latin1): one
 * in logs/ or refs/; one at the top other than those a user makes, of any age (round 139: kept in a
 * plain folder of the work tree, the folder renamed into a .git in a later session); one made
 * during the session; or one that leads to a FIFO, socket or device.
 */
function writtenThrough(p: Buffer, inGitDir: string, sinceMs: number, earlier?: (ms: number) => boolean): boolean {
  const atTop = !inGitDir.includes('/')
  return /^(logs|refs)\//.test(inGitDir) || (atTop && !USERS_LINKS.has(inGitDir)) || madeInASession(p, sinceMs, earlier) || leadsToSpecial(p)
}

/**
 * Whether the link at `p` was made (or last changed) during this session, or, given `earlier`,
 * during an earlier one of any project (session-times.ts): a link keeps its time when its folder
 * is renamed (round 139: logs/, hooks/ or rr-cache/ links made in a plain folder of the work tree,
 * renamed into a .git in the next session, would pass as the user's).
 */
function madeInASession(p: Buffer, sinceMs: number, earlier?: (ms: number) => boolean): boolean {
  const st = fs.lstatSync(p, { throwIfNoEntry: false })
  return st === undefined || st.ctimeMs >= sinceMs || earlier?.(st.ctimeMs) === true
}

/** Whether a link leads to a FIFO, socket or device. */
function leadsToSpecial(link: Buffer): boolean {
  try {
    const st = fs.statSync(link)
    return !st.isFile() && !st.isDirectory()
  } catch {
    return false
  }
}

/**
 * FIFOs, sockets and devices anywhere in a git dir (packed-refs, info/exclude, refs/heads/main ...):
 * git reads those files, and would hang on a FIFO at the user's next git status (red team). And
 * links git would write through: any in `logs/` or `refs/` (git makes none there), any other the
 * session made (`sinceMs`) or that lies in a folder it changed, and a folder that cannot be
 * listed: your next commit appends its reflog line through `logs/HEAD` to wherever the link leads,
 * outside the project too, and git writes COMMIT_EDITMSG, MERGE_MSG, FETCH_HEAD and rerere's
 * images through theirs (red team, rounds 135 to 137: a reflog appended to a nested repository's
 * config and made its HEAD, which moved their times to yours; ~/.bashrc replaced). Past the
 * budget, each git dir's own files are still looked at, and the folders git writes through links
 * in that were not looked at whole are moved aside whole. Its
 * folders come from `folders` (a folder unchanged since the last session's end is not listed), or,
 * for a git dir whose links the cache does not keep (a nested one shaped as a bare repository),
 * are listed now.
 */
export function fifosAndLinksIn(gitDir: string, budget: { entries: number }, folders: FolderCache, gitDirs: readonly string[], sinceMs: number, modes?: Pick<ModeGuard, 'reopen'>, earlier?: (ms: number) => boolean): string[] {
  const found: string[] = []
  const top = Buffer.from(gitDir).toString('latin1')
  const direct = (dir: string): Listing => listFolder(Buffer.from(dir, 'latin1'), (_name, kind) => kind !== 'f')
  const list = inGitDir(top, gitDirs) ? (dir: string): Listing => folders.list(dir) : direct
  const done = new Set<string>()
  const walk = (dir: string, listing: Listing, wayChanged: boolean): boolean => {
    for (const entry of ordered(listing.entries, dir === top)) {
      const kind = entry[0] as EntryKind
      // A git dir's own files are looked at past the budget too: git writes MERGE_MSG,
      // COMMIT_EDITMSG, FETCH_HEAD through a link (round 137: a budget spent in the project's git
      // dir left a submodule's MERGE_MSG a link to ~/.bashrc).
      if ((kind === 'd' || dir !== top) && budget.entries-- <= 0) return false
      const p = `${dir}/${entry.slice(1)}`
      // git opens them through a link too (red team, round 47: packed-refs -> ../junk/fifo hung git status).
      if (SPECIAL_KINDS.has(kind) || (kind === 'l' && (wayChanged || writtenThrough(Buffer.from(p, 'latin1'), p.slice(top.length + 1), sinceMs, earlier)))) found.push(Buffer.from(p, 'latin1').toString())
      // The git dirs of submodules and worktrees are looked at in turn; the rest of modules/ and
      // worktrees/ here (round 136: a link kept in a plain folder there, moved later where git writes).
      else if (kind === 'd' && !gitDirs.includes(Buffer.from(p, 'latin1').toString())) {
        // Not whole below: not whole here either (round 137: logs/ was taken as walked).
        if (!listed(p, list, wayChanged)) return false
        if (dir === top) done.add(entry.slice(1))
      }
    }
    return true
  }
  /**
   * Whether the folder was looked at whole. One the session made unreadable is made readable again
   * (the mode guard's `reopen`) and listed; one that still cannot be listed (chmod 311: git can
   * still write through a link in it) is moved aside (round 136), a nested repository's whole git
   * dir too (round 139: one in a launch's git dir, where the guard does not reopen, past the budget).
   */
  const listed = (dir: string, lister: (dir: string) => Listing, wayChanged: boolean, again = true): boolean => {
    let listing: Listing
    try {
      listing = lister(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? ''
      if (code === 'EACCES' && again && modes?.reopen(Buffer.from(dir, 'latin1'), sinceMs) === true) return listed(dir, lister, wayChanged, false)
      if ((dir !== top || !gitDirs.includes(gitDir)) && !['ENOENT', 'ENOTDIR'].includes(code)) found.push(Buffer.from(dir, 'latin1').toString())
      return true
    }
    // A link moved here with its folder keeps its own time: the folders on its way tell (round 136: rr-cache/<id>/thisimage).
    // Not hooks/: git writes nothing there, and the launch keeps the user's links in it.
    return walk(dir, listing, wayChanged || (dir !== top && dir !== `${top}/hooks` && (listing.changedMs ?? changeTimeOf(dir)) >= sinceMs))
  }
  const whole = listed(top, dir => {
    try {
      return list(dir)
    } catch (error) {
      // A git dir named through a link (a nested .git file's gitdir:) is read through it, as git does.
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error
      return direct(dir)
    }
  }, false)
  // Past the budget, the folders where git writes through links go whole (round 136: 200,100
  // folders the session made were listed first, and logs/HEAD stayed a link).
  if (!whole) for (const name of WRITTEN_THROUGH.filter(n => !done.has(n))) if (lstatKind(`${gitDir}/${name}`) !== 'missing') found.push(`${gitDir}/${name}`)
  return found
}

/**
 * A folder's entries in the order the sweep takes them: what is not a folder first; at a git dir's
 * top, the folders git writes through links in next, objects/ last (round 50: a budget spent on
 * loose objects left a FIFO packed-refs in place).
 */
function ordered(entries: readonly string[], atTop: boolean): string[] {
  const rank = (entry: string): number => (entry[0] !== 'd' ? 0 : !atTop ? 1 : WRITTEN_THROUGH.includes(entry.slice(1)) ? 1 : entry === 'dobjects' ? 3 : 2)
  return [...entries].sort((a, b) => rank(a) - rank(b))
}

/** A folder's change time (ms), as far as it can be had: none, as new. */
function changeTimeOf(dir: string): number {
  try {
    return fs.lstatSync(Buffer.from(dir, 'latin1')).ctimeMs
  } catch {
    return Number.MAX_SAFE_INTEGER
  }
}

/**
 * git's is_git_directory: HEAD, and objects and refs it may enter (access X_OK, through symlinks:
 * red team, `objects -> ../.git/objects`), or a commondir naming where they are.
 */
function looksLikeGitDir(dir: string, entries: Listing['entries']): boolean {
  const named = (name: string): string | undefined => entries.find(e => e.slice(1) === name)
  const head = named('HEAD')
  if (head === undefined || head.startsWith('d')) return false
  if (named('commondir') !== undefined) return true
  // git only asks access(X_OK): an executable file, or a link to one, passes (red team, round 26).
  const enterable = (name: string): boolean => {
    if (named(name) === undefined) return false
    try {
      fs.accessSync(Buffer.from(`${dir}/${name}`, 'latin1'), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  return enterable('objects') && enterable('refs')
}

/**
 * The nested-repository search over every work tree, the git dirs outside them and the instance.
 * Only the git dirs the launch protected are the project's own (red team, round 49: one below
 * worktrees/a/b, or past a budget, was taken for known and never looked at, while nothing protected it).
 */
export function nestedInAll(spec: GitWatchSpec, sinceMs: number, moveAside: (p: string) => void, gitDirs: string[], folders: FolderCache, modes: NestedSearch['modes'], marked: Buffer[] = [], takenForUsers: ReadonlyMap<string, string> = new Map()): string[] {
  const known = spec.gitDirs
  const search: NestedSearch = { sinceMs, moveAside, configured: configuredOf(spec.home), gitDirs, record: nestedRecord(spec.nestedRecord), marked, takenForUsers, described: 0, budget: { lines: 65_536 }, known: new Set(known), inside: insideOf(spec), home: spec.home, instance: spec.instance, sessionsFile: spec.nestedRecord === undefined ? undefined : sessionTimesFile(spec.nestedRecord), modes }
  // The git dirs outside the work trees too (a --separate-git-dir's, a worktree's in the main .git
  // elsewhere): a repository kept in one is reached through a symlink the same way.
  const outside = known.filter(dir => !isWithinAny(dir, spec.workTrees))
  const tops = outside.filter(dir => !outside.some(top => top !== dir && isWithin(dir, top)))
  const out = [...spec.workTrees, ...tops].flatMap(tree => nestedGit(tree, search, folders))
  // The instance too, its own top included (red team, round 42: a repository made there, reached
  // by a symlink `sub` in the project, ran its fsmonitor at the host's git status in sub), from the
  // same cache: a few of its folders change at every session, the rest (Claude's file history,
  // todos, transcripts of other days) do not, and listing them all cost ~50 ms at every session's
  // end for an instance of 10,000 files.
  out.push(...nestedGit(spec.instance, search, folders, false))
  search.record.save()
  return out
}

/** Where a nested repository's git dir may be, and a session could have put it: the work trees, the launch's git dirs, the instance (Claude keeps plugins' clones there). */
const insideOf = (spec: Pick<GitWatchSpec, 'workTrees' | 'gitDirs' | 'instance'>): string[] => [...spec.workTrees, ...spec.gitDirs, spec.instance]

/**
 * Whether a gitlink's `.git`, in the project since before the session, is a nested repository of
 * the user's, which the gitlink watch leaves where it is (`usersOwn`). Not when it, or anything git
 * takes from it (its config, hooks, what its config names), changed during the session: a config
 * appended in place leaves the `.git` folder's time as it was; nor when any of those changed while
 * an earlier session ran, of any project (session-times.ts: round 129). Nor when what git runs there changed
 * during an earlier session (`reported`: marked by its identity, for every project, at that
 * session's end: reported-repos.ts), or it differs from what the last session's end kept (red
 * team, rounds 125 and 126: a repository made in one session and staged as a gitlink in the next,
 * also after the project was renamed, from the project around it, or past the record's bound, had
 * its fsmonitor run by the host's git status at the top). Nor when its way to its git dirs was put
 * in place during a session, unless a session's end since vouched for it as it is (`placed`). One
 * that cannot be looked at is none of the user's. The marks are read anew at each call: another
 * session's end may have made some; the record (up to 16 MiB) once, at the first gitlink judged. `runsNow`: its git dir and what git
 * runs from it, to tell at the session's end whether one taken for the user's is still that.
 */
export function usersOwnNested(spec: Pick<GitWatchSpec, 'nestedRecord' | 'home' | 'workTrees' | 'gitDirs' | 'instance'>, sinceMs: number): Judge {
  const reported = (dotGit: string): boolean => spec.nestedRecord !== undefined && reportedBefore(reportedFile(spec.nestedRecord), dotGit)
  // Its git dirs too: a session's end marks a folder shaped as a git dir, which a `gitdir:` file of
  // the user's moved away during that session did not lead to (red team, round 134).
  const gitDirReported = (repo: NestedRepo): boolean => repo.gitDirs.some(dir => reported(dir))
  // Read once: only a session's end rewrites it, and what such an end marks is in the marks above.
  let record: NestedRecord | undefined
  const describe = (dotGit: string): NestedRepo | undefined => {
    try {
      return describeNested(dotGit, path.dirname(dotGit), false, configuredOf(spec.home))
    } catch {
      return undefined
    }
  }
  // Read anew at each call too: a session of another project may end meanwhile.
  const during = (): ((ms: number) => boolean) => {
    if (spec.nestedRecord === undefined) return () => false
    const times = sessionTimes(sessionTimesFile(spec.nestedRecord))
    return ms => times.during(ms)
  }
  // The `.git`, and the git dirs it leads to, made in a session too (round 132: a `gitdir:` file of
  // the user's moved with its folder to lead into a git dir the session made; a freed inode got again).
  const madeInASession = (dotGit: string, repo: NestedRepo, inASession: (ms: number) => boolean): boolean => {
    const born = [dotGit, ...repo.gitDirs].map(bornTime)
    return born.some(ms => ms >= sinceMs - 1) || [...repo.runsTimes, ...born].some(inASession)
  }
  // Its way to its git dirs put in place during this session, or during an earlier one whose end
  // did not vouch for it as it is (round 133: old folders renamed into a git dir, the files in it
  // hard-linked from the user's and their times moved by the user's git checkout .; or planted
  // where that end's search did not get to).
  const placed = (dotGit: string, repo: NestedRepo, inASession: (ms: number) => boolean): boolean => {
    const times = wayTimes(dotGit, repo.gitDirs, insideOf(spec))
    if (times.some(ms => ms >= sinceMs - 1)) return true
    record ??= nestedRecord(spec.nestedRecord)
    return times.some(inASession) && !record.vouchedFor(dotGit, repo)
  }
  const usersOwn = (dotGit: string): UsersRepo | undefined => {
    if (changedSince(dotGit, sinceMs) || reported(dotGit)) return undefined
    const repo = describe(dotGit)
    if (repo === undefined || repo.newestMs >= sinceMs - 1 || repo.unlisted || repo.magic !== undefined || gitDirReported(repo)) return undefined
    const inASession = during()
    if (madeInASession(dotGit, repo, inASession) || placed(dotGit, repo, inASession)) return undefined
    record ??= nestedRecord(spec.nestedRecord)
    const before = record.previous(dotGit)
    return before === undefined || before === repo.digest ? { gitDir: repo.gitDirs[0], runs: repo.runsDigest } : undefined
  }
  const runsNow = (dotGit: string): UsersRepo | undefined => {
    const repo = describe(dotGit)
    return repo === undefined || repo.unlisted || repo.magic !== undefined ? undefined : { gitDir: repo.gitDirs[0], runs: repo.runsDigest }
  }
  return { usersOwn, reported, runsNow }
}

/**
 * For a nested repository: the hooksPath folder and include files its configs and the user's name.
 * A reader of its own each, so that its bound on config files is this repository's (red team, round
 * 48: one reader for all spent it on the first 31 of 80); the user's configs are read once, from
 * the launch's cache of what git read in them.
 */
function configuredOf(home: string): Configured {
  return (tree, repoConfigs) => {
    const reader = configReader(home)
    const targets = reader.targets(tree, [...repoConfigs, ...userGitConfigs(home)])
    return { targets, problem: reader.refusal }
  }
}
