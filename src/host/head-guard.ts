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
   * others; `final` (the session's end) looks deeper, also into `more` git dirs (those the
   * session made: a submodule's or a worktree's).
   */
  check(final?: boolean, more?: readonly string[]): void
  /** What was put back, for the report after the session. */
  restored(): string[]
  /** Where write access for others was taken back, for the report after the session. */
  narrowed(): string[]
  /**
   * At the very end: the folders from the top down to each gitlink of the index of `gitDir`,
   * which git at the top enters, .git or not yet (red team, round 67).
   */
  gitlinks(gitDir: string, paths: readonly string[]): void
}

export function guardHeads(gitDirs: readonly string[], workTrees: readonly string[] = []): HeadGuard {
  const recorded = new Map<string, Head>()
  for (const dir of gitDirs) {
    const head = readHead(dir)
    if (head !== undefined && headIsValid(dir)) recorded.set(dir, head)
  }
  const modes = recordModes(gitDirs)
  const restored = new Set<string>()
  const byUmask = 0o022 & ~umask()
  const narrowed = new Set<string>()
  return {
    check(final = false, more: readonly string[] = []): void {
      for (const [dir, head] of recorded) {
        if (headIsValid(dir)) continue
        if (putBack(dir, head)) restored.add(`${inlineSafe(dir)}/HEAD (put back: ${inlineSafe(head.text.trim())})`)
      }
      // First, so that a git dir made unreadable (0333) is read again by the look below (round 63).
      for (const [dir, mode] of modes) {
        if (canEnter(dir)) continue
        try {
          fs.chmodSync(dir, mode)
          restored.add(`${inlineSafe(dir)} (mode put back: ${mode.toString(8)})`)
        } catch {
          // gone or not ours: the launch after refuses a git dir git rejects
        }
      }
      for (const top of workTrees) narrowOne(top, allowedIn(top, byUmask), narrowed)
      const found = [...new Set([...gitDirs, ...more])]
      // At most MAX_GIT_DIRS, said when more (round 66: 10,000 nested repositories held the end for minutes).
      const dirs = found.slice(0, MAX_GIT_DIRS)
      if (found.length > dirs.length) narrowed.add(`not all looked at: ${found.length - dirs.length} git dirs past the first ${MAX_GIT_DIRS}, from ${inlineSafe(found[MAX_GIT_DIRS] ?? '')} on (look with ls -la)`)
      const holders = new Set(dirs.flatMap(g => ['modules', 'worktrees'].map(sub => path.join(g, sub))))
      // Each git dir's own names and the folders on the way to it first, then the trees within one
      // budget (round 64: spent on the first git dir, it left the others unlooked at).
      for (const dir of dirs) {
        const allowed = allowedIn(dir, byUmask)
        for (const p of [...foldersOnTheWay(dir, holders), dir, ...GIT_NAMES.map(name => path.join(dir, name))]) narrowOne(p, allowed, narrowed)
      }
      if (!final) return
      // A nested repository's folders, from the work tree's top down to its .git (round 66: another
      // user swapped old/y/.git, and the user's git status at the top ran their config).
      for (const tree of dirs.map(workTreeOf)) {
        const top = workTrees.find(t => tree?.startsWith(`${t}/`))
        if (top !== undefined && tree !== undefined) narrowWay(top, tree, allowedIn(top, byUmask), narrowed)
      }
      const walk = { budget: { entries: SWEEP_LIMIT }, own: new Set(dirs), narrowed }
      const unlooked = dirs.filter(dir => !narrowTree(dir, allowedIn(dir, byUmask), walk))
      if (unlooked.length > 0) narrowed.add(`not all looked at, past ${SWEEP_LIMIT} entries: ${unlooked.map(inlineSafe).join(', ')} (look with ls -la)`)
    },
    restored: () => [...restored],
    narrowed: () => [...narrowed],
    gitlinks(gitDir: string, paths: readonly string[]): void {
      const tree = workTreeOf(gitDir)
      const top = workTrees.find(t => tree === t || tree?.startsWith(`${t}/`))
      if (tree === undefined || top === undefined) return
      for (const link of paths.slice(0, MAX_GIT_DIRS)) narrowWay(top, path.join(tree, link), allowedIn(top, byUmask), narrowed)
      if (paths.length > MAX_GIT_DIRS) narrowed.add(`not all looked at: ${paths.length - MAX_GIT_DIRS} gitlinks in ${inlineSafe(gitDir)}/index past the first ${MAX_GIT_DIRS} (look with ls -la)`)
    },
  }
}

