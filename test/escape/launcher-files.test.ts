// claudebox's own files, and the node it runs on, are out of the session's reach: the next
// `claudebox`, in any project, runs them on the host (red team, round 99: a session in a project
// holding the checkout claudebox ran from appended code to its bin/claudebox.js).
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { HAVE_BWRAP, makeRepo, makeWorld, REPO, tempDir, type World } from '../helpers/cli.js'

/** A copy of the built package (bin/, dist/, package.json) in `dir`; its bin/claudebox.js. */
function copyPackage(dir: string): string {
  for (const part of ['bin', 'dist', 'package.json']) fs.cpSync(path.join(REPO, part), path.join(dir, part), { recursive: true })
  return path.join(dir, 'bin/claudebox.js')
}

/** That claudebox run with `/bin/sh -c script` as Claude, from `cwd`. */
async function run(world: World, bin: string, cwd: string, args: readonly string[], script: string, env: Record<string, string> = {}): Promise<{ code: number | undefined; out: string; err: string }> {
  const r = await execa(process.execPath, [bin, ...args, '--', '-c', script], { cwd, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', ...env }, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 })
  return { code: r.exitCode, out: String(r.stdout).trim(), err: String(r.stderr) }
}

describe.skipIf(!HAVE_BWRAP)("claudebox's own installation", () => {
  test('in the project (a checkout run as node bin/claudebox.js): refused (125) before anything runs, the launcher unchanged; --allow-dangerous-root starts it and says so', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const bin = copyPackage(path.join(project, 'tools/claudebox'))
    const before = fs.readFileSync(bin, 'utf8')
    const plant = `echo "process.stderr.write('PLANTED')" >> ${bin}; echo RAN`
    const refused = await run(world, bin, project, [], plant)
    expect(refused.code).toBe(125)
    expect(refused.out).toBe('')
    expect(refused.err).toContain(`refusing to start: ${bin}, which runs claudebox itself, lies in ${project}, which the session may write`)
    expect(fs.readFileSync(bin, 'utf8')).toBe(before)
    const opted = await run(world, bin, project, ['--allow-dangerous-root'], 'echo RAN')
    expect(opted.code).toBe(0)
    expect(opted.out).toBe('RAN')
    expect(opted.err).toContain(`--allow-dangerous-root: ${bin}, which runs claudebox itself`)
  })

  test('reached through a link in the project, bound writable with --bind, or node found on PATH in the project: each refused (125); a read-only bind of it and a project beside it start', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const tools = tempDir('cb-tools-')
    const bin = copyPackage(path.join(tools, 'claudebox'))
    fs.mkdirSync(path.join(project, 'bin'))
    const link = path.join(project, 'bin/claudebox')
    fs.symlinkSync(bin, link)
    const viaLink = await run(world, link, project, [], 'echo RAN')
    expect(viaLink.code).toBe(125)
    expect(viaLink.err).toContain(`refusing to start: ${link}, which runs claudebox itself`)
    const bound = await run(world, bin, project, ['--bind', tools], 'echo RAN')
    expect(bound.code).toBe(125)
    expect(bound.err).toContain(`lies in ${tools}, which the session may write`)
    fs.symlinkSync(process.execPath, path.join(project, 'bin/node'))
    const node = await run(world, bin, project, [], 'echo RAN', { PATH: `${path.join(project, 'bin')}:${world.env['PATH'] ?? ''}` })
    expect(node.code).toBe(125)
    expect(node.err).toContain(`refusing to start: ${path.join(project, 'bin/node')}, which runs claudebox itself`)
    fs.rmSync(path.join(project, 'bin'), { recursive: true })
    for (const args of [['--ro-bind', tools], []]) {
      const fine = await run(world, bin, project, args, 'echo RAN')
      expect(fine.err).not.toContain('refusing')
      expect(fine.out).toBe('RAN')
    }
  })
})
