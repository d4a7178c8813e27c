// The check of the sandbox's mount table before the go (bind-fds.ts mountsProblem), on mountinfo
// lines as the kernel writes them, escapes included; and the look before the launch's writes.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { mountsProblem, placesStillReal } from '../../src/host/bind-fds.js'
import { tempDir } from '../helpers/temp.js'

const line = (point: string, options: string): string => `36 35 98:0 /x ${point} ${options} master:1 - ext4 /dev/root rw`

describe('mountsProblem', () => {
  test('each pinned bind at its target, read-only where planned: no problem', () => {
    const info = [line('/', 'rw'), line('/p', 'rw,nosuid'), line('/p/.git/config', 'ro,nosuid')].join('\n')
    expect(mountsProblem(info, [{ target: '/p', readOnly: false }, { target: '/p/.git/config', readOnly: true }])).toBeUndefined()
  })

  test('a missing mount, or a writable one where read-only was planned', () => {
    const info = [line('/p', 'rw'), line('/p/.git/config', 'rw')].join('\n')
    expect(mountsProblem(info, [{ target: '/p/.git/hooks', readOnly: true }])).toBe('/p/.git/hooks is not mounted where planned')
    expect(mountsProblem(info, [{ target: '/p/.git/config', readOnly: true }])).toBe('/p/.git/config is mounted writable where it should be read-only')
  })

  test('the uppermost mount at a point decides (a writable one over a read-only one is writable)', () => {
    const info = [line('/p/a', 'ro'), line('/p/a', 'rw')].join('\n')
    expect(mountsProblem(info, [{ target: '/p/a', readOnly: true }])).toMatch(/mounted writable/)
  })

  test("paths with a space, a tab, a newline, a backslash and '\\101' in their names, as the kernel escapes them", () => {
    const info = [line('/p/my\\040dir/a\\011b', 'ro'), line('/p/x\\012y', 'ro'), line('/p/back\\134101', 'ro'), line('/p/é', 'ro')].join('\n')
    const pinned = ['/p/my dir/a\tb', '/p/x\ny', '/p/back\\101', '/p/é'].map(target => ({ target, readOnly: true }))
    expect(mountsProblem(info, pinned)).toBeUndefined()
  })
})

describe('placesStillReal', () => {
  test("round 115: a writable place a folder above which is now a link (to another repository of the user's) refuses the launch before anything is written there; one not made yet does not", () => {
    const dir = fs.realpathSync(tempDir())
    const project = path.join(dir, 'outer/a/inner')
    fs.mkdirSync(project, { recursive: true })
    fs.mkdirSync(path.join(dir, 'v/inner'), { recursive: true })
    expect(() => placesStillReal([project, path.join(dir, 'state/not-yet')])).not.toThrow()
    fs.renameSync(path.join(dir, 'outer/a'), path.join(dir, 'outer/a-real'))
    fs.symlinkSync(path.join(dir, 'v'), path.join(dir, 'outer/a'))
    expect(() => placesStillReal([project])).toThrow(`${project} changed while claudebox started (it now leads to ${path.join(dir, 'v/inner')}); nothing was written, rerun`)
  })
})
