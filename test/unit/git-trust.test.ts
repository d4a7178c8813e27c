import { describe, expect, test } from 'vitest'
import { trustGit } from '../../src/sandbox/git-trust.js'
import type { GitLayout } from '../../src/types.js'
import type { GitFacts } from '../../src/types.js'

const main: GitFacts = { topLevel: '/h/shop', gitDir: '/h/shop/.git', commonDir: '/h/shop/.git' }

describe('legitimate layouts are trusted', () => {
  test.each<[string, GitFacts, GitLayout]>([
    ['main checkout', main, { kind: 'dir', worktree: '/h/shop' }],
    [
      'linked worktree',
      { topLevel: '/h/wt', gitDir: '/h/shop/.git/worktrees/wt', commonDir: '/h/shop/.git' },
      { kind: 'file', worktree: '/h/wt', target: '/h/shop/.git/worktrees/wt', backPointer: '/h/wt/.git' },
    ],
    [
      'submodule',
      { topLevel: '/h/shop/lib', gitDir: '/h/shop/.git/modules/lib', commonDir: '/h/shop/.git/modules/lib' },
      {
        kind: 'file',
        worktree: '/h/shop/lib',
        target: '/h/shop/.git/modules/lib',
        coreWorktree: '/h/shop/lib',
        superproject: { kind: 'dir', worktree: '/h/shop' },
        superGitDir: '/h/shop/.git',
      },
    ],
    [
      'separate git dir with core.worktree',
      { topLevel: '/h/work', gitDir: '/h/store', commonDir: '/h/store' },
      { kind: 'file', worktree: '/h/work', target: '/h/store', coreWorktree: '/h/work' },
    ],
    ['GIT_DIR set by the user', main, { kind: 'env' }],
  ])('%s', (_name, git, layout) => {
    expect(trustGit(git, layout)).toEqual({ ok: true })
  })
})

describe('forgeries are refused, naming both paths', () => {
  test.each<[string, GitFacts, GitLayout, RegExp]>([
    [
      '.git file pointing at another repository',
      { topLevel: '/h/shop/sub', gitDir: '/h/other/.git', commonDir: '/h/other/.git' },
      { kind: 'file', worktree: '/h/shop/sub', target: '/h/other/.git' },
      /\/h\/shop\/sub\/.git points to \/h\/other\/.git, whose core.worktree does not name \/h\/shop\/sub/,
    ],
    [
      ".git file claiming another repository's worktree entry",
      { topLevel: '/h/shop/sub', gitDir: '/h/other/.git/worktrees/feat', commonDir: '/h/other/.git' },
      { kind: 'file', worktree: '/h/shop/sub', target: '/h/other/.git/worktrees/feat', backPointer: '/h/feat/.git' },
      /points to \/h\/other\/.git\/worktrees\/feat, which belongs to \/h\/feat/,
    ],
    [
      'fake submodule pointing into another repository',
      { topLevel: '/h/shop/sub', gitDir: '/h/other/.git/modules/x', commonDir: '/h/other/.git/modules/x' },
      {
        kind: 'file',
        worktree: '/h/shop/sub',
        target: '/h/other/.git/modules/x',
        coreWorktree: '/h/shop/sub',
        superproject: { kind: 'dir', worktree: '/h/shop' },
        superGitDir: '/h/shop/.git',
      },
      /points into \/h\/other\/.git, which is not the git dir of a repository around it/,
    ],
    [
      'core.worktree in a repository config pointing elsewhere',
      { topLevel: '/h', gitDir: '/h/shop/sub/.git', commonDir: '/h/shop/sub/.git' },
      { kind: 'dir', worktree: '/h/shop/sub' },
      /makes git use \/h as the working tree/,
    ],
    [
      'commondir file pointing at another repository',
      { topLevel: '/h/shop/sub', gitDir: '/h/shop/sub/.git', commonDir: '/h/other/.git' },
      { kind: 'dir', worktree: '/h/shop/sub' },
      /points git at \/h\/other\/.git/,
    ],
    [
      'separate git dir without core.worktree',
      { topLevel: '/h/work', gitDir: '/h/store', commonDir: '/h/store' },
      { kind: 'file', worktree: '/h/work', target: '/h/store' },
      /git --git-dir=\/h\/store config core.worktree \/h\/work/,
    ],
  ])('%s', (_name, git, layout, message) => {
    const trust = trustGit(git, layout)
    expect(trust.ok).toBe(false)
    if (!trust.ok) expect(trust.reason).toMatch(message)
  })
})
