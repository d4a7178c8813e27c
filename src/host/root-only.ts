// What only root may read in the system folders the sandbox sees whole (/etc, /opt). bwrap maps
// root's uid 0 into the sandbox, and with every capability dropped uid 0 still passes the owner's
// check on root's own files: a 0600 key in /etc/ssl/private (a 0700 folder) was read inside (red
// team, round 93), as would be WireGuard's, NetworkManager's, Kerberos' and k3s' secrets. So for
// root the sandbox sees these folders as any other local user does: a file others cannot read
// cannot be opened (/dev/null on a mount without devices), a folder others cannot enter shows
// empty (sandbox/mounts.ts).
//
// Found by the system's `find` (root-only-search.ts), started by bin/claudebox.js before the launch
// bundle loads and running beside it and the probe on another core. /usr, /lib and /nix/store are
// not searched: 140,000 entries here (1.5 s), and no system keeps secrets there.
// Counted are root's own entries and those a group may read (root's other groups, adm or wheel on
// Alpine, and an ACL's mask show there: red team, round 96); the kernel refuses root's sandbox
// another user's private ones. What a session or another user may fill (the launch's writable
// places, a folder of /opt) is masked by folder, never failing every root launch (round 95).
// Other users are not searched for: the kernel refuses them what others cannot read, and what their
// groups may read is theirs to use.
//
// The masks are taken at the launch: a root-only file the host creates, or replaces by rename
// (passwd, a package upgrade), during a session is visible to that session (README, Known limits).
import fs from 'node:fs'
import path from 'node:path'
import { debug, nowMs } from '../cli/log.js'
import { launchError } from '../errors.js'
import { ROOT_ONLY_TREES, startRootOnlySearch, type Found } from './root-only-search.js'
import type { HostFacts } from '../types.js'

/** More root-only entries than this in one folder: the folder is masked whole (bwrap takes at most 9,000 arguments). */
const ENTRIES_PER_FOLDER = 64
/** More masks than this in all: each folder of /opt holding some is masked whole instead. */
const MAX_MASKS = 1_000

/**
 * The facts with what the search found masked too (the probe's own list stays); a launch error
 * (125) when it failed. `writes`: the places the sandbox writes (sandbox/plan.ts writablePlaces).
 */
export async function withRootOnly(facts: HostFacts, writes: readonly string[]): Promise<HostFacts> {
  const waited = nowMs()
  const result = await startRootOnlySearch()
  if (process.getuid?.() === 0) debug(`the root-only search waited for: ${(nowMs() - waited).toFixed(1)} ms`)
  const masks = 'error' in result ? result : rootOnlyMasks(result.found, writes)
  if ('error' in masks) {
    throw launchError(`could not list what only root may read in ${ROOT_ONLY_TREES.join(' and ')} (${masks.error}), which root's sandbox must not see; rerun, or run claudebox as another user`)
  }
  const settled = settleMasks([...new Set([...facts.etcSecrets, ...masks.files])], masks.dirs)
  if ('error' in settled) throw launchError(`cannot hide what only root may read: ${settled.error}; rerun, or run claudebox as another user`)
  return { ...facts, etcSecrets: settled.files, rootOnlyDirs: settled.dirs }
}

/**
 * Each mask as bwrap will mount it. Where a folder on the way to it is not root's, or others or
 * its group may write it, another user can rename what lies below at any moment (or make its path
 * longer than a path may be): that folder is masked whole instead (red team, round 97: a key of
 * root's in a user's folder was read after the user moved it away and back, or buried it 4,500
 * bytes deep, so that an existence check dropped its mask). On a way that is root's alone, a mask
 * whose path is gone since the search (a lock file; the launch may have waited on a question) is
 * dropped, having no place left for bwrap's mount; any other failure masks the last folder reached.
 */
export function settleMasks(files: readonly string[], dirs: readonly string[], stat: (p: string) => fs.Stats | string = lstatOrCode): { files: string[]; dirs: string[] } | { error: string } {
  const outDirs = new Set<string>()
  const outFiles: string[] = []
  const keep = (p: string, isDir: boolean): void => void (isDir ? outDirs.add(p) : outFiles.push(p))
  for (const [p, isDir] of [...files.map(f => [f, false] as const), ...dirs.map(d => [d, true] as const)]) {
    const top = ROOT_ONLY_TREES.find(tree => p.startsWith(`${tree}/`))
    if (top === undefined) {
      if (typeof stat(p) !== 'string') keep(p, isDir) // the probe's own list, outside the trees
      continue
    }
    const way = wayTo(p, top, stat)
    if (way.held !== undefined) outDirs.add(way.held)
    else if (way.failed === undefined) keep(p, isDir)
    else if (way.failed !== 'ENOENT') outDirs.add(way.reached)
  }
  const top = [...outDirs].find(isTop)
  if (top !== undefined) return { error: `${top} itself would have to be hidden (a folder of it could not be looked at, or is another user's)` }
  return outermost(outFiles, outDirs)
}

