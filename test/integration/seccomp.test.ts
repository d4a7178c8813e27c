// The seccomp filter of src/sandbox/seccomp.ts in a real bwrap: the kernel accepts it, it refuses what it
// should (compared with the same sandbox without it), and ordinary work still runs. Probes are
// test/fixtures/tiocsti.c, compiled here. Works as root and as an unprivileged user.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { hostSeccompArch, seccompFilter } from '../../src/sandbox/seccomp.js'
import { HAVE_BWRAP, IS_ROOT, REPO, requiredTool } from '../helpers/cli.js'
import { suiteTempDir } from '../helpers/temp.js'

const SOURCE = path.join(REPO, 'test/fixtures/tiocsti.c')
const CI = Boolean(process.env['CI'])

// In CI a missing tool is a failure, never a skip.
const HAVE_CC = requiredTool('cc', ['--version'], 'a C compiler (cc) for the seccomp probes')
const ARCH = hostSeccompArch(process.arch)
if (CI && ARCH === undefined) throw new Error(`no seccomp filter for ${process.arch}`)

/** The kernel refuses TIOCSTI by itself when this is 0 (Linux 6.2+); older kernels lack it (always allowed). */
const LEGACY_TIOCSTI = (() => {
  try {
    return fs.readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() !== '0'
  } catch {
    return true
  }
})()

/** A sandbox in which the probe holds every capability of its own user namespace. */
const PROBE_SANDBOX = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/mnt', '--unshare-all', '--unshare-user', '--cap-add', 'ALL', '--die-with-parent']
/** The namespace options of a claudebox launch (src/sandbox/plan.ts). */
const LAUNCH_SANDBOX = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/mnt', '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--cap-drop', 'ALL']

/** kernel.io_uring_disabled (Linux 6.6+): 0 lets everyone set up a ring; absent on older kernels, which allow it. */
const IO_URING_ENABLED = (() => {
  try {
    return fs.readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim() === '0'
  } catch {
    return fs.existsSync('/proc/sys/kernel')
  }
})()

interface Result {
  code: number | null
  out: string
  err: string
}

