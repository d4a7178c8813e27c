// --adopt OLD_ROOT: applies the plan of adopt.ts (or prints it with --dry-run).
import { writeOut } from '../cli/terminal-safe.js'
import { writeFileAtomic } from '../host/atomic-write.js'
import { readHeadNoFollow } from '../host/fs.js'
import fs from 'node:fs'
import path from 'node:path'
import { planAdopt, renderAdopt, workingTreeOf, type AdoptPlan, type HistoryFolder } from '../state/adopt.js'
import { EXIT, launchError, usageError } from '../errors.js'
import { lstatKind, probeProject, safeReaddir, type ProjectFacts } from '../host/probe.js'
import { canonicalRoot, instanceDir, instanceId, instancesDir, PROJECT_ROOT_FILE } from '../state/instance.js'
import { warn } from '../cli/log.js'
import { noCurrentDir } from '../sandbox/policy.js'
import { META_FILE, projectLoginFile } from '../state/registry.js'
import { liveSessions, measureUsage, scanWithDetails } from '../state/scan.js'
import { moveAside } from '../state/aside.js'
import type { Settings } from '../config/settings.js'

export function runAdopt(settings: Settings, oldRootArg: string, dryRun: boolean): number {
  const plan = adoptPlanFor(probeProject(settings), oldRootArg)
  if (dryRun) {
    writeOut(renderAdopt(plan))
    return EXIT.ok
  }
  const kept = applyAdopt(settings.claudeboxHome, plan)
  warn(`adopted ${plan.oldRoot}: its instance is now ${plan.toId}, with ${plan.renames.length} history folder(s) renamed`)
  if (kept !== undefined) warn(`the new location's instance before it (no conversations) is kept in ${kept}; remove it when you no longer need its settings`)
  return EXIT.ok
}

/** What adopting OLD_ROOT into the current project would do (throws the reason it cannot). */
export function adoptPlanFor(facts: ProjectFacts, oldRootArg: string): AdoptPlan {
  if (facts.cwd === undefined) throw usageError(noCurrentDir(facts, 'cd into the moved project and rerun'))
  const oldRoot = path.resolve(facts.cwd, oldRootArg)
  const newRoot = canonicalRoot(facts.cwd, facts.git)
  const newId = instanceId(newRoot)
  const dir = instancesDir(facts.claudeboxHome)
  const entries = scanWithDetails(dir)
  const target = entries.find(e => e.name === newId)
  const source = entries.find(e => e.recordedRoot !== undefined && (e.recordedRoot === oldRoot || workingTreeOf(e.recordedRoot) === oldRoot))
  return planAdopt({
    oldRoot,
    oldRootExists: fs.existsSync(oldRoot),
    entries,
    newRoot,
    newId,
    newTopLevel: facts.git?.topLevel ?? facts.cwd,
    target: target ? { conversations: target.conversations ?? 0, liveSessions: target.liveSessions, dir: path.join(dir, target.name), asideDir: path.join(facts.claudeboxHome, 'aside') } : undefined,
    projectFolders: source ? historyFolders(path.join(dir, source.name, 'projects')) : [],
  })
}

/**
 * Moves the instance to its new id and renames its history folders (adopt.ts planned them). Returns
 * where the new location's instance it replaced was kept, if there was one.
 */
export function applyAdopt(claudeboxHome: string, plan: AdoptPlan): string | undefined {
  const dir = instancesDir(claudeboxHome)
  const from = instanceDir(claudeboxHome, plan.fromId)
  const to = instanceDir(claudeboxHome, plan.toId)
  let kept: string | undefined
  if (plan.replaceEmptyTarget) {
    const trash = path.join(dir, `.trash-${plan.toId}-${process.pid}-${Date.now()}`)
    fs.renameSync(to, trash)
    // A launch in the new place may have registered since the scan: it keeps its instance. Nor is
    // an instance removed on the word of a record: it is measured again, now that it is set aside.
    if (liveSessions(trash) > 0) {
      fs.renameSync(trash, to)
      throw launchError(`cannot adopt: a session started in ${to} meanwhile; end it and rerun`)
    }
    const conversations = measureUsage(trash).conversations
    if (conversations > 0) {
      fs.renameSync(trash, to)
      throw launchError(`cannot adopt: the new location's instance ${to} holds ${conversations} conversation(s) after all; --adopt will not merge two histories (claudebox --list shows it)`)
    }
    kept = keepAside(claudeboxHome, plan.toId, trash, to)
  }
  moveInstance(from, to, `${plan.newRoot}\n`)
  moveProjectLogin(claudeboxHome, plan, kept)
  fs.rmSync(path.join(to, META_FILE), { force: true }) // rewritten by the next launch, for the new place
  // History folders: each one rename inside the instance, never through a symlink the agent planted.
  for (const rename of plan.renames) {
    const folder = path.join(to, 'projects', rename.from)
    if (lstatKind(folder) === 'dir') fs.renameSync(folder, path.join(to, 'projects', rename.to))
  }
  return kept
}

