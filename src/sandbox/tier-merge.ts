// The three-way rules behind per-project copies of the shared tier: what the instance copy becomes
// when the shared tier changed (the project's own changes kept, the rest follows the shared copy),
// and which of the project's changes are still proposals for the shared tier. Pure.
import { sha256Hex } from '../sha256.js'

/** One file or symlink of a tier, by its path relative to the config dir ('settings.json', 'agents/x.md'). */
export type TierNode = { kind: 'file'; sha256: string; data?: Buffer; json?: unknown } | { kind: 'symlink'; target: string }
export type Tree = ReadonlyMap<string, TierNode>

export type JsonOp = { path: string[]; op: 'set'; value: unknown } | { path: string[]; op: 'delete' }

export interface ComposePlan {
  write: [string, TierNode][]
  remove: string[]
}

/** A change the project made to a shared entry that the shared tier does not have yet. */
export interface Proposal {
  rel: string
  /** The shared tier's node now (undefined: the project added it). */
  from: TierNode | undefined
  /** The project's node (undefined: the project removed it). */
  to: TierNode | undefined
  /** For JSON objects: only the keys the project changed, applied onto the shared copy. */
  ops?: JsonOp[]
  /** Identifies this exact change: a dismissed proposal is not shown again until it changes. */
  digest: string
}

export function sameNode(a: TierNode | undefined, b: TierNode | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  if (a.kind === 'file') return b.kind === 'file' && a.sha256 === b.sha256
  return b.kind === 'symlink' && a.target === b.target
}

/**
 * The instance copy after the shared tier moved from `base` (what was composed last time) to
 * `shared`: a path the project did not touch follows the shared tier; one it changed keeps the
 * project's version, merged key by key when both sides are JSON objects.
 */
export function composeTree(shared: Tree, base: Tree, work: Tree): ComposePlan {
  const plan: ComposePlan = { write: [], remove: [] }
  for (const rel of unionKeys(shared, base, work)) {
    const [s, b, w] = [shared.get(rel), base.get(rel), work.get(rel)]
    if (sameNode(w, b)) {
      if (sameNode(s, w)) continue
      if (s === undefined) plan.remove.push(rel)
      else plan.write.push([rel, s])
    } else if (!sameNode(s, b)) {
      const merged = mergeJson(s, b, w)
      if (merged !== undefined && !sameNode(merged, w)) plan.write.push([rel, merged])
    }
  }
  return plan
}

/** The project's changes (against `base`) that the shared tier does not already hold. */
export function proposals(shared: Tree, base: Tree, work: Tree): Proposal[] {
  const found: Proposal[] = []
  for (const rel of unionKeys(shared, base, work)) {
    const [s, b, w] = [shared.get(rel), base.get(rel), work.get(rel)]
    // Symlinks made inside never become proposals: the shared tier must not point anywhere the agent chose.
    if (sameNode(w, b) || sameNode(w, s) || w?.kind === 'symlink') continue
    const ops = jsonObject(b) && jsonObject(w) ? jsonDelta(b.json, w.json).filter(op => changes(s?.kind === 'file' ? s.json : undefined, op)) : undefined
    if (ops !== undefined && jsonObject(s) && ops.length === 0) continue
    const proposal: Proposal = { rel, from: s, to: w, digest: sha256Hex(JSON.stringify([rel, w?.kind === 'file' ? w.sha256 : null, ops ?? null])) }
    if (ops !== undefined && jsonObject(s)) proposal.ops = ops
    found.push(proposal)
  }
  return found
}

function unionKeys(...trees: Tree[]): string[] {
  return [...new Set(trees.flatMap(t => [...t.keys()]))].sort()
}

function jsonObject(node: TierNode | undefined): node is { kind: 'file'; sha256: string; json: Record<string, unknown> } {
  return node?.kind === 'file' && isObject(node.json)
}

function mergeJson(s: TierNode | undefined, b: TierNode | undefined, w: TierNode | undefined): TierNode | undefined {
  if (!jsonObject(s) || !jsonObject(b) || !jsonObject(w)) return undefined
  return jsonNode(applyJsonOps(s.json, jsonDelta(b.json, w.json)))
}

export function jsonNode(value: unknown): { kind: 'file'; sha256: string; data: Buffer; json: unknown } {
  const data = Buffer.from(`${JSON.stringify(value, null, 2)}\n`)
  return { kind: 'file', sha256: sha256Hex(data), data, json: value }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The key-level changes from `base` to `work`: nested objects are compared key by key, anything else whole. */
export function jsonDelta(base: unknown, work: unknown, at: string[] = []): JsonOp[] {
  if (isObject(base) && isObject(work)) {
    const ops: JsonOp[] = []
    for (const key of Object.keys(work)) {
      if (Object.hasOwn(base, key)) ops.push(...jsonDelta(base[key], work[key], [...at, key]))
      else ops.push({ path: [...at, key], op: 'set', value: work[key] })
    }
    for (const key of Object.keys(base)) if (!Object.hasOwn(work, key)) ops.push({ path: [...at, key], op: 'delete' })
    return ops
  }
  return canonical(base) === canonical(work) ? [] : [{ path: at, op: 'set', value: work }]
}

export function applyJsonOps(target: unknown, ops: readonly JsonOp[]): unknown {
  let root: unknown = structuredClone(target)
  for (const op of ops) {
    if (op.path.length === 0) {
      root = op.op === 'set' ? structuredClone(op.value) : {}
      continue
    }
    if (!isObject(root)) root = {}
    let node = root as Record<string, unknown>
    for (const key of op.path.slice(0, -1)) {
      if (!isObject(node[key]) || !Object.hasOwn(node, key)) define(node, key, {})
      node = node[key] as Record<string, unknown>
    }
    const last = op.path[op.path.length - 1] as string
    if (op.op === 'delete') delete node[last]
    else define(node, last, structuredClone(op.value))
  }
  return root
}

/** Sets an own property, also for keys like "__proto__" that plain assignment would treat specially. */
function define(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true })
}

/** Whether applying `op` to `shared` would change it. */
function changes(shared: unknown, op: JsonOp): boolean {
  let node: unknown = shared
  for (const key of op.path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return op.op === 'set'
    node = node[key]
  }
  return op.op === 'delete' || canonical(node) !== canonical(op.value)
}

/** JSON with sorted keys, for comparing values. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v)) ?? 'undefined'
}
