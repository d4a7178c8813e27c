// user-binds.ts extraBinds: the user's --bind is mounted after the project's protections, so a writable
// one that holds the project, its git dirs or a read-only entry would cover them; refused (status 2).
import { describe, expect, test } from 'vitest'
import { planLaunch } from '../../src/sandbox/plan.js'
import { ClaudeboxError, EXIT } from '../../src/errors.js'
import { DEFAULT_SANDBOX, type SandboxOptions } from '../../src/config/sandbox-options.js'
import type { HostFacts } from '../../src/types.js'
import { debianFacts, gitProtect, optionArgs } from '../helpers/facts.js'

const SHOP = '/home/ada/src/shop'

/** debianFacts with every named path existing as itself (a directory), plus `more`. */
function factsWith(named: readonly string[], more: Partial<HostFacts> = {}): HostFacts {
  return debianFacts({ paths: Object.fromEntries(named.map(p => [p, { real: p, kind: 'dir' as const }])), ...more })
}

function plan(facts: HostFacts, options: Partial<SandboxOptions>): ReturnType<typeof planLaunch> {
  return planLaunch(facts, { claudeArgs: [], sandbox: { ...DEFAULT_SANDBOX, network: 'open', ...options } })
}

/** The refusal of a plan: a usage error (status 2) whose message matches. */
function refusal(facts: HostFacts, options: Partial<SandboxOptions>): ClaudeboxError {
  try {
    plan(facts, options)
  } catch (error) {
    expect(error).toBeInstanceOf(ClaudeboxError)
    expect((error as ClaudeboxError).exitCode).toBe(EXIT.usage)
    return error as ClaudeboxError
  }
  throw new Error('the plan was accepted')
}

/** The project with a .envrc (a host-run file the guard keeps read-only). */
const withEnvrc = gitProtect({ pinned: [`${SHOP}/.git`], readOnly: [`${SHOP}/.git/config`, `${SHOP}/.git/hooks`], workTree: [{ path: `${SHOP}/.envrc`, kind: 'file' }] })

describe('rule 1: a writable --bind may not be or hold the project or its git dirs', () => {
  test.each([
    ['/home/ada/src', `it holds the project's git dir ${SHOP}/.git`],
    [SHOP, `it holds the project's git dir ${SHOP}/.git`],
    [`${SHOP}/.git`, `it is the project's git dir ${SHOP}/.git`],
  ])('--bind %s is refused, naming the git dir', (p, relation) => {
    const error = refusal(factsWith([p]), { binds: [p] })
    expect(error.message).toContain(`--bind ${p} would make the project's git config and hooks writable inside the sandbox`)
    expect(error.message).toContain(`(${relation})`)
    expect(error.message).toMatch(/bind a folder beside the project instead, use --ro-bind, or pass --writable-git-config if you accept that$/)
  })

  test("a linked worktree: a folder holding its working tree is refused, and one holding its admin dir in the main repository's .git", () => {
    const git = { topLevel: '/home/ada/wt/feature', gitDir: `${SHOP}/.git/worktrees/feature`, commonDir: `${SHOP}/.git` }
    const pinned = [`${SHOP}/.git`, `${SHOP}/.git/worktrees`, `${SHOP}/.git/worktrees/feature`]
    const more = { cwd: '/home/ada/wt/feature', git, gitLayout: { kind: 'file' as const, worktree: '/home/ada/wt/feature', target: `${SHOP}/.git/worktrees/feature`, backPointer: '/home/ada/wt/feature/.git' }, gitProtect: gitProtect({ pinned }) }
    expect(refusal(factsWith(['/home/ada/wt'], more), { binds: ['/home/ada/wt'] }).message).toContain('would mount the project again inside the sandbox, writable over the git files it keeps read-only, or let the session make a repository above it for the host\'s git to use there (it holds the project /home/ada/wt/feature)')
    expect(refusal(factsWith([`${SHOP}/.git/worktrees`], more), { binds: [`${SHOP}/.git/worktrees`] }).message).toContain(`(it is the project's git dir ${SHOP}/.git/worktrees)`)
  })

  test('--ro-bind of the same folder is accepted, after the protections it cannot cover (it adds nothing writable)', () => {
    const argv = plan(factsWith(['/home/ada/src']), { roBinds: ['/home/ada/src'] }).argv
    expect(optionArgs(argv, '--ro-bind', 2)).toContainEqual(['/home/ada/src', '/home/ada/src'])
    expect(optionArgs(argv, '--bind', 2)).not.toContainEqual(['/home/ada/src', '/home/ada/src'])
  })

  test('--bind of an unrelated folder, or of a project subfolder that holds nothing protected, is accepted', () => {
    for (const p of ['/home/ada/scratch', '/home/ada/src/other', `${SHOP}/web`, `${SHOP}/.git/objects`]) {
      expect(optionArgs(plan(factsWith([p]), { binds: [p] }).argv, '--bind', 2)).toContainEqual([p, p])
    }
  })

  test('--writable-git-config lifts it: a folder holding the project is accepted while it holds nothing read-only', () => {
    const argv = plan(factsWith(['/home/ada/src']), { binds: ['/home/ada/src'], writableGitConfig: true }).argv
    expect(optionArgs(argv, '--bind', 2)).toContainEqual(['/home/ada/src', '/home/ada/src'])
  })

  test('a project that is not a git repository: --bind of it or of a folder holding it is refused too (round 28: a .git made above its top is one the host\'s git takes there); beside it, rule 2 alone', () => {
    const more = { cwd: '/home/ada/notes/n1', git: undefined, gitLayout: { kind: 'none' as const }, gitProtect: gitProtect() }
    for (const p of ['/home/ada/notes/n1', '/home/ada/notes']) expect(refusal(factsWith([p], more), { binds: [p] }).message).toContain('or let the session make a repository above it')
    expect(optionArgs(plan(factsWith(['/home/ada/data'], more), { binds: ['/home/ada/data'] }).argv, '--bind', 2)).toContainEqual(['/home/ada/data', '/home/ada/data'])
    const envrc = { ...more, gitProtect: gitProtect({ readOnly: ['/home/ada/data/.envrc'] }) }
    expect(refusal(factsWith(['/home/ada/data'], envrc), { binds: ['/home/ada/data'] }).message).toContain('would make /home/ada/data/.envrc, which it holds, writable inside the sandbox')
  })
})

