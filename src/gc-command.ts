// --gc: scans the instances directory (never following symlinks), plans, and removes.
import fs from 'node:fs'
import path from 'node:path'
import { EXIT } from './errors.js'
import { readNoFollow } from './facts.js'
import { planGc, type ScannedEntry } from './gc.js'
import { instancesDir, PROJECT_ROOT_FILE } from './instance.js'
import { warn } from './log.js'
import type { Settings } from './settings.js'

export function runGc(settings: Settings, options: { dryRun: boolean }): number {
  const dir = instancesDir(settings.claudeboxHome)
  const entries = scan(dir)
  const plan = planGc(entries)
  for (const kept of plan.keep) warn(`keeping ${kept.name}: ${kept.reason}`)
  for (const item of plan.remove) {
    if (options.dryRun) {
      process.stdout.write(`would remove ${item.id} (${item.root})\n`)
      continue
    }
    removeInstance(dir, item.id)
    warn(`removed ${item.id} (${item.root} no longer exists)`)
  }
  if (!options.dryRun) for (const entry of entries) if (entry.name.startsWith('.trash-')) removeTrash(dir, entry.name)
  if (plan.remove.length === 0) warn('nothing to remove')
  return EXIT.ok
}

function scan(dir: string): ScannedEntry[] {
  let names: fs.Dirent[]
  try {
    names = fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return names.map(dirent => {
    const kind = dirent.isSymbolicLink() ? 'symlink' : dirent.isDirectory() ? 'dir' : 'other'
    const recordedRoot = kind === 'dir' ? readNoFollow(path.join(dir, dirent.name, PROJECT_ROOT_FILE)) : undefined
    return { name: dirent.name, kind, recordedRoot, rootState: recordedRoot === undefined ? undefined : rootState(recordedRoot) }
  })
}

function rootState(root: string): string {
  try {
    fs.lstatSync(root)
    return 'exists'
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    return code === 'ENOENT' ? 'missing' : code
  }
}

/**
 * Moves the instance aside first (one atomic rename), then deletes it: an interrupted GC leaves a
 * `.trash-*` directory that no launch will mistake for an instance. fs.rmSync removes symlinks
 * inside as links and never follows them.
 */
function removeInstance(dir: string, id: string): void {
  const trash = `.trash-${id}-${process.pid}-${Date.now()}`
  fs.renameSync(path.join(dir, id), path.join(dir, trash))
  removeTrash(dir, trash)
}

function removeTrash(dir: string, name: string): void {
  const target = path.join(dir, name)
  if (fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target)
  else fs.rmSync(target, { recursive: true, force: true })
}
