// The strategy of a rebase or cherry-pick in progress, judged at a session's end: git runs any name
// but its own strategies as the program git-merge-<name>, from the work tree with a slash, or from
// an empty or relative PATH entry without one (red team, rounds 37 and 40).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { checkInProgress } from '../../src/host/in-progress.js'
import { tempDir } from '../helpers/temp.js'

function judged(file: string, text: string): boolean {
  const gitDir = tempDir()
  fs.mkdirSync(path.join(gitDir, path.dirname(file)), { recursive: true })
  fs.writeFileSync(path.join(gitDir, file), text)
  const moved: string[] = []
  checkInProgress([gitDir], p => moved.push(p))
  return moved.includes(path.join(gitDir, file))
}

describe('strategies of an operation in progress', () => {
  test("git's own strategies stay; any other name, a path, quotes, a bare carriage return (round 41) or a file git cannot read is moved aside", () => {
    for (const own of ['ort', 'recursive\n', 'ours']) expect(judged('rebase-merge/strategy', own)).toBe(false)
    for (const other of ['evil', '/../tools/x', 'ort/..', 'ort ', 'ort\r', ' ort']) expect(judged('rebase-merge/strategy', other)).toBe(true)
    expect(judged('sequencer/opts', '[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n')).toBe(false)
    expect(judged('sequencer/opts', '[options]\n\tno-commit = true\n')).toBe(false)
    // Read by git itself: a continuation is joined as git joins it (o\ + rt is ort).
    expect(judged('sequencer/opts', '[options]\n\tstrategy = o\\\nrt\n')).toBe(false)
    for (const other of ['[options]\n\tstrategy = evil\n', '[options] strategy = evil\n', '[options]\n\tStrategy = "ev"il\n', '[options]\n\tstrategy = ort\r/../p\n', '[options\n']) {
      expect(judged('sequencer/opts', other), other).toBe(true)
    }
  })
})
