// The probe of what the host's git would read from the project: every git dir the sandbox can
// write (the common dir, worktree admin dirs, submodule git dirs), the files in them that make git
// run programs or look elsewhere, and the working-tree files that run on the host. Plain data for
// git-guard.ts, which plans the mounts.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind, safeReaddir } from './fs.js'
import { configReader, repoConfigsOf, userGitConfigFiles, userGitConfigs, workTreesIn } from './git-configs.js'
import { gitConfig, gitdirOf, gitDirsOf, isCommondirPlaceholder, isGitDir, MAX_MODULES_DEPTH, readSmall, worktreeDotGit, type GitDirSearch } from './git-dirs.js'
import { isWithin, isWithinAny } from '../state/instance.js'
import { linksBelow, protectLink, resolveChain, throughLinkedFolders } from './link-targets.js'
import { HOST_RUN_FILES } from '../sandbox/persistence.js'
import { gitProgram } from './system-programs.js'
import type { GitFacts, GitProtectFacts } from '../types.js'

/**
 * Files and directories of a git dir that make git run programs or use another repository:
 * remotes/ and branches/ too, git's old remote files, read for a remote name the config does not
 * define, `origin` included (red team, round 36: `.git/remotes/origin` with `URL: <a repository in
 * the instance>` had the host's `git push` run its hook).
 */
const REDIRECTING = ['config', 'config.worktree', 'commondir', 'gitdir', 'hooks', 'remotes', 'branches'] as const
/** Of those, the folders made empty (then read-only) where they are missing: git only reads files in them. */
const EMPTY_WHEN_MISSING = new Set(['hooks', 'remotes', 'branches'])
/** Links inside protected folders followed at most, per folder and in all (each target is a bind). */
const LINKS_PER_FOLDER = 32
const LINKS_IN_ALL = 128

export function probeGitProtect(git: GitFacts | undefined, projectDirs: readonly string[], home: string): GitProtectFacts {
  const facts: MutableProtect = { pinned: [], workTrees: [], repos: [], gitDirs: [], refusals: [], readOnly: [], emptyDirs: [], emptyConfigs: [], placeholders: [], headPlaceholders: [], forbidden: [], present: [], workTree: [], workTreePins: [], symlinked: [], links: [] }
  let trees = projectDirs.slice(0, 1)
  if (git !== undefined) {
    const reader = configReader(home)
    const search = gitDirsOf(git, home, reader.remotesOf)
    if (search.refusal !== undefined) facts.refusals.push(search.refusal)
    for (const name of search.forbidden) if (isWithinAny(name, projectDirs) && !projectDirs.includes(name)) facts.forbidden.push(name)
    addLinks(facts, search.links.filter(link => isWithinAny(link.path, projectDirs)))
    const worktreeConfig = memo((common: string) => readsWorktreeConfig(path.join(common, 'config')))
    for (const { dir, parents, linked, common } of search.entries) {
      if (!isWithinAny(dir, projectDirs)) continue // not writable inside: nothing to pin
      // objects/ and refs/ too: without them git rejects the git dir and may take another folder for the repository.
      const kept = ['objects', 'refs'].map(name => path.join(dir, name)).filter(p => lstatKind(p) === 'dir')
      for (const p of [...foldersLeadingTo(dir, projectDirs), ...parents, dir, ...kept]) if (!facts.pinned.includes(p)) facts.pinned.push(p)
      facts.gitDirs.push(dir)
      protectGitDir(facts, dir, linked, worktreeConfig(common), projectDirs)
    }
    const dotGit = path.join(git.topLevel, '.git')
    if (lstatKind(dotGit) === 'file') facts.readOnly.push(dotGit) // a linked worktree's or submodule's pointer
    for (const file of dotGitFiles(git, search)) {
      if (file !== dotGit && isWithinAny(file, projectDirs)) facts.readOnly.push(file)
    }
    // Files the configs take programs or more config from, when they lie in the project: read-only
    // when present; watched like commondir when missing (git skips a missing include). For each
    // work tree in the project: a relative hooksPath names a folder in each (red team: the
    // submodule's and the linked worktree's hooks ran).
    trees = workTreesIn(git, search, projectDirs)
    for (const tree of trees) guardTopHead(facts, tree, projectDirs)
    facts.repos.push(...trees.flatMap(tree => {
      const gitDir = tree === git.topLevel ? git.gitDir : gitDirOfTree(tree)
      return gitDir === undefined ? [] : [{ gitDir, workTree: tree }]
    }))
    for (const tree of trees) protectWhatConfigsName(facts, tree, [...repoConfigsOf(tree, git), ...userGitConfigs(home)], home, projectDirs, reader)
  } else if (trees[0] !== undefined) {
    forbidRepositoryAt(facts, trees[0], projectDirs)
    // What the user's configs name, in a project that is no repository too: every git of the
    // user's, anywhere, reads it (red team, round 107: an include of ~/.gitconfig, 3 of 3). Without
    // a git there is no git of the user's to read them, nor one to read them with.
    if (gitProgram() !== undefined) protectWhatConfigsName(facts, trees[0], userGitConfigs(home), home, projectDirs)
  }
  // The user's and the system's git configs themselves, where they lie in (or lead into) the
  // project, as what they name: read-only, or moved aside when made (red team, round 106: a
  // GIT_CONFIG_GLOBAL or XDG_CONFIG_HOME of a direnv setup, a stow-managed ~/.gitconfig linked into
  // the dotfiles project; the session wrote a core.fsmonitor, 3 of 3). Every git of the user's reads them.
  for (const config of userGitConfigFiles(home)) protectLinkTarget(facts, config, projectDirs)
  facts.workTrees.push(...trees)
  for (const tree of trees) protectHostRun(facts, tree, projectDirs)
  protectLinksInside(facts, projectDirs)
  pinWorkTreeParents(facts, projectDirs[0])
  for (const file of facts.readOnly.filter(p => path.basename(p) === '.git')) pinGitdirWay(facts, file, projectDirs)
  pinFoldersOnTheWay(facts, projectDirs)
  // Parents before children, whatever found them: a pin mounted later would cover one below it.
  facts.pinned.sort((a, b) => a.split('/').length - b.split('/').length)
  return facts
}

