// The escape suite, the repository's own config and the command line: an approved .claudebox.json
// that the agent rewrites is not applied, a repository's host list cannot ride on the user's
// --network=allow, and a prompt that looks like a claudebox option reaches Claude as text.
import { spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { BIN, claudebox, FIXTURES, HAVE_BWRAP, IS_ROOT, makeRepo, makeWorld, noticeGiven, type World } from '../helpers/cli.js'

const sh = { CLAUDEBOX_CLAUDE: '/bin/sh' }

function approvedProject(content: string): { world: ReturnType<typeof makeWorld>; project: string } {
  const world = makeWorld()
  const project = makeRepo(world.home, 'src/project')
  fs.writeFileSync(path.join(project, '.claudebox.json'), content)
  const sha256 = crypto.createHash('sha256').update(content).digest('hex')
  fs.mkdirSync(world.claudeboxHome, { recursive: true })
  fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), JSON.stringify({ approvedProjects: [{ root: project, sha256 }] }))
  return { world, project }
}

describe.skipIf(!HAVE_BWRAP)('the repository config and the command line cannot widen the sandbox', () => {
  test('an approved .claudebox.json rewritten by the agent is refused at the next launch, naming what changed', async () => {
    const { world, project } = approvedProject('{"env": ["EDITOR"]}\n')
    const first = await claudebox(world, ['--', '-c', 'echo \'{"env": ["EDITOR"], "writableGitConfig": true, "roBind": ["~/.ssh"]}\' > .claudebox.json'], { cwd: project, env: sh })
    expect(first.exitCode).toBe(0)
    const second = await claudebox(world, ['--', '-c', 'echo RAN; echo x >> .git/config'], { cwd: project, env: sh })
    expect(second.exitCode).toBe(2)
    expect(second.stdout).toBe('')
    expect(second.stderr).toMatch(/changed since you approved it; it now would widen the sandbox \(makes \.git\/config writable; adds --ro-bind ~\/\.ssh; adds --env EDITOR\)/)
    expect(second.stderr).toMatch(/"sha256":"[0-9a-f]{64}"/)
  })

  test("a repository's allowHosts does not ride on --network=allow from the command line", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    fs.writeFileSync(path.join(project, '.claudebox.json'), '{"allowHosts": ["*:*"]}')
    const r = await claudebox(world, ['--network=allow', '--', '-c', 'echo RAN'], { cwd: project, env: sh })
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/adds --allow-host \*:\*/)
  })

  test('a prompt that looks like a claudebox option reaches Claude as text, and binds nothing', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const r = await claudebox(world, ['-c', 'test -e "$HOME/.ssh" && echo VISIBLE; echo "ARG=$0"', `--ro-bind=${world.home}/.ssh`], { cwd: project, env: sh })
    expect(r.exitCode).toBe(0)
    expect(r.stdout.trim()).toBe(`ARG=--ro-bind=${world.home}/.ssh`)
  })

  test('a mistyped modifier of --gc removes nothing: usage error, did you mean', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    expect((await claudebox(world, ['--', '-c', 'true'], { cwd: project, env: sh })).exitCode).toBe(0)
    fs.rmSync(project, { recursive: true })
    const instances = path.join(world.claudeboxHome, 'instances')
    const before = fs.readdirSync(instances)
    const r = await claudebox(world, ['--gc', '--yes', '--dryrun'], { cwd: world.home })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--gc does not take "--dryrun" \(did you mean --dry-run\?\)/)
    expect(fs.readdirSync(instances)).toEqual(before)
  })

  test("no variable's value is in any process's argv on the host, and the sandbox still gets it", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const marker = `hdr-${crypto.randomBytes(6).toString('hex')}`
    const env = { ...sh, ANTHROPIC_CUSTOM_HEADERS: `X-Key: ${marker}`, ANTHROPIC_BASE_URL: `https://u:pw-${marker}@gw.example`, LANG: `C.UTF-8` }
    // --env NAME: the base URL whole, password and all (without it the sandbox gets the URL without them: round 140).
    const running = claudebox(world, ['--env', 'ANTHROPIC_BASE_URL', '--', '-c', 'echo "$ANTHROPIC_CUSTOM_HEADERS|$ANTHROPIC_BASE_URL"; sleep 1.5'], { cwd: project, env })
    let seenInArgv = false
    for (let i = 0; i < 10; i++) {
      await new Promise(resolve => setTimeout(resolve, 100))
      for (const pid of fs.readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
        try {
          if (fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(marker)) seenInArgv = true
        } catch {
          // gone meanwhile
        }
      }
    }
    const r = await running
    expect(r.stdout.trim()).toBe(`X-Key: ${marker}|https://u:pw-${marker}@gw.example`)
    expect(seenInArgv).toBe(false)
  })

  test('on a terminal a widening file is shown and asked: no keeps it refused, yes records its digest, a change asks again', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    fs.writeFileSync(path.join(project, '.claudebox.json'), '{"env": ["EDITOR"]}')
    noticeGiven(world)
    fs.rmSync(path.join(world.claudeboxHome, 'config.json'), { force: true })
    const env = { ...world.env, ...sh, EDITOR: 'vi' }
    const run = (answer: string) =>
      spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), '[y/N]', answer, process.execPath, BIN, '--', '-c', 'echo "EDITOR=$EDITOR"'], { cwd: project, env, encoding: 'utf8', timeout: 40_000 })
    const no = run('n')
    expect(no.stdout).toMatch(/asks to widen the sandbox of [^\n]*\n[^\n]*adds --env EDITOR/)
    expect(no.stdout).not.toContain('EDITOR=vi')
    expect(no.status).toBe(2)
    expect(fs.existsSync(path.join(world.claudeboxHome, 'config.json'))).toBe(false)
    const yes = run('y')
    expect(yes.stdout).toContain('EDITOR=vi')
    const config = JSON.parse(fs.readFileSync(path.join(world.claudeboxHome, 'config.json'), 'utf8')) as { approvedProjects: { root: string; sha256: string }[] }
    expect(config.approvedProjects).toEqual([{ root: project, sha256: crypto.createHash('sha256').update('{"env": ["EDITOR"]}').digest('hex') }])
    // --yes does not answer it, and a changed file is asked again.
    fs.writeFileSync(path.join(project, '.claudebox.json'), '{"env": ["EDITOR", "AWS_SECRET_ACCESS_KEY"]}')
    const withYes = await claudebox(world, ['--yes', '--', '-c', 'echo RAN'], { cwd: project, env: sh })
    expect(withYes.exitCode).toBe(2)
    expect(withYes.stdout).toBe('')
    const again = run('n')
    expect(again.stdout).toMatch(/adds --env EDITOR, AWS_SECRET_ACCESS_KEY/)
    // A file claudebox refuses outright (a typo) is said as such on a terminal too, not asked (it
    // became an internal error: red team).
    fs.writeFileSync(path.join(project, '.claudebox.json'), '{"roBinds": ["d"]}')
    const typo = run('n')
    expect(typo.status, typo.stdout).toBe(2)
    expect(typo.stdout).toMatch(/unknown key "roBinds"/)
    expect(typo.stdout).not.toContain('internal error')
  })

  test('rounds 90 to 92: a value with newlines or wide blanks is refused, a bind through a link too; long lists and values are shown bounded, a bind normalized, and every kind of widening right above the question', () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    noticeGiven(world)
    const ask = () => spawnSync('python3', [path.join(FIXTURES, 'pty-answer.py'), '[y/N]', 'n', process.execPath, BIN, '--', '-c', 'echo RAN'], { cwd: project, env: { ...world.env, ...sh }, encoding: 'utf8', timeout: 40_000 })
    // Not printable ASCII: refused before anything is shown (round 90: 80 newlines; round 91: U+3000).
    for (const value of [`LC_X=${'\n'.repeat(80)}claudebox:   - adds --env EDITOR`, `LC_X=${'\u3000'.repeat(100)}`]) {
      fs.writeFileSync(path.join(project, '.claudebox.json'), JSON.stringify({ network: 'open', env: ['EDITOR', value] }))
      const r = ask()
      expect(r.status, r.stdout).toBe(2)
      expect(r.stdout).toMatch(/"env": .* holds characters other than printable ASCII/)
      expect(r.stdout).not.toContain('asks to widen')
    }
    // A link committed in the repository (data -> ~/.ssh): refused before anything is asked (round 92).
    const ssh = path.join(world.home, '.ssh')
    fs.symlinkSync(ssh, path.join(project, 'data'))
    fs.writeFileSync(path.join(project, '.claudebox.json'), JSON.stringify({ bind: ['data'] }))
    const linked = ask()
    expect(linked.status, linked.stdout).toBe(2)
    expect(linked.stdout).toContain(`binds data, which leads through a link to ${ssh}`)
    expect(linked.stdout).not.toContain('asks to widen')
    // A path that climbs out is shown normalized, where it leads; long lists and values bounded.
    const binds = [`${'a/'.repeat(20)}${'../'.repeat(20)}../../.ssh`, ...Array.from({ length: 10 }, (_, i) => `${world.home}/b${i}`)]
    for (const b of binds.slice(1)) fs.mkdirSync(b)
    fs.writeFileSync(path.join(project, '.claudebox.json'), JSON.stringify({ network: 'open', bind: binds, env: ['EDITOR', `LC_X=${'x'.repeat(250)}`] }))
    const r = ask()
    expect(r.status, r.stdout).toBe(2)
    const lines = r.stdout.slice(0, r.stdout.indexOf('[y/N]')).split(/\r?\n/)
    const screen = lines.join('\n')
    expect(screen).toMatch(/- sets the network to open/)
    expect(screen).toMatch(/- adds --bind \.\.\/\.\.\/\.ssh, [^\n]* and 7 more \(read the file\)/)
    expect(screen).toMatch(/- adds --env EDITOR, LC_X=x+\.\.\. \(\d+ more characters\)/)
    // The line right above the question names every kind, in claudebox's words.
    expect(lines.at(-2)).toMatch(/\(3 widenings: sets the network to open; adds --bind; adds --env; sha256 of the file: [0-9a-f]{64}\)/)
    for (const l of lines) expect(l.length).toBeLessThan(400)
    expect(r.stdout).not.toContain('RAN')
  })

  test('round 92: a bind approved as a folder that a later session turns into a link (cache -> ~/.ssh) is refused at the next launch, the approval notwithstanding', async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    noticeGiven(world)
    fs.mkdirSync(path.join(project, 'cache'))
    const content = JSON.stringify({ bind: ['cache'] })
    fs.writeFileSync(path.join(project, '.claudebox.json'), content)
    const sha256 = crypto.createHash('sha256').update(content).digest('hex')
    fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), JSON.stringify({ approvedProjects: [{ root: project, sha256 }] }))
    const first = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: sh })
    expect(first.stdout.trim(), first.stderr).toBe('RAN')
    fs.rmSync(path.join(project, 'cache'), { recursive: true })
    fs.symlinkSync(path.join(world.home, '.ssh'), path.join(project, 'cache'))
    const second = await claudebox(world, ['--', '-c', 'echo RAN; ls -d "$HOME"/.ssh/* 2>/dev/null'], { cwd: project, env: sh })
    expect(second.exitCode).toBe(2)
    expect(second.stdout).toBe('')
    expect(second.stderr).toContain(`binds cache, which leads through a link to ${path.join(world.home, '.ssh')}`)
  })

  test("round 91: a bwrap planted in a folder of the project that is on PATH (an activated virtualenv): the launch is refused, saying which, and it never runs; a git planted there is never run by claudebox (round 100: it takes the system's), and the launch goes on", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const marker = path.join(world.root, 'PLANTED-RAN')
    noticeGiven(world)
    for (const name of ['bwrap', 'git']) {
      const bin = path.join(project, `.venv-${name}/bin`)
      fs.mkdirSync(bin, { recursive: true })
      fs.writeFileSync(path.join(bin, name), `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/${name} "$@"\n`, { mode: 0o755 })
      const r = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd: project, env: { ...sh, PATH: `${bin}:${process.env['PATH'] ?? ''}` } })
      if (name === 'bwrap') {
        expect(r.exitCode, r.stderr).toBe(125)
        expect(r.stderr).toContain(`bwrap would be run from ${path.join(bin, name)}, in a folder the sandbox can write`)
        expect(r.stdout).not.toContain('RAN')
      } else {
        expect(r.exitCode, r.stderr).toBe(0)
        expect(r.stdout.trim()).toBe('RAN')
      }
      fs.rmSync(path.join(project, `.venv-${name}`), { recursive: true })
    }
    expect(fs.existsSync(marker)).toBe(false)
  })

  test("round 92: a version manager's own tool (volta) is never taken from a folder of the project on PATH when claudebox asks it where the real claude is", async () => {
    const { world, project, marker, real, shims } = voltaScene()
    fs.writeFileSync(path.join(shims, 'volta'), `#!/bin/sh\necho ${real}\n`, { mode: 0o755 })
    const venv = path.join(project, '.venv/bin')
    fs.mkdirSync(venv, { recursive: true })
    fs.writeFileSync(path.join(venv, 'volta'), `#!/bin/sh\ntouch ${marker}\necho ${real}\n`, { mode: 0o755 })
    const r = await claudebox(world, [], { cwd: project, env: { PATH: `${venv}:${shims}:${process.env['PATH'] ?? ''}` } })
    expect(r.stdout.trim(), r.stderr).toBe('RAN')
    expect(fs.existsSync(marker)).toBe(false)
  })

  test("round 106: nor a manager's tool that is a link into the project (a checkout of it built there), nor one whose data lies there: the launch is refused, saying what to do, and the tool never runs", async () => {
    const { world, project, marker, real, shims } = voltaScene()
    const built = path.join(project, 'target/release/volta')
    fs.mkdirSync(path.dirname(built), { recursive: true })
    fs.writeFileSync(built, `#!/bin/sh\ntouch ${marker}\necho ${real}\n`, { mode: 0o755 })
    const tools = path.join(world.home, '.local/bin')
    fs.mkdirSync(tools, { recursive: true })
    fs.symlinkSync(built, path.join(tools, 'volta'))
    const env = { PATH: `${shims}:${tools}:${process.env['PATH'] ?? ''}` }
    for (const args of [[], ['--check'], ['--dry-run']]) {
      const r = await claudebox(world, args, { cwd: project, env })
      if (args.length === 0) expect(r.exitCode, r.stderr).toBe(125)
      expect(r.stdout + r.stderr).toContain("claude is a version manager's shim (asdf, mise, volta) whose own program or data lies in a folder the sandbox can write, so claudebox will not run it on the host to find the real claude; set CLAUDEBOX_CLAUDE to the real claude's path")
    }
    fs.rmSync(path.join(tools, 'volta'))
    fs.writeFileSync(path.join(shims, 'volta'), `#!/bin/sh\ntouch ${marker}\necho ${real}\n`, { mode: 0o755 })
    const data = await claudebox(world, [], { cwd: project, env: { ...env, VOLTA_HOME: path.join(project, '.volta') } })
    expect(data.exitCode, data.stderr).toBe(125)
    expect(fs.existsSync(marker)).toBe(false)
    const ok = await claudebox(world, [], { cwd: project, env })
    expect(ok.stdout.trim(), ok.stderr).toBe('RAN')
  })

  test("round 106: a claude the session wrote in a folder of the project on PATH shows nothing of the host at the next launch, whatever its #! line names (a secret file through env -S -u, a folder holding a login by an executable in its bin/)", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    noticeGiven(world)
    const secret = path.join(world.home, '.ssh/id_ed25519')
    fs.mkdirSync(path.dirname(secret), { recursive: true })
    fs.writeFileSync(secret, 'SECRET-KEY\n', { mode: 0o600 })
    const cargo = path.join(world.home, '.cargo')
    fs.mkdirSync(path.join(cargo, 'bin'), { recursive: true })
    fs.writeFileSync(path.join(cargo, 'bin/cargo'), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 })
    fs.writeFileSync(path.join(cargo, 'credentials.toml'), 'SECRET-TOKEN\n', { mode: 0o600 })
    const venv = path.join(project, '.venv/bin')
    fs.mkdirSync(venv, { recursive: true })
    const env = { PATH: `${venv}:${process.env['PATH'] ?? ''}` }
    const read = `cat ${secret} ${cargo}/credentials.toml 2>/dev/null; echo RAN`
    for (const line of [`#!/usr/bin/env -S -u ${secret} /bin/sh`, `#!${cargo}/bin/cargo`, `#!${secret}`]) {
      // What the session leaves: its own claude, in a folder of the project the user has on PATH.
      const plant = await claudebox(world, ['--', '-c', `printf '%s\\n%s\\n' '${line}' '${read}' > ${venv}/claude && chmod +x ${venv}/claude && echo PLANTED`], { cwd: project, env: { ...env, CLAUDEBOX_CLAUDE: '/bin/sh' } })
      expect(plant.stdout.trim(), plant.stderr).toBe('PLANTED')
      const r = await claudebox(world, [], { cwd: project, env })
      expect(r.stdout).not.toContain('SECRET')
      const dry = await claudebox(world, ['--dry-run'], { cwd: project, env })
      expect(dry.stdout, line).not.toMatch(/\.ssh|\.cargo/)
    }
  })

  test("round 107: the interpreter of the user's own claude is never taken from a PATH folder the sandbox writes, a folder linked into the project included (a planted one leading to ~/.cargo/bin/cargo had ~/.cargo bound); nor is the node that runs claudebox", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'dotfiles')
    noticeGiven(world)
    const cargo = path.join(world.home, '.cargo')
    fs.mkdirSync(path.join(cargo, 'bin'), { recursive: true })
    fs.writeFileSync(path.join(cargo, 'bin/cargo'), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 })
    fs.writeFileSync(path.join(cargo, 'credentials.toml'), 'SECRET-TOKEN\n', { mode: 0o600 })
    const claude = path.join(world.home, '.local/share/tool/claude')
    fs.mkdirSync(path.dirname(claude), { recursive: true })
    fs.writeFileSync(claude, '#!/usr/bin/env toolsh\necho RAN\n', { mode: 0o755 })
    fs.mkdirSync(path.join(project, 'bin'))
    fs.symlinkSync(path.join(project, 'bin'), path.join(world.home, 'bin'))
    const env = { PATH: `${path.join(world.home, 'bin')}:${path.dirname(claude)}:${process.env['PATH'] ?? ''}` }
    const plant = await claudebox(world, ['--', '-c', `ln -s ${cargo}/bin/cargo bin/toolsh && echo PLANTED`], { cwd: project, env: { ...env, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(plant.stdout.trim(), plant.stderr).toBe('PLANTED')
    const dry = await claudebox(world, ['--dry-run'], { cwd: project, env })
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).not.toContain(cargo)
    fs.symlinkSync(process.execPath, path.join(project, 'bin/node'))
    const launcher = await claudebox(world, [], { cwd: project, env })
    expect(launcher.exitCode).toBe(125)
    expect(launcher.stderr).toContain(`${path.join(project, 'bin/node')}, which runs claudebox itself, lies in ${project}`)
  })

  test("round 108: a claude the session made a link out of the folders it writes (to a script of the user's) refuses the launch: that script is never shown or run", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    noticeGiven(world)
    const deploy = path.join(world.home, 'bin/deploy.sh')
    fs.mkdirSync(path.dirname(deploy), { recursive: true })
    fs.writeFileSync(deploy, '#!/bin/sh\nTOKEN=SECRET-TOKEN\necho RAN-DEPLOY\n', { mode: 0o700 })
    const venv = path.join(project, '.venv/bin')
    fs.mkdirSync(venv, { recursive: true })
    const env = { PATH: `${venv}:${process.env['PATH'] ?? ''}` }
    const plant = await claudebox(world, ['--', '-c', `ln -s ${deploy} ${venv}/claude && echo PLANTED`], { cwd: project, env: { ...env, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(plant.stdout.trim(), plant.stderr).toBe('PLANTED')
    for (const args of [[], ['--dry-run']]) {
      const r = await claudebox(world, args, { cwd: project, env })
      expect(r.exitCode, r.stderr).toBe(125)
      expect(r.stdout).not.toContain('RAN-DEPLOY')
      expect(r.stdout).not.toContain(deploy)
      expect(r.stderr).toContain(`${venv}/claude lies in, or leads through, a folder the sandbox can write, and leads out of it: a session may have pointed it there, so claudebox will not show what it leads to; set CLAUDEBOX_CLAUDE to the claude you mean, or take that folder off PATH`)
    }
  })

  test("round 109: a relative PATH entry (node_modules/.bin, .) is the project's folder: a bwrap planted there refuses the launch and never runs, and a claude planted there that leads out refuses it too (3 of 3 ran, or showed ~/bin/deploy.sh)", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    const marker = path.join(world.root, 'PLANTED-RAN')
    noticeGiven(world)
    const bin = path.join(project, 'node_modules/.bin')
    fs.mkdirSync(bin, { recursive: true })
    fs.writeFileSync(path.join(bin, 'bwrap'), `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/bwrap "$@"\n`, { mode: 0o755 })
    for (const entry of ['node_modules/.bin', '.']) {
      const cwd = entry === '.' ? bin : project
      const r = await claudebox(world, ['--', '-c', 'echo RAN'], { cwd, env: { ...sh, PATH: `${entry}:${process.env['PATH'] ?? ''}` } })
      expect(r.exitCode, r.stderr).toBe(125)
      expect(r.stderr).toContain(`bwrap would be run from ${path.join(bin, 'bwrap')}, in a folder the sandbox can write`)
    }
    fs.rmSync(path.join(bin, 'bwrap'))
    const deploy = path.join(world.home, 'bin/deploy.sh')
    fs.mkdirSync(path.dirname(deploy))
    fs.writeFileSync(deploy, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o700 })
    fs.symlinkSync(deploy, path.join(bin, 'claude'))
    const r = await claudebox(world, [], { cwd: project, env: { PATH: `node_modules/.bin:${process.env['PATH'] ?? ''}` } })
    expect(r.exitCode, r.stderr).toBe(125)
    expect(r.stderr).toContain(`${path.join(bin, 'claude')} lies in, or leads through, a folder the sandbox can write, and leads out of it`)
    expect(fs.existsSync(marker)).toBe(false)
  })

  test.skipIf(IS_ROOT)("round 110: the prlimit that sets the process limit inside is the system's, never one a session left on PATH (the limit was dropped, silently, 3 of 3)", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/project')
    noticeGiven(world)
    const venv = path.join(project, '.venv/bin')
    fs.mkdirSync(venv, { recursive: true })
    fs.writeFileSync(path.join(venv, 'prlimit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    const r = await claudebox(world, ['--', '-c', "grep 'Max processes' /proc/self/limits"], { cwd: project, env: { ...sh, PATH: `${venv}:${process.env['PATH'] ?? ''}` } })
    expect(r.stdout, r.stderr).toMatch(/Max processes\s+4096\s+4096/)
  })

  test("round 105: nor from a folder on PATH that a writable --bind gives the sandbox", async () => {
    const { world, project, marker, real, shims } = voltaScene()
    fs.writeFileSync(path.join(shims, 'volta'), `#!/bin/sh\necho ${real}\n`, { mode: 0o755 })
    const tools = path.join(world.home, 'tools/bin')
    fs.mkdirSync(tools, { recursive: true })
    const env = { PATH: `${tools}:${shims}:${process.env['PATH'] ?? ''}` }
    // The session plants a volta in the bound folder; the next launch asks the manager again.
    const plant = await claudebox(world, ['--bind', tools, '--', '-c', `printf '#!/bin/sh\\ntouch ${marker}\\necho ${real}\\n' > ${tools}/volta && chmod +x ${tools}/volta && echo PLANTED`], { cwd: project, env: { ...env, CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(plant.stdout, plant.stderr).toContain('PLANTED')
    const r = await claudebox(world, ['--bind', tools], { cwd: project, env })
    expect(r.stdout.trim(), r.stderr).toBe('RAN')
    expect(fs.existsSync(marker)).toBe(false)
  })
})

/** A project, and `claude` on PATH as volta's shim; the real claude prints RAN; `marker` is what a planted program would make. */
function voltaScene(): { world: World; project: string; marker: string; real: string; shims: string } {
  const world = makeWorld()
  const project = makeRepo(world.home, 'src/project')
  noticeGiven(world)
  const real = path.join(world.root, 'real-claude/claude')
  fs.mkdirSync(path.dirname(real))
  fs.writeFileSync(real, '#!/bin/sh\necho RAN\n', { mode: 0o755 })
  const shims = path.join(world.home, '.volta/bin')
  fs.mkdirSync(shims, { recursive: true })
  fs.writeFileSync(path.join(shims, 'claude'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
  return { world, project, marker: path.join(world.root, 'PLANTED-RAN'), real, shims }
}
