// Per-project copies of the shared tier. The shared entries (CLAUDE.md, agents/, settings.json...)
// are never bound into a sandbox: each instance holds its own copy, composed on the host before a
// launch from $CLAUDEBOX_HOME/shared/ (tier-merge.ts decides), so what a session writes there stays
// in that project. What it changed is a proposal the user can promote on the host (--proposals).
// The state (what was composed last) lives in the instance's claudebox/ dir, read-only inside.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { withLockSync } from '../host/lock.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { readNoFollow } from '../host/probe.js'
import { OWN_DIR } from './registry.js'
import { parseJson, readTree, removeNode, treePrint, writeNode } from './tier-files.js'
import { composeTree, jsonNode, proposals, type Proposal, type TierNode, type Tree } from '../sandbox/tier-merge.js'
import { sha256Hex } from '../sha256.js'

export const TIERS_STATE = `${OWN_DIR}/tiers.json`
/** Where an instance's own copies of shared entries went when it first got composed copies. */
export const PREVIOUS_DIR = `${OWN_DIR}/tiers-previous`

interface TierState {
  /** treePrint of the shared entries when they were last composed into this instance. */
  sharedPrint: string
  /** The shared tier as composed then: hashes, plus the parsed value of JSON files (for key merges). */
  base: Record<string, TierNode>
  /** Proposals the user dismissed (rel -> digest) and the ones already announced after a session. */
  dismissed: Record<string, string>
  announced: Record<string, string>
}

function readState(instance: string): TierState | undefined {
  const data = parseJson(readNoFollow(path.join(instance, TIERS_STATE), 64 << 20) ?? '') as Partial<TierState> | undefined
  if (typeof data?.sharedPrint !== 'string' || typeof data.base !== 'object' || data.base === null) return undefined
  return { sharedPrint: data.sharedPrint, base: data.base, dismissed: data.dismissed ?? {}, announced: data.announced ?? {} }
}

function writeState(instance: string, state: TierState): void {
  writeFileAtomic(path.join(instance, TIERS_STATE), `${JSON.stringify(state)}\n`)
}

/** Held longer than this, the lock was left by a claudebox that died (a composition takes milliseconds). */
const TIERS_LOCK_STALE_MS = 10_000

/**
 * Reads and rewrites an instance's composition record under a lock in $CLAUDEBOX_HOME (the
 * instance is the sandbox's to write): a --dismiss, a launch composing and a session announcing
 * each rewrite the whole record, and none may write back one it read before another's change.
 */
function withTierState<T>(instance: string, step: () => T): T {
  return withLockSync(path.join(path.dirname(path.dirname(instance)), `tiers-${path.basename(instance)}.lock`), TIERS_LOCK_STALE_MS, step)
}

/** What is kept of a node in the state: no file contents except parsed JSON. */
function stored(tree: Tree): Record<string, TierNode> {
  const out: Record<string, TierNode> = {}
  for (const [rel, node] of tree) out[rel] = node.kind === 'symlink' ? node : { kind: 'file', sha256: node.sha256, ...(node.json === undefined ? {} : { json: node.json }) }
  return out
}

const asTree = (base: Record<string, TierNode>): Tree => new Map(Object.entries(base))

/**
 * Settings the host acts on itself and the sandbox must not see: with the login on the host,
 * apiKeyHelper runs there (api-session.ts), so the instances' settings.json copies go without it.
 */
export const HOST_ONLY_SETTINGS = ['apiKeyHelper'] as const

/** The shared tier as the instances get it: settings.json without the host-only keys. */
export function readSharedTree(sharedDir: string, entries: readonly string[], hostOnly: readonly string[], warnings: string[]): Tree | undefined {
  const tree = readTree(sharedDir, entries, true, warnings)
  if (tree === undefined) return undefined
  const settings = tree.get('settings.json')
  if (settings?.kind !== 'file' || typeof settings.json !== 'object' || settings.json === null || !hostOnly.some(key => Object.hasOwn(settings.json as object, key))) return tree
  const kept = Object.fromEntries(Object.entries(settings.json).filter(([key]) => !hostOnly.includes(key)))
  return new Map([...tree, ['settings.json', { ...jsonNode(kept), mode: 0o600 }]])
}

/**
 * Brings the instance's copies up to date with the shared tier, when the shared tier changed since
 * the last launch. Skipped while another session of this project runs (it is writing these files);
 * the next launch catches up. Returns warnings.
 */
export function composeShared(instance: string, sharedDir: string, entries: readonly string[], otherSessions: number, hostOnly: readonly string[]): string[] {
  return otherSessions > 0 ? [] : withTierState(instance, () => compose(instance, sharedDir, entries, hostOnly))
}

