// The git index is the session's to write (the agent stages and commits), and git writes what it
// lists into the work tree at the user's `git checkout .` or `git restore .`: it checks a path when
// one is added, not when it reads an index from disk (red team, round 38: entries named
// `.git/config` and `.git/hooks/pre-commit`, renamed in the index file, were written into the
// host's git dir by `git checkout .`, and the next `git status` ran the session's fsmonitor). At the
// session's end every index there is read by git, and one with a path git would refuse
// (through a `.git` folder, or out of the work tree with `..`) is moved aside, with the way to
// rebuild it.
import { execFile, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { hostTempDir, lstatKind, removeDir } from './fs.js'
import { commonDirOf } from './git-dirs.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { GIT } from './system-programs.js'
import { indexCacheOn, indexDigest, keepClean, keptGitlinks, saveIndexCache } from './index-cache.js'
import { BOTH, configBytes, formatsOf, formatsOfAsync, type Formats } from './index-format.js'
import { hasEndOfEntries, layoutAgrees } from './index-layout.js'

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

/**
 * Why a run failed when the program could not be started for want of descriptors or memory
 * (execFileSync's error then has a code and no exit status); undefined when it ran and failed,
 * timed out (ETIMEDOUT) or wrote too much (ENOBUFS).
 */
export function notStarted(error: unknown): string | undefined {
  const { code, status } = error as { code?: unknown; status?: unknown }
  return typeof code === 'string' && ['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM'].includes(code) && typeof status !== 'number' ? code : undefined
}

/** Indexes read at most at a session's end (~3 ms each). */
const MAX_INDEXES = 64
/** How long one git run on an index may take, and all of them together. */
const RUN_MS = 10_000
const CHECKS_MS = 20_000

/**
 * The index, and every shared part of a split index beside it (`sharedindex.<hash>`), are regular
 * files git can read at once, never a symlink (git writes none): a FIFO as the shared part held
 * each git run for its whole timeout (red team, round 45: 64 of them, ~11 minutes), and a symlink
 * into /proc/self/cwd led claudebox's reading and the host's git, started in other folders, to two
 * different shared parts (round 124: the host's git checkout wrote .git/hooks/pre-commit).
 */
function indexFilesRegular(gitDir: string): boolean {
  const regular = (file: string): boolean => {
    try {
      const st = fs.lstatSync(file)
      return st.isFile() && st.size <= MAX_INDEX_BYTES
    } catch {
      return false
    }
  }
  let names: string[]
  try {
    names = fs.readdirSync(gitDir)
  } catch {
    return false
  }
  return regular(path.join(gitDir, 'index')) && names.filter(name => name.startsWith('sharedindex.')).every(name => regular(path.join(gitDir, name)))
}

/** An index larger than this (a repository of millions of files) is not read: git would take long over it. */
const MAX_INDEX_BYTES = 256 << 20

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

type Verdict = (string[] & { gitlinks: Buffer[] }) | { unread: string }

/** unsafePaths; a failure of its own (no room in /tmp for git's folder) counts as an index git cannot read (red team, round 119: the check was skipped, the index kept). */
function unsafePathsOrWhy(gitDir: string, timeout: number): Verdict {
  try {
    return unsafePaths(gitDir, timeout)
  } catch (error) {
    return Object.assign([`(an index claudebox could not have git read: ${(error as Error).message})`], { gitlinks: [] })
  }
}

/** Where git reads an index: the folder holding it and its shared parts, whether with no objects (a copy without sparse directories), in which formats. */
interface IndexRead {
  indexDir: string
  ownObjects: boolean
  formats: Formats
}

/** A folder of claudebox's own for a look at an index; none when none can be made (a full /tmp). */
function tempFolder(): string | undefined {
  try {
    return fs.mkdtempSync(path.join(hostTempDir(), 'claudebox-index-'))
  } catch {
    return undefined
  }
}

/** What git reads in the index in each of `read.formats`: the paths refused in any, the gitlinks of all; one git reads in none is bad. */
function gitVerdict(gitDir: string, read: IndexRead, timeout: number): Verdict {
  const outs: Buffer[] = []
  let twoWays = false
  for (const sha256 of read.formats) {
    try {
      const run = (threads: string): Buffer => withBareGit(gitDir, sha256, env => execFileSync(GIT(), [...LS_FILES(threads)], { env, cwd: env['GIT_DIR'], stdio: ['ignore', 'pipe', 'ignore'], timeout, maxBuffer: 256 << 20 }), read)
      const out = run('1')
      outs.push(out)
      twoWays ||= !layoutsAgree(read.indexDir, sha256) || (anyEndOfEntries(read.indexDir, sha256) && !THREADED.every(threads => readsSame(() => run(threads), out)))
    } catch (error) {
      const unread = notStarted(error)
      if (unread !== undefined) return { unread }
      if ((error as { code?: unknown }).code === 'ETIMEDOUT') break // too slow for another run
    }
  }
  if (outs.length === 0) return Object.assign(['(an index git cannot read)'], { gitlinks: [] })
  const all = outs.map(stagedEntries)
  return Object.assign([...new Set([...all.flat(), ...(twoWays ? [TWO_WAYS] : [])])], { gitlinks: uniqueBuffers(all.flatMap(entries => entries.gitlinks)) })
}

/**
 * git ls-files of each entry, with `threads` reading the index: 1 as claudebox reads it, and, for
 * an index holding an EOIE, each way a git with index.threads reads it (THREADED), which must give
 * the same (red team, rounds 122 and 123: what index-layout.ts's look at the records missed, git
 * itself shows).
 */
const LS_FILES = (threads: string): string[] => ['-c', 'core.fsmonitor=false', '-c', `index.threads=${threads}`, 'ls-files', '-z', '--stage']

/**
 * The ways git 2.39 reads an index with threads: 2 (also `true` on two CPUs) reads the entries in
 * order and the extensions from EOIE's offset; 3 or more reads the entries by IEOT block too, each
 * block on its own however they are grouped (64: every block).
 */
const THREADED = ['2', '64']

/** Whether the threaded reading `read` gives `plain`; one that fails reads otherwise. */
function readsSame(read: () => Buffer, plain: Buffer): boolean {
  try {
    return read().equals(plain)
  } catch {
    return false
  }
}

const anyEndOfEntries = (dir: string, sha256: boolean): boolean => indexNames(dir).some(name => hasEndOfEntries(path.join(dir, name), sha256))

/** The index in `dir` and the shared parts beside it; the index alone when the folder cannot be read. */
function indexNames(dir: string): string[] {
  try {
    return ['index', ...fs.readdirSync(dir).filter(name => name.startsWith('sharedindex.'))]
  } catch {
    return ['index']
  }
}

const TWO_WAYS = '(an index whose records of where its entries lie, EOIE or IEOT, do not match them: git reads it one way with index.threads, another without)'

/** Whether the index in `dir` and every shared part beside it keep their records of where their entries lie right (index-layout.ts). */
function layoutsAgree(dir: string, sha256: boolean): boolean {
  return indexNames(dir).every(name => layoutAgrees(path.join(dir, name), sha256))
}

const uniqueBuffers = (buffers: readonly Buffer[]): Buffer[] => [...new Map(buffers.map(b => [b.toString('hex'), b])).values()]

/** `git ls-files -z --stage` output: the paths git would refuse, and the gitlinks. */
function stagedEntries(out: Buffer): string[] & { gitlinks: Buffer[] } {
  // "<mode> <object> <stage>\t<path>" each; mode 160000 is a gitlink, a folder whose .git git enters.
  // Paths are bytes: a gitlink's folder named in something other than UTF-8 is still reached (round 68).
  const bad: string[] = []
  const gitlinks: Buffer[] = []
  for (let start = 0, end = out.indexOf(0); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
    const tab = out.indexOf(9, start)
    if (tab === -1 || tab > end) continue
    const file = out.subarray(tab + 1, end)
    // One look at each entry (round 68: a search of the bad ones for each gitlink held the end 6 minutes for 300,000).
    if (file.toString('latin1').split('/').some(part => part === '' || part === '.' || part === '..' || part.toLowerCase() === '.git')) bad.push(file.toString())
    else if (out.toString('latin1', start, start + 7) === '160000 ') gitlinks.push(file)
  }
  return Object.assign(bad, { gitlinks })
}

/**
 * Runs git on a repository's index and objects only, never on its config: git would act on a config
 * the session wrote (red team, round 44: a sparse index with a tree removed made `ls-files` lazily
 * fetch it from a promisor remote whose uploadpack ran the session's command on the host). An empty
 * git dir of claudebox's own, no system or global config; the index and the objects named by
 * GIT_INDEX_FILE and GIT_OBJECT_DIRECTORY (a split index's shared part is found beside the index).
 */
function withBareGit<T>(gitDir: string, sha256: boolean, run: (env: Record<string, string>) => T, read?: IndexRead): T {
  const empty = fs.mkdtempSync(path.join(hostTempDir(), 'claudebox-index-'))
  try {
    return run(bareGitEnv(gitDir, sha256, empty, read))
  } finally {
    removeDir(empty)
  }
}

/** The environment of a git run on the index in `read.indexDir` (else `gitDir`'s) and `gitDir`'s objects (else none) from the empty git dir `empty` (made here). */
function bareGitEnv(gitDir: string, sha256: boolean, empty: string, read?: IndexRead): Record<string, string> {
  for (const dir of ['objects', 'refs']) fs.mkdirSync(path.join(empty, dir))
  fs.writeFileSync(path.join(empty, 'HEAD'), 'ref: refs/heads/main\n')
  if (sha256) fs.writeFileSync(path.join(empty, 'config'), '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n')
  const objects = read?.ownObjects === true ? path.join(empty, 'objects') : path.join(commonDirOf(gitDir) ?? gitDir, 'objects')
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: empty, LC_ALL: 'C', GIT_DIR: empty, GIT_INDEX_FILE: path.join(read?.indexDir ?? gitDir, 'index'), GIT_OBJECT_DIRECTORY: objects, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_NO_LAZY_FETCH: '1', GIT_TERMINAL_PROMPT: '0' }
}

