// The user's own binds (--bind, --ro-bind, config.json's binds): checked against what the sandbox
// hides, mounted parents first, and a writable one given the project's git protections.
import path from 'node:path'
import { usageError } from '../errors.js'
import { planGitGuard, type GitGuardPlan } from './git-guard.js'
import { bindRefusal, writableBindRefusal } from './policy.js'
import type { SandboxOptions } from '../config/sandbox-options.js'
import type { BindGit, GitProtectFacts, HostFacts } from '../types.js'
import type { SandboxBuilder } from './builder.js'

/**
 * --ro-bind and --bind the user asked for, refused when they would expose what the sandbox hides,
 * name one path twice (the later mount would silently win over the other), or, writable,
 * cover the project's protections, which are mounted before them (policy.ts writableBindRefusal).
 * Mounted parents first, whatever their kind: `--bind A --ro-bind A/sub` keeps A/sub read-only
 * (all --ro-binds went first, and A's mount covered it). A writable bind gets the project's git
 * protections right after its mount (bindGuard); they are returned for the watch.
 */
export function extraBinds(b: SandboxBuilder, facts: HostFacts, options: SandboxOptions, projectDirs: readonly string[]): BoundGuard[] {
  // Taken before the user's own --ro-binds: a writable folder inside one of those is their choice.
  const guarded = facts.git !== undefined && !options.writableGitConfig
  // A folder holding the project, repository or not: the session could make a .git above its top.
  const kept = { project: options.writableGitConfig ? [] : projectDirs, gitDirs: guarded ? [...facts.gitProtect.pinned] : [], readOnly: [...b.readOnly] }
  const guards: BoundGuard[] = []
  for (const { flag, requested, real } of userBinds(facts, options)) {
    const refusal = flag === '--bind' ? writableBindRefusal(real, kept) : undefined
    if (refusal !== undefined) throw usageError(`--bind ${requested} ${refusal}`)
    if (flag === '--ro-bind') b.roBind(real)
    else b.bind(real)
    b.userBinds.push(real)
    const guard = flag === '--bind' ? bindGuard(b, real, facts.bindGit?.[real], requested, options.writableGitConfig) : undefined
    if (guard === undefined) continue
    guards.push(guard)
    // A writable bind deeper down must not cover them either.
    if (!options.writableGitConfig) kept.gitDirs.push(...guard.protect.pinned)
    kept.readOnly.push(...guard.plan.readOnly)
  }
  if (guards.length > 0 && !options.writableGitConfig) b.protections.push("writable binds: a repository's git dirs and host-run files kept as the project's; a .git made at the top of any other moved aside, its HEAD held by an empty folder")
  return guards
}

/** A writable bind's git protections: the facts (probe.ts bindGitFacts) and their mounts. */
export interface BoundGuard {
  real: string
  protect: GitProtectFacts
  plan: GitGuardPlan
}

/** The user's binds, checked, each path named once, parents before what lies below them. */
function userBinds(facts: HostFacts, options: SandboxOptions): { flag: '--ro-bind' | '--bind'; requested: string; real: string }[] {
  const named = new Map<string, string>()
  const binds = [...options.roBinds.map(p => ['--ro-bind', p] as const), ...options.binds.map(p => ['--bind', p] as const)].map(([flag, requested]) => {
    const real = checkedBind(facts, requested)
    const before = named.get(real)
    if (before !== undefined) throw usageError(`${before} and ${flag} ${requested} name the same path ${real}; name it once (--bind for writable, --ro-bind for read-only)`)
    named.set(real, `${flag} ${requested}`)
    return { flag, requested, real }
  })
  const depth = (p: string): number => p.split('/').length
  return binds.sort((x, y) => depth(x.real) - depth(y.real))
}

/**
 * What the host's git would run from a writable bind is protected as the project's is (probe.ts
 * bindGitFacts): a repository's git dirs and host-run files, or a .git made at the top of any
 * other folder moved aside and its HEAD held by an empty folder (git-guard-probe.ts). A git dir
 * itself is refused. --writable-git-config lifts it all.
 */
function bindGuard(b: SandboxBuilder, real: string, bindGit: BindGit | undefined, requested: string, writableGitConfig: boolean): BoundGuard | undefined {
  if (bindGit === undefined) return undefined
  if ('refusal' in bindGit) {
    if (writableGitConfig) return undefined
    throw usageError(`--bind ${requested} ${bindGit.refusal}`)
  }
  const plan = planGitGuard(bindGit.protect, writableGitConfig)
  b.groups.push(...plan.groups)
  b.readOnly.push(...plan.readOnly)
  b.mkdirs.push(...plan.mkdirs)
  b.files.push(...plan.files)
  return { real, protect: bindGit.protect, plan }
}

/** The real path of a user's bind, refused when it would expose what the sandbox hides. */
function checkedBind(facts: HostFacts, requested: string): string {
  // Probed as named from the current directory (probe.ts withOptionFacts): ../data, data/.
  const info = facts.paths[path.resolve(facts.cwd ?? '/', requested)]
  const refusal = bindRefusal(info?.real, facts.home, facts.claudeboxHome, facts.guarded, info?.holdsSessions)
  if (refusal !== undefined || info?.real === undefined) throw usageError(`cannot bind ${requested}: ${refusal ?? 'it does not exist'}; name an existing directory or file of your own`)
  return info.real
}