function compose(instance: string, sharedDir: string, entries: readonly string[], hostOnly: readonly string[]): string[] {
  const warnings: string[] = []
  const state = readState(instance)
  const print = sha256Hex(`${treePrint(sharedDir, entries)}\0${hostOnly.join(',')}`)
  if (state?.sharedPrint === print) return warnings
  if (state === undefined) setAsidePrevious(instance, entries, warnings)
  const shared = readSharedTree(sharedDir, entries, hostOnly, warnings)
  const work = readTree(instance, entries, false, warnings)
  if (shared === undefined || work === undefined) return warnings // too large to compare: left as they are
  const plan = composeTree(shared, state ? asTree(state.base) : new Map(), work)
  for (const rel of plan.remove) removeNode(instance, rel)
  for (const [rel, node] of plan.write) {
    if (!writeNode(instance, rel, node)) warnings.push(`could not update ${path.join(instance, rel)} from the shared tier (something else is in the way); left as it is`)
  }
  for (const entry of entries) ensureDir(sharedDir, instance, entry)
  writeState(instance, { sharedPrint: print, base: stored(shared), dismissed: state?.dismissed ?? {}, announced: state?.announced ?? {} })
  return warnings
}

/** A shared directory with nothing in it yet still exists in the instance (Claude saves agents there). */
function ensureDir(sharedDir: string, instance: string, entry: string): void {
  try {
    if (fs.statSync(path.join(sharedDir, entry)).isDirectory()) fs.mkdirSync(path.join(instance, entry), { mode: 0o700 })
  } catch {
    // exists already, or not a directory on either side
  }
}

/**
 * Before its first composition an instance holds bwrap's empty mount points of the old shared binds,
 * or its own copies from when an entry was not shared: empty ones go, the others are kept aside.
 */
function setAsidePrevious(instance: string, entries: readonly string[], warnings: string[]): void {
  for (const entry of entries) {
    const file = path.join(instance, entry)
    let st: fs.Stats
    try {
      st = fs.lstatSync(file)
    } catch {
      continue
    }
    try {
      if (st.isFile() && st.size === 0) fs.unlinkSync(file)
      else if (st.isDirectory() && fs.readdirSync(file).length === 0) fs.rmdirSync(file)
      else {
        fs.mkdirSync(path.join(instance, PREVIOUS_DIR), { recursive: true, mode: 0o700 })
        fs.renameSync(file, path.join(instance, PREVIOUS_DIR, `${entry}.${Date.now()}`))
        warnings.push(`this project's own ${entry} was kept aside in ${path.join(instance, PREVIOUS_DIR)}; the shared one is used now`)
      }
    } catch {
      warnings.push(`could not move ${file} aside; the shared tier is composed around it`)
    }
  }
}

export interface ProjectProposals {
  instance: string
  list: Proposal[]
  /** The proposals not yet announced after a session. */
  fresh: Proposal[]
}

/**
 * The changes the project made to shared entries that are still open (not in the shared tier, not
 * dismissed). Host-only settings are never proposed: the host runs apiKeyHelper itself, so one
 * written inside and promoted would be the agent's command run on the host.
 */
export function pendingProposals(instance: string, shared: Tree | undefined, entries: readonly string[], hostOnly: readonly string[], warnings: string[]): ProjectProposals {
  const state = readState(instance)
  const work = state === undefined || shared === undefined ? undefined : readTree(instance, entries, false, warnings)
  if (state === undefined || shared === undefined || work === undefined) return { instance, list: [], fresh: [] }
  const list = proposals(shared, asTree(state.base), work)
    .flatMap(p => withoutHostOnly(p, hostOnly))
    .filter(p => state.dismissed[p.rel] !== p.digest)
  return { instance, list, fresh: list.filter(p => state.announced[p.rel] !== p.digest) }
}

function withoutHostOnly(p: Proposal, hostOnly: readonly string[]): Proposal[] {
  if (p.rel !== 'settings.json' || hostOnly.length === 0) return [p]
  if (p.ops !== undefined) {
    const ops = p.ops.filter(op => !hostOnly.includes(op.path[0] ?? ''))
    return ops.length === 0 ? [] : [{ ...p, ops }]
  }
  const json = p.to?.kind === 'file' ? p.to.json : undefined
  if (typeof json !== 'object' || json === null || Array.isArray(json) || !hostOnly.some(key => Object.hasOwn(json, key))) return [p]
  const to = { ...jsonNode(Object.fromEntries(Object.entries(json).filter(([key]) => !hostOnly.includes(key)))), mode: (p.to as { mode?: number }).mode }
  return p.from?.kind === 'file' && p.from.sha256 === to.sha256 ? [] : [{ ...p, to }]
}

/** Records which proposals were announced (after a session) or dismissed (by the user). */
export function markProposals(instance: string, list: readonly Proposal[], field: 'announced' | 'dismissed'): void {
  withTierState(instance, () => {
    const state = readState(instance)
    if (state === undefined) return
    for (const p of list) state[field][p.rel] = p.digest
    writeState(instance, state)
  })
}

/** After a session: one line when the session left proposals not announced before. */
export function announceProposals(instance: string, sharedDir: string, entries: readonly string[], hostOnly: readonly string[]): string | undefined {
  const pending = pendingProposals(instance, readSharedTree(sharedDir, entries, hostOnly, []), entries, hostOnly, [])
  if (pending.fresh.length === 0) return undefined
  markProposals(instance, pending.fresh, 'announced')
  const names = pending.fresh.map(p => inlineSafe(p.rel)).join(', ')
  return `this session changed shared Claude settings for this project only (${names}); review or promote them with claudebox --proposals`
}
