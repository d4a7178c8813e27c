// A project renamed or moved on the host while its session runs: the git watch and the checks after
// the session name everything by path, so they must follow the folder to where it went, or what the
// session left in git there goes unchecked (the user's next git checkout . there writes it).
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP } from '../helpers/cli.js'
import { plainFolder, scene, type Scene } from '../helpers/git-scene.js'

/** Rewrites names in an index file (and its checksum): entries git would refuse to add. */
const renameInIndex = (index: string, from: string, to: string): string => `python3 -c "import hashlib, os; f='${index}'; d=open(f,'rb').read()[:-20]; d=d.replace(b'${from}\\0',b'${to}\\0'); open(f+'.lock','wb').write(d+hashlib.sha1(d).digest()); os.replace(f+'.lock',f)"`

/** Lines that wait (at most 20 s) for the host to have moved the project: it leaves `moved` in it. */
const AFTER_THE_MOVE = 'touch ready; i=0; while [ ! -e moved ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done'

/**
 * Runs `before` inside a session of `project`, then the host renames the project to `to` (and does
 * `then`), then `after` runs: the watch ends the session within moments of the move.
 */
async function movedDuring(s: Scene, project: string, to: string, { before = 'true', after = 'true', then = (): void => {} }: { before?: string; after?: string; then?: () => void }): Promise<{ out: string; err: string; code: number | undefined }> {
  const run = claudebox(s.world, ['--', '-c', `(${before}); ${AFTER_THE_MOVE}; ${after}`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
  for (let i = 0; i < 300 && !fs.existsSync(path.join(project, 'ready')); i++) await new Promise(resolve => setTimeout(resolve, 100))
  expect(fs.existsSync(path.join(project, 'ready')), 'the session started').toBe(true)
  fs.renameSync(project, to)
  fs.writeFileSync(path.join(to, 'moved'), '')
  then()
  const r = await run
  return { out: r.stdout.trim(), err: r.stderr, code: r.exitCode }
}

describe.skipIf(!HAVE_BWRAP)('a project moved while its session runs', () => {
  test("the checks after the session are made where it went: a nested repository's index the session poisoned is moved aside there, and git checkout . writes nothing into its .git", async () => {
    const s = scene()
    const project = plainFolder(s)
    const vendored = path.join(project, 'vendored')
    execFileSync('git', ['init', '-q', vendored])
    const to = `${project}-renamed`
    const poison = [
      'cd vendored',
      `b=$(printf '#!/bin/sh\\ntouch ${s.marker}\\n' | git hash-object -w --stdin)`,
      'git update-index --add --cacheinfo 100755,$b,Xgit/hooks/pre-commit',
      renameInIndex('.git/index', 'Xgit/hooks/pre-commit', '.git/hooks/pre-commit'),
      'echo POISONED',
    ].join(' && ')
    const r = await movedDuring(s, project, to, { before: poison, after: 'sleep 10; echo NOT-ENDED' })
    expect(r.out, r.err).toBe('POISONED')
    expect(r.code).toBe(137)
    expect(r.err).toContain(`that git would write outside the work tree or into a .git folder at your next git checkout or restore; each was moved aside (see above): run git reset there to make it anew from HEAD (what was staged is lost from it, the files stay as they are): ${to}/vendored/.git (.git/hooks/pre-commit)`)
    spawnSync('git', ['checkout', '.'], { cwd: path.join(to, 'vendored'), env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(path.join(to, 'vendored/.git/hooks/pre-commit'))).toBe(false)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a repository moved under its session: the session is ended saying so (not that it broke .git), and its placeholders are removed where it went', async () => {
    const s = scene()
    const to = `${s.project}-renamed`
    const r = await movedDuring(s, s.project, to, { after: 'sleep 10; echo NOT-ENDED' })
    expect(r.code).toBe(137)
    expect(r.out).toBe('')
    expect(r.err).toContain(`the project folder ${s.project} was moved to ${to} while the session ran; claudebox guards its git folders by their paths, so the session was ended; the checks after the session were made at ${to}: start claudebox again there`)
    expect(r.err).not.toMatch(/a placeholder claudebox bound|HEAD is one git rejects/)
    expect(fs.existsSync(path.join(to, 'HEAD'))).toBe(false)
    expect(fs.existsSync(path.join(to, '.git/commondir'))).toBe(false)
    expect(execFileSync('git', ['-C', to, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('?? moved\n?? ready\n')
  })

  test("round 107: nothing is done by the old paths once the project moved: a repository the user makes there at once, or a link there to another of theirs, keeps its .git (they were moved into the quarantine, 3 of 3); the session is ended saying where the project went", async () => {
    for (const kind of ['new repository', 'link to another']) {
      const s = scene()
      const project = plainFolder(s)
      const to = `${project}-renamed`
      const other = path.join(s.world.home, 'src/other')
      execFileSync('git', ['init', '-q', other])
      const then = (): void => (kind === 'new repository' ? void execFileSync('git', ['init', '-q', project]) : fs.symlinkSync(other, project))
      const r = await movedDuring(s, project, to, { after: 'sleep 10; echo NOT-ENDED', then })
      expect(r.code, kind).toBe(137)
      expect(r.err).toContain(`the project folder ${project} was moved to ${to} while the session ran`)
      expect(r.err).not.toMatch(/moved aside/)
      expect(fs.statSync(path.join(project, '.git')).isDirectory(), kind).toBe(true)
      expect(fs.statSync(path.join(other, '.git')).isDirectory(), kind).toBe(true)
    }
  })
})
