// --adopt OLD_ROOT: move a moved project's instance to its new id and rename Claude's per-path
// history so `claude -c` / `--resume` find the old conversations at the new path. Pure planning.
import path from 'node:path'
import { usageError } from '../errors.js'
import type { ScannedEntry } from './gc.js'
import { shq } from '../sandbox/quote.js'
import { isWithin } from './instance.js'

/** Claude Code names a project's history folder after its directory: every non-alphanumeric -> '-'. */
export const sanitizePath = (p: string): string => p.replace(/[^a-zA-Z0-9]/g, '-')

/** The working tree a recorded root stands for: the repository for `<repo>/.git`, else itself. */
export const workingTreeOf = (root: string): string => (path.basename(root) === '.git' ? path.dirname(root) : root)

export interface AdoptInput {
  /** OLD_ROOT as the user gave it, made absolute. */
  oldRoot: string
  oldRootExists: boolean
  entries: readonly ScannedEntry[]
  newRoot: string
  newId: string
  newTopLevel: string
  /** The instance already at the new id (and where to move it aside): undefined when there is none. */
  target: { conversations: number; liveSessions: number; dir: string; asideDir: string } | undefined
  /** The folders under projects/ in the old instance. */
  projectFolders: readonly HistoryFolder[]
}

/** A folder of Claude's history (projects/<sanitized path>/), with the cwd its first transcript records, if any. */
export interface HistoryFolder {
  name: string
  cwd?: string
}

export interface AdoptPlan {
  fromId: string
  toId: string
  oldRoot: string
  newRoot: string
  /** Replace an existing target instance that holds no conversations. */
  replaceEmptyTarget: boolean
  renames: { from: string; to: string }[]
}

export function planAdopt(input: AdoptInput): AdoptPlan {
  const { oldRoot } = input
  if (input.oldRootExists) {
    throw usageError(`${oldRoot} still exists; --adopt is for a project that moved (run it in the new location after the move)`)
  }
  const matches = input.entries.filter(e => e.recordedRoot !== undefined && (e.recordedRoot === oldRoot || workingTreeOf(e.recordedRoot) === oldRoot))
  if (matches.length === 0) throw usageError(`no instance records ${oldRoot}; claudebox --list shows the recorded roots`)
  if (matches.length > 1) {
    throw usageError(`several instances match ${oldRoot} (${matches.map(m => m.name).join(', ')}); give the exact recorded root from claudebox --list`)
  }
  const match = matches[0] as ScannedEntry
  if (match.liveSessions > 0) throw usageError(`instance ${match.name} has a live session; end it first`)
  if (match.name === input.newId) throw usageError(`${oldRoot} already maps to this project's instance; nothing to adopt`)
  // A session started empty in the new place still writes there: replacing it would lose its work.
  if (input.target && input.target.liveSessions > 0) throw usageError(`this project's instance ${input.newId} has a live session; end it first`)
  if (input.target && input.target.conversations > 0) {
    throw usageError(
      `this project already has an instance with ${input.target.conversations} conversation(s) (${input.newId}); --adopt will not merge two histories. To keep the old one instead, move the new one aside and rerun: mkdir -p ${shq(input.target.asideDir)} && mv ${shq(input.target.dir)} ${shq(input.target.asideDir)}/`,
    )
  }
  const renames = historyRenames(input.projectFolders, match.recordedRoot as string, input.newTopLevel)
  const clash = renames.find(r => input.projectFolders.some(f => f.name === r.to) && !renames.some(o => o.from === r.to))
  if (clash) throw usageError(`projects/${clash.to} already exists in the old instance; move it aside and rerun`)
  return { fromId: match.name, toId: input.newId, oldRoot: match.recordedRoot as string, newRoot: input.newRoot, replaceEmptyTarget: input.target !== undefined, renames }
}

/**
 * Claude's history folders of the old place (its path and the subdirectories under it), renamed for
 * the new one. The names alone cannot tell /w/proj/feat from a sibling worktree /w/proj-feat (both
 * -w-proj-feat): a folder whose transcript records a cwd outside the old place is not its own (red
 * team, round 94: a sibling worktree's history was renamed away from it). The cwd counts only when
 * the folder is still named after it: one an earlier --adopt renamed keeps its first place's cwd
 * (round 96: a project moved twice lost its history at the second).
 */
export function historyRenames(folders: readonly HistoryFolder[], oldRoot: string, newTopLevel: string): { from: string; to: string }[] {
  const oldTop = workingTreeOf(oldRoot)
  const oldPrefix = sanitizePath(oldTop)
  const newPrefix = sanitizePath(newTopLevel)
  return folders
    .filter(({ name, cwd }) => (name === oldPrefix || name.startsWith(`${oldPrefix}-`)) && (cwd === undefined || sanitizePath(cwd) !== name || isWithin(cwd, oldTop)))
    .map(({ name }) => ({ from: name, to: newPrefix + name.slice(oldPrefix.length) }))
}

export function renderAdopt(plan: AdoptPlan): string {
  const lines = [
    `move instance ${plan.fromId} -> ${plan.toId}`,
    `rewrite project-root: ${plan.oldRoot} -> ${plan.newRoot}`,
    ...(plan.replaceEmptyTarget ? [`set the new location's instance ${plan.toId} (no conversations) aside, kept in aside/ of claudebox's home`] : []),
    ...plan.renames.map(r => `rename projects/${r.from} -> projects/${r.to}`),
  ]
  return lines.map(l => `${l}\n`).join('')
}

/** The conversation id of `--resume ID`, `--resume=ID` or `-r ID`, if any. */
export function resumeId(claudeArgs: readonly string[]): string | undefined {
  for (let i = 0; i < claudeArgs.length; i++) {
    const arg = claudeArgs[i] as string
    if (arg.startsWith('--resume=')) return arg.slice('--resume='.length)
    if ((arg === '--resume' || arg === '-r') && /^[0-9a-f-]{8,}$/i.test(claudeArgs[i + 1] ?? '')) return claudeArgs[i + 1]
  }
  return undefined
}
