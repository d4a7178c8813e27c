// The fault suite: hostile instance state, FIFOs, symlinks, a full disk (a small tmpfs in a mount
// namespace of the test's own, `unshare -rm`, so it runs as root and as an unprivileged user), kill
// -9 during a launch, unremovable instances. Each asserts that nothing of the user's changed or
// vanished (digests before and after), that no partial file remains, and the documented status.
import { execFile, execFileSync, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, HAVE_BWRAP, IS_ROOT, makeRepo, makeWorld, requiredTool, type World, instancePath } from '../helpers/cli.js'
import { pidScope } from '../../src/host/fs.js'

const HAVE_UNSHARE = requiredTool('unshare', ['-rm', 'true'], 'unshare (util-linux) with user namespaces')
const sh = { CLAUDEBOX_CLAUDE: '/bin/sh' }

/** sha256 of every regular file under `dir` (symlinks by target), by relative path. */
function digests(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string): void => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name)
      if (entry.isDirectory()) walk(p)
      else if (entry.isSymbolicLink()) out[path.relative(dir, p)] = `-> ${fs.readlinkSync(p)}`
      else if (entry.isFile()) out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')
    }
  }
  walk(dir)
  return out
}

function instanceOf(world: World, project: string): string {
  return instancePath(world, `${project}/.git`)
}

async function launched(world: World, project: string): Promise<string> {
  const r = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
  expect(r.exitCode, r.stderr).toBe(0)
  return instanceOf(world, project)
}

