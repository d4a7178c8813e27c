// --proposals: the changes sessions made to their copies of shared entries, shown as diffs per
// project; --promote ID writes one into the shared tier (after asking), --dismiss ID stops
// proposing it. Nothing is ever promoted without the user naming it here, on the host.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { withLockSync } from '../host/lock.js'
import { ClaudeboxError, EXIT, usageError } from '../errors.js'
import { instancesDir, sharedPaths } from '../state/instance.js'
import { loadConfig } from './setup.js'
import { warn } from '../cli/log.js'
import { ask, canAsk } from '../cli/prompt.js'
import { scanInstances } from '../state/scan.js'
import type { Settings } from '../config/settings.js'
import { inlineSafe, jsonSafe, writeOut } from '../cli/terminal-safe.js'
import { lineDiff } from '../cli/text-diff.js'
import { safeParent, type DiskNode } from '../state/tier-files.js'
import { applyJsonOps, isObject, jsonNode, sameNode, type Proposal, type Tree } from '../sandbox/tier-merge.js'
import { HOST_ONLY_SETTINGS, markProposals, pendingProposals, readSharedTree } from '../state/tier-sync.js'
import { DEFAULT_SHARED_ENTRIES, SANDBOX_NOTE } from '../sandbox/tiers.js'

export interface ProposalsRequest {
  json: boolean
  dryRun: boolean
  yes: boolean
  promote?: string
  dismiss?: string
}

interface Found {
  id: string
  project: string
  instance: string
  proposal: Proposal
}

export async function runProposals(settings: Settings, request: ProposalsRequest): Promise<number> {
  const config = loadConfig(settings)
  const entries = (config.sharedEntries ?? DEFAULT_SHARED_ENTRIES).filter(name => name !== SANDBOX_NOTE)
  const sharedDir = sharedPaths(settings.claudeboxHome).dir
  // Never proposed, whatever config.json's secretless says: a profile or a project's launch may be
  // secretless, and claudebox then runs the helper on the host (red team, round 90).
  const hostOnly = HOST_ONLY_SETTINGS
  const found = collect(settings.claudeboxHome, sharedDir, entries, hostOnly)
  const named = request.promote ?? request.dismiss
  if (named === undefined) return show(found, request.json)
  const target = found.find(f => f.id === named)
  if (target === undefined) throw usageError(`no pending proposal ${JSON.stringify(named)}; claudebox --proposals lists them`)
  if (request.dismiss !== undefined) {
    markProposals(target.instance, [target.proposal], 'dismissed')
    warn(`dismissed ${target.id}: the change stays in ${target.project} only`)
    return EXIT.ok
  }
  writeOut(render(target))
  if (request.dryRun) return EXIT.ok
  if (!request.yes) {
    if (!canAsk()) throw new ClaudeboxError(`not promoted: run claudebox --promote ${target.id} on a terminal to be asked, or add --yes`, EXIT.checkFailed)
    if (!/^y(es)?$/i.test(await ask(`write this into the shared tier, for every project? [y/N]`))) throw new ClaudeboxError('not promoted: you declined', EXIT.checkFailed)
  }
  promoteShown(settings.claudeboxHome, sharedDir, () => collect(settings.claudeboxHome, sharedDir, entries, hostOnly), target)
  warn(`promoted ${target.id}: every project gets it at its next launch (the previous shared copy is in ${path.join(settings.claudeboxHome, HISTORY_DIR)})`)
  return EXIT.ok
}

