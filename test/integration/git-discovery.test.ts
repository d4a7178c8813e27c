// The launch reads the git layout from the files instead of running git (host/git-discovery.ts):
// for every layout it reads, its answer must be git's own (`git rev-parse`, real git); every
// layout it does not read exactly must be left to git.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { discoverGit, type Discovery } from '../../src/host/git-discovery.js'
import { requiredTool, tempDir } from '../helpers/cli.js'

const HAVE_GIT = requiredTool('git', ['--version'], 'git')
const EUID = process.geteuid?.() ?? 0
const ENV = { PATH: process.env['PATH'] }

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...ENV, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' } })
}

function init(dir: string, ...args: string[]): string {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', ...args)
  return dir
}

function commit(dir: string): void {
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x')
}

/** A repository under `root` whose .git/config ends with `text`. */
function withConfig(root: string, text: string): string {
  const repo = init(path.join(root, 'repo'))
  fs.appendFileSync(path.join(repo, '.git/config'), text)
  return repo
}

/** What git itself says, as the facts (realpaths), or 'none' outside any repository. */
function gitSays(cwd: string): Discovery {
  try {
    const [topLevel, gitDir, commonDir] = git(cwd, 'rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir').trim().split('\n') as [string, string, string]
    return { kind: 'repo', facts: { topLevel: fs.realpathSync(topLevel), gitDir: fs.realpathSync(gitDir), commonDir: fs.realpathSync(path.resolve(cwd, commonDir)) } }
  } catch {
    return { kind: 'none' }
  }
}

describe.skipIf(!HAVE_GIT)('discoverGit', () => {
  test.each<[string, (root: string) => string]>([
    ['the top of a repository', root => init(path.join(root, 'repo'))],
    ['a subdirectory', root => {
      const repo = init(path.join(root, 'repo'))
      fs.mkdirSync(path.join(repo, 'src/deep'), { recursive: true })
      return path.join(repo, 'src/deep')
    }],
    ['a linked worktree (and its subdirectory)', root => {
      const repo = init(path.join(root, 'repo'))
      commit(repo)
      git(repo, 'worktree', 'add', '-q', path.join(root, 'wt'))
      fs.mkdirSync(path.join(root, 'wt/sub'))
      return path.join(root, 'wt/sub')
    }],
    ['--separate-git-dir', root => init(path.join(root, 'work'), '--separate-git-dir', path.join(root, 'store.git'))],
    ['a detached HEAD', root => {
      const repo = init(path.join(root, 'repo'))
      commit(repo)
      git(repo, 'checkout', '-q', '--detach')
      return repo
    }],
    ['a repository nested in another', root => init(path.join(init(path.join(root, 'outer')), 'inner'))],
    ['a path through a symlink', root => {
      init(path.join(root, 'repo'))
      fs.symlinkSync(path.join(root, 'repo'), path.join(root, 'link'))
      return path.join(root, 'link')
    }],
  ])('%s: read from the files, the same as git rev-parse', (_name, make) => {
    const cwd = make(tempDir('cb-gitd-'))
    const found = discoverGit(cwd, ENV, EUID)
    expect(found.kind).toBe('repo')
    expect(found).toEqual(gitSays(cwd))
  })

  test('outside any repository: none, as git says (or git asked, at a mount boundary)', () => {
    const cwd = tempDir('cb-gitd-')
    const found = discoverGit(cwd, ENV, EUID)
    if (found.kind === 'none') expect(gitSays(cwd)).toEqual({ kind: 'none' })
    else expect(found.kind).toBe('ask-git')
  })

  test.each<[string, (root: string) => string, Record<string, string>?]>([
    ['GIT_DIR in the environment', root => init(path.join(root, 'repo')), { GIT_DIR: '/elsewhere' }],
    ['GIT_CEILING_DIRECTORIES in the environment', root => init(path.join(root, 'repo')), { GIT_CEILING_DIRECTORIES: '/' }],
    ['a submodule (its config moves the work tree)', root => {
      const sub = init(path.join(root, 'sub'))
      commit(sub)
      const repo = init(path.join(root, 'repo'))
      git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod')
      return path.join(repo, 'mod')
    }],
    ['core.worktree in the config', root => {
      const repo = init(path.join(root, 'repo'))
      git(repo, 'config', 'core.worktree', root)
      return repo
    }],
    ['core.worktree on the section line ([core]worktree = X)', root => withConfig(root, `[core]worktree = ${root}\n`)],
    ...['\tbare\n', '\tbare = 2\n', '\tbare = true ; comment\n'].map((line): [string, (root: string) => string] => [`a bare key git reads as not false (${JSON.stringify(line)})`, root => withConfig(root, `[core]\n${line}`)]),
    ['[core][include] on one line', root => withConfig(root, '[core][include]path = /elsewhere\n')],
    ['an [include] in the config', root => withConfig(root, '[include]\n\tpath = /elsewhere\n')],
    ['a bare repository', root => init(path.join(root, 'bare.git'), '--bare')],
    ['a cwd inside the git dir', root => path.join(init(path.join(root, 'repo')), '.git/refs')],
    ['a .git that is a symlink', root => {
      init(path.join(root, 'real'))
      fs.mkdirSync(path.join(root, 'repo'))
      fs.symlinkSync(path.join(root, 'real/.git'), path.join(root, 'repo/.git'))
      return path.join(root, 'repo')
    }],
    ['HEAD a FIFO (git would block)', root => {
      const repo = init(path.join(root, 'repo'))
      fs.rmSync(path.join(repo, '.git/HEAD'))
      execFileSync('mkfifo', [path.join(repo, '.git/HEAD')])
      return repo
    }],
    ['HEAD that is not a ref', root => {
      const repo = init(path.join(root, 'repo'))
      fs.writeFileSync(path.join(repo, '.git/HEAD'), 'garbage\n')
      return repo
    }],
    ['a .git file that is not a gitdir: line', root => {
      fs.mkdirSync(path.join(root, 'repo'))
      fs.writeFileSync(path.join(root, 'repo/.git'), 'nonsense\n')
      return path.join(root, 'repo')
    }],
  ])('%s: left to git', (_name, make, env = {}) => {
    const cwd = make(tempDir('cb-gitd-'))
    expect(discoverGit(cwd, { ...ENV, ...env }, EUID)).toEqual({ kind: 'ask-git' })
  })

  test("a repository owned by another user is git's to judge (safe.directory)", () => {
    const repo = init(path.join(tempDir('cb-gitd-'), 'repo'))
    expect(discoverGit(repo, ENV, EUID).kind).toBe('repo')
    expect(discoverGit(repo, ENV, EUID + 1)).toEqual({ kind: 'ask-git' })
  })
})
