// When the git run that reads an index at the session's end could not even start (the launcher out
// of descriptors), the index is left as it is, with a warning, rather than moved aside as one git
// cannot read (red team, round 59: the user's staged index was moved aside).
import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { notStarted } from '../../src/host/index-git.js'

const thrown = (run: () => unknown): unknown => {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('it did not fail')
}

describe('a git run that could not start', () => {
  test('out of descriptors or memory: not started, with the reason', () => {
    for (const code of ['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']) expect(notStarted(Object.assign(new Error(code), { code, status: null }))).toBe(code)
  })

  test('git that ran and failed, timed out or wrote too much: it started (the index counts as one git cannot read)', () => {
    expect(notStarted(thrown(() => execFileSync('sh', ['-c', 'exit 128'], { stdio: 'ignore' })))).toBeUndefined()
    expect(notStarted(thrown(() => execFileSync('sleep', ['5'], { timeout: 50, stdio: 'ignore' })))).toBeUndefined()
    expect(notStarted(thrown(() => execFileSync('sh', ['-c', 'head -c 100000 /dev/zero'], { maxBuffer: 10 })))).toBeUndefined()
    expect(notStarted(Object.assign(new Error('x'), { code: 'EMFILE', status: 1 }))).toBeUndefined()
  })
})
