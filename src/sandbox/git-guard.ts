// What the sandbox may not change so that the host's git (and the host's other tools) never run
// what the agent wrote: the mounts that pin the git dirs, the read-only files, and what the
// launcher watches during the session. Pure: facts in (git-guard-probe.ts), bwrap arguments out.
import { launchError } from '../errors.js'
import type { FileStep, GitProtectFacts, MkdirStep } from '../types.js'

export interface GitGuardPlan {
  /** bwrap argument groups, in order: pins first (parents before children), then read-only binds. */
  groups: string[][]
  readOnly: string[]
  mkdirs: MkdirStep[]
  files: FileStep[]
  protections: string[]
  /** Names that must not appear during the session (moved aside by the launcher if they do). */
  forbidden: string[]
  /** Symlinks leading to protected files: anything put in their place is moved aside at once. */
  links: { path: string; text: string }[]
  /** Git dirs to check after the session (HEAD still valid, nothing new in modules/ or worktrees/). */
  gitDirs: string[]
  /** The commondir placeholders the launch makes (or found from a session before), removed after the session. */
  placeholders: string[]
  /** The empty HEAD folders it makes at the tops of the work trees, the same way. */
  headPlaceholders: string[]
}

/**
 * What a commondir placeholder holds: git reads a commondir relative to its git dir, so `./` makes
 * the git dir its own common dir, as it is without one. libgit2 and gitoxide take it so too (not
 * `.`, which libgit2 1.5 refuses: red team, round 85), and Claude Code's own checks know it. The
 * visible difference: `git rev-parse --git-common-dir` at the top of the work tree prints the git
 * dir's absolute path instead of `.git`.
 */
export const COMMONDIR_PLACEHOLDER = './\n'

/**
 * A writable git dir is needed to commit (git creates index.lock, HEAD.lock... at its top and
 * renames them), so the top stays writable; instead every git dir is bound onto itself, which makes
 * it a mount point that cannot be renamed away and rebuilt, and what git reads to decide what to
 * run or which repository to use is read-only. What cannot be pinned because it does not exist
 * yet is created neutral (an empty config.worktree; empty hooks, remotes and branches dirs; a
 * commondir placeholder and an empty HEAD folder at the top of each work tree, which the launcher
 * removes after the session) or watched.
 *
 * Why not watch the commondir and move a planted one aside, as before: a session that plants it
 * the moment the host's git runs a child git (git commit's `git maintenance run --auto`, which
 * finds the repository again) wins that race (red team, round 84: 7 of 9); a read-only mount cannot
 * be raced. The same for a HEAD at the top of a work tree (round 85: made there while a junk HEAD
 * was swapped into .git, timed to a host git commit, 4 of 9 had the top taken for the repository).
 */
export function planGitGuard(protect: GitProtectFacts, writableGitConfig: boolean): GitGuardPlan {
  const [refusal] = protect.refusals
  if (refusal !== undefined && !writableGitConfig) throw launchError(refusal)
  if (protect.present.length > 0) {
    const [first] = protect.present
    throw launchError(
      `${first ?? ''} would make git use another repository's configuration, and git never writes it there; inspect it, move it out of the git dir (mv ${first ?? ''} /tmp/), then rerun claudebox`,
    )
  }
  const plan: GitGuardPlan = { groups: [], readOnly: [], mkdirs: [], files: [], protections: [], forbidden: [], links: [...protect.links], gitDirs: [], placeholders: [], headPlaceholders: [] }
  const hostRun = protect.workTree.filter(entry => entry.kind === 'file' || entry.kind === 'dir').map(entry => entry.path)
  if (hostRun.length > 0) plan.protections.push('working-tree files the host runs (.envrc, .vscode, .npmrc, .husky, ...) read-only while they exist')
  // Pins first, parents before children: a read-only bind below a pin must not be covered by it.
  const pin = (dir: string): void => void plan.groups.push(['--bind', dir, dir])
  protect.workTreePins.forEach(pin)
  if (writableGitConfig) return withReadOnly(plan, hostRun)
  protect.pinned.forEach(pin)
  plan.gitDirs = [...protect.gitDirs]
  for (const p of protect.emptyDirs) plan.mkdirs.push({ path: p, mode: 0o755 })
  for (const p of protect.emptyConfigs) plan.files.push({ path: p, content: '', mode: 0o644 })
  for (const p of protect.placeholders) plan.files.push({ path: p, content: COMMONDIR_PLACEHOLDER, mode: 0o644, exact: true })
  for (const p of protect.headPlaceholders) plan.mkdirs.push({ path: p, mode: 0o755 })
  plan.placeholders = [...protect.placeholders]
  plan.headPlaceholders = [...protect.headPlaceholders]
  plan.forbidden = [...protect.forbidden]
  if (protect.pinned.length > 0) {
    plan.protections.push('git dirs pinned (cannot be replaced); config, hooks, commondir and .git files read-only; a missing commondir held by a read-only placeholder while the session runs')
  }
  return withReadOnly(plan, [...hostRun, ...protect.readOnly, ...protect.emptyDirs, ...protect.emptyConfigs, ...protect.placeholders, ...protect.headPlaceholders])
}

function withReadOnly(plan: GitGuardPlan, paths: readonly string[]): GitGuardPlan {
  for (const p of paths) plan.groups.push(['--ro-bind', p, p])
  plan.readOnly.push(...paths)
  return plan
}
