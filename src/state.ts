// Creates the directories and files a launch plan lists, without following symlinks out of
// CLAUDEBOX_HOME (an agent can plant symlinks in its instance dir: flatpak CVE-2024-42472).
import fs from 'node:fs'
import path from 'node:path'
import { launchError } from './errors.js'
import type { FileStep, MkdirStep } from './types.js'

export function applyMkdirs(steps: readonly MkdirStep[], claudeboxHome: string): void {
  for (const step of steps) {
    try {
      fs.mkdirSync(step.path, { mode: step.mode })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' && step.path !== path.dirname(step.path)) {
        // The plan lists parents first, except CLAUDEBOX_HOME's own parents.
        fs.mkdirSync(path.dirname(step.path), { recursive: true, mode: 0o700 })
        applyMkdirs([step], claudeboxHome)
        continue
      }
      if (code !== 'EEXIST') throw stateError(step.path, error)
    }
    // The state dir itself may be a symlink the user made; nothing below it may be one.
    const st = step.path === claudeboxHome ? fs.statSync(step.path) : fs.lstatSync(step.path)
    if (!st.isDirectory()) {
      throw launchError(`${step.path} should be a directory but is a ${st.isSymbolicLink() ? 'symlink' : 'file'}; move it away and rerun`)
    }
  }
}

/** Creates each file only if it does not exist: temp file + link(2), which never replaces. */
export function applyFiles(steps: readonly FileStep[]): void {
  for (const step of steps) {
    const temp = path.join(path.dirname(step.path), `.${path.basename(step.path)}.tmp.${process.pid}.${Math.random().toString(16).slice(2)}`)
    try {
      fs.writeFileSync(temp, step.content, { mode: step.mode, flag: 'wx' })
      try {
        fs.linkSync(temp, step.path)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    } catch (error) {
      throw stateError(step.path, error)
    } finally {
      fs.rmSync(temp, { force: true })
    }
    const st = fs.lstatSync(step.path)
    if (!st.isFile()) throw launchError(`${step.path} should be a regular file but is not; move it away and rerun`)
  }
}

function stateError(p: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return launchError(`cannot write ${p} (${code}); make CLAUDEBOX_HOME writable or set it to a directory you own`)
  }
  return launchError(`cannot create ${p}: ${(error as Error).message}`)
}
