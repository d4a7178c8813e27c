// What only root may read in the system folders the sandbox sees whole (/etc, /opt). bwrap maps
// root's uid 0 into the sandbox, and with every capability dropped uid 0 still passes the owner's
// check on root's own files: a 0600 key in /etc/ssl/private (a 0700 folder) was read inside (red
// team, round 93), as would be WireGuard's, NetworkManager's, Kerberos' and k3s' secrets. So for
// root the sandbox sees these folders as any other local user does: a file others cannot read
// shows empty, a folder others cannot enter shows empty (sandbox/mounts.ts).
//
// Found by the system's `find`, started as the launch begins and running beside the probe on
// another core (about 4,000 entries in /etc here: ~8 ms of find, ~25 ms walked in Node). /usr, /lib
// and /nix/store are not searched: 140,000 entries here (1.5 s), and no system keeps secrets there.
// Other users are not searched for: the kernel refuses them what others cannot read, and what their
// groups may read is theirs to use.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { launchError } from '../errors.js'
import { systemProgram } from './host-env.js'
import type { HostFacts } from '../types.js'

export const ROOT_ONLY_TREES = ['/etc', '/opt'] as const

export interface RootOnly {
  files: readonly string[]
  dirs: readonly string[]
}
type Found = RootOnly | { error: string }

/** The longest the search may take: a folder of the trees on a hung network share fails the launch. */
const SEARCH_TIMEOUT_MS = 5_000

let search: Promise<Found> | undefined

/** Starts the search once per process (nothing to search for unless claudebox runs as root); never rejects. */
export function startRootOnlySearch(): Promise<Found> {
  search ??= process.getuid?.() === 0 ? findRootOnly(ROOT_ONLY_TREES.filter(isFolder)) : Promise.resolve({ files: [], dirs: [] })
  return search
}

/** The facts with what the search found masked too (the probe's own list stays); a launch error (125) when it failed. */
export async function withRootOnly(facts: HostFacts): Promise<HostFacts> {
  const found = await startRootOnlySearch()
  if ('error' in found) {
    throw launchError(`could not list what only root may read in ${ROOT_ONLY_TREES.join(' and ')} (${found.error}), which root's sandbox must not see; rerun, or run claudebox as another user`)
  }
  return { ...facts, etcSecrets: [...new Set([...facts.etcSecrets, ...found.files])], rootOnlyDirs: found.dirs }
}

function isFolder(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * `find` without following links: a folder others cannot read and enter is listed and not entered;
 * any other entry but a link that others cannot read is listed. Status 1 is kept: a file removed
 * while find ran, or a folder root itself cannot list (a FUSE mount), which the sandbox cannot either.
 */
function findRootOnly(trees: readonly string[]): Promise<Found> {
  const find = systemProgram('find')
  if (trees.length === 0) return Promise.resolve({ files: [], dirs: [] })
  if (find === undefined) return Promise.resolve(walkRootOnly(trees))
  const args = [...trees, '(', '-type', 'd', '!', '-perm', '-o=rx', '-prune', '-printf', 'd%p\\0', ')', '-o', '(', '!', '-type', 'd', '!', '-type', 'l', '!', '-perm', '-o=r', '-printf', 'f%p\\0', ')']
  return new Promise(resolve => {
    const child = spawn(find, args, { stdio: ['ignore', 'pipe', 'ignore'], env: {}, timeout: SEARCH_TIMEOUT_MS })
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.on('error', error => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }))
    child.on('close', (status, signal) => {
      if (signal !== null) resolve({ error: signal === 'SIGTERM' ? `find took more than ${SEARCH_TIMEOUT_MS / 1000} s` : `find ended by ${signal}` })
      else if (status !== 0 && status !== 1) resolve({ error: `find failed with status ${status}` })
      else resolve(parseFound(Buffer.concat(chunks)))
    })
  })
}

/** find's `d<path>\0` and `f<path>\0` records; a name that is not UTF-8 cannot be passed to bwrap as it is. */
function parseFound(out: Buffer): Found {
  const found = { files: [] as string[], dirs: [] as string[] }
  let start = 0
  for (let end = out.indexOf(0); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
    const record = out.subarray(start, end)
    const name = record.subarray(1).toString('utf8')
    if (!Buffer.from(name, 'utf8').equals(record.subarray(1))) return { error: `a name that is not UTF-8: ${JSON.stringify(name)}` }
    ;(record[0] === 0x64 ? found.dirs : found.files).push(name)
  }
  return found
}

/** The same search in Node, where the system has no find (slower: an lstat per entry). */
function walkRootOnly(trees: readonly string[]): Found {
  const found = { files: [] as string[], dirs: [] as string[] }
  const deadline = Date.now() + SEARCH_TIMEOUT_MS
  const walk = (dir: string): void => {
    if (Date.now() > deadline) throw new Error(`the search took more than ${SEARCH_TIMEOUT_MS / 1000} s`)
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const p = `${dir}/${name}`
      let st: fs.Stats
      try {
        st = fs.lstatSync(p)
      } catch {
        continue
      }
      if (st.isDirectory()) {
        if ((st.mode & 0o5) !== 0o5) found.dirs.push(p)
        else walk(p)
      } else if (!st.isSymbolicLink() && (st.mode & 0o4) === 0) found.files.push(p)
    }
  }
  try {
    trees.forEach(walk)
  } catch (error) {
    return { error: (error as Error).message }
  }
  return found
}
