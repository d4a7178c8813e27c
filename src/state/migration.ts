// Users of the bash claudebox: its sign-in sat in $CLAUDEBOX_HOME/.credentials.json, its shared
// instructions in $CLAUDEBOX_HOME/CLAUDE.md, and its instances were keyed by a SHA-256 of the
// project's top level (written with `echo`, so sometimes of the root plus a newline), where this
// claudebox keys them by the git common dir. This finds what is left of that layout and moves it
// into place, with the user's consent (migration-offer.ts asks).
import fs from 'node:fs'
import path from 'node:path'
import { lstatKind, readNoFollow } from '../host/probe.js'
import { instanceDir, instanceId, PROJECT_ROOT_FILE, sharedPaths, validProjectRoot } from './instance.js'
import { storeFileOf } from '../network/credentials.js'

/** Records that the user answered the offer to move the old files (asked once). */
const DECISION_FILE = 'bash-migration'

export interface LegacyFiles {
  /** The old sign-in and where it goes (only when the store has none). */
  credentials?: { from: string; to: string }
  /** The old shared CLAUDE.md and where it goes (only when the shared tier has none). */
  claudeMd?: { from: string; to: string }
  /** Old files left where they are because the new place is taken: said, never merged. */
  kept: string[]
}

/** Cheap test for the launch path: a first launch, or bash-era files not yet answered for. */
export function mayTakeOver(facts: { claudeboxHome: string; instance: { kind: string } }): boolean {
  if (facts.instance.kind === 'missing') return true
  const home = facts.claudeboxHome
  return (fs.existsSync(path.join(home, '.credentials.json')) || fs.existsSync(path.join(home, 'CLAUDE.md'))) && !fs.existsSync(path.join(home, DECISION_FILE))
}

/** The bash-era files still to move, unless the user answered before. */
export function legacyFiles(claudeboxHome: string): LegacyFiles | undefined {
  const shared = sharedPaths(claudeboxHome)
  if (fs.existsSync(path.join(claudeboxHome, DECISION_FILE))) return undefined
  const found: LegacyFiles = { kept: [] }
  const oldCredentials = path.join(claudeboxHome, '.credentials.json')
  const store = storeFileOf(shared.secureStorage)
  if (lstatKind(oldCredentials) === 'file') {
    if (lstatKind(store) === 'missing') found.credentials = { from: oldCredentials, to: store }
    else found.kept.push(oldCredentials)
  }
  const oldMd = path.join(claudeboxHome, 'CLAUDE.md')
  const newMd = path.join(shared.dir, 'CLAUDE.md')
  if (lstatKind(oldMd) === 'file' && fs.statSync(oldMd).size > 0) {
    if (lstatKind(newMd) === 'missing' || (lstatKind(newMd) === 'file' && fs.statSync(newMd).size === 0)) found.claudeMd = { from: oldMd, to: newMd }
    else if (readNoFollow(oldMd, 1 << 20) !== readNoFollow(newMd, 1 << 20)) found.kept.push(oldMd)
  }
  return found.credentials || found.claudeMd || found.kept.length > 0 ? found : undefined
}

/**
 * Moves the files (when accepted: moved, since a single-use refresh token must never exist twice)
 * and records the decision. Never over a file: one that reached the
 * new place while the question waited (a `claudebox --login` in another terminal) stays, and so
 * does the old one (red team, round 94: the new login was replaced by the old, expired one).
 * Returns the old files left so.
 */
export function moveLegacyFiles(claudeboxHome: string, files: LegacyFiles, accepted: boolean): string[] {
  const left: string[] = []
  if (accepted) {
    for (const move of [files.credentials, files.claudeMd]) {
      if (move === undefined) continue
      fs.mkdirSync(path.dirname(move.to), { recursive: true, mode: 0o700 })
      // The shared CLAUDE.md an earlier launch made empty gives way, as legacyFiles found it.
      if (move === files.claudeMd && lstatKind(move.to) === 'file' && fs.statSync(move.to).size === 0) fs.unlinkSync(move.to)
      if (!moveUnlessThere(move.from, move.to)) left.push(move.from)
    }
  }
  fs.writeFileSync(path.join(claudeboxHome, DECISION_FILE), `${accepted ? 'moved' : 'declined'} ${new Date().toISOString()}\n`, { mode: 0o600 })
  return left
}

/** A hard link then the old name's removal: the link fails, and nothing moves, when `to` exists. */
function moveUnlessThere(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    // A file system without hard links: the check and the rename are not one step there.
    if (fs.existsSync(to)) return false
    fs.renameSync(from, to)
    return true
  }
  fs.unlinkSync(from)
  return true
}

export function describeLegacyFiles(files: LegacyFiles): string[] {
  return [
    ...(files.credentials ? [`move the bash claudebox's sign-in ${files.credentials.from} -> ${files.credentials.to}`] : []),
    ...(files.claudeMd ? [`move the bash claudebox's ${files.claudeMd.from} -> ${files.claudeMd.to} (shared by every project)`] : []),
    ...files.kept.map(file => `leave ${file} (the new place already has one; compare them and delete the old one yourself)`),
  ]
}

export interface LegacyInstance {
  id: string
  dir: string
  recordedRoot: string
}

/**
 * The bash claudebox's instance of this project: an id that hashes one of the roots this project
 * could have been recorded under, with or without the newline `echo` added, whose project-root
 * names that root. Checks at most six directories, no scan.
 */
export function legacyInstance(claudeboxHome: string, roots: readonly (string | undefined)[], currentId: string): LegacyInstance | undefined {
  for (const root of new Set(roots.filter(r => r !== undefined))) {
    for (const hashed of [root, `${root}\n`]) {
      const id = instanceId(hashed)
      const dir = instanceDir(claudeboxHome, id)
      if (id === currentId || lstatKind(dir) !== 'dir') continue
      if (validProjectRoot(readNoFollow(path.join(dir, PROJECT_ROOT_FILE))) === root) return { id, dir, recordedRoot: root }
    }
  }
  return undefined
}