describe.skipIf(!HAVE_BWRAP)('hostile instance state', () => {
  test.each([
    ['empty', ''],
    ['relative', 'src/project\n'],
    ['multi-line', '/gone/a\n/gone/b\n'],
    ['non-UTF-8', Buffer.from([0x2f, 0x67, 0xff, 0xfe, 0x0a])],
    ['over-long', `/${'x'.repeat(5000)}\n`],
    ['not normalised', '/gone/../elsewhere\n'],
  ])('a %s project-root is a broken instance: kept by --gc --yes, listed, removed only by --gc --broken', async (_name, content) => {
    const world = makeWorld()
    const dir = path.join(world.claudeboxHome, 'instances', 'abcdef0123456789')
    fs.mkdirSync(path.join(dir, 'projects/-x'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'project-root'), content)
    fs.writeFileSync(path.join(dir, 'projects/-x/conversation.jsonl'), '{}\n')
    const before = digests(dir)
    const gc = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    expect(gc.exitCode).toBe(0)
    expect(gc.stderr).toMatch(/keeping abcdef0123456789: broken/)
    expect(digests(dir)).toEqual(before)
    expect((await claudebox(world, ['--list'], { cwd: world.home })).stdout).toMatch(/abcdef0123456789\s+broken/)
    expect((await claudebox(world, ['--gc', '--broken', '--yes'], { cwd: world.home })).exitCode).toBe(0)
    expect(fs.existsSync(dir)).toBe(false)
  })

  test('FIFOs planted as project-root, .claudebox.json and a backup hang nothing', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const instance = await launched(world, project)
    fs.mkdirSync(path.join(instance, 'backups'), { recursive: true })
    for (const p of [path.join(project, '.claudebox.json'), path.join(instance, 'backups/.claude.json.backup.1')]) {
      fs.rmSync(p, { force: true })
      execFileSync('mkfifo', [p])
    }
    const other = makeRepo(world.home, 'src/other')
    const otherInstance = await launched(world, other)
    fs.rmSync(path.join(otherInstance, 'project-root'))
    execFileSync('mkfifo', [path.join(otherInstance, 'project-root')])
    const runs: [string[], string, number[]][] = [
      [['--', '-c', 'true'], project, [2]],
      [['--dry-run'], project, [2]],
      [['--check'], project, [0, 1]],
      [['--list'], world.home, [0]],
      [['--gc', '--dry-run'], world.home, [0]],
      [['--', '-c', 'true'], other, [125]],
    ]
    for (const [args, cwd, statuses] of runs) {
      const r = await claudebox(world, args, { cwd, env: sh, timeout: 20_000 })
      expect(r.signal, `${args.join(' ')} hung`).toBeUndefined()
      expect(statuses, `${args.join(' ')}: ${r.stderr}`).toContain(r.exitCode)
    }
  })

  test('a projects/ replaced by a symlink out of the instance: --sessions lists nothing from there, --adopt renames nothing there', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const instance = await launched(world, project)
    const outside = path.join(world.home, '.claude/projects')
    fs.mkdirSync(path.join(outside, project.replaceAll('/', '-')), { recursive: true })
    fs.writeFileSync(path.join(outside, project.replaceAll('/', '-'), '11111111-1111-4111-8111-111111111111.jsonl'), '{"type":"user","message":{"role":"user","content":"PRIVATE"}}\n')
    fs.rmSync(path.join(instance, 'projects'), { recursive: true, force: true })
    fs.symlinkSync(outside, path.join(instance, 'projects'))
    const before = digests(outside)
    const sessions = await claudebox(world, ['--sessions'], { cwd: project })
    expect(sessions.stdout).not.toContain('PRIVATE')
    const moved = path.join(world.home, 'src/moved')
    fs.renameSync(project, moved)
    const adopt = await claudebox(world, ['--adopt', project, '--yes'], { cwd: moved })
    expect(adopt.exitCode, adopt.stderr).toBe(0)
    expect(digests(outside)).toEqual(before)
    expect(fs.readdirSync(outside)).toEqual([project.replaceAll('/', '-')])
  })

  test("an instance this user cannot remove to the end is left untouched by --gc, never stranded as .trash", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const instance = await launched(world, project)
    fs.mkdirSync(path.join(instance, 'locked/inner'), { recursive: true })
    fs.writeFileSync(path.join(instance, 'locked/inner/file'), 'x')
    fs.chmodSync(path.join(instance, 'locked'), 0o500)
    fs.rmSync(project, { recursive: true })
    const r = await claudebox(world, ['--gc', '--yes'], { cwd: world.home })
    const names = fs.readdirSync(path.join(world.claudeboxHome, 'instances'))
    expect(names.filter(n => n.startsWith('.trash'))).toEqual([])
    if (IS_ROOT) {
      // root may remove anything: removed completely
      expect(names).not.toContain(path.basename(instance))
    } else {
      expect(r.stderr).toMatch(/kept [0-9a-f]{16}: .*locked cannot be removed by you/)
      expect(fs.readFileSync(path.join(instance, 'locked/inner/file'), 'utf8')).toBe('x')
    }
    if (fs.existsSync(instance)) fs.chmodSync(path.join(instance, 'locked'), 0o700)
  })
})

