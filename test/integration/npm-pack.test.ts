// npm packaging: the tarball holds only what is needed, and `npm install -g` of it on a clean
// prefix gives a working claudebox (no runtime dependencies: they are bundled into dist/).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { HAVE_BWRAP, makeWorld, REPO, tempDir } from '../helpers/cli.js'

/** The bwrap on PATH, as a user's shell would find it. */
function bwrapPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim()
  } catch {
    return '/usr/bin/bwrap'
  }
}

describe('npm package', () => {
  test('npm pack: bin, built code, README and licence only; npm install -g gives a working claudebox', async () => {
    // `npm test` builds first; packing without dist/ would test nothing.
    expect(fs.existsSync(path.join(REPO, 'dist/main.cjs')), 'dist/main.cjs missing: run `npm run build`').toBe(true)
    const out = tempDir('cb-pack-')
    const npmEnv = { ...process.env, npm_config_cache: path.join(out, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' }
    // --ignore-scripts: the tests run on the tree `npm test` just built (prepack would rebuild it).
    const pack = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: REPO, env: npmEnv })
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[]
    const files = (info?.files ?? []).map(f => f.path).sort()
    expect(files.filter(f => !f.startsWith('dist/'))).toEqual(['LICENSE', 'README.md', 'bin/claudebox.js', 'bin/package.json', 'package.json'])
    expect(files).toContain('dist/main.cjs')
    expect(files.some(f => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('scripts/'))).toBe(false)

    const prefix = path.join(out, 'prefix')
    await execa('npm', ['install', '-g', '--offline', '--prefix', prefix, path.join(out, info?.filename ?? '')], { env: npmEnv })
    const installed = path.join(prefix, 'bin/claudebox')
    const version = await execa(installed, ['--version'], { env: { PATH: process.env['PATH'] ?? '' } })
    const { version: expected } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }
    expect(version.stdout).toBe(`claudebox ${expected}`)

    if (!HAVE_BWRAP) return
    const world = makeWorld()
    const project = path.join(world.home, 'project')
    fs.mkdirSync(project)
    const bwrap = bwrapPath()
    const dry = await execa(installed, ['--dry-run'], {
      cwd: project,
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/true', CLAUDEBOX_BWRAP: bwrap },
      extendEnv: false,
    })
    // A shell script that runs the bwrap given in CLAUDEBOX_BWRAP, on this project.
    expect(dry.stdout.split('\n').some(line => line.split(' ').includes(bwrap))).toBe(true)
    expect(dry.stdout).toContain('--unshare-all')
    expect(dry.stdout).toContain(`--bind ${project} ${project}`)
  })
})
