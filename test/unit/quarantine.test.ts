// Moving aside what a session planted (host/quarantine.ts): only ever inside the folders the watch
// began with, whatever their paths lead to by the time it moves.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { identitiesNow, pinRoots } from '../../src/host/pinned-roots.js'
import { awayFromTheSession, quarantineIn } from '../../src/host/quarantine.js'
import type { GitWatchSpec } from '../../src/types.js'
import { tempDir } from '../helpers/temp.js'

const specFor = (top: string, quarantineDir: string): GitWatchSpec => ({ forbidden: [path.join(top, '.git')], placeholders: [], headPlaceholders: [], links: [], gitDirs: [], workTrees: [top], ways: [], home: '/nonexistent', quarantineDir, instance: '/nonexistent' })

describe('quarantine', () => {
  test('a .git planted at the top is moved aside', () => {
    const root = tempDir()
    const top = path.join(root, 'p')
    fs.mkdirSync(path.join(top, '.git'), { recursive: true })
    const log = { moved: [] as string[], reported: new Set<string>(), movedPaths: new Set<string>() }
    const away = awayFromTheSession(path.join(root, 'quarantine'))
    quarantineIn(specFor(top, path.join(root, 'quarantine')), away, log, () => {}, pinRoots(identitiesNow([top])))(path.join(top, '.git'))
    away.close()
    expect(fs.existsSync(path.join(top, '.git'))).toBe(false)
    expect(log.moved).toHaveLength(1)
  })

  test("round 113: a top whose path now leads to another repository of the user's (a session of a project holding it swapped it for a link) is not acted on: that repository keeps its .git", () => {
    const root = tempDir()
    const top = path.join(root, 'r/p')
    const other = path.join(root, 'v')
    fs.mkdirSync(top, { recursive: true })
    fs.mkdirSync(path.join(other, '.git'), { recursive: true })
    const log = { moved: [] as string[], reported: new Set<string>(), movedPaths: new Set<string>() }
    const away = awayFromTheSession(path.join(root, 'quarantine'))
    const quarantine = quarantineIn(specFor(top, path.join(root, 'quarantine')), away, log, () => {}, pinRoots(identitiesNow([top])))
    fs.renameSync(top, path.join(root, 'r/p-real'))
    fs.symlinkSync(other, top)
    quarantine(path.join(top, '.git'))
    away.close()
    expect(fs.statSync(path.join(other, '.git')).isDirectory()).toBe(true)
    expect(log.moved.join('\n')).toContain('not moved: a folder on its way is now a symlink that leads out of the project')
  })

  test("round 114: the checks where a moved project went act only in the folder the project was, whatever the new path leads to when they begin (a folder above it swapped for a link)", () => {
    const root = tempDir()
    const project = path.join(root, 'p')
    const other = path.join(root, 'v')
    fs.mkdirSync(project)
    fs.mkdirSync(path.join(other, 'sub/.git'), { recursive: true })
    const heldIdentity = `${fs.statSync(project).dev}:${fs.statSync(project).ino}`
    fs.symlinkSync(root, path.join(root, 'above'))
    const newPath = path.join(root, 'above/v')
    const log = { moved: [] as string[], reported: new Set<string>(), movedPaths: new Set<string>() }
    const away = awayFromTheSession(path.join(root, 'quarantine'))
    quarantineIn(specFor(newPath, path.join(root, 'quarantine')), away, log, () => {}, pinRoots(new Map([[newPath, heldIdentity]])))(path.join(newPath, 'sub/.git'))
    away.close()
    expect(fs.statSync(path.join(other, 'sub/.git')).isDirectory()).toBe(true)
  })
})
