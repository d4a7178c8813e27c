// A protected name that is a symlink (.git/hooks -> ../tools/githooks, a stow-managed .envrc): a
// bind would follow it, and the link itself lies where the agent can write. So what it leads to in
// the project is protected instead (read-only when it exists, moved aside if it appears), and every
// link on the way that the agent could replace is guarded during the session.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind } from './fs.js'
import { isWithinAny } from '../state/instance.js'
import type { PathKind } from '../types.js'

/** Links followed at most, as the kernel's own limit. */
const MAX_HOPS = 40

export interface LinkChain {
  /** Every symlink met on the way, at the end or in a folder on the way, with its text. */
  links: { path: string; text: string }[]
  /** Where the path really ends ('missing': nothing yet; undefined: a loop or too many links). */
  end?: { path: string; kind: PathKind }
  /** When the end is missing: its first missing folder or name (what a session would create first). */
  firstMissing?: string
  /** The folders walked through on the way, in order (a `..` after one still went through it). */
  folders: string[]
}

/**
 * Resolves `start` one name at a time, as the kernel does, following every symlink on the way and
 * at the end (a stow-like `.envrc -> dotfiles/envrc` with `dotfiles -> config/dotfiles`), so the
 * end is a path without links and each link met can be guarded.
 */
export function resolveChain(start: string, realBase = '/'): LinkChain {
  const links: LinkChain['links'] = []
  const folders: string[] = []
  // Below a base known to hold no link (the project's real path), only the names under it are looked at.
  const within = realBase !== '/' && start.startsWith(`${realBase}/`)
  const parts = (within ? start.slice(realBase.length) : start).split('/')
  let here = within ? realBase : '/'
  while (parts.length > 0) {
    const part = parts.shift() as string
    if (part === '' || part === '.') continue
    if (part === '..') {
      here = path.dirname(here)
      continue
    }
    const next = path.join(here, part)
    const kind = lstatKind(next)
    if (kind === 'missing') return { links, folders, end: { path: path.join(next, ...parts), kind }, firstMissing: next }
    if (kind !== 'symlink') {
      if (kind === 'dir' && parts.length > 0) folders.push(next)
      here = next
      continue
    }
    if (links.length >= MAX_HOPS) return { links, folders }
    let text: string
    try {
      text = fs.readlinkSync(next)
    } catch {
      return { links, folders }
    }
    links.push({ path: next, text })
    parts.unshift(...text.split('/'))
    if (text.startsWith('/')) here = '/'
  }
  return { links, folders, end: { path: here, kind: lstatKind(here) } }
}

/** What protecting a symlinked entry adds to the probe's facts. */
export interface LinkProtection {
  /** The existing target in the project: read-only. */
  target?: { path: string; kind: PathKind }
  /** The first missing name on the way to a missing target in the project: moved aside if it appears. */
  missing?: string
  /** Links in the project: guarded. */
  links: { path: string; text: string }[]
}

export function protectLink(link: string, projectDirs: readonly string[]): LinkProtection {
  const chain = resolveChain(link)
  const inProject = (p: string): boolean => isWithinAny(p, projectDirs)
  const out: LinkProtection = { links: chain.links.filter(l => inProject(l.path)) }
  const end = chain.end
  if (end === undefined || !inProject(end.path)) return out
  if (end.kind === 'file' || end.kind === 'dir') out.target = end
  else if (chain.firstMissing !== undefined && inProject(chain.firstMissing) && !projectDirs.includes(chain.firstMissing)) out.missing = chain.firstMissing
  return out
}

/**
 * Where an entry below a symlinked folder really is (`.claude/settings.json` with `.claude ->
 * config/claude`), and the links on the way; undefined when no folder on the way is a link.
 */
export function throughLinkedFolders(entry: string, realTop: string): { path: string; links: LinkChain['links'] } | undefined {
  if (path.dirname(entry) === realTop) return undefined // the common case: an entry at the top
  const folder = resolveChain(path.dirname(entry), realTop)
  if (folder.links.length === 0 || folder.end === undefined) return undefined
  if (folder.end.kind !== 'dir') return folder.end.kind === 'missing' ? undefined : { path: entry, links: folder.links }
  return { path: path.join(folder.end.path, path.basename(entry)), links: folder.links }
}

/** Entries looked at, at most, when searching a folder for links (a folder is small: hooks, .vscode). */
const SCAN_ENTRIES = 512
const SCAN_DEPTH = 4

/** The symlinks below `folder` (not followed), and whether the bounded search saw all of it. */
export function linksBelow(folder: string): { links: string[]; complete: boolean } {
  const links: string[] = []
  let budget = SCAN_ENTRIES
  let complete = true
  const walk = (dir: string, depth: number): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
    } catch {
      return
    }
    for (const entry of entries) {
      if (budget-- <= 0) {
        complete = false
        return
      }
      const p = path.join(dir, entry.name)
      if (entry.isSymbolicLink()) links.push(p)
      else if (entry.isDirectory() && depth < SCAN_DEPTH) walk(p, depth + 1)
      else if (entry.isDirectory()) complete = false
    }
  }
  walk(folder, 0)
  return { links, complete }
}
