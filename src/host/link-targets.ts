// A protected name that is a symlink (.git/hooks -> ../tools/githooks, a stow-managed .envrc): a
// bind would follow it, and the link itself lies where the agent can write. So what it leads to in
// the project is protected instead (read-only when it exists, moved aside if it appears), and every
// link on the way that the agent could replace is guarded during the session.
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind } from './fs.js'
import { isWithin } from '../state/instance.js'
import type { PathKind } from '../types.js'

/** Links followed at most (the kernel's own limit is 40; a user's layout needs a few). */
const MAX_HOPS = 16

export interface LinkChain {
  /** The links met, with the text each held: guarded while the session runs. */
  links: { path: string; text: string }[]
  /** Where the chain ends, and what is there ('missing': nothing yet; undefined: too many hops). */
  end?: { path: string; kind: PathKind }
}

/** Follows `link` one hop at a time, as the kernel would. */
export function followLinks(link: string): LinkChain {
  const links: LinkChain['links'] = []
  let p = link
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const kind = lstatKind(p)
    if (kind !== 'symlink') return { links, end: { path: p, kind } }
    let text: string
    let dir: string
    try {
      text = fs.readlinkSync(p)
      dir = fs.realpathSync(path.dirname(p))
    } catch {
      return { links }
    }
    links.push({ path: p, text })
    p = path.resolve(dir, text)
  }
  return { links }
}

/** What protecting a symlinked entry adds to the probe's facts. */
export interface LinkProtection {
  /** The existing target in the project: read-only. */
  target?: { path: string; kind: PathKind }
  /** The missing target in the project: moved aside if it appears. */
  missing?: string
  /** Links in the project: guarded. */
  links: { path: string; text: string }[]
}

export function protectLink(link: string, projectDirs: readonly string[]): LinkProtection {
  const chain = followLinks(link)
  const inProject = (p: string): boolean => projectDirs.some(dir => isWithin(p, dir))
  const out: LinkProtection = { links: chain.links.filter(l => inProject(l.path)) }
  const end = chain.end
  if (end === undefined || !inProject(end.path)) return out
  if (end.kind === 'file' || end.kind === 'dir') out.target = end
  else if (end.kind === 'missing' && lstatKind(path.dirname(end.path)) === 'dir') out.missing = end.path
  return out
}

/**
 * Where an entry below a symlinked folder really is (`.claude/settings.json` with `.claude ->
 * config/claude`), and the links on the way; undefined when no folder on the way is a link, or
 * when one leads nowhere.
 */
export function throughLinkedFolders(entry: string, top: string): { path: string; links: LinkChain['links'] } | undefined {
  const parts = path.relative(top, entry).split(path.sep)
  const links: LinkChain['links'] = []
  let here = top
  for (const part of parts.slice(0, -1)) {
    const next = path.join(here, part)
    if (lstatKind(next) !== 'symlink') {
      here = next
      continue
    }
    const chain = followLinks(next)
    if (chain.end?.kind !== 'dir') return undefined
    links.push(...chain.links)
    here = chain.end.path
  }
  return links.length === 0 ? undefined : { path: path.join(here, parts[parts.length - 1] ?? ''), links }
}

/** Entries looked at, at most, when searching a folder for links (a folder is small: hooks, .vscode). */
const SCAN_ENTRIES = 512
const SCAN_DEPTH = 4

/** The symlinks below `folder` (not followed), at most `max`, in a bounded search. */
export function linksBelow(folder: string, max: number): string[] {
  const found: string[] = []
  let budget = SCAN_ENTRIES
  const walk = (dir: string, depth: number): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)) // the same ones at every launch
    } catch {
      return
    }
    for (const entry of entries) {
      if (found.length >= max || budget-- <= 0) return
      const p = path.join(dir, entry.name)
      if (entry.isSymbolicLink()) found.push(p)
      else if (entry.isDirectory() && depth < SCAN_DEPTH) walk(p, depth + 1)
    }
  }
  walk(folder, 0)
  return found
}
