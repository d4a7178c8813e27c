// Untrusted repositories and real-machine layouts: dangerous roots, forged git pointers, every
// legitimate git layout, and /etc/resolv.conf as a symlink into /run.
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, FIXTURES, git, HAVE_BWRAP, inSandbox, makeRepo, makeWorld, instancePath } from '../helpers/cli.js'

describe.skipIf(!HAVE_BWRAP)('dangerous roots are refused', () => {
  test('the home directory itself', async () => {
    const world = makeWorld()
    const r = await inSandbox(world, world.home, 'echo ran')
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^claudebox: refusing to make .* writable: it is your home directory\. Start claudebox in a project directory/)
    expect(fs.existsSync(world.claudeboxHome)).toBe(false)
  })

  test('a plain subdirectory of a home that is a dotfiles repository', async () => {
    const world = makeWorld()
    git(world.home, 'init', '-q')
    const sub = path.join(world.home, 'Documents/notes')
    fs.mkdirSync(sub, { recursive: true })
    const r = await inSandbox(world, sub, `cat ${world.home}/.ssh/id_ed25519`)
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(`refusing to make ${world.home} writable: you are in ${sub}, but git's top level here is ${world.home} and it is your home directory. Give the project a repository of its own (git init in it)`)
  })

  test('a directory above home, and a system directory', async () => {
    const world = makeWorld()
    expect((await inSandbox(world, world.root, 'true')).stderr).toMatch(/it contains your home directory/)
    expect((await inSandbox(world, '/usr/share', 'true')).stderr).toMatch(/it is part of the system \(\/usr\)/)
  })

  test('--allow-dangerous-root is explicit and shown by --dry-run', async () => {
    const world = makeWorld()
    const r = await claudebox(world, ['--dry-run', '--allow-dangerous-root'], { cwd: world.home, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toMatch(/--allow-dangerous-root: .* is writable inside although it is your home directory/)
    expect(r.stdout).toContain(`--bind ${world.home} ${world.home}`)
  })
})

describe.skipIf(!HAVE_BWRAP)('git layouts', () => {
  test('legitimate: main checkout, linked worktree, submodule, separate git dir with core.worktree', async () => {
    const world = makeWorld()
    const main = makeRepo(world.home, 'main')
    const wt = path.join(world.home, 'wt')
    git(main, 'worktree', 'add', '-q', wt)
    const lib = makeRepo(world.home, 'lib')
    git(main, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', lib, 'sub')
    const work = path.join(world.home, 'work')
    fs.mkdirSync(work)
    git(work, 'init', '-q', '--separate-git-dir', path.join(world.home, 'store'))
    git(work, '--git-dir', path.join(world.home, 'store'), 'config', 'core.worktree', work)
    for (const dir of [main, wt, path.join(main, 'sub'), work]) {
      const r = await inSandbox(world, dir, 'git status --short >/dev/null && echo ok')
      expect(r.stdout, `${dir}: ${r.stderr}`).toBe('ok')
    }
  })

  test('a separate git dir without core.worktree is refused with the command that fixes it', async () => {
    const world = makeWorld()
    const work = path.join(world.home, 'work')
    fs.mkdirSync(work)
    git(work, 'init', '-q', '--separate-git-dir', path.join(world.home, 'store'))
    const r = await inSandbox(world, work, 'true')
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toContain(`git --git-dir=${world.home}/store config core.worktree ${work}`)
  })

  test('forged pointers planted by the agent: the other repository is neither reached nor used', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'project')
    const other = makeRepo(world.home, 'other')
    git(other, 'worktree', 'add', '-q', path.join(world.home, 'other-wt'))
    // Inside a session, the agent plants the pointers; the other repository is not visible to it.
    const plant = await inSandbox(
      world,
      project,
      [
        `mkdir -p fake1 fake2 fake3/.git`,
        `echo 'gitdir: ${other}/.git' > fake1/.git`,
        `echo 'gitdir: ${other}/.git/worktrees/other-wt' > fake2/.git`,
        `git -C fake3 init -q . && git -C fake3 config core.worktree ${other}`,
        `cat ${other}/README 2>/dev/null && echo READ || echo not-readable`,
        `echo x > ${other}/planted 2>/dev/null && echo WROTE || echo not-writable`,
      ].join('; '),
    )
    expect(plant.stdout).toBe('not-readable\nnot-writable')
    // The session's end moves aside a .git it made that leads out of the project (round 68); made
    // again here, as one left by a session whose end never ran, the launch refuses each.
    for (const [dir, target] of [['fake1', `${other}/.git`], ['fake2', `${other}/.git/worktrees/other-wt`]] as const) {
      expect(plant.stderr).toContain(`${dir}/.git -> `)
      fs.writeFileSync(path.join(project, dir, '.git'), `gitdir: ${target}\n`)
    }
    const otherInstance = instancePath(world, `${other}/.git`)
    for (const [dir, message] of [
      ['fake1', `fake1/.git points to ${other}/.git, whose core.worktree does not name`],
      ['fake2', `fake2/.git points to ${other}/.git/worktrees/other-wt, which belongs to ${world.home}/other-wt`],
      ['fake3', `fake3/.git makes git use ${other} as the working tree`],
    ] as const) {
      const r = await inSandbox(world, path.join(project, dir), `echo x > ${other}/planted; echo ran`)
      expect(r.exitCode, dir).toBe(125)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain(message)
    }
    expect(fs.existsSync(path.join(other, 'planted'))).toBe(false)
    expect(fs.existsSync(otherInstance)).toBe(false)
  })
})

