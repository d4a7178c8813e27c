// Write access for other local users, taken back where the host's git would take code from what
// they could write. Inside, the process owns the files it makes and may chmod them: `chmod 777
// .git` let any other user replace `.git/config`, whose fsmonitor the user's next git status ran
// (red team, round 61). Each file or folder is reached through descriptors that never follow a
// symlink, and its mode changed through /proc/self/fd (a launch needs /proc to be its own).
import fs from 'node:fs'
import path from 'node:path'
import { O_PATH, readNoFollow } from './fs.js'
import type { PinnedRoots } from './pinned-roots.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { isWithin } from '../state/instance.js'

export interface ModeGuard {
  /**
   * The project's folders and the git dirs' names, and the folders on the way to them; `final`
   * (the session's end) walks their trees, and the git dirs in `more` (those the session made,
   * nested repositories') that are inside the project.
   */
  look(final: boolean, more: readonly string[]): void
  /** The folders from the work tree's top down to each gitlink (a path of bytes) in the index of `gitDir` (round 67). */
  gitlinks(gitDir: string, paths: readonly Buffer[]): void
  /** Whether a folder of this mode gives others more write access than it may (see allowedIn). */
  wider(mode: number): boolean
  /**
   * A folder of a work tree, at `dir` (bytes), that the session changed since `sinceMs` and made
   * unreadable to you (chmod 0677): made readable again, so the search can go on (round 68: the
   * folders below, left writable for others, were out of its reach). Whether it was.
   */
  reopen(dir: Buffer, sinceMs: number): boolean
  /** Folders of the work trees (bytes) the session made writable for others: taken back, each on its own. */
  folders(paths: readonly Buffer[]): void
  /** What was taken back (and what was not looked at), for the report after the session. */
  narrowed(): string[]
}

/**
 * `gitDirs` and `workTrees` are the launch's (the project's top and bound trees); `ways` the
 * folders the probe pinned on the way to them. Only below those two does the last look act:
 * a nested `.git` may name any folder on the host (red team, round 68: `gitdir: /tmp` made the
 * launcher, as root, take other users' write access to /tmp away). Each of them is reached through
 * `roots`: the folder bwrap was given, never what its path leads to by then (rounds 114, 115).
 */
export function guardModes(gitDirs: readonly string[], workTrees: readonly string[], ways: readonly string[], roots: PinnedRoots): ModeGuard {
  const byUmask = 0o022 & ~umask()
  const narrowed = new Set<string>()
  const allowed = (dir: string): number => allowedIn(roots, dir, byUmask)
  const anchors = [...workTrees, ...gitDirs]
  // Folders opened on the way to git dirs, work trees and gitlinks, at most, for the whole end
  // (round 69: 1,024 gitlinks 5,000 folders deep held it 71 s).
  const reach: Reach = { roots, narrowed, opens: { left: WAY_OPENS } }
  return {
    look(final, more) {
      for (const top of [...workTrees, ...ways.filter(p => !gitDirs.includes(p))]) narrowPinned(roots, top, allowed(top), narrowed)
      const found = [...new Set([...gitDirs, ...more])]
      // At most MAX_GIT_DIRS, said when more (round 66: 10,000 nested repositories held the end for minutes).
      const dirs = found.slice(0, MAX_GIT_DIRS)
      if (found.length > dirs.length) note(narrowed, `not all looked at: ${found.length - dirs.length} git dirs past the first ${MAX_GIT_DIRS}, from ${inlineSafe(found[MAX_GIT_DIRS] ?? '')} on (look with ls -la)`)
      const holders = new Set(dirs.flatMap(g => ['modules', 'worktrees'].map(sub => path.join(g, sub))))
      // The launch's git dirs by path (the probe pinned them and the folders on their way): their
      // own names and the folders from another git dir's modules/ or worktrees/ down to them.
      const own = dirs.filter(dir => gitDirs.includes(dir))
      for (const dir of own) {
        // Read once a git dir: narrowing never takes what its own mode allows (allowedFor).
        const allowance = allowed(dir)
        for (const p of [...foldersOnTheWay(dir, holders), dir, ...GIT_NAMES.map(name => path.join(dir, name))]) narrowPinned(roots, p, allowance, narrowed)
      }
      if (!final) return
      // Each other git dir from the launch's folder it is in, the folders on the way narrowed; one
      // at a time (1,024 of them open at once could use up the launcher's descriptors).
      const openers = new Map(dirs.map(dir => [dir, (): number | undefined => (gitDirs.includes(dir) ? roots.open(dir) : openInside(dir, anchors, allowed, reach))] as const))
      lastLook(openers, { workTrees, allowed, reach })
    },
    gitlinks(gitDir, paths) {
      for (const tree of workTreesOf(gitDir)) {
        const top = workTrees.find(t => tree === t || isWithin(tree, t))
        if (top === undefined) continue
        const allowance = allowed(top)
        for (const link of paths.slice(0, MAX_GIT_DIRS)) narrowWay(reach, top, [...partsOf(top, tree), ...split(link)], allowance)
      }
      if (paths.length > MAX_GIT_DIRS) note(narrowed, `not all looked at: ${paths.length - MAX_GIT_DIRS} gitlinks in ${inlineSafe(gitDir)}/index past the first ${MAX_GIT_DIRS} (look with ls -la)`)
    },
    wider: mode => (mode & 0o022 & ~allowedFor(mode, byUmask)) !== 0,
    reopen: (dir, sinceMs) => reopen(dir, sinceMs, workTrees, reach),
    folders(paths) {
      for (const dir of paths.slice(0, MAX_FOLDERS)) narrowFolder(dir, workTrees, byUmask, reach)
      if (paths.length > MAX_FOLDERS) note(narrowed, `not all looked at: ${paths.length - MAX_FOLDERS} folders past the first ${MAX_FOLDERS} (look with find -perm -o+w)`)
    },
    narrowed: () => [...narrowed],
  }
}

