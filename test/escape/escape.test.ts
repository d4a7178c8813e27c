// The escape suite: each attempt runs inside a real claudebox sandbox (real bwrap, real git, a
// temporary HOME) and must fail. The count is reported in the README. Runs as root and as an
// unprivileged user in CI.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { instanceId } from '../../src/state/instance.js'
import { BIN, claudebox, git, HAVE_BWRAP, IS_ROOT, landlockScopeSupported, makeRepo, makeWorld, REAL_CLAUDE, type World, instancePath } from '../helpers/cli.js'

const LANDLOCK_SCOPE = landlockScopeSupported()

interface Setup {
  world: World
  project: string
  other: string
  otherInstance: string
  probe: string
  hostSocket: string
  abstractName: string
  servers: net.Server[]
}

let s: Setup

/** Runs a shell script in the project's sandbox; returns stdout (trimmed) and the launcher's stderr. */
async function inside(script: string, args: string[] = []): Promise<{ out: string; err: string; code: number | undefined }> {
  const r = await claudebox(s.world, [...args, '--', '-c', script], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
  return { out: r.stdout.trim(), err: r.stderr, code: r.exitCode }
}

/**
 * As root, in a mount namespace of the test's own with a tmpfs over /opt (the machine's /opt stays
 * as it is): the `plant` steps, the last of which execs its arguments, then `script` in the sandbox.
 */
function rootOverOwnOpt(plant: readonly string[], script: string, cwd?: string): SpawnSyncReturns<string> {
  const steps = ['mount -t tmpfs tmpfs /opt', ...plant].join(' && ')
  const args = ['--mount', '--propagation', 'private', 'sh', '-c', steps, 'plant', process.execPath, BIN, '--', '-c', script]
  return spawnSync('unshare', args, { ...(cwd === undefined ? {} : { cwd }), env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 60_000 })
}

/** Shell: waits until none of `paths` is writable by its group or others (at most 5 s). */
const UNTIL_NONE_WRITABLE = (paths: string): string => `i=0; while [ -n "$(find ${paths} -maxdepth 0 -perm /022 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done`

const listen = (server: net.Server, where: string): Promise<void> => new Promise(resolve => server.listen(where, resolve))

describe.skipIf(!HAVE_BWRAP)('escape attempts from inside the sandbox', () => {
  beforeAll(async () => {
    // beforeAll has no onTestFinished: make the world by hand and clean it in afterAll.
    const world = makeWorldForSuite()
    const project = makeRepo(world.home, 'src/project')
    const other = makeRepo(world.home, 'src/other')
    git(project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', other, 'lib') // a submodule with its own git dir
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: other, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })).exitCode).toBe(0)
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), '{}\n')
    const probe = path.join(project, '.probe')
    execFileSync('cc', ['-O', '-o', probe, path.join(import.meta.dirname, 'probe.c')])
    const hostSocket = path.join(world.root, 'host.sock')
    const abstractName = `claudebox-test-${process.pid}`
    const servers = [net.createServer(c => c.end('hello\n')), net.createServer(c => c.end('hello\n'))]
    await listen(servers[0] as net.Server, hostSocket)
    await listen(servers[1] as net.Server, `\0${abstractName}`)
    s = { world, project, other, otherInstance: instancePath(world, `${other}/.git`), probe, hostSocket, abstractName, servers }
  })
  afterAll(() => {
    for (const server of s.servers) server.close()
    fs.rmSync(s.world.root, { recursive: true, force: true })
  })

  // ---------- reading ----------
  test.each([
    ['the real ~/.ssh key', () => `cat ${s.world.home}/.ssh/id_ed25519`],
    ['the real shell history', () => `cat ${s.world.home}/.bash_history`],
    ["another project's instance", () => `cat '${s.otherInstance}/project-root'`],
    ['another project', () => `cat '${s.other}/README'`],
    ['/root', () => 'ls /root/'],
    ['/etc/shadow (masked even for root)', () => 'grep -q . /etc/shadow'],
    ['/run/user', () => 'ls /run/user/'],
    ['/var/run/docker.sock', () => 'test -e /var/run/docker.sock'],
    ['/sys', () => 'ls /sys/kernel'],
    ['a symlink in the project to ~/.ssh', () => `ln -s ${s.world.home}/.ssh leak && cat leak/id_ed25519`],
    ["a symlink in the project to the other instance", () => `ln -s '${s.otherInstance}' leak2 && cat leak2/project-root`],
  ])('read %s: fails', async (_name, script) => {
    const r = await inside(`${script()} && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toMatch(/BLOCKED$/)
  })

  test.runIf(IS_ROOT)("as root: what only root may read in /etc and /opt is hidden, what others may read is not (red team, round 93: a 0600 key in a 0700 /etc/ssl/private was read inside)", () => {
    const r = rootOverOwnOpt([
      'mkdir -m 700 /opt/private && echo SECRET-IN-FOLDER > /opt/private/key',
      'echo SECRET-FILE > /opt/key && chmod 600 /opt/key',
      'echo SHARED > /opt/shared && chmod 644 /opt/shared',
      // Round 95: a name that is not UTF-8 (bwrap takes UTF-8) failed every root launch; now its
      // folder is masked, and another user's (the kernel refuses root's sandbox those) is left alone.
      `mkdir /opt/other && echo SECRET-ODD > "/opt/other/$(printf 'odd\\377')" && chmod 600 /opt/other/odd*`,
      `echo THEIRS > "/opt/$(printf 'user\\377')" && chmod 600 /opt/user* && chown 65534:65534 /opt/user*`,
      // Round 96: another user's file a group of root's may read (adm on Alpine) was left unmasked.
      'echo SECRET-OF-GROUP > /opt/grp && chown 65534:4242 /opt/grp && chmod 640 /opt/grp',
      // Round 97: a key of root's in another user's folder, which that user can move away and back: the folder is hidden whole.
      'mkdir /opt/u && chown 65534:65534 /opt/u && echo SECRET-IN-USERS > /opt/u/key && chmod 600 /opt/u/key',
      'exec setpriv --groups 4242 "$@"',
    ], 'cat /opt/key /opt/private/key /opt/shared /opt/other/odd* /opt/grp /opt/u/key 2>&1; ls -A /opt/private /opt/other /opt/u; touch /opt/private/new 2>/dev/null || echo READ-ONLY', s.project)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('SHARED')
    expect(r.stdout).toContain('READ-ONLY')
    expect(r.stdout).not.toMatch(/SECRET|key\n/)
  })

  test.runIf(IS_ROOT)("as root, a project inside a folder only root may enter (/opt/app/src in a 0750 /opt/app): it runs and writes, the rest of that folder is empty and read-only (review of round 96: every such launch failed)", () => {
    const r = rootOverOwnOpt(
      ['mkdir -m 750 /opt/app && echo SECRET-APP > /opt/app/conf && chmod 600 /opt/app/conf', 'mkdir /opt/app/src && cd /opt/app/src && git init -q', 'exec "$@"'],
      'echo RAN; ls -A /opt/app; cat /opt/app/conf 2>&1; touch in-project && echo WROTE; touch /opt/app/x 2>/dev/null || echo READ-ONLY',
    )
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.split('\n').filter(line => !line.startsWith('cat:'))).toEqual(['RAN', 'src', 'WROTE', 'READ-ONLY', ''])
    expect(r.stdout).not.toContain('SECRET')
  })

  test('home holds only what the sandbox put there', async () => {
    const r = await inside('ls -A "$HOME"')
    expect(r.out.split('\n').sort()).toEqual(['.claude', '.claudebox', '.gitconfig', 'src']) // src/: the project's parent
  })

  test('only this instance is under $CLAUDEBOX_HOME/instances', async () => {
    const r = await inside(`ls -A ${s.world.claudeboxHome}/instances`)
    expect(r.out).toBe(instanceId(`${s.project}/.git`))
  })

  // ---------- writing ----------
  test.each([
    ['/usr', 'echo x > /usr/local/bin/planted'],
    ['/etc', 'echo x >> /etc/profile'],
    ['the Claude Code installation', () => `touch ${path.dirname(fs.realpathSync(REAL_CLAUDE))}/planted`],
    // Writes the current value back: a failure of this test must not change the host.
    ['/proc/sys (kernel.core_pattern)', 'cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern'],
    ['.git/config', 'echo "[core] hooksPath = /tmp" >> .git/config'],
    ['git config core.fsmonitor', 'git config core.fsmonitor "touch /tmp/pwned"'],
    ['git config alias', 'git config alias.st "!touch /tmp/pwned"'],
    ['.git/hooks/pre-commit', 'printf "#!/bin/sh\\ntouch /tmp/pwned\\n" > .git/hooks/pre-commit'],
    ["the submodule's git config", 'git -C lib config core.hooksPath /tmp'],
    ["the submodule's hooks", () => 'echo x > .git/modules/lib/hooks/post-checkout'],
    ["the instance's project-root (decides what --gc removes)", 'echo /elsewhere > "$CLAUDE_CONFIG_DIR/project-root"'],
    ["the instance's project-root, by rename", 'echo /elsewhere > "$CLAUDE_CONFIG_DIR/x" && mv -f "$CLAUDE_CONFIG_DIR/x" "$CLAUDE_CONFIG_DIR/project-root"'],
  ])('write %s: fails', async (_name, script) => {
    const text = typeof script === 'function' ? script() : script
    const r = await inside(`${text} 2>/dev/null && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toMatch(/BLOCKED$/)
  })

  test("writes outside the project and instance never reach the host", async () => {
    const targets = [
      path.join(s.world.home, 'planted'),
      path.join(s.world.claudeboxHome, 'config.json'),
      path.join(s.otherInstance, 'planted'),
      path.join(s.world.root, 'planted'),
      path.join(s.other, 'planted'),
    ]
    const r = await inside(targets.map(t => `mkdir -p '${path.dirname(t)}' 2>/dev/null; echo evil > '${t}' 2>/dev/null`).join('; ') + '; true')
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(s.world.claudeboxHome, 'config.json'), 'utf8')).toBe('{}\n')
    for (const t of targets.filter(t => !t.endsWith('config.json'))) expect(fs.existsSync(t), t).toBe(false)
  })

  test.each(['allow', 'none', 'open'])('--network=%s: descriptors the launcher inherited (a directory outside, a file, a pipe) never reach the sandbox', network => {
    const secret = path.join(s.world.root, `inherited-${network}`)
    fs.mkdirSync(secret)
    fs.writeFileSync(path.join(secret, 'key'), 'TOPSECRET\n')
    // A parent that leaks descriptors without close-on-exec (bash's exec redirections do).
    const parent = `exec 30<'${secret}' 12<'${secret}/key' 250> >(cat >/dev/null); exec "$@"`
    const script = 'echo "fds: $(ls /proc/self/fd | tr "\\n" " ")"; cat /proc/self/fd/30/key /proc/self/fd/12; (echo planted > /proc/self/fd/30/planted) 2>/dev/null; true'
    const r = spawnSync('bash', ['-c', parent, 'parent', process.execPath, BIN, `--network=${network}`, '--', '-c', script], { cwd: s.project, env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
    expect(r.status, r.stderr).toBe(0)
    // 0-2, and ls's own handle on /proc/self/fd (3).
    expect(/^fds: (.*)$/m.exec(r.stdout)?.[1]?.trim()).toBe('0 1 2 3')
    expect(r.stdout).not.toContain('TOPSECRET')
    expect(fs.readdirSync(secret)).toEqual(['key'])
  })

  test.each([0, 1, 2])('a directory as descriptor %i (stdin, stdout, stderr) never opens inside: the sandbox gets /dev/null, and claudebox says so', fd => {
    const secret = path.join(s.world.root, `stdio-${fd}`)
    fs.mkdirSync(secret)
    fs.writeFileSync(path.join(secret, 'key'), 'TOPSECRET\n')
    const parent = `exec ${fd}<'${secret}'; exec "$@"`
    const script = `{ cat /proc/self/fd/${fd}/key; ls /proc/self/fd/${fd}/; (echo planted > /proc/self/fd/${fd}/planted); } >/tmp/out 2>&1; cat /tmp/out >&${fd === 1 ? 2 : 1}; true`
    const r = spawnSync('bash', ['-c', parent, 'parent', process.execPath, BIN, '--network=none', '--', '-c', script], { cwd: s.project, env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
    expect(r.status, r.stderr).toBe(0)
    expect(`${r.stdout}${r.stderr}`).not.toContain('TOPSECRET')
    expect(`${r.stdout}${r.stderr}`).toContain('Not a directory')
    expect(fs.readdirSync(secret)).toEqual(['key'])
    if (fd !== 2) expect(r.stderr).toContain(`claudebox: ${['stdin', 'stdout'][fd]} is a directory`)
  })

  test('a file as stdin and as stdout (claudebox -p ... < notes >> log): the sandbox reads and writes through pipes, and can open neither file anew', () => {
    const notes = path.join(s.world.root, 'notes.md')
    const log = path.join(s.world.root, 'out.log')
    fs.writeFileSync(notes, 'the prompt\n')
    fs.writeFileSync(log, 'EARLIER LINES\n')
    const script = '(echo PWNED > /proc/self/fd/0) 2>/dev/null; (echo PWNED > /proc/self/fd/1) 2>/dev/null; (cat /proc/self/fd/1 >&2) 2>/dev/null; echo "read: $(cat)"'
    const parent = `exec <'${notes}' >>'${log}'; exec "$@"`
    const r = spawnSync('bash', ['-c', parent, 'parent', process.execPath, BIN, '--network=none', '--', '-c', script], { cwd: s.project, env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
    expect(r.status, r.stderr).toBe(0)
    expect(fs.readFileSync(notes, 'utf8')).toBe('the prompt\n')
    expect(fs.readFileSync(log, 'utf8')).toBe('EARLIER LINES\nread: the prompt\n')
    expect(r.stderr).not.toContain('EARLIER')
  })

  test('a pipe as stdin and a TCP socket as stdout: the sandbox can neither write into the pipe the host reads next nor reuse the socket on the host network', async () => {
    const server = net.createServer(c => c.resume())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as net.AddressInfo).port
    // The parent: a pipe the host shell goes on reading after claudebox, and stdout a TCP connection.
    const parent = [
      'import os, socket, subprocess, sys',
      `s = socket.create_connection(("127.0.0.1", ${port}))`,
      'r, w = os.pipe()',
      'os.write(w, b"line1\\n"); os.close(w)',
      'p = subprocess.run(sys.argv[1:], stdin=r, stdout=s.fileno(), stderr=subprocess.PIPE)',
      'rest = os.read(r, 100)',
      'sys.stderr.write("status %d rest %r\\n%s" % (p.returncode, rest, p.stderr.decode()))',
    ].join('\n')
    const script = '(echo injected > /proc/self/fd/0) 2>/dev/null; python3 -c "import os, socket; os.write(2, str(socket.socket(fileno=os.dup(1)).family).encode())"'
    const r = spawnSync('python3', ['-c', parent, process.execPath, BIN, '--network=none', '--', '-c', script], { cwd: s.project, env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
    server.close()
    expect(r.stderr).toMatch(/^status 0 /)
    expect(r.stderr).not.toContain('injected')
    // The sandbox's stdout is the launcher's own unix socket pair (AF_UNIX, 1), not the host's TCP connection (AF_INET, 2).
    expect(r.stderr.trim().split('\n').at(-1)).toBe('1')
  })

  test('stdout and stderr to one file (2>&1) go through the relay in their order', () => {
    const log = path.join(s.world.root, 'both.log')
    const script = 'for i in 1 2 3 4 5 6; do echo out$i; echo err$i >&2; done'
    const r = spawnSync('bash', ['-c', `exec >'${log}' 2>&1; exec "$@"`, 'parent', process.execPath, BIN, '--network=none', '--', '-c', script], { cwd: s.project, env: { ...s.world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, encoding: 'utf8', timeout: 30_000 })
    expect(r.status).toBe(0)
    expect(fs.readFileSync(log, 'utf8')).toBe([1, 2, 3, 4, 5, 6].map(i => `out${i}\nerr${i}\n`).join(''))
  })

  // ---------- persistence: reported after the session ----------
  test.each(['.envrc', '.vscode/tasks.json', '.mcp.json', '.claude/settings.json', '.gitmodules'])(
    'planting %s does not go unnoticed',
    async file => {
      const r = await inside(`mkdir -p "$(dirname ${file})" && echo '{"planted": true}' >> ${file}`)
      expect(r.code).toBe(0)
      expect(r.err).toMatch(new RegExp(`claudebox: the session changed files that run code outside the sandbox: .*${file.replace('.', '\\.')} \\((created|changed)\\)`))
    },
  )

  // ---------- terminal injection ----------
  test.each(['tiocsti', 'tiocsti-high', 'tioclinux'])('%s on a terminal: fails', async probe => {
    const r = await inside(`./.probe ${probe}`)
    expect(r.out).toMatch(/^BLOCKED E/)
  })

  test('window-size ioctls still work (resize reaches Claude)', async () => {
    expect((await inside('./.probe winsize')).out).toBe('WORKS')
  })

  // ---------- processes ----------
  test('signal a host process: fails', async () => {
    expect((await inside(`./.probe kill ${process.pid}`)).out).toMatch(/^BLOCKED ESRCH/)
  })
  test.each(['KILL', 'STOP'])("%s to its own process group, which is the launcher's (kill 0): refused, and the launcher makes the checks of the session's end (red team, round 75: it was killed or stopped first)", async signal => {
    const project = makeRepo(s.world.home, `src/kill0-${signal}`)
    const r = await claudebox(s.world, ['--', '-c', `git init -q nested; kill -s ${signal} 0; echo status=$?`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 30_000 })
    expect(r.stdout.trim()).toBe('status=1')
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('the session created or changed nested git repositories')
  })
  test("SIGCONT as a parent's death signal (prctl PR_SET_PDEATHSIG): refused, another death signal allowed (red team, round 79: it resumed a sandbox claudebox had stopped)", async () => {
    const r = await inside(`python3 -c "import ctypes; c = ctypes.CDLL(None, use_errno=True); print(c.prctl(1, 18, 0, 0, 0), ctypes.get_errno(), c.prctl(1, 15, 0, 0, 0))"`)
    expect(r.out).toBe('-1 1 0')
  })
  test('ptrace a host process: fails', async () => {
    expect((await inside(`./.probe ptrace ${process.pid}`)).out).toMatch(/^BLOCKED/)
  })
  test('/proc shows only the sandbox', async () => {
    const r = await inside('ls /proc | grep -E "^[0-9]+$" | wc -l')
    expect(Number(r.out)).toBeLessThanOrEqual(6)
  })

  // ---------- undoing the sandbox ----------
  test.each([
    ['unshare-user', ''],
    ['unshare-mount', ''],
    ['clone3', ''],
    ['mount-tmpfs', '/tmp'],
    ['remount-rw', '.git/config'],
    ['bind-root', '/tmp'],
    ['open-tree', ''],
    ['fsopen', ''],
    ['chroot', ''],
    ['pivot-root', ''],
    ['add-key', ''],
    ['keyctl', ''],
    ['mknod', '/tmp/mem'],
  ])('%s: fails', async (probe, arg) => {
    expect((await inside(`./.probe ${probe} ${arg}`)).out).toMatch(/^BLOCKED E/)
  })

  test('clone3 fails with ENOSYS so that glibc falls back to clone', async () => {
    expect((await inside('./.probe clone3')).out).toBe('BLOCKED ENOSYS')
  })

  // ---------- sockets, environment, devices ----------
  test("the host's path unix socket: fails", async () => {
    expect((await inside(`./.probe path-connect '${s.hostSocket}'`)).out).toMatch(/^BLOCKED ENOENT/)
  })
  test("the host's abstract unix socket with the open network: refused by the Landlock scope", async () => {
    // Kernels before 6.12 lack the scope: there the socket is reachable and --check warns (check-gc.test.ts).
    const out = (await inside(`./.probe abstract-connect ${s.abstractName}`, ['--network=open'])).out
    expect(out).toBe(LANDLOCK_SCOPE ? 'BLOCKED EPERM' : 'ESCAPED')
  })
  test("the host's abstract unix socket with the default network (allow): not there, any kernel", async () => {
    expect((await inside(`./.probe abstract-connect ${s.abstractName}`)).out).toMatch(/^BLOCKED E(CONNREFUSED|PERM)/)
  })
  test("the host's abstract unix socket with --no-network: fails", async () => {
    expect((await inside(`./.probe abstract-connect ${s.abstractName}`, ['--no-network'])).out).toMatch(/^BLOCKED ECONNREFUSED/)
  })
  test('session bus, ssh-agent, X11 and Wayland: neither variables nor sockets', async () => {
    const r = await claudebox(s.world, ['--', '-c', 'env; ls -A /tmp /run 2>&1; find /run 2>&1'], {
      cwd: s.project,
      env: {
        CLAUDEBOX_CLAUDE: '/bin/sh',
        SSH_AUTH_SOCK: s.hostSocket,
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${s.hostSocket}`,
        DISPLAY: ':0',
        WAYLAND_DISPLAY: 'wayland-0',
        XAUTHORITY: '/x',
        AWS_SECRET_ACCESS_KEY: 'aws',
        GITHUB_TOKEN: 'gh',
        GH_TOKEN: 'gh',
        NPM_TOKEN: 'npm',
        // Under the passed prefixes, but secrets by their names (red team, round 140: they entered).
        CLAUDE_CODE_OAUTH_REFRESH_TOKEN: 'refresh',
        CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'pass',
        ANTHROPIC_IDENTITY_TOKEN: 'identity',
      },
    })
    for (const name of ['SSH_AUTH_SOCK', 'DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY', 'XAUTHORITY', 'AWS_', 'GITHUB_TOKEN', 'GH_TOKEN', 'NPM_TOKEN', '_TOKEN', '_PASSPHRASE']) {
      expect(r.stdout).not.toContain(name)
    }
    expect(r.stderr).toContain('kept out of the sandbox, as their names say they hold secrets: ANTHROPIC_IDENTITY_TOKEN, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE, CLAUDE_CODE_OAUTH_REFRESH_TOKEN')
    // /run holds claudebox's Landlock helper and (default network) the bridge and the directory of
    // the proxy's socket (which appears there once the proxy listens) alone: no /run/user, no
    // D-Bus, no other socket.
    expect(r.stdout).toMatch(/^\/run:\nclaudebox\n/m)
    expect(r.stdout).toMatch(/^\/run\n\/run\/claudebox\n(\/run\/claudebox\/(bridge|net|net\/proxy\.sock|scope)(\n|$)){3,4}$/m)
  })
  test('set-user-ID and set-group-ID bits and extended attributes (an ACL) never reach the host: any other local user could run the file as you', async () => {
    const script = [
      'cp /bin/sh ./suid-sh',
      'chmod 4755 ./suid-sh 2>/dev/null && echo "chmod u+s: done" || echo "chmod u+s: refused"',
      'chmod g+s ./suid-sh 2>/dev/null && echo "chmod g+s: done" || echo "chmod g+s: refused"',
      'install -m 4755 /bin/sh ./suid-install 2>/dev/null && echo "install: done" || echo "install: refused"',
      `python3 -c 'import os; os.setxattr("suid-sh", "user.x", b"1")' 2>/dev/null && echo "setxattr: done" || echo "setxattr: refused"`,
      'chmod 700 ./suid-sh && echo "chmod 700: done"',
    ].join('; ')
    const r = await inside(script)
    expect(r.out.split('\n')).toEqual(['chmod u+s: refused', 'chmod g+s: refused', 'install: refused', 'setxattr: refused', 'chmod 700: done'])
    for (const name of ['suid-sh', 'suid-install']) {
      const file = path.join(s.project, name)
      if (fs.existsSync(file)) expect(fs.statSync(file).mode & 0o6000, name).toBe(0)
      fs.rmSync(file, { force: true })
    }
  })
  test("write access for others on the project's folder and its git dir (chmod 777): taken back at once and reported; other local users could have replaced the config your git runs", async () => {
    const git = path.join(s.project, '.git')
    const paths = [s.project, git, path.join(git, 'HEAD'), path.join(git, 'refs'), path.join(git, 'info')]
    const writeForOthers = (mode: number): number => mode & 0o022
    const before = paths.map(p => writeForOthers(fs.statSync(p).mode))
    const infoMode = fs.statSync(path.join(git, 'info')).mode & 0o777
    // 300 names sorted before git's own (round 62: a capped listing then missed them), a folder the
    // owner cannot read (0333: round 62, not opened as uid 1001), and a name git does not use.
    const script = [
      'for i in $(seq 1000 1300); do : > .git/.$i; done; mkdir .git/zzz',
      // The watch may take a mode back before a stat right after could see it (CI, uid 1001): the
      // chmods' own success says they were made.
      'chmod 777 . .git .git/HEAD .git/refs .git/zzz && chmod 333 .git/info && echo made',
      // Until none is writable for others (at most 5 s: the watch looks every 200 ms, later under load).
      `${UNTIL_NONE_WRITABLE('. .git .git/HEAD .git/refs .git/info')}; stat -c %a . .git .git/HEAD .git/refs .git/info`,
    ].join('; ')
    const r = await inside(script)
    try {
      const [made, later] = [r.out.split('\n')[0], r.out.split('\n').slice(1)]
      expect(made, r.err).toBe('made')
      // Taken back while the session runs (the watch looks every 200 ms), not only after it.
      expect(later.map(mode => writeForOthers(parseInt(mode, 8)))).toEqual(before)
      expect(paths.map(p => writeForOthers(fs.statSync(p).mode))).toEqual(before)
      // A name git does not use: at the session's end.
      expect(writeForOthers(fs.statSync(path.join(git, 'zzz')).mode)).toBe(0)
      expect(r.err).toMatch(/WARNING: other users could write to a git dir or to folders of the project, beyond what your umask gives .*taken back: .*\.git \(777 made 7[0-7]{2}\)/)
    } finally {
      fs.chmodSync(path.join(git, 'info'), infoMode)
      for (const name of fs.readdirSync(git)) if (/^\.1[0-9]{3}$/.test(name) || name === 'zzz') fs.rmSync(path.join(git, name), { recursive: true })
    }
  })
  test("write access others had before the launch is taken back too (another session could have set it); a group-shared (set-group-ID) git dir keeps its group's", async () => {
    const git = path.join(s.project, '.git')
    const mode = fs.statSync(git).mode & 0o7777
    try {
      fs.chmodSync(git, 0o777)
      const r = await inside('stat -c %a .git')
      expect(fs.statSync(git).mode & 0o022).toBe(0)
      expect(r.err).toMatch(/taken back: .*\.git \(777 made 755\)/)
      fs.chmodSync(git, 0o2775)
      await inside('true')
      expect(fs.statSync(git).mode & 0o7777).toBe(0o2775)
    } finally {
      fs.chmodSync(git, mode)
    }
  })
  test("a git dir the session makes (a submodule's) left writable for others, the folder on the way to it, its objects' folders, and an entry of a git dir made unreadable at the very end: taken back at the session's end", async () => {
    const git = path.join(s.project, '.git')
    const script = [
      'git init -q /tmp/src && git -C /tmp/src -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m i',
      'git -c protocol.file.allow=always submodule add -q /tmp/src vendor/lib >/dev/null 2>&1',
      'chmod 777 .git/modules/vendor .git/modules/vendor/lib .git/modules/vendor/lib/refs/heads && chmod 666 .git/modules/vendor/lib/config',
      'mkdir -m 777 .git/modules/vendor/y && chmod 777 .git/modules/vendor/lib/objects/?? vendor vendor/lib',
      // A repository of the session's own in the work tree (round 65: its git dir was not looked at).
      'git init -q tools/x && chmod 777 tools tools/x tools/x/.git && chmod 666 tools/x/.git/config',
      'echo y > .git/junk && chmod 666 .git/junk && chmod 333 .git && echo done',
    ].join('; ')
    const r = await inside(script)
    try {
      expect(r.out).toBe('done')
      const objects = fs.readdirSync(path.join(git, 'modules/vendor/lib/objects')).filter(d => /^[0-9a-f]{2}$/.test(d)).map(d => `modules/vendor/lib/objects/${d}`)
      expect(objects.length).toBeGreaterThan(0)
      for (const p of ['modules/vendor', 'modules/vendor/y', 'modules/vendor/lib', 'modules/vendor/lib/refs/heads', 'modules/vendor/lib/config', ...objects, 'junk']) expect(fs.statSync(path.join(git, p)).mode & 0o022, p).toBe(0)
      // And the folders on the way to them (round 66: another user swapped tools/x/.git).
      for (const p of ['tools', 'tools/x', 'tools/x/.git', 'tools/x/.git/config', 'vendor', 'vendor/lib']) expect(fs.statSync(path.join(s.project, p)).mode & 0o022, p).toBe(0)
    } finally {
      fs.chmodSync(git, 0o755)
      spawnSync('git', ['rm', '-q', '-f', '--cached', '--ignore-unmatch', 'vendor/lib', '.gitmodules'], { cwd: s.project })
      for (const p of ['vendor', 'tools', '.gitmodules', '.git/modules', '.git/junk']) fs.rmSync(path.join(s.project, p), { recursive: true, force: true })
      spawnSync('git', ['config', '--remove-section', 'submodule.vendor/lib'], { cwd: s.project })
    }
  })
  test("a submodule's work tree and the folder on the way to it, left writable for others between sessions: taken back while the next session runs (round 65: another user swapped its .git file)", async () => {
    // A project of its own: the suite's shared one has had a .gitmodules planted by other attempts.
    const project = makeRepo(s.world.home, 'src/with-submodule')
    const src = path.join(s.world.root, 'submodule-src')
    const host = (cwd: string, ...args: string[]): void => void execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', ...args], { cwd, stdio: 'pipe', env: { ...process.env, HOME: s.world.home } })
    fs.mkdirSync(src)
    host(src, 'init', '-q')
    host(src, 'commit', '-q', '--allow-empty', '-m', 'i')
    host(project, 'submodule', 'add', '-q', src, 'vendor/lib')
    const r = await claudebox(s.world, ['--', '-c', `chmod 777 vendor vendor/lib && ${UNTIL_NONE_WRITABLE('vendor vendor/lib')}; stat -c %a vendor vendor/lib`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim().split('\n').map(mode => parseInt(mode, 8) & 0o022)).toEqual([0, 0])
    expect(r.stderr).toMatch(/taken back: .*vendor\/lib \(777 made 755\)/)
  })
  test('a gitlink the session put in the index, its folders left writable for others (no .git there yet): taken back at the end (round 67: another user made its .git, which git status at the top entered)', async () => {
    const project = makeRepo(s.world.home, 'src/with-gitlink')
    const script = 'mkdir -p old/y && chmod 777 old old/y && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),old/y" && echo staged'
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('staged')
    for (const p of ['old', 'old/y']) expect(fs.statSync(path.join(project, p)).mode & 0o022, p).toBe(0)
    // Taken back by the look at the folders the session changed, before the one at the gitlinks.
    expect(r.stderr).toMatch(/taken back: .*old\/y \(777 made 755\)/)
  })
  test("a nested .git that names a folder outside the project, or one not there yet: moved aside, and the folder left as it is (round 68: `gitdir: /tmp` made the launcher take other users' write access to /tmp away; another user could make the missing one)", async () => {
    const project = makeRepo(s.world.home, 'src/points-out')
    const outside = path.join(s.world.root, 'shared-tmp')
    fs.mkdirSync(path.join(outside, 'info'), { recursive: true })
    fs.writeFileSync(path.join(outside, 'x'), '')
    fs.chmodSync(outside, 0o1777)
    fs.chmodSync(path.join(outside, 'info'), 0o777)
    fs.chmodSync(path.join(outside, 'x'), 0o666)
    const script = `mkdir z && echo "gitdir: ${outside}" > z/.git && git init -q --separate-git-dir /tmp/private w && echo made`
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('made')
    expect(fs.statSync(outside).mode & 0o7777).toBe(0o1777)
    expect(fs.statSync(path.join(outside, 'info')).mode & 0o777).toBe(0o777)
    expect(fs.statSync(path.join(outside, 'x')).mode & 0o777).toBe(0o666)
    for (const pointer of ['z/.git', 'w/.git']) {
      expect(fs.existsSync(path.join(project, pointer)), pointer).toBe(false)
      expect(r.stderr).toContain(`${pointer} -> `)
    }
  })
  test("a commondir the session wrote in a nested git dir, or in a folder shaped as one, that leads out of the project or to nothing yet: moved aside (round 70: another user made what it named, and git status at the top ran their config through a gitlink)", async () => {
    const project = makeRepo(s.world.home, 'src/commondir-out')
    const outside = path.join(s.world.root, 'not-yet-there')
    const script = [
      `mkdir -p n3/.git/objects n3/.git/refs && echo ref: refs/heads/main > n3/.git/HEAD && echo ${outside} > n3/.git/commondir`,
      'git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),n3"',
      `mkdir -p bare/objects bare/refs && echo ref: refs/heads/main > bare/HEAD && echo ${outside}-too > bare/commondir && echo made`,
    ].join(' && ')
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('made')
    for (const file of ['n3/.git/commondir', 'bare/commondir']) expect(fs.existsSync(path.join(project, file)), file).toBe(false)
    // n3 is a gitlink at the top: its whole .git goes during the session (round 84), else its commondir at the end.
    expect(r.stderr).toMatch(/n3\/\.git(\/commondir)? -> /)
    expect(r.stderr).toContain('bare/commondir -> ')
  })
  test("a nested git dir's commondir as a link, its config as a link, a config including a file and its hooks as a link, each leading out of the project to what is not there yet, and a config naming such a program: moved aside (rounds 71 and 72: another user made them, and git status at the top ran their config through a gitlink)", async () => {
    const project = makeRepo(s.world.home, 'src/links-out')
    const out = path.join(s.world.root, 'later')
    const script = [
      'for i in 1 2 3 4; do git init -q s$i; done',
      `ln -s ${out}/cd s1/.git/commondir`,
      `mv s2/.git/config s2/.git/config.orig && ln -s ${out}/c2 s2/.git/config`,
      `git config -f s3/.git/config include.path ${out}/inc3 && git config -f s3/.git/config 'includeIf.gitdir:/a b/.path' ${out}/inc3b`,
      `mv s4/.git/hooks s4/.git/hooks.orig && ln -s ${out}/hooks4 s4/.git/hooks`,
      // A program outside that another user could make (round 72), and one only root can change, which stays.
      `git init -q s5 && git config -f s5/.git/config core.fsmonitor ${out}/fsm && git init -q s6 && git config -f s6/.git/config core.fsmonitor /bin/true`,
      // An include through a link in the project that leads out (round 72).
      `git init -q s7 && ln -s ${out}/inc7 s7/settings.inc && printf '[include]\\n\\tpath = ../settings.inc\\n' >> s7/.git/config && echo made`,
    ].join(' && ')
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('made')
    expect(fs.existsSync(path.join(project, 's6/.git/config'))).toBe(true)
    for (const file of ['s1/.git/commondir', 's2/.git/config', 's3/.git/config', 's4/.git/hooks', 's5/.git/config', 's7/.git/config']) {
      expect(fs.existsSync(path.join(project, file)) || fs.lstatSync(path.join(project, file), { throwIfNoEntry: false }) !== undefined, file).toBe(false)
      expect(r.stderr).toContain(`${file} -> `)
    }
  })
  test("a nested repository's include file in the work tree, harmless in one session and naming a program outside in the next: its config is moved aside at the second end (round 72: only a config that changed itself was read)", async () => {
    const project = makeRepo(s.world.home, 'src/include-later')
    const first = await claudebox(s.world, ['--', '-c', `git init -q g && printf '[user]\\n\\tname = x\\n' > g/extra.cfg && printf '[include]\\n\\tpath = ../extra.cfg\\n' >> g/.git/config && echo made`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(first.stdout.trim()).toBe('made')
    expect(fs.existsSync(path.join(project, 'g/.git/config'))).toBe(true)
    const second = await claudebox(s.world, ['--', '-c', `printf '[core]\\n\\tfsmonitor = ${s.world.root}/later-fsm\\n' > g/extra.cfg && echo rewrote`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(second.stdout.trim()).toBe('rewrote')
    expect(fs.existsSync(path.join(project, 'g/.git/config'))).toBe(false)
    expect(second.stderr).toContain('g/.git/config -> ')
  })
  test("rounds 73 and 74: a nested config naming, outside the project, an ext:: remote's command (written so, rewritten to by an insteadOf, or through remote.*.vcs), a program behind a link or a folder that others could replace on the way, or a work tree not there yet: moved aside; the same with nothing others can change on the way stays", async () => {
    const project = makeRepo(s.world.home, 'src/reach-out')
    const out = path.join(s.world.root, 'r73')
    // A folder everyone may write (not sticky), holding a folder and a link of ours: another user
    // could rename either away and put their own there.
    const open = path.join(s.world.root, 'open73')
    fs.mkdirSync(path.join(open, 'sub'), { recursive: true })
    fs.chmodSync(open, 0o777)
    fs.copyFileSync('/bin/true', path.join(open, 'sub/tool'))
    fs.symlinkSync('/bin/true', path.join(open, 'link'))
    // A sticky folder (as /tmp) holding a tool of ours: only we may replace it.
    const sticky = path.join(s.world.root, 'sticky73')
    fs.mkdirSync(sticky)
    fs.chmodSync(sticky, 0o1777)
    fs.copyFileSync('/bin/true', path.join(sticky, 'tool'))
    const set = (repo: string, ...pairs: string[]): string => pairs.map((pair, i) => (i % 2 === 0 ? `git config -f ${repo}/.git/config '${pair}' '${pairs[i + 1]}'` : '')).filter(Boolean).join(' && ')
    const script = [
      'for i in 1 2 3 4 5 6 7 8 9 10; do git init -q t$i; done',
      set('t1', 'protocol.ext.allow', 'always', 'remote.origin.url', `ext::sh -c ${out}/x% `),
      set('t2', 'protocol.ext.allow', 'always', `url.ext::sh -c ${out}/y% .insteadOf`, 'https://example.com/'),
      set('t3', 'core.fsmonitor', `${open}/sub/tool`),
      set('t4', 'core.fsmonitor', `${open}/link`),
      set('t5', 'core.worktree', `${out}/wt`, 'core.fsmonitor', './fsm'),
      set('t6', 'protocol.ext.allow', 'always', 'remote.origin.url', 'ext::sh -c /bin/true% '),
      set('t7', 'core.fsmonitor', '/bin/true'),
      set('t8', 'core.fsmonitor', `${sticky}/tool`),
      // Round 74: the ext helper named by remote.*.vcs, and a rewrite to ext:: of another scheme.
      set('t9', 'protocol.ext.allow', 'always', 'remote.origin.vcs', 'ext', 'remote.origin.url', `sh ${out}/v`),
      set('t10', 'protocol.ext.allow', 'always', 'url.ext::.insteadOf', 'zz:', 'remote.origin.url', `zz:sh ${out}/w`),
      'echo made',
    ].join(' && ')
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim(), r.stderr).toBe('made')
    for (const repo of ['t1', 't2', 't3', 't4', 't5', 't9', 't10']) {
      expect(fs.existsSync(path.join(project, repo, '.git/config')), repo).toBe(false)
      expect(r.stderr).toContain(`${repo}/.git/config -> `)
    }
    for (const repo of ['t6', 't7', 't8']) expect(fs.existsSync(path.join(project, repo, '.git/config')), repo).toBe(true)
  })
  test('600 nested .git files that lead out of the project: every one is moved aside, past the 512 looked into (round 70: 88 stayed)', async () => {
    const project = makeRepo(s.world.home, 'src/many-out')
    const r = await claudebox(s.world, ['--', '-c', `for i in $(seq 600); do mkdir -p j/$i && echo "gitdir: ${s.world.root}/out-$i" > j/$i/.git; done; echo made`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 120_000 })
    expect(r.stdout.trim()).toBe('made')
    const left = fs.readdirSync(path.join(project, 'j')).filter(i => fs.existsSync(path.join(project, 'j', i, '.git')))
    expect(left).toEqual([])
  }, 150_000)
  test('4,200 folders made writable for others: past the 4,096 taken back, the report still says that some were not (round 70: it was swallowed by "and more")', async () => {
    const project = makeRepo(s.world.home, 'src/many-wide')
    const r = await claudebox(s.world, ['--', '-c', 'mkdir w && cd w && seq 1 4200 | xargs mkdir && chmod 777 * && echo made'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 120_000 })
    expect(r.stdout.trim()).toBe('made')
    expect(r.stderr).toContain('not all looked at: 104 folders past the first 4096')
  }, 150_000)
  test('the folders of a gitlink whose path is not UTF-8, left writable for others: taken back at the end (round 68: the byte was lost, nothing was)', async () => {
    const project = makeRepo(s.world.home, 'src/latin1-gitlink')
    const script = 'D=$(printf "\\377"); mkdir -p "$D/y" && chmod 777 "$D" "$D/y" && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),$D/y" && echo staged'
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    // Empty when the gitlink watch ended the session first (a path that is not UTF-8, round 86).
    expect(['staged', '']).toContain(r.stdout.trim())
    const folder = Buffer.concat([Buffer.from(`${project}/`), Buffer.from([0xff])])
    for (const p of [folder, Buffer.concat([folder, Buffer.from('/y')])]) expect(fs.statSync(p).mode & 0o022, p.toString()).toBe(0)
  })
  test("a gitlink's folders left writable for others in a project that is a linked worktree, and in a submodule whose name is not its path: taken back at the end (round 68: the work tree was guessed from the git dir's path)", async () => {
    const main = makeRepo(s.world.home, 'src/main-of-worktree')
    git(main, 'worktree', 'add', '-q', path.join(s.world.home, 'src/linked-wt'))
    const linked = path.join(s.world.home, 'src/linked-wt')
    const stage = (dir: string): string => `mkdir -p ${dir} && chmod 777 ${path.dirname(dir)} ${dir} && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),${dir}" && echo staged`
    const r = await claudebox(s.world, ['--', '-c', stage('old/y')], { cwd: linked, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('staged')
    for (const p of ['old', 'old/y']) expect(fs.statSync(path.join(linked, p)).mode & 0o022, p).toBe(0)
    const project = makeRepo(s.world.home, 'src/named-submodule')
    const src = makeRepo(s.world.root, 'named-submodule-src')
    execFileSync('git', ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', '--name', 'foo', src, 'a/b'], { cwd: project, stdio: 'pipe', env: { ...process.env, HOME: s.world.home } })
    const sub = await claudebox(s.world, ['--', '-c', `cd a/b && ${stage('c/d')}`], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(sub.stdout.trim()).toBe('staged')
    for (const p of ['a/b/c', 'a/b/c/d']) expect(fs.statSync(path.join(project, p)).mode & 0o022, p).toBe(0)
  })
  test("folders anywhere in the work tree the session changed and left writable for others are taken back at the end, a gitlink's committed and its index gone too; one the session did not change is left as it was (round 68: git reset brought the gitlink back, and git status entered another user's .git)", async () => {
    const project = makeRepo(s.world.home, 'src/wide-folders')
    for (const dir of ['storage', 'kept']) {
      fs.mkdirSync(path.join(project, dir))
      fs.chmodSync(path.join(project, dir), 0o777)
    }
    const script = [
      'mkdir -p x/y deep/er/dir storage/cache && chmod 777 x x/y deep/er/dir storage/cache',
      'git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),x/y" && git -c user.name=t -c user.email=t@e commit -qm l',
      'printf DIRCgarbage > .git/index && echo done',
    ].join(' && ')
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('done')
    // storage was so before, but the session made a folder in it: another user could have swapped that one.
    for (const p of ['x', 'x/y', 'deep/er/dir', 'storage', 'storage/cache']) expect(fs.statSync(path.join(project, p)).mode & 0o022, p).toBe(0)
    expect(fs.statSync(path.join(project, 'kept')).mode & 0o777).toBe(0o777)
    expect(r.stderr).toMatch(/taken back: .*x\/y \(777 made 755\)/)
  })
  test('a folder of the work tree the session made unreadable to you (chmod 677), with folders writable for others below it: taken back all the same (round 68: the search stopped at it, as uid 1001)', async () => {
    const project = makeRepo(s.world.home, 'src/locked-folder')
    const r = await claudebox(s.world, ['--', '-c', 'mkdir -p a/b/c && chmod 777 a/b a/b/c && chmod 677 a && echo done'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('done')
    const a = fs.statSync(path.join(project, 'a')).mode
    if (process.getuid?.() !== 0) expect(a & 0o500).toBe(0o500)
    for (const p of ['a', 'a/b', 'a/b/c']) expect(fs.statSync(path.join(project, p)).mode & 0o022, p).toBe(0)
  })
  test("a repository of SHA-256 objects: its index is read as such and kept, with what was staged (round 68: it was moved aside at every session's end; round 69: also when its config names the format with a comment after it)", async () => {
    const project = path.join(s.world.home, 'src/sha256')
    fs.mkdirSync(project, { recursive: true })
    git(project, 'init', '-q', '--object-format=sha256')
    // Named as git reads it, with a comment after it (round 69: a look at the config missed that).
    fs.writeFileSync(path.join(project, '.git/config'), fs.readFileSync(path.join(project, '.git/config'), 'utf8').replace(/objectformat = sha256/, '$& ; a note'))
    fs.writeFileSync(path.join(project, 'README'), 'hello\n')
    git(project, 'add', 'README')
    git(project, 'commit', '-q', '-m', 'init')
    fs.writeFileSync(path.join(project, 'staged'), 'x\n')
    git(project, 'add', 'staged')
    const r = await claudebox(s.world, ['--', '-c', 'echo benign'], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim()).toBe('benign')
    expect(r.stderr).not.toContain('moved aside')
    expect(execFileSync('git', ['ls-files'], { cwd: project, encoding: 'utf8' }).trim().split('\n')).toEqual(['README', 'staged'])
  })
  test('3,000 nested repositories the session made: the mode guard ends in seconds, not minutes (round 66: quadratic, 35 s)', async () => {
    const project = makeRepo(s.world.home, 'src/many-nested')
    const script = 'mkdir n && cd n && for i in $(seq 1 3000); do mkdir -p $i/.git/objects $i/.git/refs; echo "ref: refs/heads/main" > $i/.git/HEAD; done; echo made'
    const started = Date.now()
    const r = await claudebox(s.world, ['--', '-c', script], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 120_000 })
    expect(r.stdout.trim()).toBe('made')
    expect(r.stderr).toMatch(/nested git repositories/)
    expect((Date.now() - started) / 1000).toBeLessThan(25)
  }, 150_000)
  test('/dev holds only the standard nodes', async () => {
    const r = await inside('ls -A /dev')
    const allowed = ['console', 'core', 'fd', 'full', 'mqueue', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero']
    for (const node of r.out.split('\n')) expect(allowed).toContain(node)
  })
})

function makeWorldForSuite(): World {
  // beforeAll cannot use onTestFinished: the suite removes its world in afterAll.
  return makeWorld({ cleanup: false })
}
