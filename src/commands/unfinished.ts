// The checks of a session's end, for a session of this project whose launcher never got to them
// (killed with SIGKILL, its terminal's scope ended by an out-of-memory killer, the machine
// stopped): the next launch here makes them before its own sandbox starts, counting everything
// changed since that session began as its doing. Its record (sessions/, read-only in every
// sandbox) says when it began and how the files that run outside were then.
import { inlineSafe } from '../cli/terminal-safe.js'
import { removeFile } from '../host/fs.js'
import { startGitWatch } from '../host/git-watch.js'
import { snapshot } from '../host/probe.js'
import { describeChanges, diffSnapshots } from '../sandbox/persistence.js'
import type { GoneRecord } from '../state/scan.js'
import type { LaunchPlan } from '../types.js'

/**
 * Slack for the record's time: it is written a moment after the session's watch starts, and the
 * kernel's file times run a tick behind the clock.
 */
const START_SLACK_MS = 2_000

/**
 * The warnings of the checks the ends of `gone` sessions never made, made now; their records are
 * removed once the checks have run. Call only while no other session of the project runs: its
 * own end makes them, and meanwhile its sandbox would be changing what they look at.
 */
export function finishUnfinished(plan: LaunchPlan, projectDir: string, gone: readonly GoneRecord[]): string[] {
  if (gone.length === 0) return []
  // The earliest: what every gone session may have done. A record without a readable time counts
  // everything as changed (the checks then only look wider).
  const first = [...gone].sort((a, b) => startOf(a) - startOf(b))[0] as GoneRecord
  const since = startOf(first) - START_SLACK_MS
  const warnings = startGitWatch(plan.gitWatch, () => {}, since).finish()
  const watched = gone.find(g => g.record.watched !== undefined)?.record.watched
  const changes = watched === undefined ? [] : diffSnapshots(watched, snapshot(plan.watch))
  if (changes.length > 0) warnings.push(describeChanges(changes, projectDir, 'files that run code outside the sandbox changed since then'))
  for (const { file } of gone) removeFile(file)
  const when = inlineSafe(first.record.started)
  const headline = `a session of this project that started ${when} (launcher pid ${first.record.pid}) ended without claudebox's checks at its end: its launcher was killed, or the machine stopped. They ran now, before this launch, counting what changed since then as the session's doing`
  return [warnings.length === 0 ? `${headline}: nothing found` : `${headline}:`, ...warnings]
}

const startOf = (gone: GoneRecord): number => {
  const time = Date.parse(gone.record.started)
  return Number.isFinite(time) ? time : 0
}