describe.skipIf(!HAVE_BWRAP || !HAVE_UNSHARE)('a full disk (a 2 MiB tmpfs as CLAUDEBOX_HOME, in a mount namespace of the test)', () => {
  /** Runs `script` with CLAUDEBOX_HOME on a fresh small tmpfs; `$CB` runs claudebox. */
  async function onSmallDisk(world: World, cwd: string, script: string): Promise<string> {
    const full = [
      'set -u',
      `mount -t tmpfs -o size=2m tmpfs '${world.claudeboxHome}'`,
      `CB="node ${BIN}"`,
      'fill() { head -c 4M /dev/zero > "$CLAUDEBOX_HOME/filler" 2>/dev/null; true; }',
      script,
    ].join('\n')
    fs.mkdirSync(world.claudeboxHome, { recursive: true })
    const { stdout } = await promisify(execFile)('unshare', ['-rm', 'sh', '-c', full], { cwd, env: { ...world.env, ...sh }, timeout: 60_000 })
    return stdout
  }

  test('a first launch with no space: 125 naming the full disk, and no instance left behind', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const out = await onSmallDisk(world, project, [
      'fill',
      '$CB -- -c "echo RAN" 2>err; echo "status=$?"',
      'cat err',
      `ls "$CLAUDEBOX_HOME/instances" 2>/dev/null | wc -l | sed 's/^/instances=/'`,
    ].join('\n'))
    expect(out).toContain('status=125')
    expect(out).not.toContain('RAN')
    expect(out).toMatch(/the disk is full \(ENOSPC\)|ENOSPC/)
    expect(out).toContain('instances=0')
  })

  test('output that cannot be written (stdout on the full disk) is a failure, not status 0 and nothing', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const out = await onSmallDisk(world, project, [
      'fill',
      '$CB --help > "$CLAUDEBOX_HOME/out" 2>err; echo "help=$?"',
      '$CB --version > "$CLAUDEBOX_HOME/out" 2>>err; echo "version=$?"',
      'st=$({ { $CB --help; echo $? >&3; } | head -c 1 >/dev/null; } 3>&1); echo "gone=$st"',
      'grep -c "Unhandled" err || true',
    ].join('\n'))
    expect(out).toContain('help=1')
    expect(out).toContain('version=1')
    expect(out).toContain('gone=0') // a reader that went away is its choice
    expect(out).toMatch(/^0$/m)
  })

  test('a later launch with no space: 125, and no empty session record left', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const out = await onSmallDisk(world, project, [
      '$CB -- -c true 2>/dev/null; echo "first=$?"',
      'fill',
      'for i in 1 2 3; do $CB -- -c "echo RAN" 2>err; echo "status=$?"; done',
      'cat err',
      'find "$CLAUDEBOX_HOME" -path "*sessions/*" | sed "s/^/RECORD /"',
      // A lock made but not written (no room for its token) held each later launch ~10 s.
      'find "$CLAUDEBOX_HOME" -name "*.lock" -o -name "*-lock" | sed "s/^/LOCK /"',
    ].join('\n'))
    expect(out).toContain('first=0')
    expect(out.match(/status=125/g)).toHaveLength(3)
    expect(out).not.toContain('RAN')
    expect(out).not.toMatch(/^RECORD /m)
    expect(out).not.toMatch(/^LOCK /m)
    // bwrap never got as far as complaining: the launcher waited for it before removing its sockets.
    expect(out).not.toContain('bwrap:')
  })

  test("a disk that fills during the session: Claude's status passes through, no partial JSON is left", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const out = await onSmallDisk(world, project, [
      '$CB -- -c "true" 2>/dev/null; echo "first=$?"',
      // The agent fills the disk from inside (its instance is on it), then exits 3.
      `$CB -- -c 'head -c 4M /dev/zero > "$CLAUDE_CONFIG_DIR/fill" 2>/dev/null; echo "{\\"big\\": \\"$(head -c 3000 /dev/zero | tr "\\\\0" x)\\"}" > "$CLAUDE_CONFIG_DIR/.claude.json"; exit 3' 2>err; echo "status=$?"`,
      'cat err',
      // The next launch on the full disk, with no code cache: its write fails (a partial temp file once stayed).
      'rm -rf "$CLAUDEBOX_HOME/cache"; $CB -- -c "true" 2>/dev/null; echo "third=$?"',
      'for f in $(find "$CLAUDEBOX_HOME/shared" -type f \\( -name "*.json" -o -name "*.json.[0-9]*" \\)); do node -e "JSON.parse(require(\\"fs\\").readFileSync(process.argv[1],\\"utf8\\"))" "$f" 2>/dev/null || echo "INVALID $f"; done',
      'find "$CLAUDEBOX_HOME" \\( -name "*.tmp.*" -o -name "*.tmp" \\) | sed "s/^/TEMP /"',
      'find "$CLAUDEBOX_HOME" -path "*sessions/*" -size 0 | sed "s/^/EMPTY /"',
    ].join('\n'))
    expect(out).toContain('first=0')
    expect(out).toContain('status=3')
    expect(out).not.toMatch(/^INVALID /m)
    expect(out).not.toMatch(/^TEMP /m)
    expect(out).not.toMatch(/^EMPTY /m)
  })

  test('--adopt on a full disk changes nothing: the instance keeps its root and conversations', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const moved = path.join(world.home, 'src/moved')
    const out = await onSmallDisk(world, project, [
      `$CB -- -c 'mkdir -p "$CLAUDE_CONFIG_DIR/projects/x" && echo conversation > "$CLAUDE_CONFIG_DIR/projects/x/c.jsonl"' 2>/dev/null; echo "first=$?"`,
      'before=$(cd "$CLAUDEBOX_HOME/instances" && find . -type f | sort | xargs sha256sum)',
      `mv '${project}' '${moved}'`,
      'fill',
      `cd '${moved}' && $CB --adopt '${project}' --yes 2>err; echo "status=$?"`,
      'cat err',
      'after=$(cd "$CLAUDEBOX_HOME/instances" && find . -type f | sort | xargs sha256sum)',
      '[ "$before" = "$after" ] && echo UNCHANGED || { echo "$before"; echo ---; echo "$after"; }',
    ].join('\n'))
    expect(out).toContain('first=0')
    expect(out).toContain('status=125')
    expect(out).toMatch(/nothing was changed/)
    expect(out).toContain('UNCHANGED')
  })

  test('a read-only state dir: 125 naming the directory and the fix', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const out = await onSmallDisk(world, project, [
      '$CB -- -c true 2>/dev/null; echo "first=$?"',
      'mount --bind "$CLAUDEBOX_HOME" "$CLAUDEBOX_HOME" && mount -o remount,bind,ro "$CLAUDEBOX_HOME"',
      '$CB -- -c "echo RAN" 2>err; echo "status=$?"',
      'cat err',
    ].join('\n'))
    expect(out).toContain('first=0')
    expect(out).toContain('status=125')
    expect(out).not.toContain('RAN')
    expect(out).toMatch(/cannot write in .*\(EROFS\); make it writable/)
    expect(out).not.toMatch(/internal error/)
  })
})

