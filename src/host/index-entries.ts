// The git index is the session's to write (the agent stages and commits), and git writes what it
// lists into the work tree at the user's `git checkout .` or `git restore .`: it checks a path when
// one is added, not when it reads an index from disk (red team, round 38: entries named
// `.git/config` and `.git/hooks/pre-commit`, renamed in the index file, were written into the
// host's git dir by `git checkout .`, and the next `git status` ran the session's fsmonitor). At the
// session's end every index there is read by git, and one with a path git would refuse
// (through a `.git` folder, or out of the work tree with `..`) is moved aside, with the way to
// rebuild it.
import fs from 'node:fs'
import path from 'node:path'
import { hostTempDir, lstatKind, removeDir } from './fs.js'
import { commonDirOf } from './git-dirs.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { indexCacheOn, indexDigest, keepClean, keptGitlinks, saveIndexCache } from './index-cache.js'
import { BOTH, configBytes, formatsOf } from './index-format.js'
import { gitVerdict, indexFilesRegular, RUN_MS, type Verdict } from './index-git.js'

/**
 * Each git dir's index, whenever it was written: moved aside through `quarantine` when git would
 * write outside the work tree or into a `.git` from it. Not only those written during the session
 * (red team, round 42: a split index's `sharedindex.*` rewritten while `index` kept its time, and a
 * nested git dir prepared in one session and renamed into place in the next, its files' times
 * older than the session). One `git ls-files` per git dir, after Claude has exited.
 */
export function checkIndexes(gitDirs: readonly string[], quarantine: (planted: string) => void, gitlinks: (gitDir: string, paths: Buffer[]) => void = () => {}): string[] {
  const warnings: string[] = []
  const indexed = gitDirs.filter(dir => lstatKind(path.join(dir, 'index')) !== 'missing')
  // Each costs a git run: a session that made thousands of repositories must not hold the end of it for minutes.
  if (indexed.length > MAX_INDEXES) {
    warnings.push(`WARNING: the project holds ${indexed.length} git repositories with an index; claudebox had git read the first ${MAX_INDEXES}, the rest not (${indexed.slice(MAX_INDEXES, MAX_INDEXES + 3).map(inlineSafe).join(', ')}, ...): a git checkout or restore in one of them could write what its index lists anywhere; run git reset in each before you do`)
  }
  const moved: string[] = []
  const deadline = Date.now() + CHECKS_MS
  const checked = indexed.slice(0, MAX_INDEXES)
  for (const [i, dir] of checked.entries()) {
    const left = deadline - Date.now()
    if (left <= 0) {
      warnings.push(`WARNING: claudebox's git runs on the indexes took more than ${CHECKS_MS / 1000} s in all; these were not read: ${checked.slice(i, i + 3).map(inlineSafe).join(', ')}${checked.length - i > 3 ? ', ...' : ''}: a git checkout or restore in one of them could write what its index lists anywhere; run git reset in each before you do`)
      break
    }
    const index = path.join(dir, 'index')
    // Gone since the list was made: the git dir itself was moved aside (a new gitlink's `.git`, by
    // the check of an index before it), and nothing is left there for git to read.
    if (lstatKind(index) === 'missing') continue
    // A FIFO or other special file would hold git for its whole timeout, in every such repository.
    const bad = indexFilesRegular(dir) ? unsafePathsOrWhy(dir, Math.min(RUN_MS, left)) : Object.assign(['(an index, or its shared part, that is no regular file, or larger than 256 MiB)'], { gitlinks: [] })
    if (!Array.isArray(bad)) {
      warnings.push(`WARNING: claudebox could not start git to read the index of ${inlineSafe(dir)} (${bad.unread}); it was left as it is: a git checkout or restore there could write what it lists anywhere; look at it with git ls-files, or run git reset there, before you do`)
      continue
    }
    if (bad.length > 0) {
      quarantine(index)
      moved.push(`${inlineSafe(dir)} (${bad.slice(0, 3).map(inlineSafe).join(', ')})`)
    }
    // After the index is moved aside: narrowing its gitlinks' folders may fail, the move must not (round 69).
    try {
      gitlinks(dir, bad.gitlinks)
    } catch {
      // what could be taken back was; the guard says what it took
    }
  }
  saveIndexCache()
  if (moved.length > 0) {
    warnings.push(`WARNING: the session left git indexes listing paths that git would write outside the work tree or into a .git folder at your next git checkout or restore; each was moved aside (see above): run git reset there to make it anew from HEAD (what was staged is lost from it, the files stay as they are): ${moved.slice(0, 5).join('; ')}${moved.length > 5 ? ` (and ${moved.length - 5} more)` : ''}`)
  }
  return warnings
}

