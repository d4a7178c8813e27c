// Whether git's idea of "this repository" can be trusted. The agent can write anywhere in the
// project, including a `.git` file or config that points at another repository; a later launch
// must not then bind that repository writable or use its instance. Pure: the probe gathers the
// layout, this module judges it.
import path from 'node:path'
import { isWithin } from '../state/instance.js'
import type { GitFacts, GitLayout } from '../types.js'

export type Trust = { ok: true } | { ok: false; reason: string }

export function trustGit(git: GitFacts | undefined, layout: GitLayout): Trust {
  if (layout.kind === 'env') return { ok: true }
  // A .git that git does not accept (junk in HEAD, a broken gitdir: line) is not "no repository":
  // git on the host would look further up, and a later session could restore it with a planted
  // config. Refuse until the user has looked at it.
  const dotGit = layout.kind === 'none' ? '' : path.join(layout.worktree, '.git')
  const usedByGit = layout.kind === 'dir' ? dotGit : layout.kind === 'file' ? layout.target : undefined
  const unparsed = layout.kind !== 'none' && (git === undefined || (git.gitDir !== usedByGit && git.topLevel !== layout.worktree && isWithin(layout.worktree, git.topLevel)))
  if (unparsed) {
    return {
      ok: false,
      reason: `refusing to start: ${dotGit} exists but git does not accept it as a repository (damaged HEAD or gitdir line?); check it on the host (git -C ${layout.worktree} status), repair or move it away, then rerun claudebox`,
    }
  }
  if (git === undefined) return { ok: true }
  if (layout.kind === 'none') return { ok: false, reason: `git reports ${git.gitDir}, but no .git entry was found above the current directory` }
  if (git.topLevel !== layout.worktree) {
    return refuse(`${dotGit} makes git use ${git.topLevel} as the working tree (core.worktree)`, 'remove core.worktree from its config')
  }
  if (layout.kind === 'dir') {
    if (git.gitDir !== dotGit || git.commonDir !== dotGit) {
      return refuse(`${dotGit} points git at ${git.commonDir} (a commondir file)`, 'remove the commondir file')
    }
    return { ok: true }
  }
  const target = layout.target
  if (target === undefined || git.gitDir !== target) return refuse(`${dotGit} names a git dir git did not use`, 'check the .git file')
  // A linked worktree: its git dir <common>/worktrees/<name> names this .git file back.
  if (layout.backPointer !== undefined) {
    if (layout.backPointer === dotGit && isWithin(target, path.join(git.commonDir, 'worktrees'))) return { ok: true }
    return refuse(`${dotGit} points to ${target}, which belongs to ${path.dirname(layout.backPointer)}`, 'remove the .git file, or run git worktree repair in the real worktree')
  }
  // A submodule or a separate git dir: its config's core.worktree names this directory.
  if (layout.coreWorktree !== layout.worktree) {
    return refuse(
      `${dotGit} points to ${target}, whose core.worktree does not name ${layout.worktree}`,
      `if that git dir is really this project's, run: git --git-dir=${target} config core.worktree ${layout.worktree}`,
    )
  }
  const modules = target.lastIndexOf('/modules/')
  if (modules === -1) return { ok: true } // --separate-git-dir
  const superGitDir = target.slice(0, modules)
  if (layout.superproject === undefined || layout.superGitDir !== superGitDir) {
    return refuse(`${dotGit} points into ${superGitDir}, which is not the git dir of a repository around it`, 'remove the .git file')
  }
  const outer = layout.superproject
  if (outer.kind !== 'dir' && outer.kind !== 'file') return refuse(`the superproject of ${layout.worktree} could not be verified`, 'remove the .git file')
  return trustGit({ topLevel: outer.worktree, gitDir: superGitDir, commonDir: superGitDir }, outer)
}

const refuse = (what: string, fix: string): Trust => ({
  ok: false,
  reason: `refusing to trust this repository: ${what}; ${fix}, or start claudebox elsewhere`,
})
