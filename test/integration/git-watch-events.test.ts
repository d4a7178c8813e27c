// The git watch's reaction to inotify events, in this process (no sandbox): what a session makes
// and removes again between two turns of the launcher's event loop leaves a report (red team, round
// 84: a plant held for a few milliseconds and removed before the session's end left none).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { startGitWatch } from '../../src/host/git-watch.js'
import type { GitWatchSpec } from '../../src/types.js'

const roots: string[] = []
afterEach(() => roots.splice(0).forEach(root => fs.rmSync(root, { recursive: true, force: true })))

function folder(): { top: string; spec: GitWatchSpec } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-watch-'))
  roots.push(root)
  const top = path.join(root, 'plain')
  fs.mkdirSync(top)
  const spec: GitWatchSpec = { forbidden: [path.join(top, '.git'), path.join(top, 'HEAD')], placeholders: [], headPlaceholders: [], links: [], gitDirs: [], workTrees: [top], ways: [], home: root, quarantineDir: path.join(root, 'quarantine'), instance: path.join(root, 'instance') }
  return { top, spec }
}

describe('the git watch during a session', () => {
  test('a forbidden name made and removed before the watch could look is reported at the end', async () => {
    const { top, spec } = folder()
    const watch = startGitWatch(spec)
    fs.mkdirSync(path.join(top, '.git'))
    fs.rmdirSync(path.join(top, '.git'))
    await sleep(100)
    const warnings = watch.finish()
    expect(warnings.join('\n')).toMatch(/made, and removed again before the launcher could move them aside[^\n]*plain\/\.git/)
  })

  test('one moved aside is reported as moved only, and nothing at all when nothing was made', async () => {
    const { top, spec } = folder()
    const watch = startGitWatch(spec)
    fs.writeFileSync(path.join(top, 'HEAD'), 'ref: refs/heads/main\n')
    await sleep(300)
    expect(fs.existsSync(path.join(top, 'HEAD'))).toBe(false)
    const warnings = watch.finish().join('\n')
    expect(warnings).toMatch(/moved aside[^\n]*plain\/HEAD -> /)
    expect(warnings).not.toMatch(/removed again/)
    const quiet = folder()
    expect(startGitWatch(quiet.spec).finish()).toEqual([])
  })
})
