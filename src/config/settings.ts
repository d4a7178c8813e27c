// Environment -> settings. Pure: the environment and home directory are passed in.
import path from 'node:path'
import { launchError, usageError } from '../errors.js'

export interface Settings {
  /** Absolute `$CLAUDEBOX_HOME` (not yet symlink-resolved). */
  claudeboxHome: string
  /** Program to run instead of the `claude` found on PATH. */
  claudeOverride: string | undefined
  /** bwrap to use instead of the one found on PATH. */
  bwrapOverride: string | undefined
  debug: boolean
}

/**
 * `homeProblem`: why `home` cannot hold the default state dir (host/probe.ts homeProblem), if it
 * cannot. `files`: a path as the file system resolves it (host/fs.ts resolveExisting) and an
 * existing folder's device and inode, so that neither a symlink nor a bind mount can make two
 * folders look apart.
 */
export function readSettings(env: Readonly<Record<string, string | undefined>>, home: string, homeProblem?: string, files: FileView = NO_FILES): Settings {
  const configured = env['CLAUDEBOX_HOME']
  if (configured === undefined && homeProblem !== undefined) {
    const where = env['HOME'] ? `your home (HOME=${home})` : `your home from the passwd entry (HOME is unset): ${home}`
    throw launchError(`cannot keep claudebox's state in ${where}: it ${homeProblem}; set CLAUDEBOX_HOME to a directory of your own (or HOME to your home directory)`)
  }
  if (configured !== undefined && !path.isAbsolute(configured)) {
    // A relative or empty state dir would make every path (and every removal) depend on the cwd.
    throw usageError(`CLAUDEBOX_HOME must be an absolute path, got ${JSON.stringify(configured)}; unset it or set an absolute path`)
  }
  const claudeboxHome = path.resolve(configured ?? path.join(home, '.claudebox'))
  if (claudeboxHome === '/' || claudeboxHome === path.resolve(home)) {
    throw usageError(`CLAUDEBOX_HOME must be a directory of its own, not ${claudeboxHome}; use for example ${path.join(home, '.claudebox')}`)
  }
  // Claude Code's own folder holds its files under the names the bash claudebox used: the first
  // launch moved the user's login and CLAUDE.md out of it as that claudebox's (red team, round 94).
  // (Holding it is fine: inside a sandbox, CLAUDE_CONFIG_DIR is an instance of CLAUDEBOX_HOME.)
  const claudeDir = path.resolve(home, env['CLAUDE_CONFIG_DIR'] || '.claude')
  const [realHome, realClaudeDir] = [files.real(claudeboxHome), files.real(claudeDir)]
  const claudeDirId = files.id(realClaudeDir)
  const aliased = claudeDirId !== undefined && ancestorsOf(realHome).some(p => files.id(p) === claudeDirId)
  if (realHome === realClaudeDir || realHome.startsWith(`${realClaudeDir}/`) || aliased) {
    throw usageError(`CLAUDEBOX_HOME must not be Claude Code's own folder ${claudeDir} or lie in it; use for example ${path.join(home, '.claudebox')}`)
  }
  return {
    claudeboxHome,
    claudeOverride: nonEmpty(env['CLAUDEBOX_CLAUDE']),
    bwrapOverride: nonEmpty(env['CLAUDEBOX_BWRAP']),
    debug: env['CLAUDEBOX_DEBUG'] === '1',
  }
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value)

/** What readSettings asks of the file system: a real path, and an existing path's "device:inode". */
export interface FileView {
  real(p: string): string
  id(p: string): string | undefined
}

const NO_FILES: FileView = { real: p => p, id: () => undefined }

/** The path and each folder above it, up to /. */
function ancestorsOf(p: string): string[] {
  const all = [p]
  for (let d = path.dirname(p); d !== all[all.length - 1]; d = path.dirname(d)) all.push(d)
  return all
}
