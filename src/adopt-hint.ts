// On a project's first launch: is there exactly one orphaned instance that looks like this
// project before a move (same directory name and git remote)? Then say how to adopt it.
import path from 'node:path'
import { instancesDir } from './instance.js'
import { readMeta, scanInstances } from './scan.js'
import { shq } from './quote.js'
import type { HostFacts } from './types.js'

export function adoptHint(facts: HostFacts): string | undefined {
  if (facts.git === undefined || facts.gitRemote === undefined) return undefined
  const name = path.basename(facts.git.topLevel)
  const dir = instancesDir(facts.claudeboxHome)
  const orphans = scanInstances(dir).filter(e => {
    if (e.rootState !== 'missing' || e.recordedRoot === undefined) return false
    const meta = readMeta(path.join(dir, e.name))
    return meta?.name === name && meta.remote === facts.gitRemote
  })
  if (orphans.length !== 1) return undefined
  const old = (orphans[0]?.recordedRoot ?? '').replace(/\/\.git$/, '')
  return `this project looks like ${old}, which moved; its conversations come along with: claudebox --adopt ${shq(old)}`
}
