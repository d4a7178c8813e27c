// The search for what only root may read in /etc and /opt (root-only.ts makes the masks of it).
// Node's own modules only: scripts/build.mjs makes this its own small bundle, which bin/claudebox.js
// starts for root before the launch bundle loads (~25 ms of it here), so that the search (~4,000
// entries in /etc here: ~10 ms of find, ~25 ms walked in Node) is over by the time the probe is;
// the launch bundle requires the same file and gets the same search.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { systemProgram } from './system-programs.js'

export const ROOT_ONLY_TREES = ['/etc', '/opt'] as const

/** One entry the search found: a folder (masked whole) or anything else; its name as find gave it. */
export interface Found {
  dir: boolean
  name: Buffer
}
type Search = { found: Found[] } | { error: string }

/** The longest the search may take: a folder of the trees on a hung network share fails the launch. */
const SEARCH_TIMEOUT_MS = 5_000

let search: Promise<Search> | undefined

/**
 * Starts the search once per process (nothing to search for unless claudebox runs as root): by
 * bin/claudebox.js first, by the launch again (the same search, when the shim did). Never rejects.
 */
export function startRootOnlySearch(): Promise<Search> {
  search ??= process.getuid?.() === 0 ? findRootOnly(ROOT_ONLY_TREES.filter(isFolder)) : Promise.resolve({ found: [] })
  return search
}

function isFolder(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * `find` without following links: a folder of root's (or one its group may enter) that others
 * cannot read and enter is listed and not entered; any other such entry but a link that others
 * cannot read is listed. Any status but 0 hands the search to the walk in Node.
 */
export function findRootOnly(trees: readonly string[], find = systemProgram('find')): Promise<Search> {
  if (trees.length === 0) return Promise.resolve({ found: [] })
  if (find === undefined) return Promise.resolve(walkRootOnly(trees))
  const args = [
    ...trees,
    ...['(', '-type', 'd', '!', '-perm', '-o=rx', '(', '-user', '0', '-o', '-perm', '/g=rx', ')', '-prune', '-printf', 'd%p\\0', ')', '-o'],
    ...['(', '!', '-type', 'd', '!', '-type', 'l', '!', '-perm', '-o=r', '(', '-user', '0', '-o', '-perm', '/g=r', ')', '-printf', 'f%p\\0', ')'],
  ]
  return new Promise(resolve => {
    const child = spawn(find, args, { stdio: ['ignore', 'pipe', 'ignore'], env: {}, timeout: SEARCH_TIMEOUT_MS })
    // A launcher that ends before it (--version, a usage error) leaves no find running.
    const stop = (): void => void child.kill()
    process.once('exit', stop)
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.on('error', error => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }))
    child.on('close', (status, signal) => {
      process.off('exit', stop)
      if (signal !== null) resolve({ error: signal === 'SIGTERM' ? `find took more than ${SEARCH_TIMEOUT_MS / 1000} s` : `find ended by ${signal}` })
      // Any trouble, its expression refused included (busybox's find has no -printf: review of
      // round 96, it found nothing and masked nothing), and the walk in Node decides instead.
      else if (status !== 0) resolve(walkRootOnly(trees))
      else resolve({ found: parseFound(Buffer.concat(chunks)) })
    })
  })
}

/** find's `d<path>\0` and `f<path>\0` records. */
function parseFound(out: Buffer): Found[] {
  const found: Found[] = []
  for (let start = 0, end = out.indexOf(0); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
    found.push({ dir: out[start] === 0x64, name: out.subarray(start + 1, end) })
  }
  return found
}

/**
 * The same search in Node, where the system's find cannot do it (none, or busybox's): slower, an
 * lstat per entry. Names are kept as bytes, as find's are: one that is not UTF-8 is masked by its folder.
 */
function walkRootOnly(trees: readonly string[]): Search {
  const found: Found[] = []
  const deadline = Date.now() + SEARCH_TIMEOUT_MS
  // Each entry as find's expression takes it: a folder found is not entered.
  const look = (p: Buffer): void => {
    // At each entry: millions of names in one folder ran past the limit (round 97).
    if (Date.now() > deadline) throw new Error(`the search took more than ${SEARCH_TIMEOUT_MS / 1000} s`)
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch {
      return
    }
    if (st.isDirectory()) {
      if ((st.mode & 0o5) !== 0o5 && (st.uid === 0 || (st.mode & 0o50) !== 0)) found.push({ dir: true, name: p })
      else walk(p)
    } else if (!st.isSymbolicLink() && (st.mode & 0o4) === 0 && (st.uid === 0 || (st.mode & 0o40) !== 0)) found.push({ dir: false, name: p })
  }
  const walk = (dir: Buffer): void => {
    let names: Buffer[]
    try {
      names = fs.readdirSync(dir, { encoding: 'buffer' })
    } catch {
      return
    }
    for (const name of names) look(Buffer.concat([dir, Buffer.from('/'), name]))
  }
  try {
    trees.map(tree => Buffer.from(tree)).forEach(look)
  } catch (error) {
    return { error: (error as Error).message }
  }
  return { found }
}
