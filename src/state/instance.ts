// Project root -> instance id and paths. Pure: the root's realpath is resolved by the probe.
import { sha256Hex } from '../sha256.js'
import path from 'node:path'
import type { GitFacts } from '../types.js'

/** An instance directory's name: the first 16 hex characters of a SHA-256. */
export const INSTANCE_ID = /^[0-9a-f]{16}$/

/** File in the instance dir holding the canonical project root (a name Claude Code does not use). */
export const PROJECT_ROOT_FILE = 'project-root'

/** Longer than any path Linux accepts (PATH_MAX): such a project-root was not written by claudebox. */
const MAX_ROOT_LENGTH = 4096

/**
 * The root a project-root file records, when it is one: absolute, normalised, one line, no NUL,
 * valid UTF-8 (the reader turns invalid bytes into U+FFFD), at most PATH_MAX. Anything else makes
 * the instance broken (kept, shown by --list, removed only by --gc --broken), never a vanished root.
 */
export function validProjectRoot(text: string | undefined): string | undefined {
  if (text === undefined || text === '' || text.length > MAX_ROOT_LENGTH) return undefined
  if (!path.isAbsolute(text) || path.normalize(text) !== text || /[\n\r\0\uFFFD]/u.test(text)) return undefined
  return text
}

export function instanceId(canonicalRoot: string): string {
  return sha256Hex(canonicalRoot).slice(0, 16)
}

export function instancesDir(claudeboxHome: string): string {
  return path.join(claudeboxHome, 'instances')
}

export function instanceDir(claudeboxHome: string, id: string): string {
  return path.join(instancesDir(claudeboxHome), id)
}

/**
 * The canonical project root: the git common dir inside a repository (so every worktree of
 * one repository shares an instance), else the current directory. Both arrive resolved.
 */
export function canonicalRoot(cwd: string, git: GitFacts | undefined): string {
  return git ? git.commonDir : cwd
}

/** Where shared (cross-project) state lives: one copy for every instance. */
export function sharedPaths(claudeboxHome: string): { dir: string; claudeJson: string; secureStorage: string } {
  const dir = path.join(claudeboxHome, 'shared')
  return { dir, claudeJson: path.join(dir, '.claude.json'), secureStorage: path.join(dir, 'credentials') }
}

/** A double slash, a `.` or `..` name, or a trailing slash: what path.normalize would change. */
const NOT_NORMAL = /\/\/|\/\.\.?(?:\/|$)|.\/$/

/**
 * True when `child` is `parent` or lies below it (both absolute and normalised). The launch asks
 * this hundreds of times: normalised absolute paths are compared as strings (path.relative
 * resolves both, and its loops were hot enough for V8's optimizing compiler, ~3.5 MB of RSS);
 * anything else takes path.relative's reading.
 */
export function isWithin(child: string, parent: string): boolean {
  if (child.startsWith('/') && parent.startsWith('/') && !NOT_NORMAL.test(child) && !NOT_NORMAL.test(parent)) {
    return child === parent || parent === '/' || (child.startsWith(parent) && child.charCodeAt(parent.length) === 0x2f)
  }
  const rel = path.relative(parent, child)
  // "..tmp" is a name below parent; only ".." itself or "../" goes up (red team: /p/..tmp was outside /p).
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

/** Whether `child` is one of `parents` or below one of them. */
export const isWithinAny = (child: string, parents: readonly string[]): boolean => parents.some(parent => isWithin(child, parent))
