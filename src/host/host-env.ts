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
 * Whether `p` (a relative one from the current directory) lies in one of `writes`, now or once a
 * session changes what it can: walked as the kernel walks it (a link before a `..` followed first:
 * red team, round 110), any step of the walk in those places counts, a link there (which the
 * session may re-point), a folder there (which it may replace by a link, or leave by `..`), a name
 * missing there (round 111: a PATH entry through a link in the project was judged at the launch,
 * the link re-pointed, and the apiKeyHelper run later took the session's program, 3 of 3). A walk
 * that cannot end (a loop of links) counts too.
 */
export function leadsInto(p: string, writes: readonly string[]): boolean {
  const chain = resolveChain(path.isAbsolute(p) ? p : `${process.cwd()}/${p}`)
  if (chain.end === undefined) return true
  const steps = [...chain.links.map(link => link.path), ...chain.folders, chain.end.path, ...(chain.firstMissing === undefined ? [] : [chain.firstMissing])]
  const real = resolveExisting(chain.end.path)
  return [...steps, real, path.resolve(p)].some(step => writes.some(w => isWithin(step, w)))
}
