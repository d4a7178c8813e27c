// How git reads an index, and what it finds there: the runs claudebox makes of `git ls-files` on an
// index (never with the repository's config, in each object format git may read it in, with and
// without threads), the paths among its entries git would refuse, and its gitlinks. Shared by the
// check at a session's end (index-entries.ts) and the gitlink watch's look during it (gitlink-look.ts).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { hostTempDir, removeDir } from './fs.js'
import { commonDirOf } from './git-dirs.js'
import { GIT } from './system-programs.js'
import { bareGitDirEnv, type Formats } from './index-format.js'
import { hasEndOfEntries, layoutAgrees } from './index-layout.js'

/** How long one git run on an index may take. */
export const RUN_MS = 10_000

/**
 * The index, and every shared part of a split index beside it (`sharedindex.<hash>`), are regular
 * files git can read at once, never a symlink (git writes none): a FIFO as the shared part held
 * each git run for its whole timeout (red team, round 45: 64 of them, ~11 minutes), and a symlink
 * into /proc/self/cwd led claudebox's reading and the host's git, started in other folders, to two
 * different shared parts (round 124: the host's git checkout wrote .git/hooks/pre-commit).
 */
export function indexFilesRegular(gitDir: string): boolean {
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

export type Verdict = (string[] & { gitlinks: Buffer[] }) | { unread: string }

/** Where git reads an index: the folder holding it and its shared parts, whether with no objects (a copy without sparse directories), in which formats. */
export interface IndexRead {
  indexDir: string
  ownObjects: boolean
  formats: Formats
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

/** What git reads in the index in each of `read.formats`: the paths refused in any, the gitlinks of all; one git reads in none is bad. */
export function gitVerdict(gitDir: string, read: IndexRead, timeout: number): Verdict {
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
export const LS_FILES = (threads: string): string[] => ['-c', 'core.fsmonitor=false', '-c', `index.threads=${threads}`, 'ls-files', '-z', '--stage']

/**
 * The ways git 2.39 reads an index with threads: 2 (also `true` on two CPUs) reads the entries in
 * order and the extensions from EOIE's offset; 3 or more reads the entries by IEOT block too, each
 * block on its own however they are grouped (64: every block).
 */
export const THREADED = ['2', '64']

/** Whether the threaded reading `read` gives `plain`; one that fails reads otherwise. */
function readsSame(read: () => Buffer, plain: Buffer): boolean {
  try {
    return read().equals(plain)
  } catch {
    return false
  }
}

export const anyEndOfEntries = (dir: string, sha256: boolean): boolean => indexNames(dir).some(name => hasEndOfEntries(path.join(dir, name), sha256))

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
export function layoutsAgree(dir: string, sha256: boolean): boolean {
  return indexNames(dir).every(name => layoutAgrees(path.join(dir, name), sha256))
}

export const uniqueBuffers = (buffers: readonly Buffer[]): Buffer[] => [...new Map(buffers.map(b => [b.toString('hex'), b])).values()]

/** `git ls-files -z --stage` output: the paths git would refuse, and the gitlinks. */
export function stagedEntries(out: Buffer): string[] & { gitlinks: Buffer[] } {
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
export function bareGitEnv(gitDir: string, sha256: boolean, empty: string, read?: IndexRead): Record<string, string> {
  const env = bareGitDirEnv(empty, sha256 ? '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n' : null, process.env['PATH'] ?? '/usr/bin:/bin')
  const objects = read?.ownObjects === true ? path.join(empty, 'objects') : path.join(commonDirOf(gitDir) ?? gitDir, 'objects')
  return { ...env, GIT_INDEX_FILE: path.join(read?.indexDir ?? gitDir, 'index'), GIT_OBJECT_DIRECTORY: objects }
}

