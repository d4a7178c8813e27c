// The masks root's sandbox gets for what the search found in /etc and /opt (host/root-only.ts).
import { expect, test } from 'vitest'
import { rootOnlyMasks } from '../../src/host/root-only.js'

const file = (name: string | Buffer) => ({ dir: false, name: Buffer.isBuffer(name) ? name : Buffer.from(name) })
const dir = (name: string) => ({ dir: true, name: Buffer.from(name) })
const notUtf8 = (prefix: string) => Buffer.concat([Buffer.from(prefix), Buffer.from([0xff, 0xfe])])

test('files and folders as found; what lies in a masked folder is left to it', () => {
  expect(rootOnlyMasks([file('/etc/shadow'), dir('/etc/ssl/private'), file('/etc/ssl/private/k.pem'), dir('/opt/a'), dir('/opt/a/b')], '/home/ada/p')).toEqual({
    files: ['/etc/shadow'],
    dirs: ['/etc/ssl/private', '/opt/a'],
  })
})

test("the project's own entries are left out, also names that are not UTF-8 (red team, round 95: a session planted one to fail every root launch)", () => {
  expect(rootOnlyMasks([file('/opt/proj/secret'), file(notUtf8('/opt/proj/x')), dir('/opt/proj'), file('/etc/shadow')], '/opt/proj')).toEqual({ files: ['/etc/shadow'], dirs: [] })
})

test('a name that is not UTF-8 is masked by its folder; directly in /etc or /opt it fails the launch', () => {
  expect(rootOnlyMasks([file(notUtf8('/opt/app/conf/')), file('/opt/app/conf/ok')], undefined)).toEqual({ files: [], dirs: ['/opt/app/conf'] })
  expect(rootOnlyMasks([file(Buffer.concat([notUtf8('/opt/app/'), Buffer.from('/k')]))], undefined)).toEqual({ files: [], dirs: ['/opt/app'] })
  expect(rootOnlyMasks([file(notUtf8('/etc/'))], undefined)).toEqual({ error: '/etc holds a name that is not UTF-8, which bwrap cannot be given' })
})

test("more than 64 in one folder: the folder is masked whole (bwrap's 9,000 arguments, round 95); not /etc or /opt themselves", () => {
  const many = (folder: string) => Array.from({ length: 65 }, (_, i) => file(`${folder}/f${i}`))
  expect(rootOnlyMasks(many('/opt/app/cache'), undefined)).toEqual({ files: [], dirs: ['/opt/app/cache'] })
  expect(rootOnlyMasks(many('/etc'), undefined)).toMatchObject({ dirs: [] })
  expect((rootOnlyMasks(many('/etc'), undefined) as { files: string[] }).files).toHaveLength(65)
})
