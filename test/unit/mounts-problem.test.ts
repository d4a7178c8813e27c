// The check of the sandbox's mount table before the go (bind-fds.ts mountsProblem), on mountinfo
// lines as the kernel writes them, escapes included; and the places the launch's writes go through.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { closePlaces, mountsProblem, pinPlaces, placePath } from '../../src/host/bind-fds.js'
import { applyFiles, applyMkdirs } from '../../src/state/apply.js'
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

describe('pinPlaces and placePath', () => {
  test("round 115: a writable place a folder above which is now a link (to another repository of the user's) refuses the launch before anything is written there; one not made yet does not", () => {
    const dir = fs.realpathSync(tempDir())
    const project = path.join(dir, 'outer/a/inner')
    fs.mkdirSync(project, { recursive: true })
    fs.mkdirSync(path.join(dir, 'v/inner'), { recursive: true })
    const state = (p: string): boolean => p.startsWith(`${dir}/state/`)
    const pinned = pinPlaces([project, path.join(dir, 'state/not-yet')], state)
    expect([...pinned.keys()]).toEqual([project])
    closePlaces(pinned)
    fs.renameSync(path.join(dir, 'outer/a'), path.join(dir, 'outer/a-real'))
    fs.symlinkSync(path.join(dir, 'v'), path.join(dir, 'outer/a'))
    expect(() => pinPlaces([project], state)).toThrow(`${project} changed while claudebox started (it now leads to ${path.join(dir, 'v/inner')}); nothing was written, rerun`)
  })

  test('round 120: a place the probe saw that is missing at the look (moved away for that moment, a link put there next) refuses the launch; only state folders may be missing', () => {
    const dir = fs.realpathSync(tempDir())
    const project = path.join(dir, 'outer/inner')
    expect(() => pinPlaces([project, path.join(dir, 'state/not-yet')], p => p.startsWith(`${dir}/state/`))).toThrow(`${project} changed while claudebox started (it cannot be opened now); nothing was written, rerun`)
  })

  test("round 118: a swap after the look has the launch's writes fail, not land where the link leads: they go through the place's descriptor", () => {
    const dir = fs.realpathSync(tempDir())
    const project = path.join(dir, 'outer/a/inner')
    fs.mkdirSync(path.join(project, 'sub/.git'), { recursive: true })
    fs.mkdirSync(path.join(dir, 'v/inner/sub/.git'), { recursive: true })
    const pinned = pinPlaces([project], () => false)
    const opened: number[] = []
    try {
      // Through the project's own folder while it is there...
      applyMkdirs([{ path: path.join(project, 'sub/.git/remotes'), mode: 0o755 }], dir, p => placePath(pinned, p, opened))
      expect(fs.statSync(path.join(project, 'sub/.git/remotes')).isDirectory()).toBe(true)
      // ...and, once a folder above it is a link to another repository, in the project still (held), never there.
      fs.renameSync(path.join(dir, 'outer/a'), path.join(dir, 'outer/a-real'))
      fs.symlinkSync(path.join(dir, 'v'), path.join(dir, 'outer/a'))
      applyFiles([{ path: path.join(project, 'sub/.git/commondir'), content: './\n', mode: 0o644, exact: true }], p => placePath(pinned, p, opened))
      expect(fs.readFileSync(path.join(dir, 'outer/a-real/inner/sub/.git/commondir'), 'utf8')).toBe('./\n')
      expect(fs.readdirSync(path.join(dir, 'v/inner/sub/.git'))).toEqual([])
      // A folder on the way swapped for a link within the project: refused, nothing written where it leads.
      fs.renameSync(path.join(dir, 'outer/a-real/inner/sub'), path.join(dir, 'outer/a-real/inner/sub-real'))
      fs.symlinkSync(path.join(dir, 'v/inner/sub'), path.join(dir, 'outer/a-real/inner/sub'))
      expect(() => applyMkdirs([{ path: path.join(project, 'sub/.git/branches'), mode: 0o755 }], dir, p => placePath(pinned, p, opened))).toThrow(/sub\/\.git changed while claudebox started \(a folder on its way is a link or missing now\); nothing was written there, rerun/)
      expect(fs.readdirSync(path.join(dir, 'v/inner/sub/.git'))).toEqual([])
      // What is outside every place goes by its path.
      expect(placePath(pinned, path.join(dir, 'elsewhere/x'), opened)).toBe(path.join(dir, 'elsewhere/x'))
    } finally {
      closePlaces(pinned)
      opened.forEach(fd => fs.closeSync(fd))
    }
  })
})