/**
 * What `configs` make git take programs or config from in `tree`, each walked as the kernel walks
 * it (`conf/link/../inc`): links on the way guarded, what it leads to in the project read-only, or
 * moved aside when it appears (red team, rounds 29, 31). A config that cannot be read refuses.
 */
function protectWhatConfigsName(facts: MutableProtect, tree: string, configs: readonly string[], home: string, projectDirs: readonly string[], reader = configReader(home)): void {
  for (const target of reader.targets(tree, configs)) protectLinkTarget(facts, target, projectDirs)
  if (reader.refusal !== undefined && !facts.refusals.includes(reader.refusal)) facts.refusals.push(reader.refusal)
}

/** The git dir git takes in `tree`: its `.git` folder, or where its `.git` file's gitdir: leads. */
function gitDirOfTree(tree: string): string | undefined {
  const dotGit = path.join(tree, '.git')
  const kind = lstatKind(dotGit)
  if (kind === 'dir') return dotGit
  const pointer = kind === 'file' ? gitdirOf(readSmall(dotGit)) : undefined
  return pointer === undefined || pointer === '' ? undefined : path.resolve(tree, pointer)
}

/**
 * The folders a `.git` file's `gitdir:` path goes through as the kernel walks it, where the
 * sandbox writes: pinned, or the session could rename one and put its own in its place (red team,
 * round 29: `gitdir: sub/../metadata/gd` went through `sub`). Links outside those places are the
 * user's and followed (round 30: the path went through a linked folder above the project); a link
 * inside them cannot be pinned (a bind follows it): the launch refuses, naming it.
 */
function pinGitdirWay(facts: MutableProtect, file: string, projectDirs: readonly string[]): void {
  const pointer = gitdirOf(readSmall(file))
  if (pointer === undefined) return
  const chain = resolveChain(pointer.startsWith('/') ? pointer : `${path.dirname(file)}/${pointer}`)
  const link = chain.links.find(l => isWithinAny(l.path, projectDirs))
  if (link !== undefined) {
    facts.refusals.push(`${file} names its git dir through the symlink ${link.path}, which the session could point at a git dir of its own, for the host's git to run; write the git dir's path without links in ${file}, then rerun claudebox`)
    return
  }
  for (const folder of chain.folders) if (isWithinAny(folder, projectDirs) && !projectDirs.includes(folder) && !facts.pinned.includes(folder)) facts.pinned.push(folder)
}

