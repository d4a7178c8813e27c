// Files in a project that run code outside the sandbox later: which ones claudebox watches, and
// the pure comparison of their state before and after a session.
import path from 'node:path'
import { inlineSafe } from '../cli/terminal-safe.js'

/**
 * Working-tree files and directories that something on the host runs or obeys without the user
 * running them by name: hooks, editor and container settings, package-manager configs, Claude
 * Code's project settings. `read-only`: shown read-only inside while they exist (a bind cannot
 * protect a missing name, so creating one is reported). `reported`: writable, and any change is
 * reported after the session. The README's table gives the reason for each.
 */
export const HOST_RUN_FILES: readonly { path: string; decision: 'read-only' | 'reported' }[] = [
  // Run by git on commit, checkout, push: same class as .git/hooks.
  { path: '.husky', decision: 'read-only' },
  { path: '.githooks', decision: 'read-only' },
  { path: '.pre-commit-config.yaml', decision: 'read-only' },
  // lefthook's hook commands (red team, round 31: the hooks are read-only, what they run was not).
  { path: 'lefthook.yml', decision: 'read-only' },
  { path: '.lefthook.yml', decision: 'read-only' },
  // direnv on cd (after `direnv allow`), VS Code tasks/settings/launch, JetBrains run configs,
  // devcontainer initializeCommand (runs on the host).
  { path: '.envrc', decision: 'read-only' },
  { path: '.vscode', decision: 'read-only' },
  { path: '.idea', decision: 'read-only' },
  { path: '.devcontainer', decision: 'read-only' },
  // Package managers on any command: .npmrc node-options/script-shell, .yarnrc.yml yarnPath.
  { path: '.npmrc', decision: 'read-only' },
  { path: '.yarnrc', decision: 'read-only' },
  { path: '.yarnrc.yml', decision: 'read-only' },
  // Toolchain managers: mise/asdf config can run hooks and tasks; the pins choose what runs.
  { path: '.mise.toml', decision: 'read-only' },
  { path: 'mise.toml', decision: 'read-only' },
  { path: '.tool-versions', decision: 'read-only' },
  // Editors that run commands named in the project: Zed's tasks and language servers, Helix's
  // language servers, Vim's and Neovim's exrc when trusted (Vim takes the first of .vimrc, _vimrc,
  // .exrc, _exrc) (red team, rounds 61 and 62).
  { path: '.zed', decision: 'read-only' },
  { path: '.helix', decision: 'read-only' },
  { path: '.nvim.lua', decision: 'read-only' },
  { path: '.nvimrc', decision: 'read-only' },
  { path: '.vimrc', decision: 'read-only' },
  { path: '_vimrc', decision: 'read-only' },
  { path: '.gvimrc', decision: 'read-only' },
  { path: '_gvimrc', decision: 'read-only' },
  { path: '.exrc', decision: 'read-only' },
  { path: '_exrc', decision: 'read-only' },
  // Other version control's repository config, read at any command (a prompt may run one):
  // Mercurial's [hooks] (hgrc-not-shared is read beside hgrc; requires and sharedpath can point
  // it at another repository's), Jujutsu's ui.pager, ui.editor and fix tools. Their stores stay writable.
  { path: '.hg/hgrc', decision: 'read-only' },
  { path: '.hg/hgrc-not-shared', decision: 'read-only' },
  { path: '.hg/requires', decision: 'read-only' },
  { path: '.hg/sharedpath', decision: 'read-only' },
  { path: '.jj/repo/config.toml', decision: 'read-only' },
  // Other agents' and editors' MCP servers, which they start on the host.
  { path: '.cursor', decision: 'read-only' },
  { path: '.gemini', decision: 'read-only' },
  // Claude Code on the host: project hooks, MCP server commands.
  { path: '.claude/settings.json', decision: 'read-only' },
  { path: '.claude/hooks', decision: 'read-only' },
  { path: '.mcp.json', decision: 'read-only' },
  // Written by Claude Code itself inside (permission answers): kept writable, reported.
  { path: '.claude/settings.local.json', decision: 'reported' },
  // Data rather than programs, or run elsewhere (CI): reported.
  { path: '.gitmodules', decision: 'reported' },
  { path: '.gitattributes', decision: 'reported' },
  { path: '.github/workflows', decision: 'reported' },
  { path: '.circleci', decision: 'reported' },
  { path: '.gitlab-ci.yml', decision: 'reported' },
  // Emacs asks before it applies what a .dir-locals.el sets beyond its safe variables.
  { path: '.dir-locals.el', decision: 'reported' },
  { path: '.dir-locals-2.el', decision: 'reported' },
  { path: '.pypirc', decision: 'reported' },
  { path: '.netrc', decision: 'reported' },
  { path: '.nvmrc', decision: 'reported' },
  { path: '.node-version', decision: 'reported' },
  { path: '.python-version', decision: 'reported' },
  { path: '.ruby-version', decision: 'reported' },
]

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

/**
 * Files of a git dir that run commands at the user's next git command: the to-do list of a rebase
 * or cherry-pick in progress (`exec` lines run at `git rebase --continue`) and its merge strategy
 * (host/in-progress.ts). The session may rebase,
 * so they stay writable; one it made or changed is reported (red team, round 36).
 */
export const GIT_DIR_TODO_FILES = ['rebase-merge/git-rebase-todo', 'rebase-merge/strategy', 'rebase-apply/strategy', 'sequencer/todo', 'sequencer/opts'] as const

/** Every entry of the table, under each project dir: a read-only one that is created is reported too. */
export function watchedPaths(projectDirs: readonly string[]): string[] {
  return projectDirs.flatMap(dir => HOST_RUN_FILES.map(entry => path.join(dir, entry.path)))
}

export function describeChanges(changes: readonly Change[], projectDir: string, lead = 'the session changed files that run code outside the sandbox'): string {
  const list = changes.map(c => `${inlineSafe(path.relative(projectDir, c.path) || c.path)} (${c.kind})`).join(', ')
  return `${lead}: ${list}; review them before you open the project in an editor, shell or Claude outside claudebox`
}
