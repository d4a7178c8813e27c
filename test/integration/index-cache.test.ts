// The index checks at a session's end keep what git found in an index's exact bytes
// (index-cache.ts): an index unchanged since git found it clean is not read again, one changed in
// any byte, in a shared part, or whose paths come from objects (a sparse index) is, and git judges
// a copy of the bytes hashed, never the index itself, which a session could swap between the two.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { checkIndexes } from '../../src/host/index-entries.js'
import { gitlinksNow } from '../../src/host/gitlink-look.js'
import { indexDigest, useIndexCache } from '../../src/host/index-cache.js'
import { layoutAgrees } from '../../src/host/index-layout.js'
import { git, makeRepo } from '../helpers/cli.js'
import { tempDir } from '../helpers/temp.js'

const FIXTURES = path.join(__dirname, '..', 'fixtures')

/** A repository, a claudebox home whose index cache is in use, and what each check moved aside and how many git runs it made. */
function setup(): { repo: string; gitDir: string; home: string; check: () => { moved: string[]; gitRuns: number; gitlinks: string[] } } {
  const base = tempDir('cb-index-cache-')
  const repo = makeRepo(base, 'repo')
  const home = path.join(base, 'claudebox')
  fs.mkdirSync(home)
  useIndexCache(home)
  const gitDir = path.join(repo, '.git')
  const check = (): { moved: string[]; gitRuns: number; gitlinks: string[] } => {
    const moved: string[] = []
    const gitlinks: string[] = []
    // Each git run on an index starts in an empty git dir of its own (index-git.ts withBareGit).
    const made = vi.spyOn(fs, 'mkdtempSync')
    checkIndexes([gitDir], planted => (moved.push(planted), fs.renameSync(planted, `${planted}.aside`)), (_, links) => gitlinks.push(...links.map(String)))
    const gitRuns = made.mock.calls.filter(([prefix]) => String(prefix).endsWith('claudebox-index-')).length
    made.mockRestore()
    return { moved, gitRuns, gitlinks }
  }
  return { repo, gitDir, home, check }
}

/** `name`'s entry in the index renamed to `to`, as a session can write it (the fixture rewrites the file). */
function rename(index: string, name: string, to: string): void {
  execFileSync('python3', [path.join(FIXTURES, 'index-rename.py'), index, name, to])
}

afterEach(() => vi.restoreAllMocks())