/**
 * The write bits for group and others a folder and what it holds may keep: what the user's umask
 * gives new files (002: the group's, where each user has a group of their own), and a group-shared
 * folder's group write (set-group-ID, as git's core.sharedRepository and shared folders have it,
 * a bit the sandbox cannot set: seccomp). Never what the folder merely had at the start: a
 * session running beside the launch could have set it (red team, round 63). Beyond it, a chmod
 * inside (777, or an ACL's mask) lets other local users replace the config the host's git runs.
 */
function allowedIn(dir: string, byUmask: number): number {
  const mode = modeNoFollow(dir) ?? 0
  return byUmask | ((mode & 0o2000) !== 0 ? mode & 0o020 : 0)
}

/** This process's umask, read (process.umask() without an argument sets it twice to read it); 022 when it cannot be. */
function umask(): number {
  const line = /^Umask:\s*([0-7]+)$/m.exec(readNoFollow('/proc/self/status') ?? '')
  return line?.[1] === undefined ? 0o022 : parseInt(line[1], 8)
}

/**
 * The folders between another git dir's modules/ or worktrees/ and `dir` (modules/vendor of the
 * submodule at vendor/lib): another user who can write one can swap the git dir below it for one
 * of their own (red team, round 64).
 */
function foldersOnTheWay(dir: string, holders: ReadonlySet<string>): string[] {
  const folders: string[] = []
  for (let p = path.dirname(dir); p !== path.dirname(p); p = path.dirname(p)) {
    folders.push(p)
    if (holders.has(p)) return folders
  }
  return []
}

/**
 * Where git works with a git dir: the folder of a `.git` folder, or, for a submodule's git dir
 * (.git/modules/a/modules/b), where git puts its work tree by default (a/b).
 */
function workTreeOf(dir: string): string | undefined {
  if (path.basename(dir) === '.git') return path.dirname(dir)
  const at = dir.indexOf('/.git/modules/')
  return at === -1 ? undefined : path.join(dir.slice(0, at), dir.slice(at + '/.git/modules/'.length).split('/modules/').join('/'))
}

/**
 * The folders from `top` (not itself) down to `target`, each opened from the one above without
 * following a symlink, their write access for others taken back.
 */
