// Claude Code's own per-command sandbox (settings "sandbox.enabled") cannot run inside claudebox:
// it starts bwrap for every command, which needs new user namespaces, and claudebox's sandbox
// denies them (--disable-userns) because they are a large kernel attack surface. claudebox turns
// it off for the session (plan.ts sessionSettings); this finds whether the user had it on, so the
// launch can say in one line which sandbox is in force.
import path from 'node:path'
import { readNoFollow } from './probe.js'

/** The settings files of the session that may turn Claude's sandbox on: the user's copy and the project's. */
export function sandboxSettingsFiles(instanceDir: string, projectDirs: readonly (string | undefined)[]): string[] {
  const dirs = [...new Set(projectDirs.filter(dir => dir !== undefined))]
  return [path.join(instanceDir, 'settings.json'), ...dirs.flatMap(dir => [path.join(dir, '.claude/settings.json'), path.join(dir, '.claude/settings.local.json')])]
}

/** The first file that turns Claude Code's own sandbox on, if any (files are read without following symlinks). */
export function claudeSandboxOn(files: readonly string[]): string | undefined {
  return files.find(file => {
    try {
      const json = JSON.parse(readNoFollow(file, 1024 * 1024) ?? '{}') as { sandbox?: { enabled?: unknown } }
      return json?.sandbox?.enabled === true
    } catch {
      return false
    }
  })
}

export const SANDBOX_IN_FORCE = "Claude Code's own sandbox (sandbox.enabled) is off for this session: claudebox's sandbox is in force (claudebox --check compares the two)"