describe('the index checks keep what git found in the bytes it read', () => {
  test('an unchanged clean index is not read again; one changed in any byte is, and a path git refuses is still moved aside', () => {
    const { repo, gitDir, home, check } = setup()
    expect(check()).toEqual({ moved: [], gitRuns: 2, gitlinks: [] }) // the copy's folder and git's
    expect(fs.readFileSync(path.join(home, 'cache', 'clean-indexes.json'), 'utf8')).toContain(JSON.stringify(gitDir))
    expect(check()).toEqual({ moved: [], gitRuns: 0, gitlinks: [] })
    fs.writeFileSync(path.join(repo, 'b'), 'b\n')
    git(repo, 'add', 'b')
    expect(check().gitRuns).toBe(2)
    rename(path.join(gitDir, 'index'), 'b', '.git/config')
    expect(check().moved).toEqual([path.join(gitDir, 'index')])
  })

  test('git judges a copy of the bytes hashed: an index swapped for a clean one before git reads it is still moved aside, and nothing is kept', () => {
    const { repo, gitDir, check } = setup()
    const index = path.join(gitDir, 'index')
    const clean = fs.readFileSync(index)
    rename(index, 'README', '../.gitconfig')
    // The copy's folder is made first, then git's own: the session swaps the clean bytes in between.
    const mkdtemp = fs.mkdtempSync.bind(fs)
    let made = 0
    vi.spyOn(fs, 'mkdtempSync').mockImplementation((prefix: string) => {
      if (prefix.endsWith('claudebox-index-') && ++made === 2) fs.writeFileSync(index, clean)
      return mkdtemp(prefix)
    })
    const moved: string[] = []
    checkIndexes([gitDir], planted => moved.push(planted))
    expect(moved).toEqual([index])
    vi.restoreAllMocks()
    // The bad bytes again: git reads them again, since they were never found clean.
    rename(index, 'README', '../.gitconfig')
    expect(check().moved).toEqual([index])
    expect(fs.existsSync(path.join(repo, 'README'))).toBe(true)
  })

  test('a shared part of a split index is part of the bytes: one changed has git read the index again', () => {
    const { repo, gitDir, check } = setup()
    git(repo, 'update-index', '--split-index')
    fs.writeFileSync(path.join(repo, 'b'), 'b\n')
    git(repo, 'add', 'b')
    const shared = fs.readdirSync(gitDir).filter(name => name.startsWith('sharedindex.'))
    expect(shared.length).toBeGreaterThan(0)
    expect(check()).toMatchObject({ moved: [], gitRuns: 2 })
    expect(check().gitRuns).toBe(0)
    // README renamed in the shared parts, in place (git checks no index's checksum when it reads it): git reads the index again.
    for (const name of shared) {
      const bytes = fs.readFileSync(path.join(gitDir, name))
      bytes.write('../abc', bytes.indexOf('README'), 'latin1')
      fs.writeFileSync(path.join(gitDir, name), bytes)
    }
    expect(check()).toMatchObject({ moved: [path.join(gitDir, 'index')], gitRuns: 2 })
  })

  test("another project's launch keeps what this one kept (the most recently used first, 64 git dirs in all)", () => {
    const first = setup()
    expect(first.check().gitRuns).toBe(2)
    const second = makeRepo(path.dirname(first.repo), 'second')
    useIndexCache(first.home)
    checkIndexes([path.join(second, '.git')], () => {})
    const kept = Object.keys((JSON.parse(fs.readFileSync(path.join(first.home, 'cache', 'clean-indexes.json'), 'utf8')) as { dirs: object }).dirs)
    expect(kept).toEqual([path.join(second, '.git'), first.gitDir])
    useIndexCache(first.home)
    expect(first.check().gitRuns).toBe(0)
  })

  test('a sparse index, whose folders git reads from objects, is read by git each time', () => {
    const { repo, gitDir, check } = setup()
    for (const dir of ['a', 'b']) {
      fs.mkdirSync(path.join(repo, dir))
      fs.writeFileSync(path.join(repo, dir, 'f'), dir)
    }
    git(repo, 'add', '.')
    git(repo, 'commit', '-qm', 'dirs')
    git(repo, 'sparse-checkout', 'init', '--cone', '--sparse-index')
    git(repo, 'sparse-checkout', 'set', 'a')
    expect(fs.readFileSync(path.join(gitDir, 'index')).includes('sdir')).toBe(true)
    expect(check()).toMatchObject({ moved: [], gitRuns: 2 })
    expect(check()).toMatchObject({ moved: [], gitRuns: 2 })
    expect(indexDigest(gitDir, path.join(gitDir, 'config'))).toBeUndefined()
  })

  test("a gitlink's folder is given to the guard from what was kept as from git", () => {
    const { repo, check } = setup()
    const head = git(repo, 'rev-parse', 'HEAD')
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${head},sub`)
    expect(check()).toEqual({ moved: [], gitRuns: 2, gitlinks: ['sub'] })
    expect(check()).toEqual({ moved: [], gitRuns: 0, gitlinks: ['sub'] })
  })

  test("the digest names the git that read the bytes and the repository's config (the format git reads them in comes from it)", () => {
    const { gitDir } = setup()
    const config = path.join(gitDir, 'config')
    const copy = tempDir('cb-index-copy-')
    const first = indexDigest(gitDir, config, copy)?.digest
    expect(first).toBe(indexDigest(gitDir, config)?.digest)
    fs.appendFileSync(config, '# objectformat = sha256\n')
    expect(indexDigest(gitDir, config)?.digest).not.toBe(first)
    expect(fs.readFileSync(path.join(copy, 'index')).equals(fs.readFileSync(path.join(gitDir, 'index')))).toBe(true)
  })

  test('round 119: an index git reads one way as SHA-1 and another as SHA-256 is read in the format git takes from the config, a comment naming sha256 notwithstanding', () => {
    const { repo, gitDir, check } = setup()
    fs.appendFileSync(path.join(gitDir, 'config'), '# objectformat = sha256\n')
    const blob = git(repo, 'rev-parse', 'HEAD:README')
    execFileSync('python3', [path.join(FIXTURES, 'index-polyglot.py'), path.join(gitDir, 'index'), blob])
    expect(check().moved).toEqual([path.join(gitDir, 'index')])
  })

  test('round 119: with a config git cannot be asked about (a FIFO), the index is read in both formats, and a path refused in either counts', () => {
    const { repo, gitDir, check } = setup()
    const blob = git(repo, 'rev-parse', 'HEAD:README')
    execFileSync('python3', [path.join(FIXTURES, 'index-polyglot.py'), path.join(gitDir, 'index'), blob])
    fs.rmSync(path.join(gitDir, 'config'))
    execFileSync('mkfifo', [path.join(gitDir, 'config')])
    expect(check().moved).toEqual([path.join(gitDir, 'index')])
  })

  test("round 119: the run in the config's format failing for a moment (the objects folder made unreadable) fails nothing: git reads a copy with no objects", () => {
    const { repo, gitDir, check } = setup()
    fs.writeFileSync(path.join(repo, 'b'), 'b\n')
    git(repo, 'add', 'b')
    fs.renameSync(path.join(gitDir, 'objects'), path.join(gitDir, 'objects-away'))
    try {
      expect(check()).toMatchObject({ moved: [], gitRuns: 2 })
    } finally {
      fs.renameSync(path.join(gitDir, 'objects-away'), path.join(gitDir, 'objects'))
    }
  })

  test('thousands of shared parts, or more bytes than the cache copies, are left to git each time (no copies filling /tmp)', () => {
    const { gitDir } = setup()
    for (let i = 0; i < 17; i++) fs.writeFileSync(path.join(gitDir, `sharedindex.${i}`), '')
    const config = path.join(gitDir, 'config')
    expect(indexDigest(gitDir, config)).toBeUndefined()
    for (let i = 1; i < 17; i++) fs.rmSync(path.join(gitDir, `sharedindex.${i}`))
    expect(indexDigest(gitDir, config)).toBeDefined()
    fs.truncateSync(path.join(gitDir, 'sharedindex.0'), 33 << 20)
    expect(indexDigest(gitDir, config)).toBeUndefined()
  })
})

describe("the gitlink watch's look during the session", () => {
  test('round 124: a shared part that is a symlink (into /proc/self/cwd, it led claudebox and the host to two files) is no regular file: moved aside, and said by the watch', async () => {
    const { repo, gitDir, check } = setup()
    git(repo, 'update-index', '--split-index')
    const [shared] = fs.readdirSync(gitDir).filter(name => name.startsWith('sharedindex.'))
    const elsewhere = path.join(path.dirname(repo), 'shared-part')
    fs.renameSync(path.join(gitDir, shared as string), elsewhere)
    fs.symlinkSync(elsewhere, path.join(gitDir, shared as string))
    expect(await gitlinksNow(gitDir)).toEqual({ gitlinks: [], bad: [], irregular: true })
    expect(check().moved).toEqual([path.join(gitDir, 'index')])
  })

  test('an index git reads in no format, here, ends the session for the watch as at the end', async () => {
    const { gitDir } = setup()
    fs.writeFileSync(path.join(gitDir, 'index'), 'DIRC not an index')
    expect(await gitlinksNow(gitDir)).toEqual({ gitlinks: [], bad: [], irregular: true })
  })

  test('round 119: a shared part that is no regular file (a folder named sharedindex.zzz) is said, not taken for an empty index', async () => {
    const { repo, gitDir } = setup()
    const head = git(repo, 'rev-parse', 'HEAD')
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${head},sub`)
    expect((await gitlinksNow(gitDir)).gitlinks.map(String)).toEqual(['sub'])
    fs.mkdirSync(path.join(gitDir, 'sharedindex.zzz'))
    expect(await gitlinksNow(gitDir)).toEqual({ gitlinks: [], bad: [], irregular: true })
  })

  test('round 119: a polyglot index is read in the format git takes from the config', async () => {
    const { repo, gitDir } = setup()
    fs.appendFileSync(path.join(gitDir, 'config'), '# objectformat = sha256\n')
    execFileSync('python3', [path.join(FIXTURES, 'index-polyglot.py'), path.join(gitDir, 'index'), git(repo, 'rev-parse', 'HEAD:README')])
    expect((await gitlinksNow(gitDir)).bad).toEqual(['.git/hooks/pre-commit'])
  })
})