/**
 * Guarded links and names watched for are judged by their path: a folder on the way renamed and
 * replaced (by a link into the instance, with the same link text behind it) would change what the
 * path means while the guard saw nothing wrong (red team, round 30). Those folders are pinned.
 */
function pinFoldersOnTheWay(facts: MutableProtect, projectDirs: readonly string[]): void {
  for (const p of [...facts.links.map(link => link.path), ...facts.forbidden]) {
    for (const folder of foldersLeadingTo(p, projectDirs)) if (!facts.pinned.includes(folder) && lstatKind(folder) === 'dir') facts.pinned.push(folder)
  }
}

/**
 * A folder that is not in a repository: a `.git` created at its top, or a `HEAD` (with objects/
 * and refs/ the folder itself is a git dir to git), would be the repository the host's git uses
 * there, with the session's config (red team: `git init; git config core.fsmonitor ...` inside,
 * and the shell prompt's `git status` on the host ran it after the session, unreported). Moved
 * aside the moment they appear; --writable-git-config lets a session make a repository there.
 */
function forbidRepositoryAt(facts: MutableProtect, top: string, projectDirs: readonly string[]): void {
  const p = path.join(top, '.git')
  if (lstatKind(p) === 'missing') facts.forbidden.push(p)
  else if (gitProgram() === undefined) facts.refusals.push(`${p} is there, and git was not found on PATH: claudebox needs git to guard a repository; install git (or put it on PATH), then rerun claudebox`)
  // git took no repository from it (a dangling symlink): the session could make it lead to one.
  else facts.refusals.push(`${p} is there, but git takes no repository from it (a symlink that leads nowhere, say); the session could make it lead to one, for the host's git to run; remove it or make it a repository, then rerun claudebox`)
  guardTopHead(facts, top, projectDirs)
}

/**
 * A HEAD at the top of a work tree: with it (and objects/, refs/), git takes the folder itself for a
 * repository whenever its .git is not one, in a repository too: when the session swaps a HEAD git
 * rejects into .git for a moment (red team, rounds 84 and 85: host commits ran the top's config).
 * A missing one is held by an empty folder (git takes no HEAD that is a folder; an empty folder is
 * nothing to git status), an empty folder there is taken for one a launcher killed before its end
 * made, and watched too; a HEAD of the user's own is read-only, or the session could make it one
 * git accepts.
 */
function guardTopHead(facts: MutableProtect, top: string, projectDirs: readonly string[]): void {
  const p = path.join(top, 'HEAD')
  const kind = lstatKind(p)
  if (kind === 'missing' || (kind === 'dir' && safeReaddir(p).length === 0)) {
    facts.headPlaceholders.push(p)
    facts.forbidden.push(p)
  } else if (kind === 'symlink') watchLink(facts, p, projectDirs)
  else facts.readOnly.push(p)
}

/**
 * The folders between the writable place that holds `dir` and `dir`, parents first: a git dir kept
 * in the work tree (`gitdir: .meta/gd`, or in a bound folder) would leave with a folder renamed on
 * its way, and the .git file would then name whatever the session put there (red team).
 */
function foldersLeadingTo(dir: string, places: readonly string[]): string[] {
  const place = places.filter(p => p !== dir && isWithin(dir, p)).sort((a, b) => b.length - a.length)[0]
  const folders: string[] = []
  if (place === undefined) return folders
  for (let folder = path.dirname(dir); folder !== place && isWithin(folder, place); folder = path.dirname(folder)) folders.unshift(folder)
  return folders
}


/** The files at the top of a work tree that the host runs (.envrc, .vscode, ...): read-only. */
function protectHostRun(facts: MutableProtect, tree: string, projectDirs: readonly string[]): void {
  for (const entry of HOST_RUN_FILES) {
    if (entry.decision !== 'read-only') continue
    const p = hostRunPath(facts, path.join(tree, entry.path), tree, projectDirs)
    if (p === undefined || facts.workTree.some(e => e.path === p)) continue
    const kind = lstatKind(p)
    facts.workTree.push({ path: p, kind })
    if (kind === 'symlink') watchLink(facts, p, projectDirs)
  }
}