/**
 * The gitlinks `gitDir`'s index lists now, as git reads it (the same runs as at the session's end,
 * without blocking the launcher's loop), and the paths git would refuse: during the session
 * (gitlink-watch.ts). None when git cannot read it (the end's check says so); `irregular` when the
 * index or a shared part beside it is no regular file, which git never makes (red team, round 119:
 * a folder named sharedindex.zzz had every look skipped, and the host's git status entered a
 * gitlink staged meanwhile), or keeps records of where its entries lie that do not match them
 * (index-layout.ts: a threaded git reads it otherwise, round 121).
 */
export async function gitlinksNow(gitDir: string): Promise<{ gitlinks: Buffer[]; bad: string[]; irregular?: true }> {
  if (lstatKind(path.join(gitDir, 'index')) === 'missing') return { gitlinks: [], bad: [] }
  if (!indexFilesRegular(gitDir)) return { gitlinks: [], bad: [], irregular: true }
  const empty = await fs.promises.mkdtemp(path.join(hostTempDir(), 'claudebox-index-'))
  const look: InFlight = { dir: empty }
  lookAtExit(look)
  try {
    const formats = await formatsOfAsync(configBytes(path.join(commonDirOf(gitDir) ?? gitDir, 'config')), empty)
    const all: (string[] & { gitlinks: Buffer[] })[] = []
    let unread = 0
    for (const sha256 of formats) {
      const env = bareGitEnv(gitDir, sha256, fs.mkdtempSync(path.join(empty, 'g')))
      let refused = false
      const run = (threads: string): Promise<Buffer | undefined> =>
        new Promise(resolve => {
          look.child = execFile(GIT(), LS_FILES(threads), { env, cwd: env['GIT_DIR'], encoding: 'buffer', timeout: RUN_MS, maxBuffer: 256 << 20 }, (error, stdout) => {
            refused ||= typeof error?.code === 'number' // git ran and could not read it (not: not started, killed, too much)
            resolve(error ? undefined : stdout)
          })
        })
      const out = await run('1')
      if (out === undefined && refused) unread++
      if (out === undefined) continue
      all.push(stagedEntries(out))
      // Read one way with threads and another without: the host's git status may enter a gitlink this look does not see.
      if (!layoutsAgree(gitDir, sha256) || (anyEndOfEntries(gitDir, sha256) && !(await readsSameThreaded(run, out)))) return { gitlinks: [], bad: [], irregular: true }
    }
    // An index git reads in none of the formats, here, may still be read by the host's git elsewhere: ended for, as one git cannot read is at the end.
    if (all.length === 0 && unread === formats.length) return { gitlinks: [], bad: [], irregular: true }
    return { gitlinks: uniqueBuffers(all.flatMap(entries => entries.gitlinks)), bad: [...new Set(all.flat())] }
  } finally {
    inFlight.delete(look)
    removeDir(empty)
  }
}

/** Whether each threaded reading (THREADED), one after the other, gives `plain`. */
async function readsSameThreaded(run: (threads: string) => Promise<Buffer | undefined>, plain: Buffer): Promise<boolean> {
  for (const threads of THREADED) if ((await run(threads))?.equals(plain) !== true) return false
  return true
}

/** A look of the gitlink watch under way: its git dir and its git. */
interface InFlight {
  dir: string
  child?: ChildProcess
}
const inFlight = new Set<InFlight>()
let exitHooked = false

/**
 * The launcher exits as soon as the session's end is checked (bin/claudebox.js), cutting a look
 * that is under way short of its `finally`: its git is ended and its git dir removed then (220 of
 * them were left in /tmp by the test suite).
 */
function lookAtExit(look: InFlight): void {
  if (!exitHooked) process.once('exit', () => inFlight.forEach(left => (left.child?.kill(), removeDir(left.dir))))
  exitHooked = true
  inFlight.add(look)
}