describe.skipIf(!HAVE_BWRAP || !HAVE_UNSHARE)('a /dev/urandom that gives nothing (/dev/null bound over it in a mount namespace of the test)', () => {
  test('the launch works: random names and the placeholder come from node:crypto instead (it used to spin for ever)', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const script = `mount --bind /dev/null /dev/urandom && [ "$(head -c 4 /dev/urandom | wc -c)" = 0 ] && node ${BIN} -- -c 'echo "ran $ANTHROPIC_API_KEY"'`
    const { stdout } = await promisify(execFile)('unshare', ['-rm', 'sh', '-c', script], { cwd: project, env: { ...world.env, ...sh, ANTHROPIC_API_KEY: 'sk-ant-real' }, timeout: 30_000 })
    // The sandbox holds this session's placeholder, 48 hex digits, never the real key.
    expect(stdout).toMatch(/^ran \S*[0-9a-f]{48}\S*\n$/)
    expect(stdout).not.toContain('sk-ant-real')
  })
})

describe.skipIf(!HAVE_BWRAP)('kill -9 during a launch', () => {
  test('at a few points: every instance left has its project-root, and the next launch works', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    for (const delay of [5, 20, 40, 80, 150]) {
      const child = spawn(process.execPath, [BIN, '--', '-c', 'sleep 5'], { cwd: project, env: { ...world.env, ...sh }, stdio: 'ignore' })
      const exited = new Promise(resolve => child.once('exit', resolve))
      await new Promise(resolve => setTimeout(resolve, delay))
      child.kill('SIGKILL')
      await exited
      const instances = path.join(world.claudeboxHome, 'instances')
      for (const name of fs.existsSync(instances) ? fs.readdirSync(instances).filter(n => /^[0-9a-f]{16}$/.test(n)) : []) {
        const root = path.join(instances, name, 'project-root')
        // The instance dir may exist without its root only while nothing else was written into it
        // (the temp file of the root itself, when the kill came while it was written).
        if (!fs.existsSync(root)) expect(fs.readdirSync(path.join(instances, name)).filter(n => n !== 'claudebox' && !/^\.project-root\.tmp\.\d+-([0-9a-f]{8}|unknown)\.[0-9a-f]*$/.test(n))).toEqual([])
      }
    }
    const r = await claudebox(world, ['--', '-c', 'echo AGAIN'], { cwd: project, env: sh })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('AGAIN')
    // The next launch removed what the killed ones left while writing.
    const left = execFileSync('find', [world.claudeboxHome, '-name', '.project-root.tmp.*'], { encoding: 'utf8' })
    expect(left).toBe('')
  })

  test("a launcher killed during its session: the next launch here makes the checks that session's end never made (a .git leading out of the project, a file that runs outside), not while another session of the project runs", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const plant = `mkdir -p n && echo "gitdir: ${world.root}/later" > n/.git && echo 'echo hi' > .envrc && echo planted && exec sleep 60`
    const child = spawn(process.execPath, [BIN, '--', '-c', plant], { cwd: project, env: { ...world.env, ...sh }, stdio: ['ignore', 'pipe', 'ignore'] })
    const exited = new Promise(resolve => child.once('exit', resolve))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('planted') && resolve())
      setTimeout(() => reject(new Error('the session never planted')), 30_000)
    })
    // Another session of the project, while the planting one still runs: not gone, nothing made for it.
    const beside = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(beside.stderr).not.toMatch(/ended without claudebox's checks/)
    child.kill('SIGKILL')
    await exited
    const sessions = path.join(instanceOf(world, project), 'claudebox/sessions')
    expect(fs.readdirSync(sessions)).toHaveLength(1)
    expect(fs.lstatSync(path.join(project, 'n/.git'), { throwIfNoEntry: false })?.isFile()).toBe(true)
    const check = await claudebox(world, ['--check'], { cwd: project, env: sh })
    expect(check.stdout).toMatch(/warn unfinished session: one that began \S+ ended without claudebox's checks at its end .*start claudebox here once/)
    const next = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(next.exitCode, next.stderr).toBe(0)
    expect(next.stderr).toMatch(/a session of this project that started \S+ \(launcher pid \d+\) ended without claudebox's checks at its end/)
    expect(next.stderr).toContain(`${path.join(project, 'n/.git')} -> `)
    expect(next.stderr).toMatch(/files that run code outside the sandbox changed since then: \.envrc \(created\)/)
    expect(fs.lstatSync(path.join(project, 'n/.git'), { throwIfNoEntry: false })).toBeUndefined()
    expect(fs.readdirSync(sessions)).toEqual([])
    const after = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(after.stderr).not.toMatch(/ended without claudebox's checks/)
    expect((await claudebox(world, ['--check'], { cwd: project, env: sh })).stdout).not.toMatch(/unfinished session/)
  })

  test("a launcher stopped, then killed, while its session made a name the watch guarded while missing (an include of the config): the next launch moves it aside, not takes it for the user's own (red team, round 74: git status then ran its fsmonitor)", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    execFileSync('git', ['-C', project, 'config', 'include.path', 'extra.inc'])
    const plant = `touch running && while [ ! -e go ]; do sleep 0.05; done; printf '[core]\\n\\tfsmonitor = false\\n' > .git/extra.inc; exec sleep 60`
    const child = spawn(process.execPath, [BIN, '--', '-c', plant], { cwd: project, env: { ...world.env, ...sh }, stdio: 'ignore' })
    const exited = new Promise(resolve => child.once('exit', resolve))
    const sessions = path.join(instanceOf(world, project), 'claudebox/sessions')
    const until = async (done: () => boolean): Promise<void> => {
      for (const end = Date.now() + 30_000; !done(); ) {
        if (Date.now() > end) throw new Error('waited 30 s')
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    }
    // Running: its record written and the go given.
    await until(() => fs.existsSync(path.join(project, 'running')) && fs.readdirSync(sessions).length === 1)
    // Stalled (memory pressure), its watch moves nothing; then killed (an out-of-memory killer).
    child.kill('SIGSTOP')
    fs.writeFileSync(path.join(project, 'go'), '')
    await until(() => fs.existsSync(path.join(project, '.git/extra.inc')))
    child.kill('SIGKILL')
    await exited
    const next = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(next.exitCode, next.stderr).toBe(0)
    expect(next.stderr).toContain(`${path.join(project, '.git/extra.inc')} -> `)
    expect(fs.existsSync(path.join(project, '.git/extra.inc'))).toBe(false)
    expect(fs.readdirSync(sessions)).toEqual([])
  })

  test("a first launch killed while it wrote project-root: the next one writes it and removes the killed one's temp file", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const first = await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })
    expect(first.exitCode, first.stderr).toBe(0)
    const instance = instanceOf(world, project)
    const gone = spawn('true')
    await new Promise(resolve => gone.once('exit', resolve))
    fs.rmSync(path.join(instance, 'project-root'))
    const stale = path.join(instance, `.project-root.tmp.${gone.pid}.0ddba11`)
    const alive = path.join(instance, `.project-root.tmp.${process.pid}.0ddba11`)
    // Today's names carry the pid namespace: ours when its launcher is gone goes; another's stays
    // (a launcher in a container with this pid may be writing it: red team, round 53).
    const staleScoped = path.join(instance, `.project-root.tmp.${gone.pid}-${pidScope()}.0ddba11`)
    const otherScope = path.join(instance, `.project-root.tmp.${gone.pid}-0000ffff.0ddba11`)
    for (const file of [stale, staleScoped, otherScope]) fs.writeFileSync(file, 'half')
    fs.writeFileSync(alive, 'being written')
    const r = await claudebox(world, ['--', '-c', 'echo AGAIN'], { cwd: project, env: sh })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(fs.readFileSync(path.join(instance, 'project-root'), 'utf8')).toBe(`${fs.realpathSync(project)}/.git\n`)
    expect(fs.existsSync(stale)).toBe(false)
    expect(fs.existsSync(staleScoped)).toBe(false)
    expect(fs.existsSync(otherScope)).toBe(true)
    expect(fs.existsSync(alive)).toBe(true) // a launcher that still runs may still be writing it
  })
})