/**
 * A read-only entry below a plain directory (.claude/settings.json) would leave with its parent
 * when that is renamed, and a new one take its place: the parents up to the top are pinned too.
 */
function pinWorkTreeParents(facts: MutableProtect, top: string | undefined): void {
  if (top === undefined) return
  const submoduleDotGits = facts.readOnly.filter(p => path.basename(p) === '.git').map(p => ({ path: p, kind: 'file' as const }))
  for (const { path: p, kind } of [...facts.workTree, ...submoduleDotGits]) {
    if (kind !== 'file' && kind !== 'dir') continue
    for (let parent = path.dirname(p); parent !== top && isWithin(parent, top); parent = path.dirname(parent)) {
      if (lstatKind(parent) === 'dir' && !facts.workTreePins.includes(parent)) facts.workTreePins.unshift(parent)
    }
  }
}

/**
 * Where a host-run entry really is: below a symlinked folder (.claude -> config/claude), its path
 * through the links, which are guarded (a bind through them would be refused as changed, and the
 * agent could swap them). Undefined when that lies outside the project (not writable inside).
 */
function hostRunPath(facts: MutableProtect, p: string, tree: string, projectDirs: readonly string[]): string | undefined {
  const through = throughLinkedFolders(p, tree)
  if (through === undefined) return p
  addLinks(facts, through.links.filter(l => isWithinAny(l.path, projectDirs)))
  return isWithinAny(through.path, projectDirs) ? through.path : undefined
}

function addLinks(facts: MutableProtect, links: readonly { path: string; text: string }[]): void {
  facts.links.push(...links.filter(l => !facts.links.some(known => known.path === l.path)))
}

/**
 * A symlinked entry: a bind would follow it, so what it leads to in the project is protected
 * instead, and the link and its target are watched for the report after the session.
 */
function watchLink(facts: MutableProtect, link: string, projectDirs: readonly string[]): void {
  facts.symlinked.push(link)
  try {
    facts.symlinked.push(fs.realpathSync.native(link))
  } catch {
    // leads nowhere (yet): the link itself is watched
  }
  protectLinkTarget(facts, link, projectDirs)
}

/** What a link leads to in the project: read-only, or moved aside when it appears; the links on the way guarded. */
function protectLinkTarget(facts: MutableProtect, link: string, projectDirs: readonly string[]): void {
  const protection = protectLink(link, projectDirs)
  addLinks(facts, protection.links)
  const target = protection.target
  // A folder holding the project's top or a git dir (`x -> ..`) is not made read-only: that would
  // stop every commit. It is watched only.
  if (target?.kind === 'dir' && [...projectDirs, ...facts.pinned].some(p => isWithin(p, target.path))) facts.symlinked.push(target.path)
  else if (target !== undefined && !facts.workTree.some(e => e.path === target.path)) facts.workTree.push(target)
  if (protection.missing !== undefined && !facts.forbidden.includes(protection.missing)) facts.forbidden.push(protection.missing)
}

/**
 * Links kept inside a protected folder (.git/hooks/pre-commit -> ../../scripts/pre-commit): the
 * folder is read-only, what they lead to would not be. Each such target is one more bind, so there
 * is a bound; beyond it, or in a folder too big to search, the launch refuses, naming the folder
 * (red team: decoys a session made in other folders used up a budget, and the user's own hook
 * script was left writable, unreported). Links leading out of the project cost nothing.
 */
