// The paths a launch's end looks at, for a project moved while its session ran (host/held-folder.ts):
// what lay below the old top lies below the new one. A link's text stays as it was: moving a folder
// changes no link in it, and the watch compares texts. Pure.
import path from 'node:path'
import { isWithin } from '../state/instance.js'
import type { GitWatchSpec } from '../types.js'

export type Relocate = (p: string) => string

export function relocator(from: string, to: string): Relocate {
  return p => (isWithin(p, from) ? path.join(to, path.relative(from, p)) : p)
}

export function relocateGitWatch(spec: GitWatchSpec, move: Relocate): GitWatchSpec {
  const all = (paths: readonly string[]): string[] => paths.map(move)
  const { gitlinks } = spec
  return {
    ...spec,
    forbidden: all(spec.forbidden),
    placeholders: all(spec.placeholders),
    headPlaceholders: all(spec.headPlaceholders),
    links: spec.links.map(l => ({ path: move(l.path), text: l.text })),
    gitDirs: all(spec.gitDirs),
    workTrees: all(spec.workTrees),
    ways: all(spec.ways),
    ...(gitlinks === undefined ? {} : { gitlinks: { repos: gitlinks.repos.map(r => ({ gitDir: move(r.gitDir), workTree: move(r.workTree) })), known: all(gitlinks.known) } }),
  }
}

/** A snapshot of the files that run outside the sandbox (persistence.ts), keyed by where they are now. */
export function relocateSnapshot(snapshot: Readonly<Record<string, string>>, move: Relocate): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot).map(([p, digest]) => [move(p), digest]))
}
