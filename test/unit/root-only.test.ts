// The masks root's sandbox gets for what the search found in /etc and /opt (host/root-only.ts), and the search itself (host/root-only-search.ts).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { rootOnlyMasks, settleMasks } from '../../src/host/root-only.js'
import { findRootOnly } from '../../src/host/root-only-search.js'
import { tempDir } from '../helpers/temp.js'

const file = (name: string | Buffer) => ({ dir: false, name: Buffer.isBuffer(name) ? name : Buffer.from(name) })
const dir = (name: string) => ({ dir: true, name: Buffer.from(name) })
const notUtf8 = (prefix: string) => Buffer.concat([Buffer.from(prefix), Buffer.from([0xff, 0xfe])])

test('files and folders as found; what lies in a masked folder is left to it', () => {
  expect(rootOnlyMasks([file('/etc/shadow'), dir('/etc/ssl/private'), file('/etc/ssl/private/k.pem'), dir('/opt/a'), dir('/opt/a/b')], ['/home/ada/p'])).toEqual({
    files: ['/etc/shadow'],
    dirs: ['/etc/ssl/private', '/opt/a'],
  })
})

test("what lies in the places the sandbox writes is left out, also names that are not UTF-8 (red team, rounds 95 and 96: a session planted one, or 2,400 folders in a worktree's common dir, to fail every root launch)", () => {
  const folders = Array.from({ length: 2400 }, (_, i) => dir(`/opt/main/.git/d${i}`))
  expect(rootOnlyMasks([...folders, file('/etc/shadow')], ['/opt/wt', '/opt/main/.git'])).toEqual({ files: ['/etc/shadow'], dirs: [] })
  expect(rootOnlyMasks([file('/opt/proj/secret'), file(notUtf8('/opt/proj/x')), dir('/opt/proj'), file('/etc/shadow')], ['/opt/proj'])).toEqual({ files: ['/etc/shadow'], dirs: [] })
})

test('a name that is not UTF-8 is masked by its folder; directly in /etc or /opt it fails the launch', () => {
  expect(rootOnlyMasks([file(notUtf8('/opt/app/conf/')), file('/opt/app/conf/ok')], [])).toEqual({ files: [], dirs: ['/opt/app/conf'] })
  expect(rootOnlyMasks([file(Buffer.concat([notUtf8('/opt/app/'), Buffer.from('/k')]))], [])).toEqual({ files: [], dirs: ['/opt/app'] })
  expect(rootOnlyMasks([file(notUtf8('/etc/'))], [])).toEqual({ error: '/etc holds a name that is not UTF-8, which bwrap cannot be given' })
})

test("more than 64 in one folder: the folder is masked whole (bwrap's 9,000 arguments, round 95); not /etc or /opt themselves", () => {
  const many = (folder: string) => Array.from({ length: 65 }, (_, i) => file(`${folder}/f${i}`))
  expect(rootOnlyMasks(many('/opt/app/cache'), [])).toEqual({ files: [], dirs: ['/opt/app/cache'] })
  expect(rootOnlyMasks(many('/etc'), [])).toMatchObject({ dirs: [] })
  expect((rootOnlyMasks(many('/etc'), []) as { files: string[] }).files).toHaveLength(65)
})

test('too many masks in all: each folder of /opt holding some is masked whole (round 96: 2,400 folders failed every root launch; 40,000 entries took 13 s before the work was made linear)', () => {
  const folders = Array.from({ length: 40_000 }, (_, i) => dir(`/opt/other/d${i}`))
  const files = Array.from({ length: 40_000 }, (_, i) => file(`/opt/app${i % 500}/f${i}`))
  const masks = rootOnlyMasks([...folders, ...files, file('/etc/shadow')], [])
  expect(masks).toMatchObject({ files: ['/etc/shadow'] })
  expect((masks as { dirs: string[] }).dirs).toHaveLength(501)
  expect((masks as { dirs: string[] }).dirs).toContain('/opt/other')
})

test('too many masks: a file right in /opt stays a file\'s mask, not a folder\'s (review of round 96: bwrap failed on a tmpfs over a file)', () => {
  const folders = Array.from({ length: 1_001 }, (_, i) => dir(`/opt/other/d${i}`))
  expect(rootOnlyMasks([...folders, file('/opt/license.key')], [])).toEqual({ files: ['/opt/license.key'], dirs: ['/opt/other'] })
})

test('more than 1,000 in /etc itself: the launch fails, said so', () => {
  const many = Array.from({ length: 40 }, (_, d) => Array.from({ length: 30 }, (_, i) => file(`/etc/d${d}/f${i}`))).flat()
  expect(rootOnlyMasks(many, [])).toEqual({ error: 'more than 1000 entries only root may read in /etc, too many to mask one by one' })
})