/**
 * The project's sign-in, kept by instance id outside the instance (registry.ts), follows it; the
 * replaced instance's own goes aside with that instance (`kept`), as its login.json.
 */
function moveProjectLogin(claudeboxHome: string, plan: AdoptPlan, kept: string | undefined): void {
  const [from, to] = [projectLoginFile(claudeboxHome, plan.fromId), projectLoginFile(claudeboxHome, plan.toId)]
  if (lstatKind(to) === 'file' && kept !== undefined) fs.renameSync(to, path.join(kept, 'login.json'))
  if (lstatKind(from) === 'file') fs.renameSync(from, to)
}

/**
 * The replaced instance, without conversations but maybe with the user's settings, MCP servers,
 * todos or a login of that project, goes to $CLAUDEBOX_HOME/aside/, out of --gc's reach, never
 * removed (red team, round 94: it was removed as "empty"). Put back, and nothing done, if it cannot.
 */
function keepAside(claudeboxHome: string, id: string, trash: string, to: string): string {
  try {
    return moveAside(claudeboxHome, id, trash)
  } catch (error) {
    fs.renameSync(trash, to)
    throw launchError(`cannot adopt: keeping the new location's instance in ${path.join(claudeboxHome, 'aside')} failed (${(error as NodeJS.ErrnoException).code ?? 'error'}); nothing was changed`)
  }
}

/**
 * Nothing lost at any point: the new project-root is written first (a full disk fails here, with
 * nothing changed) and switched in with one rename while the instance is still at its old id, and
 * only then is the instance moved with another rename (never over an instance that appeared
 * meanwhile). Killed between the two, the instance names a root that exists, so --gc keeps it.
 * If the move fails, the old root is put back.
 */
function moveInstance(from: string, to: string, projectRoot: string): void {
  const rootFile = path.join(from, PROJECT_ROOT_FILE)
  const oldRoot = fs.readFileSync(rootFile)
  const staged = `${rootFile}.adopt-${process.pid}`
  try {
    fs.writeFileSync(staged, projectRoot, { mode: 0o600, flag: 'wx' })
    fs.renameSync(staged, rootFile)
  } catch (error) {
    fs.rmSync(staged, { force: true })
    throw launchError(`cannot adopt: writing ${staged} failed (${(error as NodeJS.ErrnoException).code ?? 'error'}); nothing was changed`)
  }
  try {
    fs.renameSync(from, to)
  } catch (error) {
    writeFileAtomic(rootFile, oldRoot)
    throw launchError(`cannot adopt: moving ${from} to ${to} failed (${(error as NodeJS.ErrnoException).code ?? 'error'}); nothing was changed`)
  }
}

/** The history folders of an instance, only when projects/ is a real directory in it, each with the cwd Claude recorded there. */
export function historyFolders(projects: string): HistoryFolder[] {
  if (lstatKind(projects) !== 'dir') return []
  return safeReaddir(projects)
    .filter(name => lstatKind(path.join(projects, name)) === 'dir')
    .map(name => {
      const cwd = recordedCwd(path.join(projects, name))
      return cwd === undefined ? { name } : { name, cwd }
    })
}

/** The working directory in the first lines of the folder's first transcript (Claude's lines carry "cwd"). */
function recordedCwd(folder: string): string | undefined {
  const transcript = safeReaddir(folder).filter(name => name.endsWith('.jsonl')).sort()[0]
  const head = transcript === undefined ? undefined : readHeadNoFollow(path.join(folder, transcript), 64 * 1024)
  for (const line of head?.split('\n') ?? []) {
    try {
      const cwd = (JSON.parse(line) as { cwd?: unknown } | null)?.cwd
      if (typeof cwd === 'string' && path.isAbsolute(cwd)) return cwd
    } catch {
      // a line cut at the limit, or not JSON
    }
  }
  return undefined
}