/** An index read one way with threads and another without: its records said not to agree, the gitlink watch ending the session, the end's check moving it aside. */
async function expectReadTwoWays(gitDir: string, sha256: boolean, check: () => { moved: string[] }): Promise<void> {
  expect(layoutAgrees(path.join(gitDir, 'index'), sha256)).toBe(false)
  expect(await gitlinksNow(gitDir)).toEqual({ gitlinks: [], bad: [], irregular: true })
  expect(check().moved).toEqual([path.join(gitDir, 'index')])
}

describe('an index read one way with threads and another without (red team, round 121)', () => {
  /** `count` entries staged at once, then the index written by git with threads, EOIE and IEOT (index version `version`). */
  function threadedIndex(repo: string, count: number, version: number): void {
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: '' }).toString().trim()
    const lines = Array.from({ length: count }, (_, i) => `100644 ${blob} 0\td${i % 50}/f${String(i).padStart(6, '0')}\n`).join('')
    execFileSync('git', ['update-index', '--index-info'], { cwd: repo, input: lines })
    git(repo, 'update-index', '--index-version', String(version))
    git(repo, '-c', 'index.threads=4', '-c', 'index.recordOffsetTable=true', '-c', 'index.recordEndOfIndexEntries=true', 'update-index', '--force-write-index')
  }

  test('an index git wrote with EOIE and IEOT (versions 2 and 4) is kept, its layout agreeing', () => {
    for (const version of [2, 4]) {
      const { repo, gitDir, check } = setup()
      threadedIndex(repo, 25_000, version)
      const bytes = fs.readFileSync(path.join(gitDir, 'index'))
      expect([bytes.includes('EOIE'), bytes.includes('IEOT')]).toEqual([true, true])
      expect(layoutAgrees(path.join(gitDir, 'index'), false)).toBe(true)
      expect(check().moved).toEqual([])
    }
  })

  test("an EOIE pointing into an unknown extension that wraps a split index's link (a threaded git merges a shared part listing .git/hooks/pre-commit) is moved aside, at the end and by the gitlink watch", async () => {
    const { repo, gitDir, check } = setup()
    const split = makeRepo(path.dirname(repo), 'split')
    fs.mkdirSync(path.join(split, 'xgit/hooks'), { recursive: true })
    fs.writeFileSync(path.join(split, 'xgit/hooks/pre-commit'), '#!/bin/sh\n')
    git(split, 'add', 'xgit')
    git(split, 'update-index', '--split-index')
    execFileSync('python3', [path.join(FIXTURES, 'index-eoie.py'), path.join(split, '.git'), gitDir, '20000'])
    await expectReadTwoWays(gitDir, false, check)
  })

  test('round 122: the same in a SHA-256 repository, its EOIE where git looks for it (sized as for SHA-1)', async () => {
    const { repo, gitDir, check } = setup()
    fs.rmSync(gitDir, { recursive: true })
    git(repo, 'init', '-q', '--object-format=sha256')
    const split = path.join(path.dirname(repo), 'split256')
    fs.mkdirSync(path.join(split, 'xgit/hooks'), { recursive: true })
    git(split, 'init', '-q', '--object-format=sha256')
    fs.writeFileSync(path.join(split, 'xgit/hooks/pre-commit'), '#!/bin/sh\n')
    git(split, 'add', 'xgit')
    git(split, 'update-index', '--split-index')
    git(repo, 'hash-object', '-w', '--stdin')
    execFileSync('python3', [path.join(FIXTURES, 'index-eoie.py'), path.join(split, '.git'), gitDir, '20000', 'sha256'])
    await expectReadTwoWays(gitDir, true, check)
  })

  test('round 123: a version 4 name whose length (its flags) runs past a NUL, hiding an entry and an IEOT from a look that ends names at the NUL (a git with two threads lists .git/hooks/pre-commit) is moved aside', async () => {
    const { repo, gitDir, check } = setup()
    execFileSync('python3', [path.join(FIXTURES, 'index-v4len.py'), gitDir, git(repo, 'rev-parse', 'HEAD:README')])
    await expectReadTwoWays(gitDir, false, check)
  })

  test("round 122: a version 4 index whose IEOT block starts with a name keeping the one before (a threaded git reads it from nothing: .git/hooks/pre-commit) is moved aside", async () => {
    const { repo, gitDir, check } = setup()
    const blob = git(repo, 'rev-parse', 'HEAD:README')
    execFileSync('python3', [path.join(FIXTURES, 'index-v4ieot.py'), gitDir, blob])
    await expectReadTwoWays(gitDir, false, check)
  })
})
