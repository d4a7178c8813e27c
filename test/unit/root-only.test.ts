// The masks root's sandbox gets for what the search found in /etc and /opt (host/root-only.ts).
import { expect, test } from 'vitest'
import { rootOnlyMasks } from '../../src/host/root-only.js'

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

test('more than 1,000 in /etc itself: the launch fails, said so', () => {
  const many = Array.from({ length: 40 }, (_, d) => Array.from({ length: 30 }, (_, i) => file(`/etc/d${d}/f${i}`))).flat()
  expect(rootOnlyMasks(many, [])).toEqual({ error: 'more than 1000 entries only root may read in /etc, too many to mask one by one' })
})
