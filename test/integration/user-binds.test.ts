// The user's --bind against the project's protections, with the real bwrap and a real repository:
// a writable bind is mounted after the git guard, so one of a folder holding the project would
// cover .git/hooks; it is refused before anything runs, and an accepted launch keeps hooks read-only.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld } from '../helpers/cli.js'

describe.skipIf(!HAVE_BWRAP)('--bind over the project', () => {
  test('--bind of a folder holding the project exits 2 and runs nothing; --ro-bind of it runs, and .git/hooks stays read-only inside', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const holder = path.dirname(project)
    const beside = path.join(holder, 'data')
    fs.mkdirSync(beside)
    const hooks = path.join(project, '.git/hooks')
    // Both land in folders the sandbox writes when it runs: the first would show on the host.
    const script = `touch ${beside}/RAN; echo ran; echo evil > ${hooks}/x 2>/dev/null && echo hooks-writable || echo hooks-readonly; echo evil > ${hooks}/pre-commit 2>/dev/null && echo pre-commit-writable || echo pre-commit-readonly`
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }

    const refused = await claudebox(world, ['--bind', holder, '--', '-c', script], { cwd: project, env })
    expect(refused.exitCode, refused.stderr).toBe(2)
    expect(refused.stderr).toContain(`--bind ${holder} would make the project's git config and hooks writable inside the sandbox`)
    expect(refused.stderr).toContain(`it holds the project's git dir ${project}/.git`)
    expect(refused.stdout).toBe('')
    expect(fs.existsSync(path.join(beside, 'RAN'))).toBe(false)

    const accepted = await claudebox(world, ['--ro-bind', holder, '--bind', beside, '--', '-c', script], { cwd: project, env })
    expect(accepted.exitCode, accepted.stderr).toBe(0)
    expect(accepted.stdout.split('\n')).toEqual(['ran', 'hooks-readonly', 'pre-commit-readonly'])
    expect(fs.existsSync(path.join(beside, 'RAN'))).toBe(true)
    expect(fs.existsSync(path.join(hooks, 'x'))).toBe(false)
    expect(fs.existsSync(path.join(hooks, 'pre-commit'))).toBe(false)
  })
})
