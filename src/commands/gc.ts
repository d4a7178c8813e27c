// --gc: scan, plan, show, confirm, remove. Removal moves an instance aside first (one atomic
// rename), checks again, then deletes: an interrupted GC leaves a `.trash-*` directory that no
// launch mistakes for an instance, and a launch racing the removal keeps its files.
import { inlineSafe, terminalSafe, writeOut } from '../cli/terminal-safe.js'
import fs from 'node:fs'
import path from 'node:path'
import { EXIT, launchError } from '../errors.js'
import { planGc, type GcPlan, type GcPolicy } from '../state/gc.js'
import { instancesDir, PROJECT_ROOT_FILE, validProjectRoot } from '../state/instance.js'
import { warn } from '../cli/log.js'
import { liveSessions, readMeta, rootState, scanInstances } from '../state/scan.js'
import { folderCacheFile, nestedRecordFile, projectLoginFile } from '../state/registry.js'
import { removeFile } from '../host/fs.js'
import { moveAside } from '../state/aside.js'
import type { Settings } from '../config/settings.js'
import { readNoFollow } from '../host/probe.js'
import { ask, canAsk } from '../cli/prompt.js'

export interface GcOptions extends GcPolicy {
  dryRun: boolean
  yes: boolean
}

export async function runGc(settings: Settings, home: string, options: GcOptions): Promise<number> {
  const dir = instancesDir(settings.claudeboxHome)
  // Settings already refuse these; a removal path is never built from them, whatever changes.
  if (!path.isAbsolute(dir) || settings.claudeboxHome === '/' || settings.claudeboxHome === home) {
    throw launchError(`refusing to garbage-collect under ${settings.claudeboxHome}`)
  }
  const entries = scanInstances(dir)
  const plan = planGc(entries, options)
  for (const kept of plan.keep) warn(`keeping ${kept.name}: ${kept.reason}`)
  if (plan.refused) {
    warn(plan.refused)
    return EXIT.checkFailed
  }
  const leftovers = interruptedRemovals(dir, entries.map(e => e.name))
  if (options.dryRun) {
    writeOut(plan.remove.map(r => `would remove ${r.id} (${inlineSafe(r.root ?? 'broken')})\n`).join(''))
    writeOut(leftovers.map(name => `would remove ${inlineSafe(name)} (${LEFTOVER})\n`).join(''))
    if (plan.remove.length + leftovers.length === 0) warn('nothing to remove')
    return EXIT.ok
  }
  if (plan.remove.length + leftovers.length === 0) {
    warn('nothing to remove')
    return EXIT.ok
  }
  if (!options.yes && !(await confirm(plan, leftovers))) return EXIT.checkFailed
  for (const item of plan.remove) {
    if (removeInstance(dir, item.id, item.root)) warn(`removed ${item.id} (${item.reason})`)
  }
  for (const name of leftovers) {
    // Checked as an instance is: one holding what this user cannot remove is kept, said.
    const blocker = firstUnremovable(path.join(dir, name))
    if (blocker !== undefined) warn(`kept ${inlineSafe(name)}: ${inlineSafe(blocker)} cannot be removed by you (another user's, or not writable)`)
    else {
      try {
        fs.rmSync(path.join(dir, name), { recursive: true, force: true }) // never follows a symlink
        warn(`removed ${inlineSafe(name)} (${LEFTOVER})`)
      } catch (error) {
        // A sticky folder of another user's inside, say (round 97): kept, and the rest goes on.
        warn(`kept what is left of ${inlineSafe(name)}: ${(error as NodeJS.ErrnoException).code ?? 'error'} while removing it`)
      }
    }
  }
  return EXIT.ok
}

const LEFTOVER = 'what an interrupted --gc or --adopt left'

async function confirm(plan: GcPlan, leftovers: readonly string[]): Promise<boolean> {
  const list = [...plan.remove.map(r => `  ${r.id}  ${inlineSafe(r.reason)}\n`), ...leftovers.map(name => `  ${inlineSafe(name)}  ${LEFTOVER}\n`)].join('')
  const what = [plan.remove.length > 0 ? `${plan.remove.length} instance(s) and their conversations` : '', leftovers.length > 0 ? `${leftovers.length} leftover(s) of an interrupted --gc or --adopt` : ''].filter(Boolean).join(' and ')
  if (!canAsk()) {
    warn(`--gc would remove ${what}:\n${list}claudebox: nothing removed: rerun with --yes to remove them (or run on a terminal to be asked)`)
    return false
  }
  process.stderr.write(terminalSafe(`claudebox: --gc will remove ${what}:\n${list}`))
  const yes = /^y(es)?$/i.test(await ask('remove them? [y/N]'))
  if (!yes) warn('nothing removed')
  return yes
}

/** Moves the instance aside, checks nothing came back to life, then deletes it. */
function removeInstance(dir: string, id: string, root: string | undefined): boolean {
  const original = path.join(dir, id)
  const trash = path.join(dir, `.trash-${id}-${process.pid}-${Date.now()}`)
  // Moved aside only when it can be removed to the end: else it would strand as .trash-* (another
  // user's instance, an unreadable directory inside).
  const blocker = firstUnremovable(original)
  if (blocker !== undefined) {
    warn(`kept ${id}: ${inlineSafe(blocker)} cannot be removed by you (another user's, or not writable); nothing of it was touched`)
    return false
  }
  try {
    fs.renameSync(original, trash)
  } catch (error) {
    warn(`could not remove ${id}: ${inlineSafe((error as Error).message)}`)
    return false
  }
  // A launch may have started between the scan and the rename: if its project is back or a
  // session registered itself, put the instance back.
  const recorded = validProjectRoot(readNoFollow(path.join(trash, PROJECT_ROOT_FILE)))
  const revived = liveSessions(trash) > 0 || (root !== undefined && rootState(root, readMeta(trash)) === 'exists') || recorded !== root
  if (revived) {
    try {
      fs.renameSync(trash, original)
      warn(`kept ${id}: it came back into use while --gc ran`)
    } catch {
      warn(`kept ${id} in ${keptAside(dir, id, trash)}: it came back into use while --gc ran and a new instance took its place`)
    }
    return false
  }
  fs.rmSync(trash, { recursive: true, force: true }) // unlinks symlinks inside, never follows them
  for (const file of [folderCacheFile(path.dirname(dir), id), nestedRecordFile(path.dirname(dir), id), projectLoginFile(path.dirname(dir), id)]) {
    try {
      removeFile(file)
    } catch {
      // left behind, it costs nothing but its space
    }
  }
  return true
}

/** An instance that cannot go back goes to aside/ (aside.ts), where no --gc looks; where it is now. */
function keptAside(dir: string, id: string, trash: string): string {
  try {
    return moveAside(path.dirname(dir), id, trash)
  } catch {
    return trash
  }
}

/** The first directory in `dir`'s tree that this user cannot list and empty; undefined when none. */
function firstUnremovable(dir: string): string | undefined {
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK)
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const below = firstUnremovable(path.join(dir, entry.name))
      if (below !== undefined) return below
    }
    return undefined
  } catch {
    return dir
  }
}

/**
 * Leftovers of interrupted runs (`.trash-<id>-<pid>-<ms>`): shown and removed with the same
 * consent as instances, never silently (red team, round 94: a plain --gc removed them unlisted).
 * One a session uses is not one.
 */
function interruptedRemovals(dir: string, names: readonly string[]): string[] {
  return names.filter(name => name.startsWith('.trash-') && liveSessions(path.join(dir, name)) === 0)
}
