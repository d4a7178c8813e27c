// A rebase, cherry-pick or revert in progress keeps in the git dir what git runs at the user's
// `--continue`: the exec lines of its to-do list, and the merge strategy, which git runs as the
// program `git-merge-<strategy>`, found from the work tree's top when the name holds a slash (red
// team, round 37: a strategy of `/../tools/x` beside an empty `git-merge-` folder ran tools/x at
// `git rebase --continue`, unreported). The session may rebase, so these stay writable; at its end a
// strategy that names a path is moved aside (git then takes its default strategy), and exec lines
// are named for the user.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { lstatKind, readNoFollow } from './fs.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { gitConfigRun } from './git-dirs.js'
import { GIT } from './system-programs.js'

/** Files holding the strategy a rebase (merge or apply backend) or the sequencer (cherry-pick, revert) runs. */
const STRATEGY_FILES = ['rebase-merge/strategy', 'rebase-apply/strategy', 'sequencer/opts']
const TODO_FILES = ['rebase-merge/git-rebase-todo', 'sequencer/todo']

/**
 * git's own strategies. Any other name git runs as the program `git-merge-<name>`: from the work
 * tree with a slash in it, or from an empty or relative entry of the user's PATH without one (red
 * team, rounds 37 and 40). A strategy of another name that the session leaves is moved aside.
 */
const BUILTIN_STRATEGIES = new Set(['ort', 'recursive', 'resolve', 'octopus', 'ours', 'subtree'])

/**
 * Whether a strategy file names only git's own strategies, read as git reads it: a strategy file
 * as git writes it (the name and a newline; readNoFollow drops the newline, and anything else,
 * even a `\r`, counts as another name),
 * sequencer/opts by git itself (red team, round 41: a bare `\r` that git turns into a space ended a
 * regular expression's value early, and `ort\r/../p` passed for `ort`). One git cannot read is not.
 */
function builtinStrategy(name: string, text: string): boolean {
  if (name.endsWith('/strategy')) return BUILTIN_STRATEGIES.has(text) // git writes `ort\n`; anything else is not taken for git's own
  let out: string
  try {
    out = execFileSync(GIT(), ['config', '--no-includes', '--file', '-', '--null', '--get-all', 'options.strategy'], { ...gitConfigRun(), input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'], timeout: 5_000 })
  } catch (error) {
    return (error as { status?: number }).status === 1 // 1: no such key; anything else: git could not read it
  }
  return out.split('\0').filter(value => value !== '').every(value => BUILTIN_STRATEGIES.has(value))
}

/** Git reads these of any size; larger ones are moved aside rather than left unread. */
const READ_LIMIT = 16 << 20

/**
 * Moves path strategies aside through `quarantine`, and any of these files that is a symlink or
 * too large to read (git follows a link and reads any size: red team, round 38, a symlinked
 * strategy file was skipped); returns the warnings about exec lines.
 */
export function checkInProgress(gitDirs: readonly string[], quarantine: (planted: string) => void): string[] {
  const warnings: string[] = []
  const read = (file: string): string | undefined => {
    if (lstatKind(file) === 'missing') return undefined
    const text = readNoFollow(file, READ_LIMIT)
    if (text === undefined) quarantine(file)
    return text
  }
  for (const dir of gitDirs) {
    for (const name of STRATEGY_FILES) {
      const file = path.join(dir, name)
      const text = read(file)
      if (text !== undefined && !builtinStrategy(name, text)) quarantine(file)
    }
    for (const name of TODO_FILES) {
      const execs = (read(path.join(dir, name)) ?? '').split('\n').filter(line => /^\s*(x|exec)\s/.test(line))
      if (execs.length > 0) warnings.push(`WARNING: an operation in progress in ${inlineSafe(dir)} runs these commands on the host at git rebase --continue (or cherry-pick --continue); read ${inlineSafe(name)} before you continue it: ${execs.slice(0, 5).map(line => inlineSafe(line.trim())).join('; ')}${execs.length > 5 ? ` (and ${execs.length - 5} more)` : ''}`)
    }
  }
  return warnings
}