/** Indexes read at most at a session's end (~3 ms each). */
const MAX_INDEXES = 64
/** How long all of the git runs on the indexes at a session's end may take together. */
const CHECKS_MS = 20_000

/**
 * The index's paths git would refuse to add, as git reads the index (any version): through a `.git`
 * folder, or with a `..`, `.` or empty part, which leads out of the work tree (red team, round 39:
 * `../.gitconfig` became the user's global config at `git checkout .`). One git cannot read counts
 * as bad. When git could not be started at all (the launcher out of descriptors or memory), the
 * index says nothing, and is not moved: `unread` says why (red team, round 59: a sandbox that used
 * up the launcher's descriptors had the user's staged index moved aside). An index whose very bytes
 * git found clean at an earlier session's end is not read again (index-cache.ts).
 */
function unsafePaths(gitDir: string, timeout: number): Verdict {
  const configFile = path.join(commonDirOf(gitDir) ?? gitDir, 'config')
  const look = indexCacheOn() ? indexDigest(gitDir, configFile) : undefined
  const kept = look === undefined ? undefined : keptGitlinks(gitDir, look.digest)
  if (kept !== undefined) return Object.assign([], { gitlinks: kept })
  const work = tempFolder()
  if (work === undefined) return gitVerdict(gitDir, { indexDir: gitDir, ownObjects: false, formats: BOTH }, timeout)
  try {
    // Git reads a copy of the bytes hashed, never the index itself (index-cache.ts says why), and,
    // the copy holding no sparse directory, no objects at all: nothing the session changes
    // meanwhile changes what git reads (red team, round 119: the objects folder made unreadable
    // for a moment failed the run in the right format). The index itself when no copy could be made.
    const copied = indexDigest(gitDir, configFile, work)
    const formats = formatsOf(copied === undefined ? configBytes(configFile) : copied.config, work)
    const verdict = gitVerdict(gitDir, copied === undefined ? { indexDir: gitDir, ownObjects: false, formats } : { indexDir: work, ownObjects: true, formats }, timeout)
    if (copied !== undefined && Array.isArray(verdict) && verdict.length === 0) keepClean(gitDir, copied.digest, verdict.gitlinks)
    return verdict
  } finally {
    removeDir(work)
  }
}

/**
 * The gitlinks `gitDir`'s index lists, as git reads it: for an index past the checks' bound that a
 * gitlink leads git status into (git-watch.ts). None without an index; undefined when git cannot
 * read it, or it lists a path git would refuse.
 */
export function gitlinksOf(gitDir: string): Buffer[] | undefined {
  if (lstatKind(path.join(gitDir, 'index')) === 'missing') return []
  const verdict = indexFilesRegular(gitDir) ? unsafePathsOrWhy(gitDir, RUN_MS) : undefined
  return Array.isArray(verdict) && verdict.length === 0 ? verdict.gitlinks : undefined
}

/** unsafePaths; a failure of its own (no room in /tmp for git's folder) counts as an index git cannot read (red team, round 119: the check was skipped, the index kept). */
function unsafePathsOrWhy(gitDir: string, timeout: number): Verdict {
  try {
    return unsafePaths(gitDir, timeout)
  } catch (error) {
    return Object.assign([`(an index claudebox could not have git read: ${(error as Error).message})`], { gitlinks: [] })
  }
}

/** A folder of claudebox's own for a look at an index; none when none can be made (a full /tmp). */
function tempFolder(): string | undefined {
  try {
    return fs.mkdtempSync(path.join(hostTempDir(), 'claudebox-index-'))
  } catch {
    return undefined
  }
}

