// A project moved during its session: the paths its end looks at follow it (sandbox/relocate.ts),
// and the held folder says where it went (host/held-folder.ts).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { holdFolder } from '../../src/host/held-folder.js'
import { relocateGitWatch, relocateSnapshot, relocator } from '../../src/sandbox/relocate.js'
import type { GitWatchSpec } from '../../src/types.js'

describe('relocate', () => {
  const move = relocator('/home/u/src/p', '/home/u/src/q')

  test('paths below the old top go below the new one; others, and look-alike siblings, stay', () => {
    expect(['/home/u/src/p', '/home/u/src/p/.git/HEAD', '/home/u/src/p2/x', '/home/u/src/..p', '/home/u/.claudebox/instances/a'].map(move)).toEqual(['/home/u/src/q', '/home/u/src/q/.git/HEAD', '/home/u/src/p2/x', '/home/u/src/..p', '/home/u/.claudebox/instances/a'])
  })

  test("every path of a git watch's spec moves, a link's text does not", () => {
    const spec: GitWatchSpec = {
      forbidden: ['/home/u/src/p/.git/commondir'],
      placeholders: ['/home/u/src/p/.git/commondir'],
      headPlaceholders: ['/home/u/src/p/HEAD'],
      links: [{ path: '/home/u/src/p/.git/hooks', text: '/home/u/src/p/tools/hooks' }],
      gitDirs: ['/home/u/src/p/.git'],
      workTrees: ['/home/u/src/p', '/home/u/bound'],
      ways: ['/home/u/src/p/sub'],
      home: '/home/u',
      quarantineDir: '/home/u/.claudebox/quarantine/a',
      instance: '/home/u/.claudebox/instances/a',
      gitlinks: { repos: [{ gitDir: '/home/u/src/p/.git', workTree: '/home/u/src/p' }], known: ['/home/u/src/p/sub/.git'] },
    }
    expect(relocateGitWatch(spec, move)).toEqual({
      ...spec,
      forbidden: ['/home/u/src/q/.git/commondir'],
      placeholders: ['/home/u/src/q/.git/commondir'],
      headPlaceholders: ['/home/u/src/q/HEAD'],
      links: [{ path: '/home/u/src/q/.git/hooks', text: '/home/u/src/p/tools/hooks' }],
      gitDirs: ['/home/u/src/q/.git'],
      workTrees: ['/home/u/src/q', '/home/u/bound'],
      ways: ['/home/u/src/q/sub'],
      gitlinks: { repos: [{ gitDir: '/home/u/src/q/.git', workTree: '/home/u/src/q' }], known: ['/home/u/src/q/sub/.git'] },
    })
    expect(relocateSnapshot({ '/home/u/src/p/.envrc': 'abc', '/home/u/.gitconfig': 'def' }, move)).toEqual({ '/home/u/src/q/.envrc': 'abc', '/home/u/.gitconfig': 'def' })
  })
})

describe('holdFolder', () => {
  const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'held-'))

  test('where the folder went: nowhere while it stays, its new path when renamed, none when removed', () => {
    const root = tmp()
    const dir = path.join(root, 'p')
    fs.mkdirSync(dir)
    const held = holdFolder(dir)
    expect(held.moved()).toBeUndefined()
    fs.renameSync(dir, path.join(root, 'q'))
    expect(held.moved()).toEqual({ to: path.join(root, 'q') })
    // Another folder made at the old path is not the project.
    fs.mkdirSync(dir)
    expect(held.moved()).toEqual({ to: path.join(root, 'q') })
    fs.rmSync(path.join(root, 'q'), { recursive: true })
    expect(held.moved()).toEqual({})
    held.close()
    fs.rmSync(root, { recursive: true })
  })

  test('a folder gone before it was held: nothing to say', () => {
    const held = holdFolder(path.join(tmp(), 'missing'))
    expect(held.moved()).toBeUndefined()
    held.close()
  })
})
