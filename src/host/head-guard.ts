// HEAD of each git dir, kept one git accepts while the session runs. A HEAD git rejects makes it
// skip that .git and take the folder itself, or one above, for the repository if it looks like
// one (HEAD, objects/, refs/): the agent's config there then ran at the host's next git status
// (red team, round 24). objects/ and refs/ are pinned; HEAD cannot be (git replaces it by a rename),
// so a rejected one is put back as it was at the start, and that is reported.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind, randomHex, readNoFollow } from './fs.js'
import { guardModes, type ModeGuard } from './mode-guard.js'
import { identitiesNow, pinRoots, rootsOf, type PinnedRoots } from './pinned-roots.js'
import { inlineSafe } from '../cli/terminal-safe.js'

type Head = { kind: 'file' | 'symlink'; text: string }

/** git's validate_headref: a symlink into refs/, "ref: refs/...", or an object id. */
export function headIsValid(dir: string): boolean {
  const head = readHead(dir)
  if (head === undefined) return false
  if (head.kind === 'symlink') return head.text.startsWith('refs/')
  // As git reads it: its first 255 bytes only (red team: "ref:" and 300 spaces passed here), git's
  // own isspace (space, tab, CR, LF; not JavaScript's \s, which took a form feed), hex of any case.
  const text = head.text.slice(0, 255)
  return /^ref:[ \t\r\n]*refs\//.test(text) || /^[0-9a-fA-F]{40}/.test(text)
}

function readHead(dir: string): Head | undefined {
  const file = path.join(dir, 'HEAD')
  const kind = lstatKind(file)
  try {
    if (kind === 'symlink') return { kind, text: fs.readlinkSync(file) }
  } catch {
    return undefined
  }
  // Never opened blocking: a FIFO planted as HEAD would hang the launcher (and does hang git).
  const text = kind === 'file' ? readNoFollow(file, 4096) : undefined
  return text === undefined ? undefined : { kind: 'file', text }
}

export interface HeadGuard {
  /**
   * Puts back each HEAD git would now reject and each git dir's access taken away, and takes back
   * write access the session gave others (mode-guard.ts); `final` (the session's end) looks deeper,
   * also into `more` git dirs (those the session made: a submodule's or a worktree's).
   */
  check(final?: boolean, more?: readonly string[]): void
  /**
   * Puts back only each HEAD git would now reject: at every inotify event on a HEAD (git-watch.ts),
   * `presentOnly` there: a HEAD only gone is left to the 200 ms look (with the top's HEAD held by a
   * placeholder, git then takes no folder of the project; and a project being removed, rm -rf, is
   * not filled in again).
   */
  headsNow(presentOnly?: boolean): void
  /** What was put back, for the report after the session. */
  restored(): string[]
  /** The guard of write access for others, which `check` runs. */
  readonly modes: ModeGuard
}

/**
 * `workTrees` are the project's top and bound trees, `ways` the folders the probe pinned on the way
 * to the git dirs; `putBackOne` hears of each HEAD put back (the git watch counts them). HEADs and
 * modes are put back, and write access taken back, only in the folders of `roots` (pinned-roots.ts;
 * by default these folders as they are now).
 */
export function guardHeads(gitDirs: readonly string[], workTrees: readonly string[] = [], ways: readonly string[] = [], putBackOne: (dir: string) => void = () => {}, roots = pinRoots(identitiesNow(rootsOf({ workTrees, gitDirs, ways })))): HeadGuard {
  // Read in the folders themselves too: a path swapped as the guard begins leads to another's.
  const recorded = new Map<string, Head>()
  for (const dir of gitDirs) {
    const head = inPinned(roots, dir, at => (headIsValid(at) ? readHead(at) : undefined))
    if (head !== undefined) recorded.set(dir, head)
  }
  const modes = recordModes(gitDirs, roots)
  const restored = new Set<string>()
  const guard = guardModes(gitDirs, workTrees, ways, roots)
  const headsNow = (presentOnly = false): void => {
    for (const [dir, head] of recorded) {
      const wrong = (at: string): boolean => !headIsValid(at) && !(presentOnly && lstatKind(path.join(at, 'HEAD')) === 'missing')
      if (inPinned(roots, dir, at => wrong(at) && putBack(at, head)) !== true) continue
      restored.add(`${inlineSafe(dir)}/HEAD (put back: ${inlineSafe(head.text.trim())})`)
      putBackOne(dir)
    }
  }
  return {
    headsNow,
    check(final = false, more: readonly string[] = []): void {
      headsNow()
      // First, so that a git dir made unreadable (0333) is read again by the look below (round 63).
      for (const [dir, mode] of modes) {
        try {
          if (inPinned(roots, dir, at => !canEnter(at) && (fs.chmodSync(at, mode), true)) !== true) continue
          restored.add(`${inlineSafe(dir)} (mode put back: ${mode.toString(8)})`)
        } catch {
          // gone or not ours: the launch after refuses a git dir git rejects
        }
      }
      guard.look(final, more)
    },
    restored: () => [...restored],
    modes: guard,
  }
}

/** Runs `act` on the folder `dir` (`/proc/self/fd/N`), reached inside `roots`; undefined when it cannot be. */
function inPinned<T>(roots: PinnedRoots, dir: string, act: (at: string) => T): T | undefined {
  const fd = roots.open(dir)
  if (fd === undefined) return undefined
  try {
    return act(`/proc/self/fd/${fd}`)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The modes of the git dirs and their objects/ and refs/ (pinned, so these paths stay theirs): a
 * session that takes the user's access away (chmod 000 .git/refs) makes git reject the git dir as
 * surely as a bad HEAD (red team: the top then became the repository, as uid 1001).
 */
function recordModes(gitDirs: readonly string[], roots: PinnedRoots): Map<string, number> {
  const modes = new Map<string, number>()
  for (const p of gitDirs.flatMap(dir => [dir, path.join(dir, 'objects'), path.join(dir, 'refs')])) {
    // Not there (a linked worktree's admin dir has no objects/): nothing to keep.
    const mode = inPinned(roots, p, at => (canEnter(at) ? fs.statSync(at).mode & 0o7777 : undefined))
    if (mode !== undefined) modes.set(p, mode)
  }
  return modes
}

function canEnter(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Writes `head` beside HEAD and renames it over HEAD (what is there is moved aside if it is a folder). */
function putBack(dir: string, head: Head): boolean {
  const temp = path.join(dir, `HEAD.claudebox-restore-${randomHex(6)}`)
  try {
    if (head.kind === 'symlink') fs.symlinkSync(head.text, temp)
    else fs.writeFileSync(temp, head.text.endsWith('\n') ? head.text : `${head.text}\n`, { flag: 'wx', mode: 0o644 })
    if (lstatKind(path.join(dir, 'HEAD')) === 'dir') fs.renameSync(path.join(dir, 'HEAD'), path.join(dir, `HEAD.claudebox-quarantine-${randomHex(6)}`))
    fs.renameSync(temp, path.join(dir, 'HEAD'))
    return true
  } catch {
    try {
      fs.rmSync(temp, { force: true })
    } catch {
      // the folder cannot be reached (a session took its access away): there is no temp file in it
    }
    return false
  }
}