describe.skipIf(!HAVE_BWRAP)('a project removed while the launch starts', () => {
  test("is claudebox's 125 with the reason, not bwrap's status 1", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const bwrap = path.join(world.root, 'bwrap-after-rm')
    // Stands in for the moment between the probe and bwrap: the project goes away, then bwrap runs.
    // Again until it is gone: the git watch puts back what it guards in .git while rm -rf walks it,
    // and rm then fails with "Directory not empty" (CI saw it twice in ~20 runs). Not moved: the
    // project is bound through a descriptor, so a moved one still starts.
    fs.writeFileSync(bwrap, `#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do rm -rf '${project}' 2>/dev/null && break; done\nexec bwrap "$@"\n`, { mode: 0o755 })
    const r = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { ...sh, CLAUDEBOX_BWRAP: bwrap } })
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/no longer exists \(removed while claudebox started\)/)
  })
})

describe.skipIf(!HAVE_BWRAP)('the sandbox not built as planned', () => {
  /** A bwrap that runs the real one with its arguments rewritten by `edit` (bash, on the array a). */
  function bwrapEditing(world: World, edit: string): string {
    const bwrap = path.join(world.root, 'bwrap-edit')
    fs.writeFileSync(bwrap, `#!/bin/bash\na=("$@")\n${edit}\nexec bwrap "\${a[@]}"\n`, { mode: 0o755 })
    return bwrap
  }
  /** The index of the first `--ro-bind-fd N <target>` whose target ends with `suffix`. */
  const findRoBind = (suffix: string): string =>
    `for i in "\${!a[@]}"; do [ "\${a[$i]}" = --ro-bind-fd ] && [[ "\${a[$((i+2))]}" == *${suffix} ]] && { k=$i; break; }; done; [ -n "$k" ] || { echo NO-BIND >&2; exit 99; }`

  test('a pinned read-only bind mounted writable (a swap while bwrap mounted it): 125, nothing ran, the config untouched', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const bwrap = bwrapEditing(world, `${findRoBind('/.git/config')}; a[$k]=--bind-fd`)
    const r = await claudebox(world, ['--', '-c', 'echo RAN; echo x >> .git/config'], { cwd: project, env: { ...sh, CLAUDEBOX_BWRAP: bwrap } })
    expect(r.stderr).not.toContain('NO-BIND')
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/the sandbox was not built as planned: .*\.git\/config is mounted writable where it should be read-only.*nothing ran/)
    expect(fs.readFileSync(path.join(project, '.git/config'), 'utf8')).not.toMatch(/^x$/m)
  })

  test('a pinned bind that landed elsewhere: 125, nothing ran', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    // The bind of .git/config taken out: as if its mount had gone to where a symlink pointed.
    const bwrap = bwrapEditing(world, `${findRoBind('/.git/config')}; unset "a[$k]" "a[$((k+1))]" "a[$((k+2))]"`)
    const r = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { ...sh, CLAUDEBOX_BWRAP: bwrap } })
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/\.git\/config is not mounted where planned/)
  })

  test("a mount bwrap refuses after it reported the sandbox: claudebox's 125, not bwrap's 1 read as the program's", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const bwrap = bwrapEditing(world, `n=\${#a[@]}; for i in "\${!a[@]}"; do [ "\${a[$i]}" = --chdir ] && { a=("\${a[@]:0:$i}" --ro-bind /nonexistent-claudebox-test /mnt/x "\${a[@]:$i}"); break; }; done`)
    const r = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { ...sh, CLAUDEBOX_BWRAP: bwrap } })
    expect(r.stderr).toMatch(/Can't find source path/)
    expect(r.exitCode).toBe(125)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/bwrap could not set up the sandbox \(status 1, message above\); the program never ran/)
  })

  test('a session that ends with 1 keeps its 1', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const r = await claudebox(world, ['--', '-c', 'echo RAN; exit 1'], { cwd: project, env: sh })
    expect(r.exitCode).toBe(1)
    expect(r.stdout.trim()).toBe('RAN')
    expect(r.stderr).not.toMatch(/could not set up/)
  })
})