function protectLinksInside(facts: MutableProtect, projectDirs: readonly string[]): void {
  const hooks = facts.readOnly.filter(p => path.basename(p) === 'hooks' && lstatKind(p) === 'dir')
  const folders = [...hooks, ...facts.workTree.filter(e => e.kind === 'dir').map(e => e.path)]
  let all = 0
  for (const folder of folders) {
    const { links, complete } = linksBelow(folder)
    if (!complete) return void facts.refusals.push(`${folder} is too big for claudebox to search for links (more than 512 entries or 4 levels), and it runs on the host; move what is not needed out of it, then rerun`)
    let here = 0
    for (const link of links) {
      const before = facts.workTree.length + facts.forbidden.length
      protectLinkTarget(facts, link, projectDirs)
      const added = facts.workTree.length + facts.forbidden.length - before
      here += added
      all += added
      if (here > LINKS_PER_FOLDER || all > LINKS_IN_ALL) {
        return void facts.refusals.push(`${folder} holds more links into the project than claudebox protects (${LINKS_PER_FOLDER} per folder, ${LINKS_IN_ALL} in all), and it runs on the host; remove the links you do not use, then rerun`)
      }
    }
  }
}

function memo<T>(f: (key: string) => T): (key: string) => T {
  const seen = new Map<string, T>()
  return key => {
    if (!seen.has(key)) seen.set(key, f(key))
    return seen.get(key) as T
  }
}

type MutableProtect = { [K in keyof GitProtectFacts]: GitProtectFacts[K] extends readonly (infer T)[] ? T[] : GitProtectFacts[K] }

function protectGitDir(facts: MutableProtect, dir: string, linked: boolean, worktreeConfig: boolean, projectDirs: readonly string[]): void {
  for (const name of REDIRECTING) {
    const p = path.join(dir, name)
    const kind = lstatKind(p)
    if (!linked && name === 'commondir' && (kind === 'missing' || isCommondirPlaceholder(p))) {
      // Made (or one of a launcher killed before its end, taken over) and bound read-only; watched too,
      // should another session's end remove it meanwhile (quarantine.ts leaves a placeholder alone).
      facts.placeholders.push(p)
      facts.forbidden.push(p)
    } else if (!linked && (name === 'commondir' || name === 'gitdir') && kind !== 'missing') {
      facts.present.push(p) // only a linked worktree's admin dir has them; anywhere else they were planted
    } else if (kind === 'file' || kind === 'dir') {
      facts.readOnly.push(p)
    } else if (kind === 'symlink') {
      // A bind would land on the link's target: not bound (a user's symlinked config or hooks),
      // watched with what it leads to instead (red team: a hooks dir kept in the project changed
      // unreported).
      watchLink(facts, p, projectDirs)
    } else if (EMPTY_WHEN_MISSING.has(name) && !linked) {
      facts.emptyDirs.push(p)
    } else if (name === 'config.worktree' && worktreeConfig) {
      facts.emptyConfigs.push(p)
    }
  }
}

/**
 * The `.git` files of submodules (where their git dir's name puts them, and where `.gitmodules`
 * says, also nested) and of linked worktrees checked out inside the project: each names the git
 * dir that git uses there.
 */
function dotGitFiles(git: GitFacts, search: GitDirSearch): string[] {
  const out = new Set<string>()
  const walk = (modules: string, workTree: string, depth: number): void => {
    if (depth > MAX_MODULES_DEPTH) return
    for (const name of safeReaddir(modules)) {
      if (lstatKind(path.join(modules, name)) !== 'dir') continue
      const sub = path.join(workTree, name)
      if (lstatKind(path.join(sub, '.git')) === 'file') out.add(path.join(sub, '.git'))
      walk(isGitDir(path.join(modules, name)) ? path.join(modules, name, 'modules') : path.join(modules, name), sub, depth + 1)
    }
  }
  walk(path.join(git.commonDir, 'modules'), git.topLevel, 0)
  for (const sub of search.submodules) if (lstatKind(path.join(sub, '.git')) === 'file') out.add(path.join(sub, '.git'))
  for (const entry of search.entries.filter(e => e.linked)) {
    const dotGit = worktreeDotGit(entry.dir)
    if (dotGit !== undefined && lstatKind(dotGit) === 'file') out.add(dotGit)
  }
  return [...out]
}

/** extensions.worktreeConfig in the common config: git then reads config.worktree of each worktree. */
function readsWorktreeConfig(config: string): boolean {
  const text = readSmall(config)
  if (text === undefined || !/worktreeconfig/i.test(text)) return false
  return gitConfig(config, ['--type=bool', 'extensions.worktreeConfig']) === 'true'
}