describe.skipIf(!HAVE_BWRAP)('/etc/resolv.conf as a symlink into /run (systemd-resolved)', () => {
  test('the target file is visible inside, the rest of /run is not', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const etc = path.join(world.root, 'etc')
    // A private mount namespace (also unprivileged: unshare -r): /run is a tmpfs holding
    // systemd-resolved's stub file and a user's runtime dir, /etc a copy with resolv.conf a symlink.
    const script = [
      'set -e',
      'mount -t tmpfs none /run',
      'mkdir -p /run/systemd/resolve /run/user/1000',
      'echo "nameserver 127.0.0.53" > /run/systemd/resolve/stub-resolv.conf',
      'echo secret > /run/user/1000/bus',
      `cp -a /etc '${etc}' 2>/dev/null || true`,
      // cp leaves the copy 0700 when it could not read some of /etc (unprivileged), and a root
      // (mapped, here) sandbox hides a folder others cannot enter (root-only.ts).
      `chmod 755 '${etc}'`,
      `rm -f '${etc}/resolv.conf' && ln -s /run/systemd/resolve/stub-resolv.conf '${etc}/resolv.conf'`,
      `mount --bind '${etc}' /etc`,
      `cd '${repo}'`,
      `exec '${process.execPath}' '${BIN}' -- -c 'cat /etc/resolv.conf; ls /run; ls /run/user 2>&1 | head -1'`,
    ].join('\n')
    const r = await execa('unshare', ['-rm', 'sh', '-c', script], { env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false })
    expect(r.exitCode, r.stderr).toBe(0)
    // /run inside: the resolver's directory and claudebox's own helpers, nothing of the host's else.
    expect(r.stdout.split('\n')).toEqual(['nameserver 127.0.0.53', 'claudebox', 'systemd', "ls: cannot access '/run/user': No such file or directory"])
  })
})

describe.skipIf(!HAVE_BWRAP)('first launch confirmation (config.json confirmFirstLaunch)', () => {
  test('without a terminal it does not start unless --yes answers; later launches do not ask', async () => {
    const world = makeWorld()
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"confirmFirstLaunch": true}\n')
    const repo = makeRepo(world.home, 'p')
    const refused = await inSandbox(world, repo, 'echo ran')
    expect(refused.exitCode).toBe(125)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/not started: config.json asks to confirm the first launch in a project; rerun with --yes/)
    const accepted = await claudebox(world, ['--yes', '--', '-c', 'echo ran'], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(accepted.stdout).toBe('ran')
    expect((await inSandbox(world, repo, 'echo again')).stdout).toBe('again')
  })

  test('on a terminal, a SIGHUP or SIGQUIT at the question ends claudebox by it with the terminal given back (it stayed raw); Ctrl-D stops it (130)', () => {
    const world = makeWorld()
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{"confirmFirstLaunch": true, "network": "none"}\n')
    const repo = makeRepo(world.home, 'p')
    const onTerminal = (answer: string) =>
      spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), 'start Claude in this sandbox', answer, process.execPath, BIN, '--', '-c', 'echo RAN'], {
        cwd: repo,
        env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
        encoding: 'utf8',
        timeout: 40_000,
      })
    for (const [answer, status] of [['signal:SIGHUP', 256 - 1], ['signal:SIGQUIT', 256 - 3], ['\x04', 130]] as const) {
      const r = onTerminal(answer)
      expect(r.status, `${answer}: ${r.stdout}`).toBe(status)
      expect(r.stdout).toContain('terminal: normal')
      expect(r.stdout).not.toContain('RAN')
    }
  })
})
