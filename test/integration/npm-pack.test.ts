// npm packaging: the tarball holds only what is needed, and `npm install -g` of it on a clean
// prefix gives a working claudebox (no runtime dependencies: they are bundled into dist/).
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { HAVE_BWRAP, makeWorld, REPO, tempDir } from '../helpers/cli.js'

describe('npm package', () => {
  test('npm pack: bin, built code, README and licence only; npm install -g gives a working claudebox', async () => {
    const out = tempDir('cb-pack-')
    const npmEnv = { ...process.env, npm_config_cache: path.join(out, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' }
    // --ignore-scripts: the tests run on the tree `npm test` just built (prepack would rebuild it).
    const pack = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: REPO, env: npmEnv })
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[]
    const files = (info?.files ?? []).map(f => f.path).sort()
    expect(files.filter(f => !f.startsWith('dist/'))).toEqual(['LICENSE', 'README.md', 'bin/claudebox.js', 'package.json'])
    expect(files).toContain('dist/main.js')
    expect(files.some(f => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('scripts/'))).toBe(false)

    const prefix = path.join(out, 'prefix')
    await execa('npm', ['install', '-g', '--offline', '--prefix', prefix, path.join(out, info?.filename ?? '')], { env: npmEnv })
    const installed = path.join(prefix, 'bin/claudebox')
    const version = await execa(installed, ['--version'], { env: { PATH: process.env['PATH'] ?? '' } })
    expect(version.stdout).toMatch(/^claudebox \d+\.\d+\.\d+$/)

    if (!HAVE_BWRAP) return
    const world = makeWorld()
    const project = path.join(world.home, 'project')
    fs.mkdirSync(project)
    const dry = await execa(installed, ['--dry-run'], { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/true' }, extendEnv: false })
    expect(dry.stdout).toMatch(/bwrap \\\n {2}--unshare-all/)
    expect(dry.stdout).toContain(`--bind ${project} ${project}`)
  })
})
