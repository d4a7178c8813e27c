// Where claudebox takes the host's programs from (find, stty, getent): the system's own folders,
// never PATH, which may name a folder of the project the session fills (host-env.ts says why).
// Node's own modules only: the root-only search's small bundle starts before the launch bundle.
import fs from 'node:fs'
import path from 'node:path'

/** The system's own folders of programs (NixOS: the current system's profile), never a project's. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/run/current-system/sw/bin']

/** `name` from the system's folders, never from PATH (a folder of the project may be on it); undefined when there is none. */
export function systemProgram(name: string): string | undefined {
  return SYSTEM_BIN.map(dir => path.join(dir, name)).find(p => fs.existsSync(p))
}

/** The PATH a system program runs with: the system's folders only. */
export const SYSTEM_PATH = SYSTEM_BIN.join(':')

/**
 * The first `name` on `pathVar` that is an executable file, absolute: a relative entry
 * (`node_modules/.bin`, `.`) is the current directory's, and a path judged by where it lies must
 * say so (red team, round 109: a relative `node_modules/.bin/bwrap` was taken for none of the
 * project's, and ran on the host, 3 of 3).
 */
export function whichSync(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (dir === '') continue
    const candidate = path.resolve(dir, name)
    try {
      // stat first: most PATH entries lack the name, and a missing one then throws nothing.
      if (fs.statSync(candidate, { throwIfNoEntry: false })?.isFile() !== true) continue
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // not here; keep looking
    }
  }
  return undefined
}

/** The git claudebox runs on the host, pinned at its first use; undefined until then. */
let pinnedGit: { path: string | undefined } | undefined

/**
 * The git claudebox runs on the host for its own checks: the system's (/usr/bin/git) whenever
 * there is one, else the first on PATH, made absolute; none when PATH has none (you have no git:
 * the project is the directory). Found once, before any sandbox starts, and the same from then on:
 * a PATH folder the sandbox writes (an activated virtualenv's bin/ in the project) may get a `git`
 * during a session, which claudebox's runs at each index write and at the session's end took
 * (red team, round 100: 3 of 3 as root and as uid 1001). Inside the sandbox, git is yours, from PATH.
 */
export function gitProgram(): string | undefined {
  if (pinnedGit === undefined) {
    const onPath = whichSync('git', process.env['PATH'])
    pinnedGit = { path: onPath === undefined ? undefined : (systemProgram('git') ?? path.resolve(onPath)) }
  }
  return pinnedGit.path
}

/** What execFile is given for git: the pinned one, or a path that fails (ENOENT) as a missing git does. */
export const GIT = (): string => gitProgram() ?? '/nonexistent/claudebox-found-no-git'
