// bin/claudebox.js runs the launch bundle from V8's code cache in $CLAUDEBOX_HOME/cache: made by
// the first launch, used by the next, made anew when V8 refuses it, never read or written
// through a symlink, not written by a dry run or with CLAUDEBOX_CODE_CACHE=0.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld, type World } from '../helpers/cli.js'

/** The code caches in the cache folder (beside them: git-configs.json, what git read in each config). */
const caches = (world: World): string[] => {
  const dir = path.join(world.claudeboxHome, 'cache')
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter(name => name.startsWith('main-')).map(name => path.join(dir, name)) : []
}

describe.skipIf(!HAVE_BWRAP)('the code cache of the launch bundle', () => {
  test('made by the first launch (0600, one file), used as it is by the next', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const run = () => claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect((await run()).stdout).toBe('RAN')
    const [file, ...more] = caches(world)
    expect(more).toEqual([])
    expect(path.basename(file ?? '')).toMatch(new RegExp(`^main-\\d+-\\d+-\\d+-${process.version.replace(/\./g, '\\.')}\\.v8$`))
    const before = fs.statSync(file ?? '')
    expect(before.mode & 0o777).toBe(0o600)
    expect(before.size).toBeGreaterThan(10_000)
    expect((await run()).stdout).toBe('RAN')
    expect(fs.statSync(file ?? '').mtimeMs).toBe(before.mtimeMs)
  })

  test('a cache V8 refuses (garbage) is made anew; a symlink in its place is replaced, never followed', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const run = () => claudebox(world, ['--version'], { cwd: project })
    // The first launch makes the claudebox home (a --version alone never creates it) and the cache.
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).exitCode).toBe(0)
    const [file] = caches(world) as [string]
    fs.writeFileSync(file, Buffer.alloc(4096, 7))
    expect((await run()).stdout).toBe('claudebox 0.1.0')
    expect(fs.readFileSync(file).subarray(0, 16)).not.toEqual(Buffer.alloc(16, 7))
    const target = path.join(world.home, 'precious')
    fs.writeFileSync(target, 'keep me')
    fs.rmSync(file)
    fs.symlinkSync(target, file)
    expect((await run()).stdout).toBe('claudebox 0.1.0')
    expect(fs.readFileSync(target, 'utf8')).toBe('keep me')
    expect(fs.lstatSync(file).isFile()).toBe(true)
  })

  test("a temp file a failed write left (a full disk) is removed by the next write, not kept filling the disk", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    const dir = path.join(world.claudeboxHome, 'cache')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `main-1-2-3-${process.version}.v8.4242.tmp`), 'partial')
    expect((await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).stdout).toBe('RAN')
    expect(caches(world).map(f => path.basename(f))).toEqual([expect.stringMatching(/\.v8$/)])
  })

  test('a dry run and CLAUDEBOX_CODE_CACHE=0 write none', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'p')
    expect((await claudebox(world, ['--dry-run'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).exitCode).toBe(0)
    expect(caches(world)).toEqual([])
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', CLAUDEBOX_CODE_CACHE: '0' } })).exitCode).toBe(0)
    expect(caches(world)).toEqual([])
  })
})
