// --adopt OLD_ROOT: applies the plan of adopt.ts (or prints it with --dry-run).
import { writeOut } from './terminal-safe.js'
import fs from 'node:fs'
import fse from 'fs-extra'
import path from 'node:path'
import { planAdopt, renderAdopt, workingTreeOf } from './adopt.js'
import { EXIT, usageError } from './errors.js'
import { probe, safeReaddir } from './facts.js'
import { canonicalRoot, instanceDir, instanceId, instancesDir, PROJECT_ROOT_FILE } from './instance.js'
import { warn } from './log.js'
import { META_FILE } from './registry.js'
import { scanWithDetails } from './scan.js'
import type { Settings } from './settings.js'

export function runAdopt(settings: Settings, oldRootArg: string, dryRun: boolean): number {
  const facts = probe(settings)
  if (facts.cwd === undefined) throw usageError('the current directory no longer exists; cd into the moved project and rerun')
  const oldRoot = path.resolve(facts.cwd, oldRootArg)
  const newRoot = canonicalRoot(facts.cwd, facts.git)
  const newId = instanceId(newRoot)
  const dir = instancesDir(facts.claudeboxHome)
  const entries = scanWithDetails(dir)
  const target = entries.find(e => e.name === newId)
  const source = entries.find(e => e.recordedRoot !== undefined && (e.recordedRoot === oldRoot || workingTreeOf(e.recordedRoot) === oldRoot))
  const plan = planAdopt({
    oldRoot,
    oldRootExists: fs.existsSync(oldRoot),
    entries,
    newRoot,
    newId,
    newTopLevel: facts.git?.topLevel ?? facts.cwd,
    target: target ? { conversations: target.conversations ?? 0 } : undefined,
    projectFolders: source ? safeReaddir(path.join(dir, source.name, 'projects')) : [],
  })
  if (dryRun) {
    writeOut(renderAdopt(plan))
    return EXIT.ok
  }
  const from = instanceDir(facts.claudeboxHome, plan.fromId)
  const to = instanceDir(facts.claudeboxHome, plan.toId)
  if (plan.replaceEmptyTarget) {
    const trash = path.join(dir, `.trash-${plan.toId}-${process.pid}-${Date.now()}`)
    fs.renameSync(to, trash)
    fse.removeSync(trash)
  }
  // overwrite: false: a new instance that appeared at the target meanwhile is never replaced.
  fse.moveSync(from, to, { overwrite: false })
  replaceFile(path.join(to, PROJECT_ROOT_FILE), `${plan.newRoot}\n`)
  fs.rmSync(path.join(to, META_FILE), { force: true }) // rewritten by the next launch, for the new place
  for (const rename of plan.renames) fs.renameSync(path.join(to, 'projects', rename.from), path.join(to, 'projects', rename.to))
  warn(`adopted ${plan.oldRoot}: its instance is now ${plan.toId}, with ${plan.renames.length} history folder(s) renamed`)
  return EXIT.ok
}

function replaceFile(file: string, content: string): void {
  const temp = `${file}.tmp.${process.pid}`
  fs.writeFileSync(temp, content, { mode: 0o600, flag: 'wx' })
  fs.renameSync(temp, file)
}

