// --gc and --list: pure judgement over a scan of the instances directory.
import { INSTANCE_ID } from './instance.js'

/** One entry of the instances directory, as scanned without following symlinks. */
export interface ScannedEntry {
  name: string
  kind: 'dir' | 'symlink' | 'other'
  /** The recorded project root, or undefined when project-root is missing or unreadable. */
  recordedRoot: string | undefined
  /**
   * The recorded root now: 'exists'; 'missing' (ENOENT, on the same mount as recorded);
   * 'unreachable' (its first existing ancestor is on another mount than recorded, or unreadable);
   * or another error code, which never counts as gone.
   */
  rootState: string | undefined
  liveSessions: number
  /** Milliseconds since the epoch. */
  lastUsed?: number
  size?: number
  conversations?: number
}

export type InstanceStatus = 'live' | 'idle' | 'root missing' | 'root unreachable' | 'broken' | 'not an instance'

export function instanceStatus(entry: ScannedEntry): InstanceStatus {
  if (!INSTANCE_ID.test(entry.name) || entry.kind !== 'dir') return 'not an instance'
  if (entry.recordedRoot === undefined) return 'broken'
  if (entry.liveSessions > 0) return 'live'
  if (entry.rootState === 'exists') return 'idle'
  if (entry.rootState === 'missing') return 'root missing'
  return 'root unreachable'
}

export interface GcPlan {
  remove: { id: string; root: string | undefined; reason: string }[]
  keep: { name: string; reason: string }[]
  /** Why nothing may be removed without --force, when most roots look gone at once. */
  refused?: string
}

export interface GcPolicy {
  /** Also remove broken instances (no readable project-root). */
  broken: boolean
  /** Remove even when most recorded roots look gone at once. */
  force: boolean
}

export function planGc(entries: readonly ScannedEntry[], policy: GcPolicy): GcPlan {
  const plan: GcPlan = { remove: [], keep: [] }
  let withRoot = 0
  for (const entry of entries) {
    // Leftovers of an interrupted GC are removed by the apply step; they are no instance.
    if (entry.name.startsWith('.trash-')) continue
    const status = instanceStatus(entry)
    if (entry.recordedRoot !== undefined) withRoot++
    switch (status) {
      case 'not an instance':
        plan.keep.push({ name: entry.name, reason: entry.kind === 'dir' ? 'not an instance (name is not 16 hex characters)' : `not a directory (${entry.kind}); left alone` })
        break
      case 'broken':
        if (policy.broken && entry.liveSessions === 0) plan.remove.push({ id: entry.name, root: undefined, reason: 'broken (no readable project-root)' })
        else plan.keep.push({ name: entry.name, reason: 'broken: no readable project-root file; --gc --broken removes it' })
        break
      case 'live':
        if (entry.rootState !== 'exists') plan.keep.push({ name: entry.name, reason: `a session is live in it (${entry.recordedRoot ?? ''})` })
        break
      case 'idle':
        break
      case 'root missing':
        plan.remove.push({ id: entry.name, root: entry.recordedRoot, reason: `${entry.recordedRoot ?? ''} no longer exists` })
        break
      case 'root unreachable':
        // Only ENOENT on the recorded mount means gone: an unmounted drive or an unreadable
        // parent may come back.
        plan.keep.push({ name: entry.name, reason: `cannot reach ${entry.recordedRoot ?? ''} (${entry.rootState ?? ''}); kept` })
        break
    }
  }
  const gone = plan.remove.filter(r => r.root !== undefined).length
  if (!policy.force && gone >= 3 && gone > withRoot / 2) {
    plan.refused = `${gone} of ${withRoot} recorded projects look gone at once (a renamed parent directory or an unmounted home?); nothing removed. Check the paths, then rerun with --force`
  }
  return plan
}
