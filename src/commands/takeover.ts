// Before a project's first launch, what it can take over instead of starting empty: the bash
// claudebox's sign-in and CLAUDE.md (once for all projects), its instance of this project, or this
// project's instance from before it moved. Each is asked on a terminal and taken with --yes;
// without a terminal the files stay (the launch goes on) and an instance stops the launch, since
// starting empty would split the project's history in two.
import { adoptPlanFor, applyAdopt, historyFolders } from './adopt.js'
import { historyRenames, type AdoptPlan } from '../state/adopt.js'
import { launchError } from '../errors.js'
import { canonicalRoot, instanceDir, instanceId } from '../state/instance.js'
import { warn } from '../cli/log.js'
import { describeLegacyFiles, legacyFiles, legacyInstance, moveLegacyFiles } from '../state/migration.js'
import { movedFrom } from '../state/moved-project.js'
import { ask, canAsk } from '../cli/prompt.js'
import { shq } from '../sandbox/quote.js'
import path from 'node:path'
import type { HostFacts } from '../types.js'

/** Offers each takeover that applies; true when something moved (the launch probes again). */
export async function offerTakeovers(facts: HostFacts, yes: boolean): Promise<boolean> {
  const moved = await offerLegacyFiles(facts.claudeboxHome, yes)
  if (facts.instance.kind !== 'missing') return moved
  const takeover = instanceTakeover(facts)
  if (takeover === undefined) return moved
  if (!(await consent(yes, `${takeover.what}; take it over${takeover.plan.renames.length > 0 ? ' (its history folders are renamed for the new path)' : ''}? [Y/n]`, takeover.refusal))) return moved
  applyAdopt(facts.claudeboxHome, takeover.plan)
  warn(`took over instance ${takeover.plan.fromId}: it is now this project's (${takeover.plan.toId}), conversations included`)
  return true
}

/** What --dry-run and --check say a launch would offer. */
export function pendingTakeovers(facts: HostFacts): string[] {
  const files = legacyFiles(facts.claudeboxHome)
  const takeover = facts.instance.kind === 'missing' ? instanceTakeover(facts) : undefined
  return [...(files ? describeLegacyFiles(files) : []), ...(takeover ? [`${takeover.what}: take it over (asked first)`] : [])]
}

async function offerLegacyFiles(claudeboxHome: string, yes: boolean): Promise<boolean> {
  const files = legacyFiles(claudeboxHome)
  if (files === undefined) return false
  const lines = describeLegacyFiles(files)
  if (files.credentials === undefined && files.claudeMd === undefined) {
    for (const line of lines) warn(`from the bash claudebox: ${line}`)
    moveLegacyFiles(claudeboxHome, files, false)
    return false
  }
  if (!yes && !canAsk()) {
    warn(`found the bash claudebox's files (${lines.join('; ')}); run claudebox --yes once to move them (nothing moved)`)
    return false
  }
  const accepted = yes || !/^n(o)?$/i.test(await ask(`from the bash claudebox:\n${lines.map(l => `  ${l}\n`).join('')}move them (moved, not copied: a login must exist once)? [Y/n]`))
  const left = moveLegacyFiles(claudeboxHome, files, accepted)
  warn(accepted ? `moved the bash claudebox's files: ${lines.join('; ')}` : `left the bash claudebox's files where they are; not asked again`)
  for (const file of left) warn(`left ${file}: its new place got one while the question waited (kept; compare them and delete the old one yourself)`)
  return accepted
}

interface Takeover {
  what: string
  plan: AdoptPlan
  refusal: string
}

function instanceTakeover(facts: HostFacts): Takeover | undefined {
  const root = canonicalRoot(facts.cwd ?? '/', facts.git)
  const id = instanceId(root)
  const topLevel = facts.git?.topLevel ?? facts.cwd ?? '/'
  const aside = path.join(facts.claudeboxHome, 'aside')
  const legacy = legacyInstance(facts.claudeboxHome, [facts.git?.topLevel, facts.git?.commonDir, facts.cwd], id)
  if (legacy !== undefined) {
    // Usually the same place (the bash claudebox recorded the top level): nothing to rename then.
    const renames = historyRenames(historyFolders(path.join(legacy.dir, 'projects')), legacy.recordedRoot, topLevel).filter(r => r.from !== r.to)
    return {
      what: `an older instance of this project (the bash claudebox's, or from before it was a git repository) is in ${legacy.dir}`,
      plan: { fromId: legacy.id, toId: id, oldRoot: legacy.recordedRoot, newRoot: root, replaceEmptyTarget: false, renames },
      refusal: `this project has an older instance (the bash claudebox's, or from before it was a git repository) in ${legacy.dir}; rerun on a terminal to be asked, or with --yes to take it over (to start empty instead: mkdir -p ${shq(aside)} && mv ${shq(legacy.dir)} ${shq(aside)}/)`,
    }
  }
  const old = movedFrom(facts)
  if (old === undefined) return undefined
  let plan: AdoptPlan
  try {
    plan = adoptPlanFor(facts, old)
  } catch {
    return undefined // not adoptable after all (a live session, several matches): the launch starts empty
  }
  const oldDir = instanceDir(facts.claudeboxHome, plan.fromId)
  return {
    what: `this project looks like ${old}, which moved; its conversations are in ${oldDir}`,
    plan,
    refusal: `this project looks like ${old}, which moved: claudebox --adopt ${shq(old)} brings its conversations (or rerun on a terminal to be asked; to start empty instead: mkdir -p ${shq(aside)} && mv ${shq(oldDir)} ${shq(aside)}/)`,
  }
}

/** Asked on a terminal (default yes), yes with --yes; without a terminal the launch stops with `refusal`. */
async function consent(yes: boolean, question: string, refusal: string): Promise<boolean> {
  if (yes) return true
  if (!canAsk()) throw launchError(refusal)
  return !/^n(o)?$/i.test(await ask(question))
}