describe.skipIf(!HAVE_BWRAP || !HAVE_CC || ARCH === undefined)('seccomp filter in bwrap', () => {
  const tmp = suiteTempDir('cb-seccomp-')
  let dir = ''
  let filterPath = ''
  let probe = ''

  beforeAll(() => {
    dir = tmp()
    fs.chmodSync(dir, 0o755)
    filterPath = path.join(dir, 'filter.bpf')
    fs.writeFileSync(filterPath, seccompFilter(ARCH ?? 'x86_64'))
    probe = path.join(dir, 'probe')
    execFileSync('cc', ['-O1', '-pthread', '-o', probe, SOURCE], { stdio: 'pipe' })
  })

  /** bwrap reads the program from fd 3, opened afresh for each run (bwrap reads it to the end). */
  function bwrap(sandbox: readonly string[], command: readonly string[], filtered = true, filter = filterPath): Promise<Result> {
    const fd = filtered ? fs.openSync(filter, 'r') : undefined
    return new Promise((resolve, reject) => {
      const child = spawn('bwrap', [...sandbox, ...(filtered ? ['--seccomp', '3'] : []), '--', ...command], {
        stdio: ['ignore', 'pipe', 'pipe', ...(fd === undefined ? [] : [fd])],
      })
      if (fd !== undefined) fs.closeSync(fd)
      let out = ''
      let err = ''
      child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
      child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()))
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      child.on('error', reject)
      child.on('close', code => {
        clearTimeout(timer)
        resolve({ code, out: out.trim(), err: err.trim() })
      })
    })
  }
  const run = async (what: string, filtered = true): Promise<string> => {
    const r = await bwrap(PROBE_SANDBOX, [probe, what, '/mnt'], filtered)
    if (r.out === '') throw new Error(`probe ${what} printed nothing: ${r.err}`)
    return r.out
  }

  test('the filter is installed on the sandboxed program and on bwrap\'s pid 1', async () => {
    const r = await bwrap(PROBE_SANDBOX, ['sh', '-c', 'grep "^Seccomp:" /proc/self/status /proc/1/status'])
    expect(r.err).toBe('')
    expect(r.out).toMatch(/self\/status:Seccomp:\s+2/)
    expect(r.out).toMatch(/1\/status:Seccomp:\s+2/) // so the sandbox cannot ptrace pid 1 to run unfiltered
  })

  // ---------- the terminal ----------
  test(`TIOCSTI on a terminal: EPERM; without the filter it ${LEGACY_TIOCSTI ? 'succeeds' : 'fails with EIO (legacy_tiocsti = 0)'}`, async () => {
    expect(await run('tiocsti', false)).toBe(LEGACY_TIOCSTI ? 'OK' : 'EIO')
    expect(await run('tiocsti')).toBe('EPERM')
  })
  test('TIOCSTI with high bits set in the request (CVE-2019-10063): EPERM', async () => {
    expect(await run('tiocsti-high', false)).toBe(LEGACY_TIOCSTI ? 'OK' : 'EIO')
    expect(await run('tiocsti-high')).toBe('EPERM')
  })
  test('TIOCLINUX: EPERM (ENOTTY on a pty without the filter)', async () => {
    expect(await run('tioclinux', false)).toBe('ENOTTY')
    expect(await run('tioclinux')).toBe('EPERM')
  })
  test("taking the terminal's foreground (TIOCSPGRP) and suspending its output (TCXONC): EPERM, allowed without the filter (red team, round 73: the launcher's warnings after the session then stopped or hung)", async () => {
    expect(await run('tiocspgrp', false)).toBe('OK')
    expect(await run('tiocspgrp')).toBe('EPERM')
    expect(await run('tcxonc', false)).toBe('OK')
    expect(await run('tcxonc')).toBe('EPERM')
  })
  test("a virtual console's own requests (KDSETMODE, VT_ACTIVATE): EPERM; without the filter they reach the terminal, a pseudo-terminal's ENOTTY (red team, round 75: on a console they stop its text or switch it)", async () => {
    for (const probe of ['tio-kdsetmode', 'tio-vt-activate']) {
      expect(await run(probe, false), probe).toBe('ENOTTY')
      expect(await run(probe), probe).toBe('EPERM')
    }
  })
  test("signal-driven I/O on a terminal (FIOASYNC, F_SETFL with O_ASYNC, F_SETSIG), its exclusive mode (TIOCEXCL) and kill(0) with a signal other than SIGTSTP or SIGCONT: EPERM, allowed without the filter (red team, round 76: the terminal's answer to a query sent the launcher's group SIGIO, SIGKILL or SIGUSR1, Node's inspector)", async () => {
    for (const probe of ['tio-fioasync', 'tio-o-async', 'tio-setsig', 'tiocexcl', 'tio-kill0-urg']) {
      expect(await run(probe, false), probe).toBe('OK')
      expect(await run(probe), probe).toBe('EPERM')
    }
    // Still allowed: other flags, and the group's SIGCONT (Claude Code's Ctrl-Z is kill(0, SIGTSTP), handled by the launcher).
    expect(await run('tio-o-nonblock')).toBe('OK')
    expect(await run('tio-kill0-cont')).toBe('OK')
  })
  test("swapping the terminal's line discipline (TIOCSETD): EPERM, allowed without the filter (red team, round 74: N_NULL swallowed the launcher's warnings, aborted it and hung the user's shell)", async () => {
    expect(await run('tiocsetd', false)).toBe('OK')
    expect(await run('tiocsetd')).toBe('EPERM')
  })
  test('window size (TIOCSWINSZ, TIOCGWINSZ) and termios still work', async () => {
    expect(await run('winsize')).toBe('OK')
    expect(await run('tcgetattr')).toBe('OK')
  })
  test.runIf(process.arch === 'x64')('TIOCSTI through the i386 entry (int 0x80): refused too', async () => {
    const baseline = await run('int80-tiocsti', false)
    const filtered = await run('int80-tiocsti')
    if (baseline === (LEGACY_TIOCSTI ? 'OK' : 'EIO')) expect(filtered).toBe('EPERM')
    else expect(filtered).not.toBe('OK') // a kernel without ia32 emulation (ia32_emulation=0)
  })
  test("io_uring: ENOSYS (its IORING_OP_SOCKET made an AF_VSOCK socket, which the network namespace does not confine: red team, round 93); set up without the filter where the kernel allows it", async () => {
    expect(await run('io-uring-setup')).toBe('ENOSYS')
    if (IO_URING_ENABLED) expect(await run('io-uring-setup', false)).toBe('OK')
  })
  test.runIf(IO_URING_ENABLED)('with the --io-uring opt-in a ring is set up; the socket-family rule still holds for socket()', async () => {
    const opted = path.join(dir, 'filter-io-uring.bpf')
    fs.writeFileSync(opted, seccompFilter(ARCH ?? 'x86_64', { ioUring: true }))
    const probeWith = async (what: string): Promise<string> => (await bwrap(PROBE_SANDBOX, [probe, what, '/mnt'], true, opted)).out
    expect(await probeWith('io-uring-setup')).toBe('OK')
    expect(await probeWith('socket-packet')).toBe('EAFNOSUPPORT')
  })
  test.runIf(process.arch === 'x64')("a socket through the i386 socketcall() multiplexer: EAFNOSUPPORT whatever the family (round 93); the direct i386 socket() of a unix socket still works", async () => {
    const baseline = await run('i386-socketcall-unix', false)
    expect(['OK', 'ENOSYS']).toContain(baseline) // ENOSYS: a kernel without ia32 emulation
    if (baseline === 'OK') {
      expect(await run('i386-socketcall-unix')).toBe('EAFNOSUPPORT')
      expect(await run('i386-socket-unix')).toBe('OK')
    } else {
      expect(await run('i386-socketcall-unix')).not.toBe('OK')
    }
  })
  test.runIf(process.arch === 'x64')('x32 syscalls: ENOSYS', async () => {
    expect(await run('x32-getpid')).toBe('ENOSYS')
  })

  // ---------- undoing the sandbox ----------
  const REFUSED: [string, string][] = [
    ['clone3', 'ENOSYS'],
    ['clone-newuser', 'EPERM'],
    ['clone-newns', 'EPERM'],
    ['unshare-user', 'EPERM'],
    ['setns', 'EPERM'],
    ['mount', 'EPERM'],
    ['umount', 'EPERM'],
    ['fsopen', 'EPERM'],
    ['open-tree', 'EPERM'],
    ['chroot', 'EPERM'],
    ['keyctl', 'EPERM'],
    ['personality-rie', 'EPERM'],
    ['socket-packet', 'EAFNOSUPPORT'],
  ]
  test.each(REFUSED)('%s: %s', async (what, errno) => {
    expect(await run(what)).toBe(errno)
  })
  // Without capabilities these fail anyway; with them (root, or nothing restricting the sandbox's own
  // user namespace) they succeed, so the errno above is the filter's.
  test('the same probes without the filter: those that need no privilege succeed; as root all do', async () => {
    const baseline = Object.fromEntries(await Promise.all(REFUSED.map(async ([what]) => [what, await run(what, false)] as const)))
    for (const what of ['clone3', 'keyctl', 'personality-rie']) expect(baseline[what], what).toBe('OK')
    if (IS_ROOT) for (const [what] of REFUSED) expect(baseline[what], what).toBe('OK')
  })
  test('`unshare -U true` fails inside', async () => {
    const r = await bwrap(PROBE_SANDBOX, ['unshare', '-U', 'true'])
    expect(r.code).not.toBe(0)
    expect(r.err).toMatch(/Operation not permitted/)
  })

  // ---------- modes and attributes the host would honour ----------
  // On a file in a folder of the host's own filesystem, bound in (tmpfs may lack user xattrs).
  const onHostFile = async (what: string, filtered = true): Promise<string> => {
    const r = await bwrap([...PROBE_SANDBOX, '--bind', dir, dir], [probe, what, dir], filtered)
    if (r.out === '') throw new Error(`probe ${what} printed nothing: ${r.err}`)
    return r.out
  }
  const SETID: [string, string][] = [
    ['chmod-suid', 'EPERM'],
    ['fchmod-sgid', 'EPERM'],
    ['fchmodat-suid', 'EPERM'],
    ['fchmodat2-suid', 'EPERM'],
    ['creat-suid', 'EPERM'],
    ['mknod-suid', 'EPERM'],
    ['setxattr', 'EOPNOTSUPP'],
    ['fsetxattr', 'EOPNOTSUPP'],
  ]
  test.each(SETID)('%s: %s, and it succeeds without the filter (so the refusal is the filter\'s)', async (what, errno) => {
    expect(await onHostFile(what, false)).toBe('OK')
    expect(await onHostFile(what)).toBe(errno)
  })
  test.runIf(process.arch === 'x64')('chmod with the set-user-ID bit through the i386 entry (int 0x80): refused too', async () => {
    const baseline = await onHostFile('i386-chmod-suid', false)
    const filtered = await onHostFile('i386-chmod-suid')
    if (baseline === 'OK') expect(filtered).toBe('EPERM')
    else expect(filtered).not.toBe('OK') // a kernel without ia32 emulation (ia32_emulation=0)
  })
  test("a hard link (link, linkat, linkat of a descriptor): EXDEV, what two file systems answer, and link and linkat succeed without the filter (red team, round 134: a second name of a nested repository's config let the session rewrite it, and the host's git checkout . of the other name moved its change time out of the session's); with the --hard-links opt-in they succeed", async () => {
    for (const probe of ['link', 'linkat']) {
      expect(await onHostFile(probe, false), probe).toBe('OK')
      expect(await onHostFile(probe), probe).toBe('EXDEV')
    }
    expect(await onHostFile('linkat-fd')).toBe('EXDEV')
    const opted = path.join(dir, 'filter-hard-links.bpf')
    fs.writeFileSync(opted, seccompFilter(ARCH ?? 'x86_64', { hardLinks: true }))
    const r = await bwrap([...PROBE_SANDBOX, '--bind', dir, dir], [probe, 'link', dir], true, opted)
    expect(r.out).toBe('OK')
  })
  test.runIf(process.arch === 'x64')('a hard link through the i386 entry (int 0x80): refused too', async () => {
    const baseline = await onHostFile('i386-link', false)
    const filtered = await onHostFile('i386-link')
    if (baseline === 'OK') expect(filtered).toBe('EXDEV')
    else expect(filtered).not.toBe('OK') // a kernel without ia32 emulation (ia32_emulation=0)
  })
  test("a lease on a file (fcntl F_SETLEASE): EPERM, and it succeeds without the filter (red team, round 82: a lease on .git/HEAD held the host's git status at the start of its search while the session planted .git/commondir)", async () => {
    expect(await onHostFile('lease', false)).toBe('OK')
    expect(await onHostFile('lease')).toBe('EPERM')
  })
  test("watching a file for reads (inotify IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE; fanotify; dnotify): EPERM, and each succeeds without the filter; a watch for changes still works (red team, round 83: IN_OPEN on .git/HEAD told the session the moment the host's git began, and a .git/commondir planted then won the race with the git watch)", async () => {
    for (const probe of ['inotify-open', 'inotify-access', 'fanotify', 'dnotify']) {
      expect(await onHostFile(probe, false), probe).toBe('OK')
      expect(await onHostFile(probe), probe).toBe('EPERM')
    }
    expect(await onHostFile('inotify-modify')).toBe('OK')
  })
  test('a plain chmod still works', async () => {
    expect(await onHostFile('chmod-plain')).toBe('OK')
  })

  // ---------- what keeps working ----------
  test.each(['fork', 'thread', 'unshare-files', 'socket-inet', 'socket-unix', 'personality-norandom', 'ptrace'])('%s: works', async what => {
    expect(await run(what)).toBe('OK')
  })

  describe('with the options of a claudebox launch (--disable-userns, --cap-drop ALL)', () => {
    const sh = (script: string, filtered = true): Promise<Result> => bwrap(LAUNCH_SANDBOX, ['sh', '-c', script], filtered)

    test('bwrap sets up the sandbox: the filter comes after its own namespace work', async () => {
      const r = await sh('echo ok')
      expect(r).toMatchObject({ code: 0, out: 'ok', err: '' })
    })
    test('git, node (child processes and worker threads), python3 and the C compiler run', async () => {
      expect((await sh('git --version')).out).toMatch(/^git version/)
      const node = await bwrap(LAUNCH_SANDBOX, [
        '/usr/bin/node',
        '-e',
        "require('child_process').execFileSync('true'); const { Worker } = require('worker_threads'); new Worker('0', { eval: true }).on('exit', c => console.log('node', c))",
      ])
      expect(node).toMatchObject({ code: 0, out: 'node 0' })
      if (fs.existsSync('/usr/bin/python3')) {
        const py = await bwrap(LAUNCH_SANDBOX, ['/usr/bin/python3', '-c', "import subprocess, threading; t = threading.Thread(target=lambda: None); t.start(); t.join(); subprocess.run(['true'], check=True); print('py')"])
        expect(py).toMatchObject({ code: 0, out: 'py' })
      }
      const cc = await sh("printf 'int main(void){return 0;}' | TMPDIR=/mnt cc -x c -o /mnt/a.out - && /mnt/a.out && echo cc")
      expect(cc).toMatchObject({ code: 0, out: 'cc' })
    })
    test('a nested user namespace fails with EPERM from the filter, before --disable-userns would answer ENOSPC', async () => {
      const filtered = await sh('unshare -U true')
      expect(filtered.code).not.toBe(0)
      expect(filtered.err).toMatch(/Operation not permitted/)
      const unfiltered = await sh('unshare -U true', false)
      expect(unfiltered.code).not.toBe(0)
      expect(unfiltered.err).toMatch(/No space left on device/)
    })
  })
})

