// What a later `claudebox` runs or checks out on the host, for the plan to refuse a launch that
// would let the session write it (sandbox/policy.ts launcherWithin): the launcher's own files and
// node (red team, round 99: a session rewrote bin/claudebox.js in a clone the project held), and
// the git data of the checkout it runs from (rounds 100 to 103).
import path from 'node:path'
import { resolveChain } from './link-targets.js'
import { isDir, lstatKind, readNoFollow, realPathOrUndefined, SMALL_FILE_LIMIT } from './fs.js'
import { commonDirOf, gitdirOf } from './git-dirs.js'
import { whichSync } from './system-programs.js'

/** The package bin/claudebox.js belongs to (the folder above its bin/, real), or undefined. */
export function launcherPackage(): string | undefined {
  const script = process.argv[1] === undefined ? undefined : realPathOrUndefined('/', process.argv[1])
  return script === undefined ? undefined : path.dirname(path.dirname(script))
}

/**
 * The git data of the checkout claudebox runs from, when it runs from one: its git dir, its common
 * dir and every objects folder the alternates name. A session that writes any of them changes what
 * that checkout's next `git checkout`, `reset --hard` or `pull` writes out as claudebox (red team,
 * rounds 100 to 102: a linked worktree of the project's repository, a submodule of the project, a
 * clone made with `--reference` to it). Read from the launcher's side, the first `.git` above its package.
 */
export function launcherGit(pkg: string | undefined): string[] {
  for (let dir = pkg; dir !== undefined; dir = dir === path.dirname(dir) ? undefined : path.dirname(dir)) {
    const dotGit = path.join(dir, '.git')
    // Through a link, as git takes it (round 103: a `.git` that is a symlink was passed over).
    const kind = isDir(dotGit) ? 'dir' : lstatKind(dotGit) === 'missing' ? 'missing' : 'file'
    if (kind === 'missing') continue
    const file = kind === 'file' ? realPathOrUndefined(dir, '.git') : undefined
    const named = kind === 'dir' ? dotGit : gitdirOf(file === undefined ? undefined : readNoFollow(file, SMALL_FILE_LIMIT))
    const gitDir = named === undefined ? undefined : realPathOrUndefined(dir, named)
    if (gitDir === undefined) return []
    const common = commonDirOf(gitDir) ?? gitDir
    // Each piece git reads, wherever it leads (round 103: git-new-workdir links refs, objects and config into another .git).
    const pieces = [gitDir, common].flatMap(d => [d, ...GIT_DIR_PIECES.map(name => realPathOrUndefined(d, name)).filter((p): p is string => p !== undefined)])
    const objects = realPathOrUndefined(common, 'objects')
    return [...new Set([...pieces, ...(objects === undefined ? [] : alternatesOf(objects))])]
  }
  return []
}

/** What git reads in a git dir to check out, reset or pull. */
const GIT_DIR_PIECES = ['HEAD', 'index', 'config', 'config.worktree', 'commondir', 'packed-refs', 'objects', 'refs', 'hooks', 'info', 'logs', 'modules', 'worktrees']

/**
 * The objects folders `objects`' info/alternates names, and theirs (five deep, as git goes), as
 * real paths, with each alternates file's own: read through a link, as git reads it (round 104: a
 * linked alternates file was taken for none).
 */
function alternatesOf(objects: string, depth = 0): string[] {
  const file = depth >= 5 ? undefined : realPathOrUndefined(objects, 'info/alternates')
  if (file === undefined) return []
  const lines = (readNoFollow(file, SMALL_FILE_LIMIT) ?? '').split('\n').map(line => line.trim())
  return [file, ...lines.filter(line => line !== '' && !line.startsWith('#')).flatMap(line => {
    const real = realPathOrUndefined(objects, line)
    return real === undefined ? [] : [real, ...alternatesOf(real, depth + 1)]
  })]
}

/**
 * What a later `claudebox` runs on the host: the script the shell ran (on PATH, often a link), the
 * package it is part of (the folder above its bin/: bin/, dist/), the node running it and the one
 * `#!/usr/bin/env node` finds on PATH; each as named and as its real path.
 */
export function launcherFiles(pathVar: string | undefined, pkg = launcherPackage()): string[] {
  const script = process.argv[1]
  // As `env` reads PATH: an empty entry is the current directory, and a relative one is looked up
  // from it (red team, round 100: a `::` in PATH ran the project's ./node unnoticed).
  const envPath = pathVar?.split(':').map(dir => (dir === '' ? '.' : dir)).join(':')
  const named = [script, whichSync('node', envPath), process.execPath].filter((p): p is string => p !== undefined).map(p => path.resolve(p))
  // Walked as the kernel walks them: where each ends, and each link on the way, since one in a folder
  // the sandbox writes may be pointed elsewhere (red team, round 107: PATH's ~/.local/bin linked
  // into a dotfiles project, where the session put `node`).
  const walks = named.map(p => resolveChain(p))
  const real = walks.map((walk, i) => walk.end?.path ?? (named[i] as string))
  const links = walks.flatMap(walk => walk.links.map(link => link.path))
  // The bundles bin/claudebox.js loads, wherever dist/ leads (round 100: a dist/ linked into the project).
  const bundles = pkg === undefined ? [] : [pkg, realPathOrUndefined('/', path.join(pkg, 'dist')) ?? path.join(pkg, 'dist')]
  return [...new Set([...named, ...real, ...links, ...bundles])]
}
