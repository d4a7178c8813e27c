// A repository's .claudebox.json binds, checked on the host where they really lead.
import fs from 'node:fs'
import path from 'node:path'
import { inlineSafe } from '../cli/terminal-safe.js'
import { usageError } from '../errors.js'

/**
 * A repository's bind must lead where its text says, through no link: the approval is of the
 * file's bytes, and a link it names (`data -> cache`, shown and approved) could be re-pointed by a
 * later session to `~/.ssh`, approved still (red team, round 92). Checked at the question and at
 * every launch (commands/setup.ts).
 */
export function refuseLinkedBinds(cwd: string, binds: readonly string[]): void {
  for (const bind of binds) {
    const named = path.resolve(cwd, bind)
    let real: string
    try {
      real = fs.realpathSync.native(named)
    } catch {
      continue // missing: the launch says so
    }
    if (real !== named) throw usageError(`.claudebox.json binds ${inlineSafe(bind)}, which leads through a link to ${inlineSafe(real)}; a repository's binds must name real folders: name ${inlineSafe(real)} in your own config.json if you mean it`)
  }
}
