// The checks of a session's end, for a session of this project whose launcher never got to them
// (killed with SIGKILL, its terminal's scope ended by an out-of-memory killer, the machine
// stopped): the next launch here makes them before it plans its own sandbox, counting everything
// changed since that session began as its doing. Its record (sessions/, read-only in every
// sandbox) says when it began, how the files that run outside were then, and what its git watch
// guarded: a name that had to stay missing and is there now, or a guarded link that leads
// elsewhere now, is the session's (red team, round 74: the next probe took an include the session
// made for the user's own, and bound it read-only as such).
import { warn } from '../cli/log.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { removeFile } from '../host/fs.js'
import { startGitWatch } from '../host/git-watch.js'
import { snapshot } from '../host/probe.js'
import { describeChanges, diffSnapshots } from '../sandbox/persistence.js'
import { planLaunch, type LaunchRequest } from '../sandbox/plan.js'
import { canonicalRoot, instanceDir, instanceId } from '../state/instance.js'
import { firstGone, goneStartMs, sessionRecords, type GoneRecord } from '../state/scan.js'
import type { GitWatchSpec, HostFacts, LaunchPlan } from '../types.js'

/**
 * Slack for the record's time: it is written a moment after the session's watch starts, and the
 * kernel's file times run a tick behind the clock.
 */
const START_SLACK_MS = 2_000

/**
 * Makes the checks that the ends of this project's gone sessions never made, while no other
 * session of it runs (its own end makes them, and meanwhile its sandbox would be changing what
 * they look at). Whether it did: the probe must then be made again (files may have moved).
 */
export function finishUnfinishedSessions(facts: HostFacts, request: LaunchRequest, claudeboxHome: string): boolean {
  const { live, gone } = sessionRecords(instanceDir(claudeboxHome, instanceId(canonicalRoot(facts.cwd ?? '/', facts.git))))
  if (live.length > 0 || gone.length === 0) return false
  // A plan this probe refuses is refused by the launch too, and says why.
  const plan = planLaunch(facts, request)
  try {
    for (const line of finishUnfinished(plan, facts.git?.topLevel ?? facts.cwd ?? '/', gone)) warn(line)
  } catch (error) {
    warn(`the checks of a session whose launcher was killed before its end failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the next launch tries again. Look for yourself before you run git here`)
  }
  return true
}

/** The warnings of the checks the ends of `gone` sessions never made, made now; their records are removed once the checks have run. */
export function finishUnfinished(plan: LaunchPlan, projectDir: string, gone: readonly GoneRecord[]): string[] {
  // The earliest: what every gone session may have done. A record without a readable time counts
  // everything as changed (the checks then only look wider).
  const first = firstGone(gone) as GoneRecord
  const since = goneStartMs(first) - START_SLACK_MS
  const warnings = startGitWatch(guardedAsThen(plan.gitWatch, gone), () => {}, since).finish()
  const watched = first.record.watched ?? gone.find(g => g.record.watched !== undefined)?.record.watched
  const changes = watched === undefined ? [] : diffSnapshots(watched, snapshot(plan.watch))
  if (changes.length > 0) warnings.push(describeChanges(changes, projectDir, 'files that run code outside the sandbox changed since then'))
  for (const { file } of gone) removeFile(file)
  const when = inlineSafe(first.record.started)
  const headline = `a session of this project that started ${when} (launcher pid ${first.record.pid}) ended without claudebox's checks at its end: its launcher was killed, or the machine stopped. They ran now, before this launch, counting what changed since then as the session's doing`
  return [warnings.length === 0 ? `${headline}: nothing found` : `${headline}:`, ...warnings]
}

/** `spec` with what the gone sessions' watches guarded: their links' texts as they were then win over the probe's of now. */
function guardedAsThen(spec: GitWatchSpec, gone: readonly GoneRecord[]): GitWatchSpec {
  const guarded = gone.flatMap(g => (g.record.guarded === undefined ? [] : [g.record.guarded]))
  const links = new Map([...spec.links, ...guarded.flatMap(g => g.links)].map(l => [l.path, l]))
  return { ...spec, forbidden: [...new Set([...spec.forbidden, ...guarded.flatMap(g => g.forbidden)])], links: [...links.values()] }
}