describe('the search itself', () => {
  const tree = (): string => {
    const root = tempDir('cb-root-only-')
    fs.chmodSync(root, 0o755)
    const at = (name: string | Buffer): Buffer => Buffer.concat([Buffer.from(`${root}/`), Buffer.isBuffer(name) ? name : Buffer.from(name)])
    fs.writeFileSync(at('shared'), 'x', { mode: 0o644 })
    fs.writeFileSync(at('group-readable'), 'x', { mode: 0o640 })
    fs.writeFileSync(at(notUtf8('odd-')), 'x', { mode: 0o640 })
    fs.mkdirSync(at('private'), { mode: 0o750 })
    fs.writeFileSync(at('private/inside'), 'x', { mode: 0o640 })
    for (const name of ['shared', 'group-readable', 'private']) fs.chmodSync(at(name), name === 'shared' ? 0o644 : name === 'private' ? 0o750 : 0o640)
    fs.chmodSync(at(notUtf8('odd-')), 0o640)
    return root
  }
  const names = (search: Awaited<ReturnType<typeof findRootOnly>>): string[] => ('error' in search ? [search.error] : search.found.map(f => `${f.dir ? 'd' : 'f'} ${f.name.toString('latin1')}`).sort())

  test("a find that refuses its expression (busybox's has no -printf) hands the search to the walk in Node, which finds the same, names that are not UTF-8 as bytes (review of round 96: it found nothing, and nothing was masked)", async () => {
    const root = tree()
    const stub = path.join(tempDir('cb-find-stub-'), 'find')
    fs.writeFileSync(stub, '#!/bin/sh\necho "find: unrecognized: -printf" >&2\nexit 1\n', { mode: 0o755 })
    const walked = names(await findRootOnly([root], stub))
    expect(walked).toEqual([`d ${root}/private`, `f ${root}/group-readable`, `f ${root}/odd-\xff\xfe`].sort())
    expect(names(await findRootOnly([root]))).toEqual(walked)
    // A tree's top that others cannot enter is found whole, by both.
    fs.chmodSync(root, 0o750)
    expect(names(await findRootOnly([root], stub))).toEqual([`d ${root}`])
    expect(names(await findRootOnly([root]))).toEqual([`d ${root}`])
  })
})

describe('settling the masks just before the plan', () => {
  const stats = (table: Record<string, { uid?: number; mode?: number } | string>) => (p: string): fs.Stats | string => {
    const entry = table[p]
    if (entry === undefined) return 'ENOENT'
    if (typeof entry === 'string') return entry
    return { uid: entry.uid ?? 0, mode: entry.mode ?? 0o40755 } as fs.Stats
  }

  test("a mask on a way that is root's alone stays; one gone since the search is dropped", () => {
    const stat = stats({ '/etc/shadow': { mode: 0o100640 }, '/etc/ssl': {}, '/etc/ssl/private': { mode: 0o40710 } })
    expect(settleMasks(['/etc/shadow', '/etc/gone.lock'], ['/etc/ssl/private'], stat)).toEqual({ files: ['/etc/shadow'], dirs: ['/etc/ssl/private'] })
  })

  test("a key of root's in another user's folder, or in one its group or others may write, masks that folder whole (red team, round 97: the user moved the key away and back, or buried it too deep, and the mask was dropped)", () => {
    const stat = stats({ '/opt/u': { uid: 1001 }, '/opt/u/conf': { uid: 1001 }, '/opt/u/conf/key': { mode: 0o100600 }, '/opt/shared': { mode: 0o41777 }, '/opt/shared/k': { mode: 0o100600 } })
    expect(settleMasks(['/opt/u/conf/key', '/opt/shared/k'], [], stat)).toEqual({ files: [], dirs: ['/opt/u', '/opt/shared'] })
    // Moved away at the moment of the look: the user's folder is masked all the same.
    expect(settleMasks(['/opt/u/conf/key'], [], stats({ '/opt/u': { uid: 1001 } }))).toEqual({ files: [], dirs: ['/opt/u'] })
  })

  test('a path that cannot be looked at for another reason than being gone (too long) masks the last folder reached; the top itself never', () => {
    expect(settleMasks(['/opt/app/deep/key'], [], stats({ '/opt/app': {}, '/opt/app/deep': 'ENAMETOOLONG' }))).toEqual({ files: [], dirs: ['/opt/app'] })
    expect(settleMasks(['/opt/deep/key'], [], stats({ '/opt/deep': 'ENAMETOOLONG' }))).toEqual({ error: '/opt itself would have to be hidden (a folder of it could not be looked at, or is another user\'s)' })
  })
})
