// On a project's first launch: is there exactly one orphaned instance that looks like this
// project before a move (same directory name and git remote)? Then that is where it came from.
import path from 'node:path'
import { instancesDir } from './instance.js'
import { readMeta, scanInstances } from './scan.js'
import type { HostFacts } from '../types.js'

/** The old location of this project, when it looks moved (the working tree, not its .git). */
export function movedFrom(facts: HostFacts): string | undefined {
  if (facts.git === undefined || facts.gitRemote === undefined) return undefined
  const name = path.basename(facts.git.topLevel)
  const dir = instancesDir(facts.claudeboxHome)
  const orphans = scanInstances(dir).filter(e => {
    if (e.rootState !== 'missing' || e.recordedRoot === undefined) return false
    const meta = readMeta(path.join(dir, e.name))
    return meta?.name === name && meta.remote === facts.gitRemote
  })
  if (orphans.length !== 1) return undefined
  return (orphans[0]?.recordedRoot ?? '').replace(/\/\.git$/, '')
}