describe.skipIf(!HAVE_BWRAP)('kill -9 during --adopt', () => {
  test('at a few points: the conversations are in exactly one instance, whose project-root matches it', async () => {
    for (const delay of [1, 10, 30, 60, 120]) {
      const world = makeWorld()
      const project = makeRepo(world.home, 'src/project')
      const old = instanceOf(world, project)
      expect((await claudebox(world, ['--', '-c', 'mkdir -p "$CLAUDE_CONFIG_DIR/projects/x" && echo talk > "$CLAUDE_CONFIG_DIR/projects/x/c.jsonl"'], { cwd: project, env: sh })).exitCode).toBe(0)
      const moved = path.join(world.home, 'src/moved')
      fs.renameSync(project, moved)
      const child = spawn(process.execPath, [BIN, '--adopt', project, '--yes'], { cwd: moved, env: { ...world.env, ...sh }, stdio: 'ignore' })
      // Listened for from the start: --adopt may finish before the kill (it takes ~50 ms here).
      const exited = new Promise(resolve => child.once('exit', resolve))
      await new Promise(resolve => setTimeout(resolve, delay))
      child.kill('SIGKILL')
      await exited
      const fresh = instanceOf(world, moved)
      const holders = [old, fresh].filter(dir => fs.existsSync(path.join(dir, 'projects/x/c.jsonl')))
      expect(holders, `delay ${delay} ms`).toHaveLength(1)
      const holder = holders[0] as string
      // Never a root that is gone (which --gc would remove): at the new id the new root; at the old
      // id the old root, or the new one when killed between the two renames.
      const root = fs.readFileSync(path.join(holder, 'project-root'), 'utf8').trim()
      expect(holder === fresh ? [`${moved}/.git`] : [`${project}/.git`, `${moved}/.git`], `delay ${delay} ms`).toContain(root)
      const gc = await claudebox(world, ['--gc', '--yes', '--force'], { cwd: world.home })
      expect(gc.exitCode).toBe(0)
      if (root === `${moved}/.git`) expect(fs.existsSync(path.join(holder, 'projects/x/c.jsonl')), `delay ${delay} ms`).toBe(true)
    }
  })
})
