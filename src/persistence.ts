// Files in a project that run code outside the sandbox later: which ones claudebox watches, and
// the pure comparison of their state before and after a session.
import path from 'node:path'

/**
 * Working-tree files and directories that editors, shells and agents execute on their own:
 * direnv (.envrc), VS Code tasks and settings, Claude Code's own project settings and MCP servers,
 * submodule definitions (an `update = !cmd` runs on `git submodule update`), and the usual
 * hook directories named by core.hooksPath (husky, .githooks), plus pre-commit's config.
 */
export const WATCHED = [
  '.envrc',
  '.vscode/tasks.json',
  '.vscode/settings.json',
  '.vscode/launch.json',
  '.mcp.json',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.gitmodules',
  '.gitattributes',
  '.husky',
  '.githooks',
  '.pre-commit-config.yaml',
] as const

/** A file's identity for change detection: size, mtime and inode (a rename-over changes it). */
export type Snapshot = Readonly<Record<string, string>>

export interface Change {
  path: string
  kind: 'created' | 'changed' | 'removed'
}

export function diffSnapshots(before: Snapshot, after: Snapshot): Change[] {
  const changes: Change[] = []
  for (const [p, id] of Object.entries(after)) {
    if (!(p in before)) changes.push({ path: p, kind: 'created' })
    else if (before[p] !== id) changes.push({ path: p, kind: 'changed' })
  }
  for (const p of Object.keys(before)) if (!(p in after)) changes.push({ path: p, kind: 'removed' })
  return changes.sort((a, b) => (a.path < b.path ? -1 : 1))
}

export function watchedPaths(projectDirs: readonly string[]): string[] {
  return projectDirs.flatMap(dir => WATCHED.map(rel => path.join(dir, rel)))
}

export function describeChanges(changes: readonly Change[], projectDir: string): string {
  const list = changes.map(c => `${path.relative(projectDir, c.path) || c.path} (${c.kind})`).join(', ')
  return `the session changed files that run code outside the sandbox: ${list}; review them before you open the project in an editor, shell or Claude outside claudebox`
}