/** The folders from `top` down to `p`: the first that is not root's alone, how far the look got, and why it stopped. */
function wayTo(p: string, top: string, stat: (p: string) => fs.Stats | string): { held?: string; reached: string; failed?: string } {
  let reached = top
  for (const part of p.slice(top.length + 1).split('/')) {
    const next = `${reached}/${part}`
    const st = stat(next)
    if (typeof st === 'string') return { reached, failed: st }
    if (next !== p && (st.uid !== 0 || (st.mode & 0o022) !== 0)) return { held: next, reached: next }
    reached = next
  }
  return { reached }
}

function lstatOrCode(p: string): fs.Stats | string {
  try {
    return fs.lstatSync(p)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error'
  }
}

/**
 * The masks for what the search found, in time linear in it. What lies in the places the sandbox
 * writes is left out: bound over, and a session there could otherwise plant names to fail every
 * root launch (round 95, also through a worktree's common dir: round 96). A name bwrap cannot be
 * given as it is (not UTF-8) and a folder with many such entries are masked by their folder, and
 * too many masks by the folder of /opt they lie in; a tree's top itself is never masked for that:
 * the launch fails.
 */
export function rootOnlyMasks(found: readonly Found[], writes: readonly string[]): { files: string[]; dirs: string[] } | { error: string } {
  const prefixes = writes.map(w => Buffer.from(`${w}/`))
  const written = (name: Buffer): boolean => prefixes.some(prefix => name.subarray(0, prefix.length).equals(prefix) || name.equals(prefix.subarray(0, -1)))
  const dirs = new Set<string>()
  const byFolder = new Map<string, string[]>()
  for (const { dir, name } of found) {
    if (written(name)) continue
    const text = textOf(name)
    if (text === undefined) {
      const folder = decodableFolder(name)
      if (isTop(folder)) return { error: `${folder} holds a name that is not UTF-8, which bwrap cannot be given` }
      dirs.add(folder)
    } else if (dir) dirs.add(text)
    else {
      const list = byFolder.get(path.dirname(text)) ?? []
      if (list.length === 0) byFolder.set(path.dirname(text), list)
      list.push(text)
    }
  }
  const files: string[] = []
  for (const [folder, names] of byFolder) {
    if (names.length > ENTRIES_PER_FOLDER && !isTop(folder)) dirs.add(folder)
    else files.push(...names)
  }
  return withinLimit(outermost(files, dirs))
}

const isTop = (dir: string): boolean => (ROOT_ONLY_TREES as readonly string[]).includes(dir)

/** The folders not inside another, and the files in none of them (each path's folders looked up: linear). */
function outermost(files: readonly string[], dirs: ReadonlySet<string>): { files: string[]; dirs: string[] } {
  const inMasked = (p: string): boolean => {
    for (let d = path.dirname(p); d !== path.dirname(d); d = path.dirname(d)) if (dirs.has(d)) return true
    return false
  }
  return { files: files.filter(f => !inMasked(f)), dirs: [...dirs].filter(d => !inMasked(d)) }
}

/** Too many masks for bwrap: what lies in a folder of /opt is masked as that folder; still too many fails. */
function withinLimit(masks: { files: string[]; dirs: string[] }): { files: string[]; dirs: string[] } | { error: string } {
  if (masks.files.length + masks.dirs.length <= MAX_MASKS) return masks
  // Only what lies below a folder of /opt: a file right in /opt stays a file's mask (review of round 96).
  const optFolder = (p: string): string | undefined => (p.startsWith('/opt/') && p.slice(5).includes('/') ? `/opt/${p.slice(5).split('/')[0] ?? ''}` : undefined)
  const dirs = new Set([...masks.files, ...masks.dirs].map(p => optFolder(p) ?? '').filter(Boolean))
  for (const dir of masks.dirs) if (optFolder(dir) === undefined) dirs.add(dir)
  const collapsed = outermost(masks.files.filter(f => optFolder(f) === undefined), dirs)
  if (collapsed.files.length + collapsed.dirs.length <= MAX_MASKS) return collapsed
  return { error: `more than ${MAX_MASKS} entries only root may read in /etc, too many to mask one by one` }
}

/** The name as text when it is UTF-8 (bwrap's arguments come from Node's strings as UTF-8). */
function textOf(name: Buffer): string | undefined {
  const text = name.toString('utf8')
  return Buffer.from(text, 'utf8').equals(name) ? text : undefined
}

/** The nearest folder above `name` whose own name is UTF-8. */
function decodableFolder(name: Buffer): string {
  const parent = name.subarray(0, Math.max(1, name.lastIndexOf(0x2f)))
  return textOf(parent) ?? decodableFolder(parent)
}