describe('rule 2: a writable --bind may not be, hold or lie inside what the plan keeps read-only', () => {
  test.each([
    [`${SHOP}/.git/hooks`, 'would make it writable inside the sandbox'],
    [`${SHOP}/.git/hooks/local`, `would make part of ${SHOP}/.git/hooks writable inside the sandbox`],
  ])('--bind %s (the guard keeps .git/hooks read-only) is refused', (p, what) => {
    const error = refusal(factsWith([p]), { binds: [p] })
    expect(error.message).toBe(`--bind ${p} ${what}, where claudebox keeps it read-only because the host runs or reads it; bind a folder that holds none of it instead, or use --ro-bind`)
  })

  test('--writable-git-config does not lift it: a folder holding the project with a .envrc is refused', () => {
    const error = refusal(factsWith(['/home/ada/src'], { gitProtect: withEnvrc }), { binds: ['/home/ada/src'], writableGitConfig: true })
    expect(error.message).toContain(`--bind /home/ada/src would make ${SHOP}/.envrc, which it holds, writable inside the sandbox`)
    // ...and without it, rule 1 speaks first.
    expect(refusal(factsWith(['/home/ada/src'], { gitProtect: withEnvrc }), { binds: ['/home/ada/src'] }).message).toContain("project's git dir")
  })

  test("the plan's other read-only binds count: Claude Code's installation outside the system", () => {
    const claude = { found: '/home/ada/.local/bin/claude', resolved: '/home/ada/.local/share/claude/versions/2.1.330', installRoot: '/home/ada/.local/share/claude', version: '2.1.330' }
    expect(refusal(factsWith(['/home/ada/.local'], { claude }), { binds: ['/home/ada/.local'] }).message).toContain('would make /home/ada/.local/share/claude, which it holds, writable')
  })

  test("the user's own --ro-bind does not: a writable folder inside it is their choice", () => {
    const argv = plan(factsWith(['/data/sets', '/data/sets/out']), { roBinds: ['/data/sets'], binds: ['/data/sets/out'] }).argv
    expect(optionArgs(argv, '--bind', 2)).toContainEqual(['/data/sets/out', '/data/sets/out'])
  })
})

describe('rule 3: one path named twice among --bind and --ro-bind', () => {
  test.each([
    [{ roBinds: ['/data/sets'], binds: ['/data/sets'] }, '--ro-bind /data/sets and --bind /data/sets name the same path /data/sets'],
    [{ binds: ['/data/sets', '/data/sets/'] }, '--bind /data/sets and --bind /data/sets/ name the same path /data/sets'],
    [{ roBinds: ['/data/sets', '/data/link'] }, '--ro-bind /data/sets and --ro-bind /data/link name the same path /data/sets'],
  ])('%j is refused', (options, message) => {
    const facts = debianFacts({ paths: { '/data/sets': { real: '/data/sets', kind: 'dir' }, '/data/link': { real: '/data/sets', kind: 'dir' } } })
    expect(refusal(facts, options).message).toBe(`${message}; name it once (--bind for writable, --ro-bind for read-only)`)
  })
})
