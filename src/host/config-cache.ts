// What git read in a config file's exact text, kept between launches: each launch reads every
// config git reads (the repository's, /etc/gitconfig, ~/.gitconfig: two or three files) and a git
// run costs ~3 ms. Kept in $CLAUDEBOX_HOME/cache/git-configs.json, which no sandbox sees, keyed by
// the file's path and its whole text: git is given that text on stdin, so what is kept is what git
// made of those bytes, and a config changed in any way is read by git again. Only a launch turns
// it on (useConfigCache). Within one process, any reader also takes what git made of a text it
// already read, at any path: a session's end reads each nested repository's config twice, and
// repositories cloned or copied from one another often hold the same text (520 copies: 1 git run, not 1,040).
import path from 'node:path'
import { writeHomeFile } from './atomic-write.js'
import { readJsonObject } from './fs.js'

export type ConfigEntries = [string, string][]

/** Texts kept at most, and each one's size: a config larger than this is read by git each time. */
const MAX_FILES = 16
const MAX_TEXT = 64 << 10

interface Kept {
  text: string
  entries: ConfigEntries
}

/** What git made of each text this process had it read (`--file -` follows no includes: the text alone decides), up to MAX_READ_TEXT in all. */
const readHere = new Map<string, ConfigEntries>()
const MAX_READ_TEXT = 16 << 20
let readHereText = 0

let cache: { file: string; kept: Map<string, Kept>; used: Map<string, Kept>; changed: boolean } | undefined

/** Reads the cache of `claudeboxHome` (its real path) for this launch; a missing or damaged one is an empty one. */
export function useConfigCache(claudeboxHome: string): void {
  const file = path.join(claudeboxHome, 'cache', 'git-configs.json')
  cache = { file, kept: new Map(), used: new Map(), changed: false }
  // Damaged: every config is read with git, and the cache written anew.
  const files = readJsonObject(file)?.['files']
  if (typeof files !== 'object' || files === null) return
  for (const [config, kept] of Object.entries(files)) if (isKept(kept)) cache.kept.set(config, kept)
}

function isKept(kept: unknown): kept is Kept {
  const k = kept as Kept
  return typeof k?.text === 'string' && Array.isArray(k.entries) && k.entries.every(e => Array.isArray(e) && e.length === 2 && e.every(s => typeof s === 'string'))
}

/** What git read in `text`: at `config` last launch, or at any path earlier in this process. */
export function keptEntries(config: string, text: string): ConfigEntries | undefined {
  const kept = cache?.kept.get(config)
  if (kept !== undefined && kept.text === text) {
    cache?.used.set(config, kept)
    return kept.entries
  }
  const read = readHere.get(text)
  if (read !== undefined) keepForNextLaunch(config, text, read)
  return read
}

export function keepEntries(config: string, text: string, entries: ConfigEntries): void {
  if (readHereText + text.length <= MAX_READ_TEXT && !readHere.has(text)) {
    readHere.set(text, entries)
    readHereText += text.length
  }
  keepForNextLaunch(config, text, entries)
}

function keepForNextLaunch(config: string, text: string, entries: ConfigEntries): void {
  if (cache === undefined || text.length > MAX_TEXT || cache.used.size >= MAX_FILES) return
  cache.used.set(config, { text, entries })
  cache.changed = true
}

/**
 * Writes what this launch used (only that: configs no longer read drop out), when anything was
 * new. A failure (a read-only home, a full disk) costs only the next launch's git runs.
 */
export function saveConfigCache(): void {
  if (cache === undefined || !cache.changed) return
  writeHomeFile(cache.file, JSON.stringify({ files: Object.fromEntries(cache.used) })) // unwritten, the next launch runs git again
  cache.changed = false
}