/** See ModeGuard.reopen: each folder from the work tree's top down to `dir` (the session may have locked one above it). */
function reopen(dir: Buffer, sinceMs: number, workTrees: readonly string[], { roots, narrowed }: Reach): boolean {
  const top = treeOf(dir, workTrees)
  if (top === undefined) return false
  let reopened = false
  const fd = descend(roots, top, split(dir.subarray(Buffer.byteLength(top))), (at, shown) => {
    const next = openNoFollow(at)
    if (next !== undefined && giveBackReading(next, shown, sinceMs, narrowed)) reopened = true
    return next
  })
  if (fd !== undefined) fs.closeSync(fd)
  return reopened
}

/** The folder open as `fd`, if it is yours, changed since `sinceMs` and closed to you: read and search given back. */
function giveBackReading(fd: number, shown: string, sinceMs: number, narrowed: Set<string>): boolean {
  try {
    const st = fs.fstatSync(fd)
    const mode = st.mode & 0o7777
    if (!st.isDirectory() || st.uid !== process.getuid?.() || st.ctimeMs < sinceMs || (mode & 0o500) === 0o500) return false
    fs.chmodSync(`/proc/self/fd/${fd}`, mode | 0o500)
    note(narrowed, `${inlineSafe(shown)} (made readable to you again: ${mode.toString(8)} made ${(mode | 0o500).toString(8)})`)
    return true
  } catch {
    return false
  }
}

/** One folder of a work tree, at `dir` (bytes), its write access for others taken back. */
function narrowFolder(dir: Buffer, workTrees: readonly string[], byUmask: number, { roots, narrowed }: Reach): void {
  const fd = openInTree(roots, dir, workTrees)
  if (fd === undefined) return
  try {
    narrowFd(fd, dir.toString(), allowedFor(fs.fstatSync(fd).mode, byUmask), narrowed)
  } catch {
    // gone meanwhile: nothing to take back
  } finally {
    fs.closeSync(fd)
  }
}

/** The work tree `dir` (bytes) is in. */
const treeOf = (dir: Buffer, workTrees: readonly string[]): string | undefined =>
  workTrees.find(t => dir.equals(Buffer.from(t)) || dir.subarray(0, Buffer.byteLength(t) + 1).equals(Buffer.from(`${t}/`)))

/** The folder at `dir` (bytes), open from the work tree it is in without following a symlink on the way; undefined when in none. */
function openInTree(roots: PinnedRoots, dir: Buffer, workTrees: readonly string[]): number | undefined {
  const top = treeOf(dir, workTrees)
  return top === undefined ? undefined : descend(roots, top, split(dir.subarray(Buffer.byteLength(top))), at => openNoFollow(at))
}

