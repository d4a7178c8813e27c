// What claudebox runs on the host is out of the session's reach: its own files and the node it
// runs on, which the next `claudebox` in any project runs (red team, round 99: a session in a
// project holding the checkout claudebox ran from appended code to its bin/claudebox.js), and the
// git it runs during and after a session (round 100: a git planted in an activated virtualenv's
// bin/ in the project ran on the host at the next index write, 3 of 3).
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { git, HAVE_BWRAP, makeRepo, makeWorld, REPO, tempDir, type World } from '../helpers/cli.js'

/** A copy of the built package (bin/, dist/, package.json) in `dir`; its bin/claudebox.js. */
function copyPackage(dir: string): string {
  for (const part of ['bin', 'dist', 'package.json']) fs.cpSync(path.join(REPO, part), path.join(dir, part), { recursive: true })
  return path.join(dir, 'bin/claudebox.js')
}

/** A repository in the home whose one commit holds the package, as a clone of claudebox's would. */
function packageRepo(world: World, name: string): string {
  const repo = makeRepo(world.home, name)
  copyPackage(repo)
  git(repo, 'add', '-A')
  git(repo, 'commit', '-qm', 'the package')
  return repo
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

  test("a git in a folder of the project on PATH (an activated virtualenv's bin/) is never run by claudebox: one the session puts there, at its index writes and at its end; one there at the next launch, also in a layout only git can read, and by --check", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const venv = path.join(project, '.venv/bin')
    fs.mkdirSync(venv, { recursive: true })
    const marker = path.join(world.root, 'git-ran')
    const env = { PATH: `${venv}:${world.env['PATH'] ?? ''}` }
    const ran = (): string => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '')
    const plant = `printf '#!/bin/sh\\necho "$*" >> ${marker}\\nexec /usr/bin/git "$@"\\n' > .venv/bin/git && chmod +x .venv/bin/git && echo x > f && /usr/bin/git add f && sleep 1 && echo PLANTED`
    const r = await run(world, path.join(REPO, 'bin/claudebox.js'), project, [], plant, env)
    expect(r.out, r.err).toBe('PLANTED')
    expect(ran()).toBe('')
    const next = await run(world, path.join(REPO, 'bin/claudebox.js'), project, [], 'echo RAN', env)
    expect(next.out, next.err).toBe('RAN')
    // A folder whose .git is a symlink is a layout git itself is asked about (and then refused).
    fs.mkdirSync(path.join(project, 'sub'))
    fs.symlinkSync(path.join(project, '.git'), path.join(project, 'sub/.git'))
    expect((await run(world, path.join(REPO, 'bin/claudebox.js'), path.join(project, 'sub'), [], 'echo RAN', env)).err).toContain('refusing to trust this repository')
    const check = await execa(process.execPath, [path.join(REPO, 'bin/claudebox.js'), '--check'], { cwd: project, env: { ...world.env, ...env }, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 })
    expect(String(check.stdout)).toMatch(/git: git version/)
    expect(ran()).toBe('')
  })

  test('--check runs no program of the host that lies where the sandbox writes (a Claude in the project): it says so instead', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const marker = path.join(world.root, 'claude-ran')
    const claude = path.join(project, 'node_modules/.bin/claude')
    fs.mkdirSync(path.dirname(claude), { recursive: true })
    fs.writeFileSync(claude, `#!/bin/sh\ntouch ${marker}\necho 2.1.0\n`, { mode: 0o755 })
    const check = await execa(process.execPath, [path.join(REPO, 'bin/claudebox.js'), '--check'], { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: claude }, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 })
    expect(String(check.stdout)).toContain(`not run, being in a folder the sandbox can write (a session could have put them there): ${claude}`)
    expect(fs.existsSync(marker)).toBe(false)
  })

  test('round 100: a dist/ linked into the project, a node in the project reached by an empty PATH entry, and a linked worktree of the clone claudebox runs from: each refused (125)', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const pkg = path.join(tempDir('cb-tools-'), 'claudebox')
    const bin = copyPackage(pkg)
    fs.renameSync(path.join(pkg, 'dist'), path.join(project, 'dist'))
    fs.symlinkSync(path.join(project, 'dist'), path.join(pkg, 'dist'))
    const linked = await run(world, bin, project, [], 'echo RAN')
    expect(linked.code, linked.err).toBe(125)
    expect(linked.err).toContain(`refusing to start: ${path.join(project, 'dist')}, which runs claudebox itself`)
    fs.rmSync(path.join(pkg, 'dist'))
    fs.renameSync(path.join(project, 'dist'), path.join(pkg, 'dist'))
    fs.symlinkSync(process.execPath, path.join(project, 'node'))
    const empty = await run(world, bin, project, [], 'echo RAN', { PATH: `:${world.env['PATH'] ?? ''}` })
    expect(empty.code, empty.err).toBe(125)
    expect(empty.err).toContain(`refusing to start: ${path.join(project, 'node')}, which runs claudebox itself`)
    fs.rmSync(path.join(project, 'node'))
    // A clone of claudebox run from its main checkout, with a linked worktree of it as the project.
    const clone = packageRepo(world, 'src/claudebox')
    const cloneBin = path.join(clone, 'bin/claudebox.js')
    const worktree = path.join(world.home, 'src/claudebox-feature')
    git(clone, 'worktree', 'add', '-q', worktree)
    const shared = await run(world, cloneBin, worktree, [], 'echo RAN')
    expect(shared.code, shared.err).toBe(125)
    expect(shared.err).toContain(`claudebox runs from a checkout whose git data (${path.join(clone, '.git')}) lies in ${path.join(clone, '.git')}, which the session may write`)
  })

  test("round 101: claudebox run from a linked worktree of its clone, with the main checkout or another worktree as the project, and from a worktree of a bare clone: each refused (125)", async () => {
    const world = makeWorld()
    const clone = packageRepo(world, 'src/claudebox')
    const [mine, other] = [path.join(world.home, 'src/cb-mine'), path.join(world.home, 'src/cb-other')]
    git(clone, 'worktree', 'add', '-q', mine)
    git(clone, 'worktree', 'add', '-q', other)
    const bare = path.join(world.home, 'src/bare.git')
    git(world.home, 'clone', '-q', '--bare', clone, bare)
    const [bareMine, bareOther] = [path.join(world.home, 'src/bare-mine'), path.join(world.home, 'src/bare-other')]
    git(bare, 'worktree', 'add', '-q', bareMine, 'main')
    git(bare, 'worktree', 'add', '-q', '-b', 'feature', bareOther)
    for (const [from, project] of [[mine, clone], [mine, other], [bareMine, bareOther]] as const) {
      const r = await run(world, path.join(from, 'bin/claudebox.js'), project, [], 'echo RAN')
      expect(r.code, `${from} in ${project}: ${r.err}`).toBe(125)
      expect(r.err).toContain('claudebox runs from a checkout whose git data (')
    }
  })

  test('round 101: --check makes nothing in TMPDIR, which may be a folder of the project (a session swapped the Landlock helper --check wrote there, and --check ran it)', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    // A TMPDIR that cannot be used: --check must not need it.
    const check = await execa(process.execPath, [path.join(REPO, 'bin/claudebox.js'), '--check'], { cwd: project, env: { ...world.env, TMPDIR: path.join(project, '.tmp-never-made') }, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 })
    expect(String(check.stderr)).not.toContain('internal error')
    expect(String(check.stdout)).toMatch(/Landlock scope/)
  })

  test("round 102: claudebox run from a submodule of the project's repository (checked out in another worktree of it), or from a clone that borrows the project's objects (--reference): each refused (125)", async () => {
    const world = makeWorld()
    const upstream = packageRepo(world, 'src/claudebox-upstream')
    const project = makeRepo(world.home, 'src/project')
    git(project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', upstream, 'tools/claudebox')
    git(project, 'commit', '-qm', 'claudebox as a submodule')
    const worktree = path.join(world.home, 'src/project-feature')
    git(project, 'worktree', 'add', '-q', worktree)
    const fromSubmodule = await run(world, path.join(project, 'tools/claudebox/bin/claudebox.js'), worktree, [], 'echo RAN')
    expect(fromSubmodule.code, fromSubmodule.err).toBe(125)
    expect(fromSubmodule.err).toContain(`claudebox runs from a checkout whose git data (${path.join(project, '.git/modules/tools/claudebox')}) lies in ${path.join(project, '.git')}`)
    const borrowing = path.join(world.home, 'src/claudebox-borrowing')
    git(world.home, 'clone', '-q', '--reference', upstream, upstream, borrowing)
    const fromClone = await run(world, path.join(borrowing, 'bin/claudebox.js'), upstream, [], 'echo RAN')
    expect(fromClone.code, fromClone.err).toBe(125)
    expect(fromClone.err).toContain(`claudebox runs from a checkout whose git data (${path.join(upstream, '.git/objects')}) lies in ${upstream}, which`)
    // Its alternates file a link elsewhere (round 104: read without following it, it named nothing).
    const alternates = path.join(borrowing, '.git/objects/info/alternates')
    const elsewhere = path.join(world.root, 'alternates')
    fs.renameSync(alternates, elsewhere)
    fs.symlinkSync(elsewhere, alternates)
    const linked = await run(world, path.join(borrowing, 'bin/claudebox.js'), upstream, [], 'echo RAN')
    expect(linked.code, linked.err).toBe(125)
  })
})