function collect(claudeboxHome: string, sharedDir: string, entries: readonly string[], hostOnly: readonly string[]): Found[] {
  const warnings: string[] = []
  const shared = readSharedTree(sharedDir, entries, hostOnly, warnings)
  // Key changes are shown against, and applied onto, the shared file as it is (host-only keys included).
  const sharedAsIs = hostOnly.length === 0 ? shared : readSharedTree(sharedDir, entries, [], [])
  const found: Found[] = []
  if (shared === undefined || sharedAsIs === undefined) {
    for (const warning of new Set(warnings)) warn(warning)
    return found
  }
  for (const entry of scanInstances(instancesDir(claudeboxHome))) {
    if (entry.kind !== 'dir' || entry.recordedRoot === undefined) continue
    const instance = path.join(instancesDir(claudeboxHome), entry.name)
    for (const proposal of pendingProposals(instance, shared, entries, hostOnly, warnings).list) {
      found.push({ id: `${entry.name}:${proposal.rel}`, project: entry.recordedRoot, instance, proposal: againstSharedAsIs(proposal, sharedAsIs, hostOnly) })
    }
  }
  for (const warning of new Set(warnings)) warn(warning)
  return found
}

/**
 * The sandbox never saw the host-only settings (apiKeyHelper), so a proposal cannot have meant to
 * remove them: they are kept, whether the project's keys are merged in or its whole file replaces.
 */
function againstSharedAsIs(p: Proposal, sharedAsIs: Tree, hostOnly: readonly string[]): Proposal {
  if (p.rel !== 'settings.json' || hostOnly.length === 0) return p
  const from = sharedAsIs.get(p.rel)
  const kept = from?.kind === 'file' && isObject(from.json) ? Object.entries(from.json).filter(([key]) => hostOnly.includes(key)) : []
  if (p.ops !== undefined || kept.length === 0) return { ...p, from }
  if (p.to === undefined) return { ...p, from, to: { ...jsonNode(Object.fromEntries(kept)), mode: 0o600 } as DiskNode }
  if (p.to.kind !== 'file' || !isObject(p.to.json)) return { ...p, from }
  return { ...p, from, to: { ...jsonNode({ ...p.to.json, ...Object.fromEntries(kept) }), mode: (p.to as DiskNode).mode } as DiskNode }
}

function show(found: readonly Found[], json: boolean): number {
  if (json) {
    writeOut(`${jsonSafe(found.map(f => ({ id: f.id, project: f.project, file: f.proposal.rel, change: changeKind(f.proposal), diff: diffLines(f.proposal) })))}\n`)
    return EXIT.ok
  }
  if (found.length === 0) {
    writeOut('no pending proposals: no session changed a shared entry (or every change was promoted or dismissed)\n')
    return EXIT.ok
  }
  writeOut(found.map(render).join('\n'))
  writeOut(`\npromote one for every project: claudebox --promote ID (asks first; --dry-run shows it)\nkeep one in its project only: claudebox --dismiss ID\n`)
  return EXIT.ok
}

function changeKind(p: Proposal): 'added' | 'changed' | 'removed' {
  return p.to === undefined ? 'removed' : p.from === undefined ? 'added' : 'changed'
}

function render(f: Found): string {
  // Names come from the sandbox's copies: a newline in one must not forge a line of the diff.
  const head = `proposal ${inlineSafe(f.id)}\n  project: ${inlineSafe(f.project)}\n  file:    ${inlineSafe(f.proposal.rel)} (${changeKind(f.proposal)}; - shared now, + after promotion)\n`
  return `${head}${diffLines(f.proposal).map(line => `    ${line}\n`).join('')}`
}

function diffLines(p: Proposal): string[] {
  return diffOf(p).lines
}

/**
 * The change as lines; `whole` is false when they only sum it up (binary content, or too many
 * lines), and then it cannot be promoted: a NUL byte hid an instruction added to CLAUDE.md behind
 * "binary file" (red team, round 61).
 */
function diffOf(p: Proposal): { lines: string[]; whole: boolean } {
  const after = promotedContent(p)
  // Key changes are shown against the shared file in the layout promotion writes.
  const before = p.from?.kind === 'file' ? (p.ops !== undefined ? jsonNode(p.from.json).data : p.from.data) : undefined
  if ((before && isBinary(before)) || (after && isBinary(after))) return { lines: [`binary file: ${before?.length ?? 0} bytes -> ${after?.length ?? 0} bytes (not shown, so it cannot be promoted)`], whole: false }
  const diff = lineDiff(before?.toString('utf8') ?? '', after?.toString('utf8') ?? '')
  if (diff.lines.length > 0) return diff
  const link = (node: Proposal['from'], mark: string): string[] => (node?.kind === 'symlink' ? [`${mark} (a symlink to ${node.target})`] : [])
  return { lines: [...link(p.from, '-'), ...link(p.to, '+')], whole: true }
}