/**
 * Down from the folder `top` (reached in `roots`) along `parts`, each opened by `open` from the one
 * above (through /proc/self/fd: a folder swapped for a symlink meanwhile is not followed); the
 * descriptor of the last, or undefined when one on the way could not be opened.
 */
function descend(roots: PinnedRoots, top: string, parts: readonly Buffer[], open: (at: Buffer, shown: string) => number | undefined): number | undefined {
  let fd = roots.open(top)
  let shown = top
  for (const part of parts) {
    if (fd === undefined) return undefined
    shown = `${shown}/${part.toString()}`
    const next = open(Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), part]), shown)
    fs.closeSync(fd)
    fd = next
  }
  return fd
}

/** A folder, open as a path only, never through a symlink there; undefined when it cannot be. */
function openNoFollow(p: string | Buffer): number | undefined {
  try {
    return fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW | fs.constants.O_DIRECTORY)
  } catch {
    return undefined
  }
}

/** Where the guard may act, what it took back, and how many folders on the way it may still open. */
interface Reach {
  roots: PinnedRoots
  narrowed: Set<string>
  opens: { left: number }
}

interface LastLook {
  workTrees: readonly string[]
  allowed: (dir: string) => number
  reach: Reach
}

/**
 * At the session's end, each git dir `opens` opens: the folders from the work tree's top down to
 * its work tree (round 66: another user swapped old/y/.git, and the user's git status at the top
 * ran their config), its names, and the folders git reads below, within one budget for all.
 */
function lastLook(openers: ReadonlyMap<string, () => number | undefined>, { workTrees, allowed, reach }: LastLook): void {
  const { narrowed } = reach
  for (const dir of openers.keys()) {
    for (const tree of workTreesOf(dir)) {
      const top = workTrees.find(t => isWithin(tree, t))
      if (top !== undefined) narrowWay(reach, top, partsOf(top, tree), allowed(top))
    }
  }
  const walk: Walk = { budget: { entries: SWEEP_LIMIT }, own: new Set(openers.keys()), narrowed }
  const unlooked: string[] = []
  for (const [dir, open] of openers) {
    const fd = open()
    if (fd === undefined) continue
    try {
      const allowance = allowed(dir)
      for (const name of GIT_NAMES) narrowOne(`/proc/self/fd/${fd}/${name}`, allowance, narrowed, `${dir}/${name}`)
      narrowBelow(fd, dir, '', allowance, walk)
    } finally {
      fs.closeSync(fd)
    }
    if (walk.budget.entries < 0) unlooked.push(dir)
  }
  if (unlooked.length > 0) note(narrowed, `not all looked at, past ${SWEEP_LIMIT} entries: ${unlooked.map(inlineSafe).join(', ')} (look with ls -la)`)
}

/**
 * The write bits for group and others a folder and what it holds may keep: what the user's umask
 * gives new files (002: the group's, where each user has a group of their own), and a group-shared
 * folder's group write (set-group-ID, as git's core.sharedRepository and shared folders have it,
 * a bit the sandbox cannot set: seccomp). Never what the folder merely had at the start: a
 * session running beside the launch could have set it (red team, round 63). Beyond it, a chmod
 * inside (777, or an ACL's mask) lets other local users replace the config the host's git runs.
 */
function allowedIn(roots: PinnedRoots, dir: string, byUmask: number): number {
  return allowedFor(folderMode(roots, dir) ?? 0, byUmask)
}

/** What a folder of `mode` allows (see allowedIn). */
function allowedFor(mode: number, byUmask: number): number {
  return byUmask | ((mode & 0o2000) !== 0 ? mode & 0o020 : 0)
}

/** This process's umask, read (process.umask() without an argument sets it twice to read it); 022 when it cannot be. */
function umask(): number {
  const line = /^Umask:\s*([0-7]+)$/m.exec(readNoFollow('/proc/self/status') ?? '')
  return line?.[1] === undefined ? 0o022 : parseInt(line[1], 8)
}

