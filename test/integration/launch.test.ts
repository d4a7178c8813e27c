// The real launcher, real bwrap and real git, in a temporary HOME: instances and the sandbox.
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { instanceId } from '../../src/state/instance.js'
import { probeCgroups } from '../../src/host/probe.js'
import { BIN, git, HAVE_BWRAP, IS_ROOT, inSandbox, makeRepo, makeWorld, claudebox, instancePath } from '../helpers/cli.js'

describe.skipIf(!HAVE_BWRAP)('instances', () => {
  test('main checkout, linked worktree and a subdirectory share one instance', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/shop')
    fs.mkdirSync(path.join(repo, 'sub/deeper'), { recursive: true })
    git(repo, 'worktree', 'add', '-q', path.join(world.home, 'wt/feature'))
    const configDir = async (cwd: string): Promise<string> => {
      const r = await inSandbox(world, cwd, 'printf %s "$CLAUDE_CONFIG_DIR"')
      expect(r.exitCode, r.stderr).toBe(0)
      return r.stdout
    }
    const expected = instancePath(world, path.join(repo, '.git'))
    expect(await configDir(repo)).toBe(expected)
    expect(await configDir(path.join(repo, 'sub/deeper'))).toBe(expected)
    expect(await configDir(path.join(world.home, 'wt/feature'))).toBe(expected)
    expect(fs.readFileSync(path.join(expected, 'project-root'), 'utf8')).toBe(`${repo}/.git\n`)
    expect(fs.statSync(expected).mode & 0o777).toBe(0o700)
  })

  test('a non-git directory maps to itself; paths with spaces, quotes and non-ASCII work', async () => {
    const world = makeWorld()
    const dir = path.join(world.home, `notes with space 'q' "dq" prøjekt 日本`)
    fs.mkdirSync(dir, { recursive: true })
    const r = await inSandbox(world, dir, 'printf "%s|%s" "$PWD" "$CLAUDE_CONFIG_DIR"; echo hi > inside.txt')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${dir}|${instancePath(world, dir)}`)
    expect(fs.readFileSync(path.join(dir, 'inside.txt'), 'utf8')).toBe('hi\n')
  })

  test('two first launches at the same moment both succeed', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'race')
    const results = await Promise.all(Array.from({ length: 6 }, () => inSandbox(world, repo, 'true')))
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0)
    const instances = fs.readdirSync(path.join(world.claudeboxHome, 'instances'))
    expect(instances).toEqual([instanceId(`${repo}/.git`)])
    expect(fs.readdirSync(path.join(world.claudeboxHome, 'instances', instances[0] as string)).sort()).toEqual(['.claude.json', 'CLAUDE.md', 'SANDBOX.md', 'agents', 'claudebox', 'commands', 'project-root', 'settings.json', 'skills'])
  })

  test('an instance recording another root is an error, never reused', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const dir = instancePath(world, `${repo}/.git`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'project-root'), '/somewhere/else/.git\n')
    const r = await inSandbox(world, repo, 'echo ran')
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^claudebox: instance .* belongs to \/somewhere\/else\/.git/)
  })
})

describe.skipIf(!HAVE_BWRAP)('the sandbox', () => {
  test('project writable; home, ~/.ssh and other instances invisible; outside not writable', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/shop')
    const other = makeRepo(world.home, 'src/other')
    expect((await inSandbox(world, other, 'true')).exitCode).toBe(0) // creates other's instance
    const otherInstance = instancePath(world, `${other}/.git`)
    const script = [
      'echo changed > README && echo project-writable',
      `test -e ${world.home}/.ssh/id_ed25519 || echo no-ssh`,
      `test -e ${world.home}/.bash_history || echo no-history`,
      `test -e '${otherInstance}' || echo no-other-instance`,
      `test -e '${other}' || echo no-other-project`,
      `ls -A ${world.home}/.claudebox/instances | wc -l`,
      `cat ${world.home}/.gitconfig | grep -q 'Test User' && echo gitconfig-readable`,
      `echo x >> ${world.home}/.gitconfig 2>/dev/null || echo gitconfig-readonly`,
      'echo x > /usr/evil 2>/dev/null || echo usr-readonly',
      'echo x > /etc/evil 2>/dev/null || echo etc-readonly',
      `echo x > ${world.home}/planted && echo home-write-is-tmpfs`,
    ].join('; ')
    const r = await inSandbox(world, repo, script)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.split('\n')).toEqual([
      'project-writable',
      'no-ssh',
      'no-history',
      'no-other-instance',
      'no-other-project',
      '1',
      'gitconfig-readable',
      'gitconfig-readonly',
      'usr-readonly',
      'etc-readonly',
      'home-write-is-tmpfs',
    ])
    expect(fs.readFileSync(path.join(repo, 'README'), 'utf8')).toBe('changed\n')
    // What the sandbox wrote to its empty home did not reach the real one.
    expect(fs.existsSync(path.join(world.home, 'planted'))).toBe(false)
  })

  test('env shows nothing outside the allowlist', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const hostile = {
      SSH_AUTH_SOCK: '/run/user/1/agent',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1/bus',
      AWS_SECRET_ACCESS_KEY: 'aws',
      GITHUB_TOKEN: 'gh',
      GH_TOKEN: 'gh',
      NPM_TOKEN: 'npm',
      DISPLAY: ':0',
      WAYLAND_DISPLAY: 'wayland-0',
      XAUTHORITY: '/x',
      CLAUDE_CONFIG_DIR: '/host/claude',
      TMPDIR: '/host/tmp',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      CLAUDE_CODE_USE_BEDROCK: '0',
      LC_ALL: 'C.UTF-8',
    }
    const r = await inSandbox(world, repo, 'env -0', hostile)
    expect(r.exitCode, r.stderr).toBe(0)
    const names = r.stdout.split('\0').filter(Boolean).map(line => line.split('=', 1)[0]).sort()
    expect(names).toEqual(
      [
        // ANTHROPIC_API_KEY holds this session's placeholder; ANTHROPIC_BASE_URL is the gateway.
        'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDEBOX', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CONFIG_DIR', 'CLAUDE_SECURESTORAGE_CONFIG_DIR',
        'DISABLE_AUTOUPDATER', 'ENABLE_CLAUDEAI_MCP_SERVERS', 'HOME', 'IS_SANDBOX', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'TERM',
        // The default network (allow): the proxy inside, in both spellings.
        'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy', 'NODE_USE_ENV_PROXY',
      ].sort(),
    )
    expect(r.stdout).toContain(`CLAUDE_CONFIG_DIR=${world.claudeboxHome}/instances/`)
  })

  test('an ANTHROPIC_BASE_URL the gateway cannot forward to stops the launch before anything runs, without repeating the value', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    for (const url of ['http://user:hunter2@[bad', 'ftp://user:hunter2@example.com/']) {
      const r = await inSandbox(world, repo, 'touch ran', { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: url })
      expect(r.exitCode, url).toBe(2)
      expect(r.stderr).toMatch(/^claudebox: ANTHROPIC_BASE_URL is not an http:\/\/ or https:\/\/ URL.*correct it or unset it$/)
      expect(r.stderr).not.toContain('hunter2')
      expect(fs.existsSync(path.join(repo, 'ran'))).toBe(false)
    }
  })

  test('git commit works inside a linked worktree', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/shop')
    const wt = path.join(world.home, 'wt/feature')
    git(repo, 'worktree', 'add', '-q', '-b', 'feature', wt)
    const r = await inSandbox(world, wt, 'echo new > file && git add file && git commit -q -m inside && git log --format=%s -1')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('inside')
    expect(git(repo, 'log', '--format=%s', '-1', 'feature')).toBe('inside')
  })

  test('--dry-run writes only the programs it names by digest, is readable, and pasted into sh runs the same sandbox', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p q')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    const script = 'printf "%s|%s|" "$PWD" "$CLAUDE_CONFIG_DIR"; test -e ~/.ssh || printf no-ssh'
    // Pasted alone, only the open network works (allow's proxy lives in claudebox).
    const dry = await claudebox(world, ['--dry-run', '--network=open', '--', '-c', script], { cwd: repo, env })
    expect(dry.exitCode, dry.stderr).toBe(0)
    // Nothing but the programs the script names by digest: no instance, no state.
    expect(fs.readdirSync(world.claudeboxHome).sort()).toEqual(['landlock', 'seccomp'])
    expect(dry.stdout).toMatch(/^# .*\/seccomp\/x86_64-[0-9a-f]+\.bpf: \d+ bytes, sha256 [0-9a-f]{64} \(written by claudebox --dry-run\)$/m)
    // Readable on a screen: no line of kilobytes.
    expect(Math.max(...dry.stdout.split('\n').map(line => line.length))).toBeLessThan(600)
    expect(dry.stdout).toMatch(/^mkdir -p -m 700 /m)
    expect(dry.stdout).toMatch(/bwrap \\\n {2}--unshare-all --unshare-user --disable-userns --share-net --die-with-parent --cap-drop ALL \\\n/)
    const direct = await claudebox(world, ['--network=open', '--', '-c', script], { cwd: repo, env })
    const pasted = await execa('sh', ['-c', dry.stdout], { env: world.env, extendEnv: false, cwd: '/', reject: false })
    expect(pasted.exitCode, pasted.stderr).toBe(0)
    expect(pasted.stdout).toBe(direct.stdout)
    expect(pasted.stdout).toMatch(/no-ssh$/)
    // As root the script sets a pids limit in a cgroup of its own (claudebox-<the shell's pid>);
    // when it cannot (that name taken), it stops instead of running the sandbox without the limit.
    const parent = probeCgroups()?.dirs.pids
    if (IS_ROOT && process.env['CI']) expect(parent).toBeDefined()
    if (IS_ROOT && parent !== undefined) {
      expect(dry.stdout).toContain('/claudebox-$$/cgroup.procs')
      const taken = await execa('sh', ['-c', `mkdir ${parent}/claudebox-$$; ${dry.stdout}; status=$?; rmdir ${parent}/claudebox-$$; exit $status`], { env: world.env, extendEnv: false, cwd: '/', reject: false })
      expect(taken.exitCode, taken.stderr).toBe(125)
      expect(taken.stderr).toContain('claudebox: cannot set the limits in')
      expect(taken.stdout).toBe('')
    }
  })

  test('--dry-run names the writes a launch makes besides its script: the guard, the copies, the login import, the records', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: repo, env })).exitCode).toBe(0)
    const settings = path.join(world.claudeboxHome, 'shared/settings.json')
    fs.writeFileSync(settings, '{"model": ')
    fs.mkdirSync(path.join(world.home, '.claude'), { recursive: true })
    fs.writeFileSync(path.join(world.home, '.claude/.claude.json'), '{"primaryApiKey":"sk-ant-api03-x"}')
    const other = makeRepo(world.home, 'q')
    const dry = await claudebox(world, ['--dry-run'], { cwd: other, env })
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`# claudebox also writes: ${settings} is not valid JSON: set aside as settings.json.corrupt-<time> and restored from the newest good copy`)
    expect(dry.stdout).toContain(`# claudebox also writes: asks once to copy your Claude Code login's account keys (${world.home}/.claude/.claude.json) into ${world.claudeboxHome}/shared/.claude.json`)
    expect(dry.stdout).toMatch(/^# claudebox also writes: the session's record in .*\/claudebox\/sessions\/<pid>-<scope>\.json/m)
    // An OAuth login is never copied; that it is said, and recorded, is named too.
    fs.writeFileSync(path.join(world.home, '.claude/.credentials.json'), '{"claudeAiOauth":{"accessToken":"x"}}')
    const oauth = await claudebox(world, ['--dry-run'], { cwd: other, env })
    expect(oauth.stdout).toContain(`# claudebox also writes: says once that your Claude Code login (${world.home}/.claude/.credentials.json) is not copied, and records that in ${world.claudeboxHome}/shared/login-import`)
    // It only said so: the file is as it was.
    expect(fs.readFileSync(settings, 'utf8')).toBe('{"model": ')
  })
})

