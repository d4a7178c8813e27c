// $CLAUDEBOX_HOME/aside/: instances claudebox must not remove but cannot leave where they were
// (the one --adopt replaces, one --gc could not put back). No --gc looks there; the user removes
// them when they no longer need them, and is told where they are.
import fs from 'node:fs'
import path from 'node:path'

/** Moves `from` (an instance folder of `id`) into aside/; returns where it is now; throws when it cannot. */
export function moveAside(claudeboxHome: string, id: string, from: string): string {
  const kept = path.join(claudeboxHome, 'aside', `${id}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  fs.mkdirSync(path.dirname(kept), { recursive: true, mode: 0o700 })
  fs.renameSync(from, kept)
  return kept
}
