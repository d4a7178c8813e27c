// The user's --bind against the project's protections, with the real bwrap and a real repository:
// a writable bind is mounted after the git guard, so one of a folder holding the project would
// cover .git/hooks; it is refused before anything runs, and an accepted launch keeps hooks read-only.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, git, HAVE_BWRAP, makeRepo, makeWorld } from '../helpers/cli.js'
import { hostGit, payload, type Scene } from '../helpers/git-scene.js'

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

  test("a writable --bind of another repository: its git config and hooks stay read-only, its files writable, and the host's git there runs nothing the session wrote", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const other = makeRepo(world.home, 'src/other')
    git(other, 'commit', '-q', '--allow-empty', '-m', 'one')
    const s: Scene = { world, project, marker: path.join(world.root, 'PWNED') }
    const attacks = [
      `cd ${other} && ${payload(s, '.git/config')} 2>/dev/null && echo config-ESCAPED || echo config-blocked`,
      `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${other}/.git/hooks/pre-commit 2>/dev/null && echo hook-ESCAPED || echo hook-blocked`,
      `mv ${other}/.git ${other}/.git-old 2>/dev/null && echo rename-ESCAPED || echo rename-blocked`,
      `mkdir -p ${other}/.vscode; echo '{}' > ${other}/.vscode/tasks.json && echo vscode-created`,
      `echo edit > ${other}/README && echo file-written`,
    ]
    const r = await claudebox(world, ['--bind', other, '--', '-c', attacks.join('; ')], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['config-blocked', 'hook-blocked', 'rename-blocked', 'vscode-created', 'file-written'])
    // As in the project: a host-run file the session creates is reported (read-only once it exists).
    expect(r.stderr).toMatch(/the session changed files that run code outside the sandbox: \S*other\/\.vscode \(created\)/)
    hostGit(other, world)
    expect(fs.existsSync(s.marker)).toBe(false)
    expect(fs.readFileSync(path.join(other, 'README'), 'utf8')).toBe('edit\n')
  })

  test('a writable --bind of a folder that is no repository: a .git made at its top is moved aside; one made below is reported; a git dir is refused (exit 2)', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const data = path.join(world.home, 'data')
    fs.mkdirSync(data)
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    const r = await claudebox(world, ['--bind', data, '--', '-c', `cd ${data} && git init -q . 2>/dev/null; git init -q sub; sleep 0.4; ls -A`], { cwd: project, env })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.split('\n')).not.toContain('.git')
    expect(r.stderr).toMatch(/moved aside.*data\/\.git -> \S*\/quarantine\/[0-9a-f]{16}\/\.git\.claudebox-quarantine-/)
    expect(r.stderr).toMatch(/nested git repositories.*data\/sub\/\.git/)
    const bare = path.join(world.home, 'mirror.git')
    git(world.home, 'init', '-q', '--bare', bare)
    for (const dir of [bare, path.join(bare, 'hooks'), path.join(project, '.git/objects')]) {
      const refused = await claudebox(world, ['--bind', dir, '--', '-c', 'echo RAN'], { cwd: project, env })
      expect(refused.exitCode, refused.stderr).toBe(2)
      expect(refused.stderr).toMatch(/would make (the git dir \S*mirror\.git|the project's git config and hooks) writable inside the sandbox/)
      expect(refused.stdout).toBe('')
    }
  })

  test('--bind A --ro-bind A/sub: A/sub is read-only inside (the nested bind is mounted after its parent, whatever the order of kinds)', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const a = path.join(world.home, 'a')
    fs.mkdirSync(path.join(a, 'sub'), { recursive: true })
    const r = await claudebox(world, ['--bind', a, '--ro-bind', path.join(a, 'sub'), '--', '-c', `touch ${a}/top && echo top-writable; touch ${a}/sub/x 2>/dev/null && echo sub-WRITABLE || echo sub-readonly`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['top-writable', 'sub-readonly'])
  })

  test('hooks kept across the two: a bound repository\'s hook that is a link into the project makes its target read-only; a project hook kept in a bound folder refuses that bind (exit 2); a file in a git dir cannot be bound writable', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const other = makeRepo(world.home, 'src/other')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    fs.mkdirSync(path.join(project, 'scripts'))
    fs.writeFileSync(path.join(project, 'scripts/hook.sh'), '#!/bin/sh\n', { mode: 0o755 })
    fs.symlinkSync(path.join(project, 'scripts/hook.sh'), path.join(other, '.git/hooks/pre-commit'))
    const r = await claudebox(world, ['--bind', other, '--', '-c', 'echo evil >> scripts/hook.sh 2>/dev/null && echo hook-WRITABLE || echo hook-readonly'], { cwd: project, env })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('hook-readonly')

    fs.writeFileSync(path.join(other, 'tool.sh'), '#!/bin/sh\n', { mode: 0o755 })
    fs.symlinkSync(path.join(other, 'tool.sh'), path.join(project, '.git/hooks/pre-push'))
    const refused = await claudebox(world, ['--bind', other, '--', '-c', 'echo RAN'], { cwd: project, env })
    expect(refused.exitCode, refused.stderr).toBe(2)
    expect(refused.stderr).toContain(`--bind ${other} would make ${other}/tool.sh, which it holds, writable inside the sandbox`)

    const config = await claudebox(world, ['--bind', path.join(other, '.git/config'), '--', '-c', 'echo RAN'], { cwd: project, env })
    expect(config.exitCode, config.stderr).toBe(2)
    expect(config.stderr).toContain(`would make the git dir ${other}/.git writable inside the sandbox`)
  })

  test('a project that is not a repository, with a HEAD file of its own: read-only inside (the session could make it one git accepts)', async () => {
    const world = makeWorld()
    const plain = path.join(world.home, 'plain')
    fs.mkdirSync(plain)
    fs.writeFileSync(path.join(plain, 'HEAD'), 'notes\n')
    const r = await claudebox(world, ['--', '-c', "printf 'ref: refs/heads/main\\n' > HEAD 2>/dev/null && echo head-WRITABLE || echo head-readonly"], { cwd: plain, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('head-readonly')
    expect(fs.readFileSync(path.join(plain, 'HEAD'), 'utf8')).toBe('notes\n')
  })

  test("round 28: a bind whose .git is a symlink, or a folder holding a project that is no repository, is refused (exit 2); so is one with a dangling .git", async () => {
    const world = makeWorld()
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    const project = makeRepo(world.home, 'src/project')
    const lib = makeRepo(world.home, 'src/lib')
    fs.mkdirSync(path.join(world.home, 'gitdirs'))
    fs.renameSync(path.join(lib, '.git'), path.join(world.home, 'gitdirs/lib'))
    fs.symlinkSync('../../gitdirs/lib', path.join(lib, '.git'))
    const linked = await claudebox(world, ['--bind', lib, '--', '-c', 'echo RAN'], { cwd: project, env })
    expect(linked.exitCode, linked.stderr).toBe(2)
    expect(linked.stderr).toContain(`--bind ${lib} has a .git that is a symlink`)

    const plain = path.join(world.home, 'work/plain')
    fs.mkdirSync(plain, { recursive: true })
    const holder = await claudebox(world, ['--bind', path.dirname(plain), '--', '-c', 'echo RAN'], { cwd: plain, env })
    expect(holder.exitCode, holder.stderr).toBe(2)
    expect(holder.stderr).toContain('or let the session make a repository above it')

    const data = path.join(world.home, 'data')
    fs.mkdirSync(data)
    fs.symlinkSync(path.join(world.root, 'gone/repo'), path.join(data, '.git'))
    const dangling = await claudebox(world, ['--bind', data, '--', '-c', 'echo RAN'], { cwd: project, env })
    expect(dangling.exitCode, dangling.stderr).toBe(2)
    expect(dangling.stderr).toContain(`--bind ${data} has a .git that is a symlink`)
    expect(dangling.stdout).toBe('')
  })
})
