// The git guard's plan: pins before read-only binds, neutral files for what does not exist yet,
// refusal of a planted commondir, nothing but host-run files under --writable-git-config.
import { describe, expect, test } from 'vitest'
import { planGitGuard } from '../../src/sandbox/git-guard.js'
import { trustGit } from '../../src/sandbox/git-trust.js'
import { gitProtect } from '../helpers/facts.js'

const G = '/p/.git'

describe('planGitGuard', () => {
  test('git dirs are pinned (parents first) before anything below them is made read-only', () => {
    const plan = planGitGuard(
      gitProtect({
        pinned: [G, `${G}/worktrees`, `${G}/worktrees/b`],
        gitDirs: [G, `${G}/worktrees/b`],
        readOnly: [`${G}/config`, `${G}/worktrees/b/commondir`],
        emptyDirs: [`${G}/hooks`],
        emptyConfigs: [`${G}/config.worktree`],
        forbidden: [`${G}/commondir`],
      }),
      false,
    )
    expect(plan.groups).toEqual([
      ['--bind', G, G],
      ['--bind', `${G}/worktrees`, `${G}/worktrees`],
      ['--bind', `${G}/worktrees/b`, `${G}/worktrees/b`],
      ['--ro-bind', `${G}/config`, `${G}/config`],
      ['--ro-bind', `${G}/worktrees/b/commondir`, `${G}/worktrees/b/commondir`],
      ['--ro-bind', `${G}/hooks`, `${G}/hooks`],
      ['--ro-bind', `${G}/config.worktree`, `${G}/config.worktree`],
    ])
    expect(plan.mkdirs).toEqual([{ path: `${G}/hooks`, mode: 0o755 }])
    expect(plan.files).toEqual([{ path: `${G}/config.worktree`, content: '', mode: 0o644 }])
    expect(plan.forbidden).toEqual([`${G}/commondir`])
    expect(plan.gitDirs).toEqual([G, `${G}/worktrees/b`])
  })

  test("a missing commondir is made a placeholder ('./', written only if it is not there with other content) and bound read-only, and stays watched; a missing HEAD at a work tree's top an empty folder", () => {
    const plan = planGitGuard(gitProtect({ pinned: [G], gitDirs: [G], placeholders: [`${G}/commondir`], forbidden: [`${G}/commondir`] }), false)
    expect(plan.files).toEqual([{ path: `${G}/commondir`, content: './\n', mode: 0o644, exact: true }])
    expect(plan.groups).toEqual([['--bind', G, G], ['--ro-bind', `${G}/commondir`, `${G}/commondir`]])
    expect(plan.placeholders).toEqual([`${G}/commondir`])
    expect(plan.forbidden).toEqual([`${G}/commondir`])
    expect(planGitGuard(gitProtect({ pinned: [G], placeholders: [`${G}/commondir`] }), true).files).toEqual([])
    const heads = planGitGuard(gitProtect({ headPlaceholders: ['/p/HEAD'] }), false)
    expect(heads.mkdirs).toEqual([{ path: '/p/HEAD', mode: 0o755 }])
    expect(heads.groups).toEqual([['--ro-bind', '/p/HEAD', '/p/HEAD']])
    expect(heads.headPlaceholders).toEqual(['/p/HEAD'])
  })

  test('a git dir the probe could not search refuses the launch, unless --writable-git-config', () => {
    const refusals = ['cannot list /p/.git/modules (EACCES), which holds git dirs claudebox must protect; chmod u+rwx it, then rerun claudebox']
    expect(() => planGitGuard(gitProtect({ refusals }), false)).toThrow(/cannot list \/p\/.git\/modules \(EACCES\)/)
    expect(() => planGitGuard(gitProtect({ refusals }), true)).not.toThrow()
  })

  test('a commondir already planted in a git dir refuses the launch, naming it', () => {
    expect(() => planGitGuard(gitProtect({ present: [`${G}/modules/lib/commondir`] }), false)).toThrow(/modules\/lib\/commondir would make git use another repository/)
  })

  test('working-tree files the host runs are read-only while they exist; missing ones are not bound', () => {
    const plan = planGitGuard(gitProtect({ workTree: [{ path: '/p/.envrc', kind: 'file' }, { path: '/p/.vscode', kind: 'dir' }, { path: '/p/.npmrc', kind: 'missing' }, { path: '/p/.mcp.json', kind: 'symlink' }] }), false)
    expect(plan.readOnly).toEqual(['/p/.envrc', '/p/.vscode'])
  })

  test('--writable-git-config leaves git alone but keeps host-run files read-only', () => {
    const plan = planGitGuard(gitProtect({ pinned: [G], readOnly: [`${G}/config`], workTree: [{ path: '/p/.envrc', kind: 'file' }] }), true)
    expect(plan.groups).toEqual([['--ro-bind', '/p/.envrc', '/p/.envrc']])
    expect(plan.forbidden).toEqual([])
  })
})

describe('a .git that git does not accept', () => {
  test('is refused, not taken for "no repository"', () => {
    const trust = trustGit(undefined, { kind: 'dir', worktree: '/p' })
    expect(trust.ok).toBe(false)
    expect(trust.ok ? '' : trust.reason).toMatch(/\/p\/\.git exists but git does not accept it/)
  })
  test('is refused when git found a repository further up instead', () => {
    const trust = trustGit({ topLevel: '/home/u', gitDir: '/home/u/.git', commonDir: '/home/u/.git' }, { kind: 'dir', worktree: '/home/u/p' })
    expect(trust.ok).toBe(false)
  })
  test('no .git anywhere is still fine', () => {
    expect(trustGit(undefined, { kind: 'none' })).toEqual({ ok: true })
  })
})
