// A nested repository's way to its git dirs (src/host/nested-repos.ts wayTimes), and the record's
// vouching for it: the folders a session would have had to put in place for a `.git` to lead
// where it does are timed, those the `.git`'s own folder already lies in are not; a repository is
// vouched for only as it was kept, with the word kept.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { describeNested, nestedRecord, wayTimes } from '../../src/host/nested-repos.js'
import { tempDir } from '../helpers/temp.js'

const timesOf = (...paths: string[]): number[] => paths.flatMap(p => [fs.lstatSync(p).ctimeMs, fs.lstatSync(p).birthtimeMs])
const noConfigured = (): { targets: string[]; problem: undefined } => ({ targets: [], problem: undefined })

/** A project with a/sub/.git, a `gitdir:` file leading to a/.git/modules/dep, a git dir of HEAD and config. */
function submoduleShaped(): { top: string; dotGit: string; gitDir: string } {
  const top = fs.realpathSync(tempDir())
  const gitDir = path.join(top, 'a/.git/modules/dep')
  fs.mkdirSync(gitDir, { recursive: true })
  fs.mkdirSync(path.join(top, 'a/sub'))
  fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(gitDir, 'config'), '[core]\n')
  const dotGit = path.join(top, 'a/sub/.git')
  fs.writeFileSync(dotGit, 'gitdir: ../.git/modules/dep\n')
  return { top, dotGit, gitDir }
}

describe("a nested repository's way to its git dirs", () => {
  test('a gitdir: file: the .git, and each folder from where the paths part down to the git dir; not the folders the .git already lies in', () => {
    const { top, dotGit, gitDir } = submoduleShaped()
    const way = [dotGit, path.join(top, 'a/.git'), path.join(top, 'a/.git/modules'), gitDir]
    expect(wayTimes(dotGit, [gitDir], [top]).sort()).toEqual(timesOf(...way).sort())
  })

  test('a .git folder: itself only; folders outside where a session could write: none', () => {
    const top = fs.realpathSync(tempDir())
    const dotGit = path.join(top, 'lib/.git')
    fs.mkdirSync(dotGit, { recursive: true })
    expect(wayTimes(dotGit, [dotGit], [top])).toEqual(timesOf(dotGit))
    const { dotGit: elsewhere, gitDir } = submoduleShaped()
    expect(wayTimes(elsewhere, [gitDir], [top])).toEqual([])
  })

  test('vouched for only as kept: the same .git (device and inode), what git runs from it (not its HEAD), and the word; an entry of a record from before the word is not', () => {
    const { top, dotGit } = submoduleShaped()
    const file = path.join(top, 'record.json')
    const repo = describeNested(dotGit, path.dirname(dotGit), false, noConfigured)
    const record = nestedRecord(file)
    record.keep(dotGit, repo, true)
    record.keep(path.join(top, 'b/.git'), repo, false)
    record.save()
    const again = nestedRecord(file)
    expect(again.vouchedFor(dotGit, repo)).toBe(true)
    expect(again.vouchedFor(path.join(top, 'b/.git'), repo)).toBe(false)
    expect(again.vouchedFor(dotGit, { ...repo, digest: 'other' })).toBe(true) // a HEAD of another branch runs nothing
    expect(again.vouchedFor(dotGit, { ...repo, runsDigest: 'other' })).toBe(false)
    fs.renameSync(dotGit, `${dotGit}.old`)
    fs.copyFileSync(`${dotGit}.old`, dotGit)
    expect(again.vouchedFor(dotGit, repo)).toBe(false)
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>
    fs.writeFileSync(file, JSON.stringify({ [`${dotGit}.old`]: (kept[dotGit] ?? '').split(' ').slice(0, 2).join(' ') }))
    expect(nestedRecord(file).vouchedFor(`${dotGit}.old`, repo)).toBe(false)
  })
})
