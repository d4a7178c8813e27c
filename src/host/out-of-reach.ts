// Whether a path outside the project is out of other local users' reach: what a nested
// repository's config may name there (a program, hooks, an include, a work tree) without another
// user being able to make it run their code at your next git command (nested-search.ts configsOut).
import fs from 'node:fs'
import path from 'node:path'
import { resolveChain, type LinkChain } from './link-targets.js'

/** Entries of a folder of hooks looked at, at most; more counts as within others' reach. */
const MAX_HOOKS = 256

/**
 * Whether `p` is there and, on the kernel's way to it, every link and folder, and the end itself
 * (with `entries`, a folder's entries too: a folder of hooks), is owned by root or you, none writable by others,
 * and each in a folder writable by no one else, or sticky (`/tmp`: only an entry's owner may
 * replace it). Round 73: a link in /tmp of another user's that they re-pointed later; a tool of
 * root's in a folder of another user's, renamed away; round 72 looked only at the end and its folder.
 */
export function outOfOthersReach(p: string, { entries }: { entries: boolean }, chain: LinkChain = resolveChain(p)): boolean {
  const end = chain.end
  if (end === undefined || end.kind === 'missing') return false
  const steps = [...chain.links.map(link => link.path), ...chain.folders]
  // A sticky folder on the way (/tmp) is no one else's to replace; the end, a folder of hooks or a
  // work tree, must not let others add a name either.
  if (!steps.every(step => safeEntry(step, true)) || !safeEntry(end.path, false)) return false
  return !entries || end.kind !== 'dir' || safeEntries(end.path)
}

function safeEntries(dir: string): boolean {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return false
  }
  return names.length <= MAX_HOOKS && names.every(name => safeEntry(path.join(dir, name), false))
}

/**
 * `p` (not followed) owned by root or you and not writable by others (`sticky`: but for a sticky
 * folder), in a folder that lets no one else replace it.
 */
function safeEntry(p: string, sticky: boolean): boolean {
  const uid = process.getuid?.() ?? 0
  const ours = (st: fs.Stats): boolean => st.uid === 0 || st.uid === uid
  const othersWrite = (st: fs.Stats): boolean => !st.isSymbolicLink() && (st.mode & 0o022) !== 0 && !(sticky && st.isDirectory() && (st.mode & 0o1000) !== 0)
  try {
    const st = fs.lstatSync(p)
    if (!ours(st) || othersWrite(st)) return false
    if (p === '/') return true
    const parent = fs.lstatSync(path.dirname(p))
    return ours(parent) && ((parent.mode & 0o022) === 0 || (parent.mode & 0o1000) !== 0)
  } catch {
    return false
  }
}