describe.skipIf(!HAVE_BWRAP)('output through a pipe', () => {
  // stdout as a pipe goes in relayed by the launcher (host/stdio-relay.ts); a reader slower than
  // the program (a pager) still gets every byte after the sandbox has ended. A grace period that
  // closed bwrap's pipes 2 s after its end once cut such output short (red team, helper-22).
  test('a slow reader gets all of it, and the program\'s status', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const reader = 'import os, time\nn = 0\nwhile True:\n    b = os.read(0, 16384)\n    if not b: break\n    n += len(b)\n    time.sleep(0.25)\nprint(n)'
    const script = `"${process.execPath}" "${BIN}" -- -c 'head -c 600000 /dev/zero; exit 7' | python3 -c '${reader}'; echo "status \${PIPESTATUS[0]}"`
    const r = await execa('bash', ['-c', script], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 50_000 })
    expect(r.stdout, r.stderr).toBe('600000\nstatus 7')
  }, 60_000)

  test("the program's status when the pipe is full before it starts (a little of its output still queued at the end)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    // 64 KiB fill the pipe; the launcher's last bytes wait for the reader, and 'drain' never comes for them.
    const script = `{ head -c 65536 /dev/zero; "${process.execPath}" "${BIN}" -- -c 'echo small; exit 3'; echo "status $?" >&2; } | (sleep 1; wc -c)`
    const r = await execa('bash', ['-c', script], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, extendEnv: false, reject: false, timeout: 30_000 })
    expect(r.stdout.trim()).toBe('65542')
    expect(r.stderr).toMatch(/status 3$/)
  }, 40_000)
})

describe.skipIf(!HAVE_BWRAP)('io_uring', () => {
  // io_uring_setup(4, params) through Python's ctypes: the errno, or OK with the ring's descriptor.
  const setup = `python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); r = libc.syscall(425, 4, p); print('OK' if r >= 0 else os.strerror(ctypes.get_errno()))"`
  const enabled = (() => {
    try {
      return fs.readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim() === '0'
    } catch {
      return true
    }
  })()

  test("refused inside by default (red team, round 93: its IORING_OP_SOCKET made an AF_VSOCK socket, out of the network namespace); --io-uring lets it through, said in a warning", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const refused = await inSandbox(world, repo, setup)
    expect(refused.exitCode, refused.stderr).toBe(0)
    expect(refused.stdout).toBe('Function not implemented')
    if (!enabled) return
    const opted = await claudebox(world, ['--io-uring', '--', '-c', setup], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(opted.exitCode, opted.stderr).toBe(0)
    expect(opted.stdout).toBe('OK')
    expect(opted.stderr).toContain('claudebox: --io-uring: programs inside may use io_uring')
  })
})
