// The nested-repository search's folder cache: a folder is taken from it only while its device,
// inode and change time are the ones kept, and a folder changed moments before it was looked at
// is not kept at all.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { folderCache } from '../../src/host/folder-cache.js'

const temps: string[] = []
afterEach(() => temps.splice(0).forEach(t => fs.rmSync(t, { recursive: true, force: true })))

function world(): { root: string; file: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'claudebox-folders-'))
  temps.push(root)
  fs.mkdirSync(path.join(root, 'home/cache'), { recursive: true })
  fs.mkdirSync(path.join(root, 'tree/old/sub'), { recursive: true })
  fs.writeFileSync(path.join(root, 'tree/old/HEAD'), '')
  fs.writeFileSync(path.join(root, 'tree/old/other'), '')
  return { root, file: path.join(root, 'home/cache/folders-x.json') }
}

const names = (dir: string, file: string): string[] =>
  folderCache(file, (_d, n) => n === 'HEAD' || n === 'FORGED')
    .list(dir)
    .entries
    .sort()

/** Adds a name to what the cache kept for `dir`: seen again only if the cache is used. */
function forge(file: string, dir: string): void {
  const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>
  kept[dir] += '/fFORGED'
  fs.writeFileSync(file, JSON.stringify(kept))
}

describe('folder cache', () => {
  test('an unchanged folder is taken from the cache; one changed since, or replaced by another, is listed again', async () => {
    const { root, file } = world()
    const old = path.join(root, 'tree/old')
    const sub = path.join(old, 'sub')
    await new Promise(resolve => setTimeout(resolve, 1_100))
    const first = folderCache(file, (_d, n, kind) => n === 'HEAD' || kind !== 'f')
    expect(first.list(old).entries.sort()).toEqual(['dsub', 'fHEAD'])
    first.list(sub)
    first.save()
    forge(file, old)
    forge(file, sub)
    expect(names(old, file)).toEqual(['dsub', 'fFORGED', 'fHEAD'])
    expect(names(sub, file)).toEqual(['fFORGED'])
    // A folder renamed into the place of a kept one: another inode, listed.
    fs.renameSync(sub, path.join(root, 'tree/gone'))
    fs.mkdirSync(sub)
    expect(names(sub, file)).toEqual([])
    // An entry made in a kept folder: a newer ctime, listed.
    expect(names(old, file)).toEqual(['dsub', 'fHEAD'])
  })

  test('a folder changed less than a second before it was looked at is not kept; a chmod changes it too', async () => {
    const { root, file } = world()
    const old = path.join(root, 'tree/old')
    const first = folderCache(file, () => true)
    first.list(old)
    first.save()
    expect(fs.existsSync(file) ? Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')) as object) : []).toEqual([])
    await new Promise(resolve => setTimeout(resolve, 1_100))
    const second = folderCache(file, () => true)
    second.list(old)
    second.save()
    forge(file, old)
    fs.chmodSync(old, 0o700)
    expect(names(old, file)).not.toContain('fFORGED')
  })

  test("a cache of another format (one that kept only the names asked for, without links and FIFOs) is read as none; links and FIFOs are kept when asked for by kind", async () => {
    const { root, file } = world()
    const old = path.join(root, 'tree/old')
    fs.symlinkSync('HEAD', path.join(old, 'link'))
    execFileSync('mkfifo', [path.join(old, 'fifo')])
    await new Promise(resolve => setTimeout(resolve, 1_100))
    const first = folderCache(file, (_d, n, kind) => n === 'HEAD' || kind !== 'f')
    expect(first.list(old).entries.sort()).toEqual(['dsub', 'fHEAD', 'llink', 'pfifo'])
    first.save()
    forge(file, old)
    expect(names(old, file)).toContain('fFORGED')
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>
    delete kept['']
    fs.writeFileSync(file, JSON.stringify(kept))
    expect(names(old, file)).not.toContain('fFORGED')
  })

  test('a cache that would be larger than is read back is not written, and saving it does not throw (round 69: a text past V8\'s longest string crashed the checks after it)', async () => {
    const { root, file } = world()
    const big = path.join(root, 'tree/big')
    fs.mkdirSync(big)
    // 45,000 names of 250 characters: 11 MB of text, over a sixth of the 64 MB read back (JSON can make a byte six).
    for (let i = 0; i < 45_000; i++) fs.symlinkSync('x', path.join(big, `${'n'.repeat(244)}${String(i).padStart(6, '0')}`))
    await new Promise(resolve => setTimeout(resolve, 1_100))
    const cache = folderCache(file, () => true)
    expect(cache.list(big).entries.length).toBe(45_000)
    expect(() => cache.save()).not.toThrow()
    expect(fs.existsSync(file)).toBe(false)
  }, 180_000) // 45,000 links take a minute on a loaded machine

  test('a damaged cache is read as none; a folder that is gone or a file throws as readdir does', () => {
    const { root, file } = world()
    fs.writeFileSync(file, '{"x": [1, 2]')
    expect(names(path.join(root, 'tree/old'), file)).toEqual(['dsub', 'fHEAD'])
    expect(() => folderCache(file, () => true).list(path.join(root, 'missing'))).toThrow(expect.objectContaining({ code: 'ENOENT' }))
    expect(() => folderCache(file, () => true).list(path.join(root, 'tree/old/HEAD'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }))
  })
})
