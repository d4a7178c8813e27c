// Temporary directories for tests, removed when they are done: one per test (tempDir), or one for
// the tests of a describe block or file (suiteTempDir, for what a beforeAll sets up).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, onTestFinished } from 'vitest'

function makeTempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
}

/** A fresh temporary directory, resolved, removed after the test (unless cleanup is false). */
export function tempDir(prefix = 'cb-', cleanup = true): string {
  const dir = makeTempDir(prefix)
  if (cleanup) onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A temporary directory for the tests of the enclosing describe block (or file): made before the
 * first (call this before the beforeAll that uses it), removed after the last. The function returns
 * its path, resolved; call it in a hook or a test.
 */
export function suiteTempDir(prefix = 'cb-'): () => string {
  let dir: string | undefined
  beforeAll(() => {
    dir = makeTempDir(prefix)
  })
  afterAll(() => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })
  return () => {
    if (dir === undefined) throw new Error('suiteTempDir: the directory exists only in hooks and tests')
    return dir
  }
}
