// --gc: pure planning over a scan of the instances directory.
import { INSTANCE_ID } from './instance.js'

/** One entry of the instances directory, as scanned without following symlinks. */
export interface ScannedEntry {
  name: string
  kind: 'dir' | 'symlink' | 'other'
  /** The recorded project root, or undefined when project-root is missing or unreadable. */
  recordedRoot: string | undefined
  /** lstat of the recorded root: 'exists', 'missing' (ENOENT only), or another error code. */
  rootState: string | undefined
}

export interface GcPlan {
  remove: { id: string; root: string }[]
  keep: { name: string; reason: string }[]
}

export function planGc(entries: readonly ScannedEntry[]): GcPlan {
  const plan: GcPlan = { remove: [], keep: [] }
  for (const entry of entries) {
    // Leftovers of an interrupted GC are handled by the apply step; other names are not ours.
    if (entry.name.startsWith('.trash-')) continue
    if (!INSTANCE_ID.test(entry.name)) {
      plan.keep.push({ name: entry.name, reason: 'not an instance (name is not 16 hex characters)' })
    } else if (entry.kind !== 'dir') {
      plan.keep.push({ name: entry.name, reason: `not a directory (${entry.kind}); left alone` })
    } else if (entry.recordedRoot === undefined) {
      plan.keep.push({ name: entry.name, reason: 'broken: no readable project-root file; kept' })
    } else if (entry.rootState === 'missing') {
      plan.remove.push({ id: entry.name, root: entry.recordedRoot })
    } else if (entry.rootState !== 'exists') {
      // Only ENOENT means gone: a permission or I/O error may be an unmounted or unreadable drive.
      plan.keep.push({ name: entry.name, reason: `cannot tell whether ${entry.recordedRoot} exists (${entry.rootState}); kept` })
    }
  }
  return plan
}
