// The HEAD and mode guard (host/head-guard.ts): a HEAD git rejects, or a git dir made unenterable,
// is put back, and only in the git dir the guard began with.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { guardHeads } from '../../src/host/head-guard.js'
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
