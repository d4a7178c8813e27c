// The git watch's reaction to inotify events, in this process (no sandbox): what a session makes
// and removes again between two turns of the launcher's event loop leaves a report (red team, round
// 84: a plant held for a few milliseconds and removed before the session's end left none).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { execFileSync } from 'node:child_process'
import { startGitWatch } from '../../src/host/git-watch.js'
import { identitiesPinned } from '../../src/host/pinned-roots.js'
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

describe('the folders the watch acts in', () => {
  /** A repository at `dir` whose folders and files git reads are writable for others, and a NOTES.md. */
  function wideRepo(dir: string): string[] {
    execFileSync('git', ['init', '-q', dir])
    fs.writeFileSync(path.join(dir, 'NOTES.md'), 'theirs\n')
    const paths = [dir, path.join(dir, '.git'), path.join(dir, '.git/refs'), path.join(dir, '.git/config')]
    for (const p of paths) fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o777 : 0o666)
    return paths
  }
  const modes = (paths: string[]): number[] => paths.map(p => fs.statSync(p).mode & 0o777)

  test("round 115: a folder above the project swapped for a link between bwrap's spawn and the watch's start (a session of a project holding it can): the watch acts only in the folders bwrap was given, and follows the project to where it went", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-watch-'))
    roots.push(root)
    const top = path.join(root, 'a/p')
    execFileSync('git', ['init', '-q', top])
    const theirs = wideRepo(path.join(root, 'v/p'))
    const spec: GitWatchSpec = { forbidden: [path.join(top, 'NOTES.md')], placeholders: [], headPlaceholders: [], links: [], gitDirs: [path.join(top, '.git')], workTrees: [top], ways: [], home: root, quarantineDir: path.join(root, 'quarantine'), instance: path.join(root, 'instance') }
    // What bwrap is given (bind-fds.ts pinBinds), and the top reopened from it (run.ts).
    const pinned = new Map([top, path.join(top, '.git')].map(p => [p, fs.openSync(p, 0o10000000)] as const))
    const given = { identities: identitiesPinned([top, path.join(top, '.git')], pinned), top: fs.openSync(`/proc/self/fd/${pinned.get(top)}`, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY) }
    pinned.forEach(fd => fs.closeSync(fd))
    fs.renameSync(path.join(root, 'a'), path.join(root, 'a-real'))
    fs.symlinkSync(path.join(root, 'v'), path.join(root, 'a'))
    const watch = startGitWatch(spec, () => {}, Date.now(), given)
    await sleep(300)
    watch.finish()
    expect(modes(theirs)).toEqual([0o777, 0o777, 0o777, 0o666])
    expect(fs.readFileSync(path.join(root, 'v/p/NOTES.md'), 'utf8')).toBe('theirs\n')
    expect(watch.moved()?.to).toBe(path.join(root, 'a-real/p'))
  })
})