function folderMode(roots: PinnedRoots, dir: string): number | undefined {
  const fd = roots.open(dir)
  if (fd === undefined) return undefined
  try {
    return fs.fstatSync(fd).mode & 0o7777
  } finally {
    fs.closeSync(fd)
  }
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
 * Where git may work with a git dir: the folder of a `.git` folder; a linked worktree's, named by
 * its `gitdir` file; the one its `core.worktree` names; for a submodule's git dir
 * (.git/modules/a/modules/b), where git puts its work tree by default (a/b). All of them: one
 * taken for another leaves the real one unlooked at (round 68: a linked worktree, a submodule
 * whose name is not its path), and looking at one more costs nothing but the look.
 */
export function workTreesOf(dir: string): string[] {
  const trees: string[] = []
  if (path.basename(dir) === '.git') trees.push(path.dirname(dir))
  const named = readNoFollow(path.join(dir, 'gitdir'), 4096)?.trim()
  if (named !== undefined && named !== '') trees.push(path.dirname(path.resolve(dir, named)))
  const configured = /^\s*worktree\s*=\s*(.+?)\s*$/im.exec(readNoFollow(path.join(dir, 'config'), 65_536) ?? '')?.[1]?.replace(/^"(.*)"$/, '$1')
  if (configured !== undefined) trees.push(path.resolve(dir, configured))
  const at = dir.indexOf('/.git/modules/')
  if (at !== -1) trees.push(path.join(dir.slice(0, at), dir.slice(at + '/.git/modules/'.length).split('/modules/').join('/')))
  return [...new Set(trees)]
}

/**
 * A git dir the session made or a nested repository's, open from the launch's folder it is in
 * (the deepest of `anchors`), the folders on the way narrowed; undefined when it is in none of
 * them, or a symlink is on its way (said).
 */
function openInside(dir: string, anchors: readonly string[], allowed: (dir: string) => number, reach: Reach): number | undefined {
  const { narrowed } = reach
  const anchor = anchors.filter(a => isWithin(dir, a)).sort((a, b) => b.length - a.length)[0]
  const fd = anchor === undefined ? undefined : openWay(reach, anchor, partsOf(anchor, dir), allowed(anchor))
  // One outside is not the project's to change (a nested repository of yours may keep its git dir
  // elsewhere; a .git the session made that leads out is moved aside: nested-search.ts).
  if (fd === undefined && anchor !== undefined && fs.existsSync(dir)) note(narrowed, `not looked at: ${inlineSafe(dir)}, reached through a symlink (a .git leads there; look with ls -la)`)
  return fd
}

/** The folders from `top` (not itself) down along `parts`, narrowed (see openWay). */
function narrowWay(reach: Reach, top: string, parts: readonly Buffer[], allowed: number): void {
  const fd = openWay(reach, top, parts, allowed)
  if (fd !== undefined) fs.closeSync(fd)
}

/** The names from `top` down to `target`, as bytes. */
const partsOf = (top: string, target: string): Buffer[] => split(Buffer.from(path.relative(top, target)))

/** A path's names, its empty ones left out. */
function split(p: Buffer): Buffer[] {
  const parts: Buffer[] = []
  for (let start = 0, end = p.indexOf(0x2f); start <= p.length; start = end + 1, end = p.indexOf(0x2f, start)) {
    if (end === -1) end = p.length
    if (end > start) parts.push(p.subarray(start, end))
  }
  return parts
}

/**
 * The folders from `top` (not itself) down along `parts` (names of bytes: one that is not UTF-8 is
 * reached too, round 68), each opened from the one above without following a symlink, their write
 * access for others taken back; the descriptor of the last, or undefined when one on the way is
 * gone or not a folder.
 */
function openWay({ roots, narrowed, opens }: Reach, top: string, parts: readonly Buffer[], allowed: number): number | undefined {
  return descend(roots, top, parts, (at, shown) => {
    if (opens.left-- > 0) return narrowOneAt(at, shown, allowed, narrowed)
    note(narrowed, `not all looked at: the folders on the way to gitlinks and nested repositories, past ${WAY_OPENS} (look with find -type d -perm /022)`)
    return undefined
  })
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
    dir = fs.opendirSync(`/proc/self/fd/${fd}`)
    for (let entry = dir.readSync(); entry !== null && walk.budget.entries-- > 0; entry = dir.readSync()) {
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`
      const at = `${shown}/${entry.name}`
      // A submodule's or worktree's git dir is walked on its own, with its own allowance. Loose
      // objects are many (up to git gc's 6,700) and each look costs ~24 µs: 4,330 of them made
      // every session's end 100 ms longer. Their folders are looked at; they are not.
      const deep = DEEP.some(d => name === d || name.startsWith(`${d}/`) || d.startsWith(`${name}/`)) && !LOOSE_OBJECTS.test(name) && !walk.own.has(at)
      const p = `/proc/self/fd/${fd}/${entry.name}`
      // Only opened to be changed or entered: one lstat for the others (most of objects/).
      if (!deep && !widerThan(p, allowed)) continue
      const child = narrowOneAt(p, at, allowed, walk.narrowed)
      if (child === undefined) continue
      try {
        if (!deep) continue
        // As deep as gitDirNames looks for git dirs; deeper is said, not passed over (round 65).
        if (name.split('/').length <= MAX_DEPTH) narrowBelow(child, at, name, allowed, walk)
        else note(walk.narrowed, `not all looked at: ${inlineSafe(at)} is more than ${MAX_DEPTH} folders deep (look with ls -la)`)
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

/** One file or folder by path (see narrowOneAt; `shown` is what the report names), opened only when its mode asks for it. */
function narrowOne(p: string, allowed: number, narrowed: Set<string>, shown = p): void {
  if (!widerThan(p, allowed)) return
  const fd = narrowOneAt(p, shown, allowed, narrowed)
  if (fd !== undefined) fs.closeSync(fd)
}

/** One file or folder at or below the guard's roots (see narrowOne), reached through them. */
function narrowPinned(roots: PinnedRoots, p: string, allowed: number, narrowed: Set<string>): void {
  if (!widerThan(p, allowed)) return
  const fd = roots.open(p, 'any')
  if (fd === undefined) return
  try {
    narrowFd(fd, p, allowed, narrowed)
  } catch {
    // gone meanwhile: nothing to take back
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Whether the file or folder at `p` (not followed if a link) gives others more write access than
 * `allowed`: a look only, the change itself goes through narrowOneAt's descriptor.
 */
function widerThan(p: string, allowed: number): boolean {
  try {
    const st = fs.lstatSync(p, { throwIfNoEntry: false })
    return st !== undefined && (st.isFile() || st.isDirectory()) && (st.mode & 0o022 & ~allowed) !== 0
  } catch {
    return true // looked at through a descriptor, which says what can be done
  }
}

/**
 * One file or folder, through a descriptor that names it without following a symlink the session
 * put there (O_PATH: a folder the session made unreadable, 0333, is reached too, round 62), its
 * mode changed through /proc/self/fd. Symlinks, sockets and FIFOs are left alone. Returns the
 * descriptor of a folder, for a look inside; closes the others.
 */
function narrowOneAt(p: string | Buffer, shown: string, allowed: number, narrowed: Set<string>): number | undefined {
  let fd: number | undefined
  try {
    fd = fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW)
    if (!narrowFd(fd, shown, allowed, narrowed)) return undefined
    const folder = fd
    fd = undefined
    return folder
  } catch {
    return undefined // gone, or nothing to take back through it
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The file or folder open as `fd`, its write access for others beyond `allowed` taken back; whether it is a folder. */
function narrowFd(fd: number, shown: string, allowed: number, narrowed: Set<string>): boolean {
  const st = fs.fstatSync(fd)
  if (!st.isFile() && !st.isDirectory()) return false
  const mode = st.mode & 0o7777
  const extra = mode & 0o022 & ~allowed
  if (extra !== 0) {
    fs.chmodSync(`/proc/self/fd/${fd}`, mode & ~extra)
    note(narrowed, `${inlineSafe(shown)} (${mode.toString(8)} made ${(mode & ~extra).toString(8)})`)
  }
  return st.isDirectory()
}

/**
 * Says `text` in the report, or, past REPORTED entries, that there is more (round 69: a report past
 * V8's longest string). What was not done ("not ...") is counted apart from what was, never
 * swallowed by it (round 70: 4,200 folders made 777 hid that 104 were left so).
 */
function note(narrowed: Set<string>, text: string): void {
  const missed = text.startsWith('not ')
  let count = 0
  for (const t of narrowed) if (t.startsWith('not ') === missed) count++
  narrowed.add(count < REPORTED ? text : missed ? 'not all looked at: and more (look with ls -la)' : 'and more (look with ls -la)')
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
/** Folders opened on the way to git dirs, work trees and gitlinks at the session's end, at most (~25 µs each). */
const WAY_OPENS = 100_000
/** Folders of the work trees the session made writable for others taken back at its end, at most (each is a walk from the top). */
const MAX_FOLDERS = 4096
/** Paths named in the report, at most (round 63: 30,000 made one line of 840 KB). */
const REPORTED = 64