function narrowWay(top: string, target: string, allowed: number, narrowed: Set<string>): void {
  let fd: number | undefined
  try {
    fd = fs.openSync(top, O_PATH | fs.constants.O_NOFOLLOW | fs.constants.O_DIRECTORY)
    let shown = top
    for (const part of path.relative(top, target).split('/')) {
      shown = `${shown}/${part}`
      const next = narrowOneAt(`/proc/self/fd/${fd}/${part}`, shown, allowed, narrowed)
      fs.closeSync(fd)
      fd = next
      if (fd === undefined) return
    }
  } catch {
    // gone: nothing to take back
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * At the session's end, every entry of a git dir and the whole of the folders git reads below it
 * (a branch, alternates, objects, a rebase's to-do list, the folders holding submodules' and
 * worktrees' git dirs), within `budget` for all git dirs. Whether it got to the end of them.
 */
function narrowTree(dir: string, allowed: number, walk: Walk): boolean {
  let fd: number | undefined
  try {
    fd = fs.openSync(dir, O_PATH | fs.constants.O_NOFOLLOW | fs.constants.O_DIRECTORY)
    narrowBelow(fd, dir, '', allowed, walk)
  } catch {
    // gone: nothing to take back
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
  return walk.budget.entries >= 0
}

/** The final look's state: its budget, the git dirs each walked on their own, what was taken back. */
interface Walk {
  budget: { entries: number }
  own: ReadonlySet<string>
  narrowed: Set<string>
}

/**
 * The entries of the folder open as `fd` (its path `shown`, `rel` below the git dir), each
 * reached through that descriptor without following a symlink (the session may swap a folder for
 * one meanwhile, when another session of the project runs), and the folders git reads below.
 */
function narrowBelow(fd: number, shown: string, rel: string, allowed: number, walk: Walk): void {
  let dir: fs.Dir | undefined
  try {
    // Loose objects are many (up to git gc's 6,700) and each look costs ~24 µs: 4,330 of them
    // made every session's end 100 ms longer. Their folders are looked at; they are not.
    if (LOOSE_OBJECTS.test(rel)) return
    dir = fs.opendirSync(`/proc/self/fd/${fd}`)
    for (let entry = dir.readSync(); entry !== null && walk.budget.entries-- > 0; entry = dir.readSync()) {
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`
      const at = `${shown}/${entry.name}`
      const child = narrowOneAt(`/proc/self/fd/${fd}/${entry.name}`, at, allowed, walk.narrowed)
      if (child === undefined) continue
      try {
        // A submodule's or worktree's git dir is walked on its own, with its own allowance.
        const deep = DEEP.some(d => name === d || name.startsWith(`${d}/`) || d.startsWith(`${name}/`))
        if (!deep || walk.own.has(at)) continue
        // As deep as gitDirNames looks for git dirs; deeper is said, not passed over (round 65).
        if (name.split('/').length <= MAX_DEPTH) narrowBelow(child, at, name, allowed, walk)
        else walk.narrowed.add(`not all looked at: ${inlineSafe(at)} is more than ${MAX_DEPTH} folders deep (look with ls -la)`)
      } finally {
        fs.closeSync(child)
      }
    }
  } catch {
    // unreadable or gone: what could be looked at was
  } finally {
    dir?.closeSync()
  }
}

/**
 * The folders of a git dir whose whole tree is looked at at the session's end: objects/ too (a
 * pack another user can rewrite is what git checks out: round 64; the loose objects' folders but
 * not each loose object), and the folders holding submodules' and worktrees' git dirs (one
 * between, writable, let a git dir be swapped: round 64).
 */
const DEEP = ['refs', 'objects', 'info', 'rebase-merge', 'rebase-apply', 'sequencer', 'logs/refs', 'modules', 'worktrees']

/** One file or folder by path (see narrowOneAt). */
function narrowOne(p: string, allowed: number, narrowed: Set<string>): void {
  const fd = narrowOneAt(p, p, allowed, narrowed)
  if (fd !== undefined) fs.closeSync(fd)
}

/**
 * One file or folder, through a descriptor that names it without following a symlink the session
 * put there (O_PATH: a folder the session made unreadable, 0333, is reached too, round 62), its
 * mode changed through /proc/self/fd (a launch needs /proc to be its own). Symlinks, sockets and
 * FIFOs are left alone. Returns the descriptor of a folder, for a look inside; closes the others.
 */
function narrowOneAt(p: string, shown: string, allowed: number, narrowed: Set<string>): number | undefined {
  let fd: number | undefined
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW)
    const st = fs.fstatSync(fd)
    if (!st.isFile() && !st.isDirectory()) return undefined
    const mode = st.mode & 0o7777
    const extra = mode & 0o022 & ~allowed
    if (extra !== 0) {
      fs.chmodSync(`/proc/self/fd/${fd}`, mode & ~extra)
      if (narrowed.size < REPORTED) narrowed.add(`${inlineSafe(shown)} (${mode.toString(8)} made ${(mode & ~extra).toString(8)})`)
      else narrowed.add('and more (look with ls -la)')
    }
    if (!st.isDirectory()) return undefined
    const folder = fd
    fd = undefined
    return folder
  } catch {
    return undefined // gone, or nothing to take back through it
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** A folder of loose objects, below a git dir (or below a submodule's, walked from the main one). */
const LOOSE_OBJECTS = /(^|\/)objects\/[0-9a-f]{2}$/

/** What git reads in a git dir (and claudebox's own end-of-session checks look into). */
const GIT_NAMES = [
  'config', 'config.worktree', 'commondir', 'gitdir', 'HEAD', 'index', 'packed-refs', 'shallow', 'info', 'hooks', 'objects', 'refs', 'logs',
  'modules', 'worktrees', 'rebase-merge', 'rebase-apply', 'sequencer', 'FETCH_HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'CHERRY_PICK_HEAD', 'REVERT_HEAD',
]

/** Git dirs looked at, at most: the launch's, those the session made, the nested repositories'. */
const MAX_GIT_DIRS = 1024
/** Folders below a git dir walked into at the session's end, at most (git-watch.ts looks for git dirs as deep). */
const MAX_DEPTH = 40
/** Entries of the git dirs looked at at the session's end, at most, for all of them. */
const SWEEP_LIMIT = 50_000
/** Paths named in the report, at most (round 63: 30,000 made one line of 840 KB). */
const REPORTED = 64

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
