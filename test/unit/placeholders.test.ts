// The placeholders a launch holds (host/placeholders.ts): removed after the session only where this
// launch held them, whatever their paths lead to by then.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { holdPlaceholders, releasePlaceholders, type Placeholders } from '../../src/host/placeholders.js'
import { tempDir } from '../helpers/temp.js'

/** A project at `top` with a git dir, and the placeholders a launch makes in it (a commondir holding ./, an empty HEAD folder). */
function project(top: string): Placeholders {
  fs.mkdirSync(path.join(top, '.git'), { recursive: true })
  return { files: [path.join(top, '.git/commondir')], dirs: [path.join(top, 'HEAD')] }
}
const make = (held: Placeholders) => (): void => {
  for (const file of held.files) fs.writeFileSync(file, './\n')
  for (const dir of held.dirs) fs.mkdirSync(dir)
}
const present = (held: Placeholders): boolean[] => [...held.files, ...held.dirs].map(p => fs.existsSync(p))

describe('the placeholders', () => {
  test('made for the session, removed after it; where the project was moved meanwhile, there', () => {
    const root = tempDir()
    const home = path.join(root, 'cb')
    const held = project(path.join(root, 'p'))
    const kept = holdPlaceholders(home, held, make(held))
    expect(present(held)).toEqual([true, true])
    fs.renameSync(path.join(root, 'p'), path.join(root, 'q'))
    releasePlaceholders(home, held, kept, p => p.replace(`${root}/p`, `${root}/q`))
    expect(present(project(path.join(root, 'q')))).toEqual([false, false])
  })

  test("round 116: a folder above the project swapped for a link to another repository of the user's whose session holds its own: those are left as they are", () => {
    const root = tempDir()
    const home = path.join(root, 'cb')
    const held = project(path.join(root, 'outer/a/inner'))
    const theirs = project(path.join(root, 'v/inner'))
    make(theirs)()
    const kept = holdPlaceholders(home, held, make(held))
    fs.renameSync(path.join(root, 'outer/a'), path.join(root, 'outer/a-real'))
    fs.symlinkSync(path.join(root, 'v'), path.join(root, 'outer/a'))
    releasePlaceholders(home, held, kept)
    expect(present(theirs)).toEqual([true, true])
  })

  test("round 117: a placeholder whose folder is reached through a symlink (a submodule's path the session made a link to another repository whose session holds its own) refuses the launch before anything is made, and that repository's placeholders are left", () => {
    const root = fs.realpathSync(tempDir())
    const home = path.join(root, 'cb')
    const theirs = project(path.join(root, 'vic'))
    make(theirs)()
    fs.mkdirSync(path.join(root, 'p'))
    fs.symlinkSync('../vic', path.join(root, 'p/evl'))
    const held = { files: [path.join(root, 'p/evl/.git/commondir')], dirs: [path.join(root, 'p/evl/HEAD')] }
    let made = false
    expect(() => holdPlaceholders(home, held, () => (made = true))).toThrow(`${root}/p/evl/.git leads to ${root}/vic/.git, where claudebox makes a placeholder`)
    expect(made).toBe(false)
    releasePlaceholders(home, held, new Map())
    expect(present(theirs)).toEqual([true, true])
  })
})
