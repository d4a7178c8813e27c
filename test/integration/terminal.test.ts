// The terminal stays Claude's: a resize reaches the program in the sandbox (no --new-session),
// while TIOCSTI is refused by the seccomp filter (see test/escape). A real pseudo-terminal.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { BIN, FIXTURES, HAVE_BWRAP, makeRepo, makeWorld, noticeGiven, type World } from '../helpers/cli.js'

/** `script` in the sandbox (by /bin/sh), in a new pseudo-terminal of `rows` x `cols` that pty-resize.py resizes once "ready" appears; all it wrote. */
function inTerminal(world: World, repo: string, script: string, rows = '24', cols = '80'): Promise<{ stdout: string }> {
  return execa('python3', [path.join(FIXTURES, 'pty-resize.py'), rows, cols, process.execPath, BIN, '--', '-c', script], {
    cwd: repo,
    env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' },
    extendEnv: false,
    reject: false,
    timeout: 40_000,
  })
}

describe.skipIf(!HAVE_BWRAP)('terminal', () => {
  test('a window-size change reaches the program inside the sandbox', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    const script = 'trap \'echo "WINCH $(stty size)"; echo done; exit 0\' WINCH; echo ready; while :; do sleep 0.05; done'
    const r = await inTerminal(world, repo, script, '33', '121')
    expect(r.stdout).toMatch(/ready/)
    expect(r.stdout).toMatch(/WINCH 33 121/)
  })

  test("a session that leaves the terminal's text concealed, black on black, in line-drawing characters and in a one-line scroll region: the warnings after it undo that first (red team, round 73: they went out concealed)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    const script = "git init -q nested && printf '\\033[8m\\033[30;40m\\033(0\\033[1;1r\\033]11;#000000\\007\\033[?7l' && echo concealed-now"
    const r = await inTerminal(world, repo, script)
    const out = r.stdout
    const hidden = out.indexOf('concealed-now')
    const warning = out.indexOf('claudebox: WARNING: the session created or changed nested git repositories')
    expect(hidden).toBeGreaterThan(0)
    expect(warning).toBeGreaterThan(hidden)
    expect(out.slice(hidden)).toContain('\x1b7\x1b[r\x1b8\x1b[0m\x1b(B\x0f\x1b[?25h\x1b]110\x07\x1b]111\x07\x1b]112\x07\x1b]104\x07\x1b[?7h\x1b[?69l\x1b[?5l\x1b[4lclaudebox: WARNING: the session created or changed nested')
  })

  test("claudebox put in the background (Ctrl-Z, bg) with `stty tostop` and debug lines on: the session's write to the terminal stops it, sandbox and launcher, and at fg it ends as it should (red team, round 82: the stop's own debug line, written from the background, brought SIGTTOU again for ever, the launcher spun)", async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    // A first launch: the audit, then nothing more of claudebox's own on the later one.
    await inTerminal(world, repo, 'true')
    const launch = `stty tostop; CLAUDEBOX_DEBUG=1 ${process.execPath} ${BIN} -- -c 'sleep 3; echo from-sandbox; sleep 1; echo sandbox-done'\n`
    const r = await execa('python3', [path.join(FIXTURES, 'pty-steps.py'), `0.5:${launch}`, '1.5:\\x1a', '1:bg\\n', '4:jobs -l\\n', '1:fg\\n', '6:echo shell-back\\n'], {
      cwd: repo,
      env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', PS1: '$ ', TERM: 'dumb' },
      extendEnv: false,
      reject: false,
      timeout: 40_000,
    })
    const afterJobs = r.stdout.slice(r.stdout.indexOf('jobs -l'))
    expect(afterJobs.split('\n').slice(0, 3).join('\n'), r.stdout).toMatch(/Stopped/)
    expect(r.stdout).toMatch(/from-sandbox[\s\S]*sandbox-done[\s\S]*the bookkeeping after the session is done[\s\S]*shell-back/)
  }, 60_000)

  test("the terminal's settings a session changed are put back when it ends, before the checks after it: an R typed then (the session made R the interrupt key) interrupts nothing (red team, rounds 91 and 92)", () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    // 40,000 folders keep the search after the session busy for a while; R comes meanwhile.
    const session = `mkdir d && cd d && python3 -c "import os; [os.makedirs(os.path.join(str(i // 300), str(i % 300))) for i in range(40000)]" && cd .. && stty intr R && echo session-done`
    const script = `${process.execPath} ${BIN} -- -c '${session}'; echo "status $?"; stty -a | grep -o "intr = [^;]*"`
    const r = spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), 'session-done', 'R', 'sh', '-c', script], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', TERM: 'dumb', ANSWER_DELAY: '0.3' }, encoding: 'utf8', timeout: 60_000 })
    expect(r.stdout, r.stdout).toMatch(/session-done[\s\S]*status 0[\s\S]*intr = \^C/)
    fs.rmSync(path.join(repo, 'd'), { recursive: true, force: true })
  }, 90_000)

  test("launched from a terminal with none on stdin, stdout or stderr, the session has no terminal (/dev/tty is /dev/null): it cannot change the terminal's settings nor make it signal the caller's group, also with its output on another terminal (round 95); with the terminal on stdout only, the settings it changed are put back (red team, round 93)", () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    const session = `(stty -F /dev/tty intr R && echo tty-changed) 2>/dev/null || echo no-tty`
    const script = [
      `${process.execPath} ${BIN} -- -c '${session}' </dev/null >out 2>&1; echo "status $?"; cat out`,
      `stty -a | grep -o "intr = [^;]*"`,
      `echo | ${process.execPath} ${BIN} -- -c '${session}'; echo "status $?"`,
      `stty -a | grep -o "intr = [^;]*"`,
      // Output to a terminal of another (a pseudo-terminal of Python's), this one still controlling (round 95).
      `python3 -c "import os, subprocess, sys; m, s = os.openpty(); sys.exit(subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=s, stderr=s).returncode)" ${process.execPath} ${BIN} -- -c '${session} > other-out'; echo "status $?"; cat other-out`,
      `stty -a | grep -o "intr = [^;]*"`,
    ].join('; ')
    const r = spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), 'never-shown', '', 'sh', '-c', script], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh', TERM: 'dumb' }, encoding: 'utf8', timeout: 60_000 })
    expect(r.stdout, r.stdout).toMatch(/status 0\s+no-tty\s+intr = \^C[\s\S]*tty-changed\s+status 0\s+intr = \^C[\s\S]*status 0\s+no-tty\s+intr = \^C/)
  }, 90_000)

  test('the first launch in a project prints the audit on a terminal, once; later launches print nothing of their own', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    const run = () => inTerminal(world, repo, 'echo ready; sleep 0.2; echo WINCH; echo done')
    const first = await run()
    expect(first.stdout).toContain('claudebox: first launch in this project:')
    // Three lines: what is writable, the network, where the details are.
    const audit = first.stdout.slice(first.stdout.indexOf('claudebox: first launch')).split(/\r?\n/).slice(1, 4)
    expect(audit[0]).toMatch(/^ {2}writable: .*\/p and this project's Claude state; the rest of your home is hidden$/)
    expect(audit[1]).toMatch(/^ {2}network: allow: only api\.anthropic\.com, platform\.claude\.com, claude\.ai and 1 more, through claudebox's proxy$/)
    expect(audit[2]).toBe('  details: claudebox --check')
    const second = await run()
    expect(second.stdout).not.toContain('claudebox:')
    expect(second.stdout).toMatch(/^ready/)
  })

  test('after an interactive session, the resume command that works outside the sandbox', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    noticeGiven(world)
    // A stand-in for Claude Code that writes a transcript where Claude would, as Claude does.
    const claude = path.join(world.root, 'bin/claude')
    fs.mkdirSync(path.dirname(claude), { recursive: true })
    fs.writeFileSync(claude, `#!/bin/sh\nd="$CLAUDE_CONFIG_DIR/projects/$(pwd | sed 's/[^a-zA-Z0-9]/-/g')"\nmkdir -p "$d" && echo '{}' > "$d/0f8fad5b-d9cb-469f-a165-70867728950e.jsonl"\necho ready\n`, { mode: 0o755 })
    const run = (args: string[]) =>
      execa('python3', [path.join(FIXTURES, 'pty-resize.py'), '24', '80', process.execPath, BIN, ...args], { cwd: repo, env: { ...world.env, CLAUDEBOX_CLAUDE: claude }, extendEnv: false, reject: false, timeout: 40_000 })
    const r = await run([])
    expect(r.stdout).toContain('claudebox: resume this conversation with: claudebox --resume 0f8fad5b-d9cb-469f-a165-70867728950e')
    // Not for a one-shot prompt.
    expect((await run(['-p', 'x'])).stdout).not.toContain('resume this conversation')
  })
})
