// host/host-env.ts: what a program claudebox runs on the host inherits, and where its own programs
// may come from: nothing that leads into a folder the sandbox writes (red team, round 91).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { hostProgramEnv, leadsInto, safePath } from '../../src/host/host-env.js'
import { tempDir } from '../helpers/temp.js'

describe('the environment of a program claudebox runs on the host', () => {
  test('an activated virtualenv, a PYTHONPATH or NODE_OPTIONS into the project, and OLDPWD are left out; the rest is kept', () => {
    const root = tempDir()
    const project = path.join(root, 'p')
    fs.mkdirSync(path.join(project, '.venv/bin'), { recursive: true })
    fs.symlinkSync(path.join(project, '.venv/bin'), path.join(root, 'linked-bin'))
    const env = {
      PATH: `${project}/.venv/bin:relative/bin::${root}/linked-bin:/usr/local/bin:/usr/bin`,
      PYTHONPATH: `/opt/lib:${project}/src`,
      VIRTUAL_ENV: `${project}/.venv`,
      NODE_OPTIONS: `--require ${project}/hook.js`,
      OLDPWD: '/somewhere',
      VAULT_ADDR: 'https://vault.example',
      HOME: '/home/u',
    }
    expect(hostProgramEnv(env, [project], '/home/u')).toEqual({ PATH: '/usr/local/bin:/usr/bin', VAULT_ADDR: 'https://vault.example', HOME: '/home/u', PWD: '/home/u' })
  })

  test('leadsInto follows links; safePath keeps absolute entries outside', () => {
    const root = tempDir()
    fs.mkdirSync(path.join(root, 'p/bin'), { recursive: true })
    fs.symlinkSync(path.join(root, 'p/bin'), path.join(root, 'bin-link'))
    expect(leadsInto(path.join(root, 'bin-link/bwrap'), [path.join(root, 'p')])).toBe(true)
    expect(leadsInto('/usr/bin/bwrap', [path.join(root, 'p')])).toBe(false)
    expect(safePath(`/usr/bin:${root}/bin-link:.`, [path.join(root, 'p')])).toBe('/usr/bin')
  })

  test('round 106: a link that leads nowhere yet counts by where its text leads, through a chain of them too; a loop ends', () => {
    const root = tempDir()
    const project = path.join(root, 'p')
    fs.mkdirSync(project)
    fs.symlinkSync(path.join(project, 'tools/bin'), path.join(root, 'toolbin'))
    fs.symlinkSync('toolbin', path.join(root, 'toolbin2'))
    fs.symlinkSync('loop-b', path.join(root, 'loop-a'))
    fs.symlinkSync('loop-a', path.join(root, 'loop-b'))
    expect(leadsInto(path.join(root, 'toolbin'), [project])).toBe(true)
    expect(leadsInto(path.join(root, 'toolbin2/volta'), [project])).toBe(true)
    expect(safePath(`${root}/toolbin2:/usr/bin`, [project])).toBe('/usr/bin')
    expect(leadsInto(path.join(root, 'loop-a'), [project])).toBe(true) // a walk that cannot end counts as leading there
  })

  test("round 110: a link before a `..` is followed first, as the kernel walks it: `~/tools/../bin` with `~/tools` a link into the project is the project's bin", () => {
    const root = tempDir()
    const project = path.join(root, 'p')
    fs.mkdirSync(path.join(project, 'sub'), { recursive: true })
    fs.mkdirSync(path.join(project, 'bin'))
    fs.mkdirSync(path.join(root, 'bin'))
    fs.symlinkSync(path.join(project, 'sub'), path.join(root, 'tools'))
    expect(leadsInto(`${root}/tools/../bin`, [project])).toBe(true)
    expect(safePath(`${root}/tools/../bin:${root}/bin`, [project])).toBe(`${root}/bin`)
  })

  test('round 111: a path the session could change later counts: through a link in the project that leads out (it may re-point it), out of a folder of the project by `..`', () => {
    const root = tempDir()
    const project = path.join(root, 'p')
    fs.mkdirSync(path.join(project, 'a/b'), { recursive: true })
    fs.mkdirSync(path.join(root, 'opt/tools-1.2/bin'), { recursive: true })
    fs.symlinkSync(path.join(root, 'opt/tools-1.2'), path.join(project, 'tools'))
    fs.symlinkSync(path.join(project, 'tools'), path.join(root, 'tools'))
    fs.symlinkSync(path.join(project, 'a/b'), path.join(root, 'lib'))
    fs.mkdirSync(path.join(root, 'bin'))
    expect(leadsInto(`${root}/tools/bin`, [project])).toBe(true)
    expect(leadsInto(`${root}/lib/../../../bin`, [project])).toBe(true)
    expect(leadsInto(`${root}/opt/tools-1.2/bin`, [project])).toBe(false)
    expect(leadsInto(`${root}/bin`, [project])).toBe(false)
  })
})

describe("claudebox's own programs on the host", () => {
  test('round 92: getent (for ~user/ in a config) comes from the system, never from a PATH folder a session could write', async () => {
    const { expandHome } = await import('../../src/host/config-commands.js')
    const root = tempDir()
    const marker = path.join(root, 'PLANTED-RAN')
    fs.mkdirSync(path.join(root, 'bin'))
    fs.writeFileSync(path.join(root, 'bin/getent'), `#!/bin/sh\ntouch ${marker}\necho 'nosuchuser92:x:1:1::/planted:/bin/sh'\n`, { mode: 0o755 })
    const saved = process.env['PATH']
    process.env['PATH'] = `${root}/bin:${saved ?? ''}`
    try {
      expect(expandHome('~nosuchuser92/hooks', '/home/u')).toBe('~nosuchuser92/hooks')
    } finally {
      process.env['PATH'] = saved
    }
    expect(fs.existsSync(marker)).toBe(false)
  })
})
