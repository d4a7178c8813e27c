// What a program claudebox runs on the host during a session inherits, and where claudebox takes
// its own programs from: nothing that leads into a folder the sandbox writes (the project, a
// writable bind, the instances). Users activate virtualenvs and direnv layouts whose PATH,
// PYTHONPATH or NODE_PATH name folders of the project, which the session fills (red team, round
// 91: `python3 -c "import keyring"` as the apiKeyHelper ran the session's .venv/bin/python3 and
// its src/keyring.py on the host; a .venv/bin/bwrap it planted built the next session's sandbox).
import path from 'node:path'
import { isWithin } from '../state/instance.js'
import { resolveExisting } from './fs.js'
import { resolveChain } from './link-targets.js'

/**
 * `env` without what names a folder in `writes`: PATH keeps its other absolute entries; any other
 * variable whose value mentions one (PYTHONPATH, NODE_PATH, VIRTUAL_ENV, NODE_OPTIONS=--require
 * ...) is left out, and so is OLDPWD (the project). PWD is `cwd`.
 */
export function hostProgramEnv(env: Readonly<Record<string, string | undefined>>, writes: readonly string[], cwd: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === 'OLDPWD') continue
    if (name === 'PATH') out[name] = safePath(value, writes)
    else if (!writes.some(w => value.includes(w)) && !value.split(':').some(p => path.isAbsolute(p) && leadsInto(p, writes))) out[name] = value
  }
  out['PWD'] = cwd
  return out
}

/** PATH without relative entries and those inside `writes` (followed through links). */
export function safePath(value: string, writes: readonly string[]): string {
  return value
    .split(':')
    .filter(p => path.isAbsolute(p) && !leadsInto(p, writes))
    .join(':')
}

/**
 * Whether `p` (a relative one from the current directory), links followed as far as it exists, lies
 * in one of `writes`. Walked as the kernel walks it, a link before a `..` followed first (red team,
 * round 110: `~/tools/../bin` on PATH, `~/tools` a link into the project, was judged as `~/bin`, and
 * the apiKeyHelper ran the session's program from the project's `bin`, 3 of 3); a walk that cannot
 * end (a loop of links) counts as leading there.
 */
export function leadsInto(p: string, writes: readonly string[]): boolean {
  const walked = resolveChain(path.isAbsolute(p) ? p : `${process.cwd()}/${p}`).end?.path
  if (walked === undefined) return true
  const real = resolveExisting(walked)
  return writes.some(w => isWithin(real, w) || isWithin(walked, w) || isWithin(path.resolve(p), w))
}
