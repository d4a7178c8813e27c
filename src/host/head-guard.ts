// HEAD of each git dir, kept one git accepts while the session runs. A HEAD git rejects makes it
// skip that .git and take the folder itself, or one above, for the repository if it looks like
// one (HEAD, objects/, refs/): the agent's config there then ran at the host's next git status
// (red team, round 24). objects/ and refs/ are pinned; HEAD cannot be (git replaces it by a rename),
// so a rejected one is put back as it was at the start, and that is reported.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind, O_PATH, randomHex, readNoFollow } from './fs.js'
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
   * Puts back each HEAD git would now reject, and takes back write access the session gave
   * others; `final` (the session's end) looks at every entry of the git dirs, not only git's own.
   */
  check(final?: boolean): void
  /** What was put back, for the report after the session. */
  restored(): string[]
  /** Where write access for others was taken back, for the report after the session. */
  narrowed(): string[]
}

export function guardHeads(gitDirs: readonly string[], workTrees: readonly string[] = []): HeadGuard {
  const recorded = new Map<string, Head>()
  for (const dir of gitDirs) {
    const head = readHead(dir)
    if (head !== undefined && headIsValid(dir)) recorded.set(dir, head)
  }
  const modes = recordModes(gitDirs)
  const restored = new Set<string>()
  const granted = othersMayWrite([...gitDirs, ...workTrees])
  const narrowed = new Set<string>()
  return {
    check(final = false): void {
      for (const [top, allowed] of granted) narrowWrite(top, allowed, gitDirs.includes(top), final, narrowed)
      for (const [dir, head] of recorded) {
        if (headIsValid(dir)) continue
        if (putBack(dir, head)) restored.add(`${inlineSafe(dir)}/HEAD (put back: ${inlineSafe(head.text.trim())})`)
      }
      for (const [dir, mode] of modes) {
        if (canEnter(dir)) continue
        try {
          fs.chmodSync(dir, mode)
          restored.add(`${inlineSafe(dir)} (mode put back: ${mode.toString(8)})`)
        } catch {
          // gone or not ours: the launch after refuses a git dir git rejects
        }
      }
    },
    restored: () => [...restored],
    narrowed: () => [...narrowed],
  }
}

/**
 * The write access for group and others each git dir and work tree top gave at the start (a
 * shared repository's g+w stays), or the user's umask gives new files (002: the group's, as on
 * systems where each user has a group of their own). Beyond it, a chmod inside (777, or an ACL's
 * mask) lets other local users replace the config the host's git runs (red team, round 61).
 */
function othersMayWrite(tops: readonly string[]): Map<string, number> {
  const byUmask = 0o022 & ~umask()
  const granted = new Map<string, number>()
  for (const top of tops) {
    const mode = modeNoFollow(top)
    if (mode !== undefined) granted.set(top, (mode & 0o022) | byUmask)
  }
  return granted
}

/** This process's umask, read (process.umask() without an argument sets it twice to read it); 022 when it cannot be. */
function umask(): number {
  const line = /^Umask:\s*([0-7]+)$/m.exec(readNoFollow('/proc/self/status') ?? '')
  return line?.[1] === undefined ? 0o022 : parseInt(line[1], 8)
}

/**
 * Takes back group and other write bits beyond `allowed` on `top` and, for a git dir, on what it
 * holds directly: the names git reads first, at every look (junk names sorted before them hid them
 * from a capped listing: red team, round 62), and at the session's end every other entry too,
 * up to SWEEP_LIMIT. Deeper entries are left as they are.
 */
function narrowWrite(top: string, allowed: number, gitDir: boolean, final: boolean, narrowed: Set<string>): void {
  narrowOne(top, allowed, narrowed)
  if (!gitDir) return
  for (const name of GIT_NAMES) narrowOne(path.join(top, name), allowed, narrowed)
  if (!final) return
  let dir: fs.Dir | undefined
  try {
    dir = fs.opendirSync(top)
    for (let seen = 0, entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      if (++seen > SWEEP_LIMIT) return void narrowed.add(`not all looked at: ${inlineSafe(top)} holds more than ${SWEEP_LIMIT} entries (look with ls -la)`)
      if (!GIT_NAMES.includes(entry.name)) narrowOne(path.join(top, entry.name), allowed, narrowed)
    }
  } catch {
    // gone or unreadable: the git dir's own mode was looked at above
  } finally {
    dir?.closeSync()
  }
}

/**
 * One file or folder, through a descriptor that names it without following a symlink the session
 * put there (O_PATH: a folder the session made unreadable, 0333, is reached too, round 62), its
 * mode changed through /proc/self/fd (a launch needs /proc to be its own). Symlinks, sockets and
 * FIFOs are left alone.
 */
function narrowOne(p: string, allowed: number, narrowed: Set<string>): void {
  let fd: number | undefined
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW)
    const st = fs.fstatSync(fd)
    if (!st.isFile() && !st.isDirectory()) return
    const mode = st.mode & 0o7777
    const extra = mode & 0o022 & ~allowed
    if (extra === 0) return
    fs.chmodSync(`/proc/self/fd/${fd}`, mode & ~extra)
    narrowed.add(`${inlineSafe(p)} (${mode.toString(8)} made ${(mode & ~extra).toString(8)})`)
  } catch {
    // gone, or nothing to take back through it
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** What git reads in a git dir (and claudebox's own end-of-session checks look into). */
const GIT_NAMES = [
  'config', 'config.worktree', 'commondir', 'gitdir', 'HEAD', 'index', 'packed-refs', 'shallow', 'info', 'hooks', 'objects', 'refs', 'logs',
  'modules', 'worktrees', 'rebase-merge', 'rebase-apply', 'sequencer', 'FETCH_HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'CHERRY_PICK_HEAD', 'REVERT_HEAD',
]

/** Other entries of a git dir looked at at the session's end, at most (git makes about twenty). */
const SWEEP_LIMIT = 20_000

function modeNoFollow(p: string): number | undefined {
  try {
    const st = fs.lstatSync(p)
    return st.isDirectory() ? st.mode & 0o7777 : undefined
  } catch {
    return undefined
  }
}

/**
 * The modes of the git dirs and their objects/ and refs/ (pinned, so these paths stay theirs): a
 * session that takes the user's access away (chmod 000 .git/refs) makes git reject the git dir as
 * surely as a bad HEAD (red team: the top then became the repository, as uid 1001).
 */
function recordModes(gitDirs: readonly string[]): Map<string, number> {
  const modes = new Map<string, number>()
  for (const p of gitDirs.flatMap(dir => [dir, path.join(dir, 'objects'), path.join(dir, 'refs')])) {
    try {
      const st = fs.lstatSync(p)
      if (st.isDirectory() && canEnter(p)) modes.set(p, st.mode & 0o7777)
    } catch {
      // not there (a linked worktree's admin dir has no objects/): nothing to keep
    }
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
    fs.rmSync(temp, { force: true })
    return false
  }
}
