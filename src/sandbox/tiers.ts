// The shared and the per-project tier of a Claude config dir. Shared entries live once under
// $CLAUDEBOX_HOME/shared/ and reach every instance as a per-project copy (tier-sync.ts composes it
// on the host), so what the user keeps there reaches every project while what a session writes
// stays in its project until the user promotes it; everything else (conversations in projects/,
// todos, shell snapshots, history...) is per project. Credentials have their own mechanism
// (plan.ts), account keys of .claude.json theirs (account-state/apply.ts). Pure.
import path from 'node:path'
import type { FileStep, MkdirStep, PathKind } from '../types.js'

/** Shared by default; config.json's "sharedEntries" replaces this list. */
export const DEFAULT_SHARED_ENTRIES = ['CLAUDE.md', 'agents', 'commands', 'skills', 'settings.json'] as const

/** Always shared: the note that tells the agent about the sandbox, imported by CLAUDE.md. */
export const SANDBOX_NOTE = 'SANDBOX.md'

const KNOWN_DIRS = new Set(['agents', 'commands', 'skills', 'plugins', 'output-styles', 'hooks', 'rules'])

export const SANDBOX_NOTE_TEXT = `# You are running inside claudebox

This Claude Code session runs in a bubblewrap sandbox (claudebox). What that means for you:

- You can read and change this project (its git working tree) and your own Claude state. Nothing
  else of the user's home is there: other projects, ~/.ssh, cloud credentials, shell history and
  dotfiles do not exist inside, so do not look for them or ask to use them.
- The system (/usr, /etc) is read-only; /tmp is private and empty at each start.
- Git configuration and hooks (.git/config, hooks/, commondir, .git files) and files the user's
  machine runs by itself (.envrc, .vscode/, .idea/, .npmrc, .yarnrc*, .mise.toml, .husky/,
  .claude/settings.json, .mcp.json, ...) are read-only: do not try to change or replace them; if a
  task needs a change there, describe it for the user to make. Creating a nested git repository or
  a new .git is reported to the user after the session.
- The network is limited to a list of hosts by default (through a proxy in HTTPS_PROXY); the
  user may have opened it (--network=open) or cut it off (--network=none). A request answered "blocked by the network
  allowlist" or "is blocked" by claudebox was refused on purpose: do not work around it; tell the
  user which host you need (they can add it with --allow-host HOST). If a request fails, say so
  rather than retrying in a loop.
- Paths outside the project that you may know of from elsewhere are not there: ask the user to
  restart claudebox with --ro-bind PATH or --bind PATH if you really need one.

(The user can replace this file: ~/.claudebox/shared/SANDBOX.md.)
`

export interface TierPlan {
  /** [source, target, read-only]: SANDBOX.md from the shared tier, and (sharedReadOnly) the instance's copies. */
  binds: [string, string, boolean][]
  mkdirs: MkdirStep[]
  files: FileStep[]
  /** The entries composed into each instance (tier-sync.ts); SANDBOX.md is bound instead. */
  entries: string[]
}

/**
 * The shared tier is never bound into a sandbox as the shared copy: each instance gets its own
 * copy (tier-sync.ts), so one project's session cannot plant hooks, MCP servers or instructions in
 * another's. Only SANDBOX.md, read-only, is bound.
 * @param existing stat kinds of the shared entries now (missing ones are created: directories
 *   for known directory names and names without a dot, files otherwise).
 */
export function planTiers(
  sharedDir: string,
  instance: string,
  entries: readonly string[] | undefined,
  readOnly: boolean,
  existing: Readonly<Record<string, PathKind>>,
): TierPlan {
  const names = [...new Set(entries ?? DEFAULT_SHARED_ENTRIES)].filter(name => name !== SANDBOX_NOTE)
  const plan: TierPlan = { binds: [], mkdirs: [], files: [], entries: names }
  for (const name of [...names, SANDBOX_NOTE]) {
    const source = path.join(sharedDir, name)
    if ((existing[name] ?? 'missing') !== 'missing') continue
    if (KNOWN_DIRS.has(name) || !name.includes('.')) plan.mkdirs.push({ path: source, mode: 0o700 })
    else plan.files.push({ path: source, content: initialContent(name), mode: 0o600 })
  }
  plan.binds.push([path.join(sharedDir, SANDBOX_NOTE), path.join(instance, SANDBOX_NOTE), true])
  if (readOnly) for (const name of names) plan.binds.push([path.join(instance, name), path.join(instance, name), true])
  return plan
}

function initialContent(name: string): string {
  if (name === 'CLAUDE.md') return `@${SANDBOX_NOTE}\n`
  if (name === SANDBOX_NOTE) return SANDBOX_NOTE_TEXT
  return name.endsWith('.json') ? '{}\n' : ''
}