const isBinary = (data: Buffer): boolean => data.subarray(0, 8000).includes(0)

/** What the shared file holds after promotion: the project's keys merged in, or the project's file. */
function promotedContent(p: Proposal): Buffer | undefined {
  if (p.ops !== undefined && p.from?.kind === 'file') return jsonNode(applyJsonOps(p.from.json, p.ops)).data
  return p.to?.kind === 'file' ? p.to.data : undefined
}

const HISTORY_DIR = 'shared-history'

/** Held longer than this, the lock was left by a claudebox that died (a promotion takes milliseconds). */
const PROMOTE_LOCK_STALE_MS = 10_000

/**
 * Promotes the proposal as it is now, under a lock in $CLAUDEBOX_HOME: the shared file may have
 * changed while the user was asked, or another --promote may be writing it. Key changes go onto
 * the file as it is now; a whole file replaces only the shared one that was shown.
 */
function promoteShown(claudeboxHome: string, sharedDir: string, collectNow: () => Found[], shown: Found): void {
  withLockSync(path.join(claudeboxHome, 'promote.lock'), PROMOTE_LOCK_STALE_MS, () => {
    const now = collectNow().find(f => f.id === shown.id)?.proposal
    if (now === undefined || now.digest !== shown.proposal.digest || (now.ops === undefined && !sameNode(now.from, shown.proposal.from))) {
      throw new ClaudeboxError(`not promoted: ${shown.id} or the shared tier changed since it was shown; run claudebox --promote ${shown.id} again`, EXIT.checkFailed)
    }
    promote(claudeboxHome, sharedDir, now)
  })
}

function promote(claudeboxHome: string, sharedDir: string, p: Proposal): void {
  if (p.rel.endsWith('.json') && p.to?.kind === 'file' && p.to.json === undefined) {
    throw usageError(`${p.rel} of that project is not valid JSON; fix it in the project (or --dismiss it) before promoting`)
  }
  if (!diffOf(p).whole) throw usageError(`${p.rel} of that project cannot be shown line by line (binary content, or too long), so it is not promoted; look at it in the project and copy it into ${sharedDir} yourself if you want it, or --dismiss it`)
  const file = sharedTarget(sharedDir, p.rel)
  keepHistory(claudeboxHome, p.rel, file)
  const content = promotedContent(p)
  if (content === undefined) fs.rmSync(file, { force: true })
  else writeFileAtomic(file, content, (p.to as DiskNode).mode ?? 0o600)
}

/** Where to write: a top-level shared entry that is the user's own symlink is written through. */
function sharedTarget(sharedDir: string, rel: string): string {
  const top = path.join(sharedDir, rel)
  if (!rel.includes(path.sep)) {
    try {
      if (fs.lstatSync(top).isSymbolicLink()) return fs.realpathSync.native(top)
    } catch {
      return top
    }
    return top
  }
  const dir = safeParent(sharedDir, rel)
  if (dir === undefined) throw usageError(`cannot promote ${rel}: a directory on the way in ${sharedDir} is not a plain directory`)
  return path.join(dir, path.basename(rel))
}

/** The shared copy before promotion, kept under shared-history/<time>/ (never deleted by claudebox). */
function keepHistory(claudeboxHome: string, rel: string, file: string): void {
  if (!fs.existsSync(file)) return
  const copy = path.join(claudeboxHome, HISTORY_DIR, new Date().toISOString().replace(/[:.]/g, '-'), rel)
  fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o700 })
  fs.copyFileSync(file, copy, fs.constants.COPYFILE_EXCL)
}
