// The HEAD and mode guard (host/head-guard.ts): a HEAD git rejects, or a git dir made unenterable,
// is put back, and only in the git dir the guard began with.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { guardHeads } from '../../src/host/head-guard.js'
import { pinRoots } from '../../src/host/pinned-roots.js'
import { tempDir } from '../helpers/temp.js'

function repo(dir: string): string {
  execFileSync('git', ['init', '-q', '-b', 'main', dir])
  return path.join(dir, '.git')
}

describe('the HEAD guard', () => {
  test('a HEAD git rejects is put back', () => {
    const gitDir = repo(path.join(tempDir(), 'p'))
    const guard = guardHeads([gitDir])
    fs.writeFileSync(path.join(gitDir, 'HEAD'), 'junk\n')
    guard.headsNow()
    expect(fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n')
    expect(guard.restored()).toHaveLength(1)
  })

  test("round 113: nor the HEAD nor the mode of another repository the git dir's path was swapped for (a session of a project holding this one can) is touched", () => {
    const root = tempDir()
    const gitDir = repo(path.join(root, 'r/p'))
    const other = repo(path.join(root, 'v'))
    fs.writeFileSync(path.join(other, 'HEAD'), 'ref: refs/heads/theirs\n')
    const guard = guardHeads([gitDir])
    fs.renameSync(gitDir, path.join(root, 'r/p/git-real'))
    fs.symlinkSync(other, gitDir)
    fs.writeFileSync(path.join(other, 'HEAD'), 'junk\n')
    guard.headsNow()
    expect(fs.readFileSync(path.join(other, 'HEAD'), 'utf8')).toBe('junk\n')
    fs.chmodSync(path.join(other, 'refs'), 0o000)
    guard.check()
    expect(fs.statSync(path.join(other, 'refs')).mode & 0o777).toBe(0o000)
    fs.chmodSync(path.join(other, 'refs'), 0o755)
  })
})

describe('the mode guard', () => {
  /** A repository at `dir` whose folders git reads are writable for others (as another user would want them). */
  function wideRepo(dir: string): string {
    const gitDir = repo(dir)
    for (const p of [dir, gitDir, path.join(gitDir, 'refs'), path.join(gitDir, 'objects')]) fs.chmodSync(p, 0o777)
    fs.chmodSync(path.join(gitDir, 'config'), 0o666)
    return gitDir
  }
  const modes = (gitDir: string): number[] => [path.dirname(gitDir), gitDir, path.join(gitDir, 'refs'), path.join(gitDir, 'objects'), path.join(gitDir, 'config')].map(p => fs.statSync(p).mode & 0o777)

  test("takes back the write access for others a session gave the project's folders and git dir", () => {
    const gitDir = wideRepo(path.join(tempDir(), 'p'))
    const guard = guardHeads([gitDir], [path.dirname(gitDir)])
    guard.check(true)
    expect(modes(gitDir)).toEqual([0o755, 0o755, 0o755, 0o755, 0o644])
  })

  test("round 114: a folder above the project swapped for a link to another repository of the user's (a session of a project holding this one can) leaves that repository's modes as they are", () => {
    const root = tempDir()
    const gitDir = repo(path.join(root, 'r/p'))
    const theirs = wideRepo(path.join(root, 'v/p'))
    const guard = guardHeads([gitDir], [path.dirname(gitDir)], [path.join(root, 'r')])
    fs.renameSync(path.join(root, 'r'), path.join(root, 'r-real'))
    fs.symlinkSync(path.join(root, 'v'), path.join(root, 'r'))
    guard.check(true)
    expect(modes(theirs)).toEqual([0o777, 0o777, 0o777, 0o777, 0o666])
  })

  test('round 114: the checks where a moved project went act only in the folder the project was, whatever the new path leads to when they begin', () => {
    const root = tempDir()
    const gitDir = wideRepo(path.join(root, 'p'))
    const theirs = wideRepo(path.join(root, 'v'))
    const held = fs.statSync(path.dirname(gitDir))
    fs.symlinkSync(root, path.join(root, 'above'))
    const newPath = path.join(root, 'above/v')
    guardHeads([path.join(newPath, '.git')], [newPath], [], () => {}, pinRoots(new Map([[newPath, `${held.dev}:${held.ino}`]]))).check(true)
    expect(modes(theirs)).toEqual([0o777, 0o777, 0o777, 0o777, 0o666])
  })
})
