// The escape suite, git dirs the launch must find to protect: submodule git dirs in every place git
// keeps them, linked worktrees' and submodules' own, and repositories a remote names by a local
// path. In each, the agent writes the config (core.fsmonitor runs the payload) or a hook, and the
// host's git must never run it afterwards.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, git, HAVE_BWRAP, IS_ROOT, makeRepo } from '../helpers/cli.js'
import { hostGit, inside, payload, scene, type Scene } from '../helpers/git-scene.js'

/** Adds the repository src/lib of the scene's home as a submodule at `at`, committed. */
function submodule(s: Scene, at: string, name?: string): void {
  const lib = fs.existsSync(path.join(s.world.home, 'src/lib')) ? path.join(s.world.home, 'src/lib') : makeRepo(s.world.home, 'src/lib')
  git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', ...(name === undefined ? [] : ['--name', name]), lib, at)
  git(s.project, 'commit', '-qm', `submodule ${at}`)
}

/**
 * Shell line (run inside) renaming index entries, each to a name of the same length, with the
 * index's SHA-1 trailer written anew: git checks a path when it is added, not when it reads an index
 * from disk, so the host's `git checkout .` would write the new names. Written as git writes an
 * index (index.lock, renamed over it): the watch, reading a half-written one, ended the session first.
 */
const renameInIndex = (index: string, renames: Record<string, string>): string => {
  const replaced = Object.entries(renames).map(([from, to]) => `.replace(b'${from}\\0',b'${to}\\0')`).join('')
  return `python3 -c "import hashlib, os; f='${index}'; d=open(f,'rb').read()[:-20]; d=d${replaced}; open(f+'.lock','wb').write(d+hashlib.sha1(d).digest()); os.replace(f+'.lock',f)"`
}

const lstatKindOf = (p: string): string => {
  try {
    return fs.lstatSync(p).isSymbolicLink() ? 'symlink' : 'other'
  } catch {
    return 'missing'
  }
}

/**
 * Shell lines (run in a work tree whose .git is set): its index, the file `index` (relative), gets
 * an entry `../.git/config` holding a config whose fsmonitor touches the marker.
 */
const poisonIndex = (s: Scene, index: string): string[] => [
  'mkdir -p zz/.gix',
  `printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' > zz/.gix/config`,
  'git add zz/.gix/config',
  renameInIndex(index, { 'zz/.gix/config': '../.git/config' }),
  'rm -r zz',
]

/** The host's `git checkout .` in `dir` leaves the top's .git/config as `config` was. */
function checkoutLeavesConfig(s: Scene, dir: string, config: string): void {
  spawnSync('git', ['checkout', '.'], { cwd: path.join(s.project, dir), env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
  expect(fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')).toBe(config)
}

/** Shell lines: the payload written to `config`, then ESCAPED or BLOCKED. */
const tryConfig = (s: Scene, config: string): string => `${payload(s, config)} 2>/dev/null && echo ESCAPED || echo BLOCKED`
const tryPointer = (file: string): string => `echo "gitdir: $PWD/evil" > ${file} 2>/dev/null && echo ESCAPED || echo BLOCKED`

describe.skipIf(!HAVE_BWRAP)('git dirs: every one the host git may use is protected', () => {
  // The link is made in a folder of its own and renamed onto HEAD: one made at the git dir's top is moved aside as it appears (round 139).
  test('a submodule git dir whose HEAD a session made a symlink (git follows one): still protected at the next launch', async () => {
    const s = scene()
    submodule(s, 'lib')
    const first = await inside(s, 'cd .git/modules/lib && cp HEAD HEAD.real && mkdir t && ln -s HEAD.real t/H2 && mv -f t/H2 HEAD && rmdir t && echo LINKED')
    expect(first.out).toBe('LINKED')
    const r = await inside(s, tryConfig(s, '.git/modules/lib/config'))
    expect(r.out).toBe('BLOCKED')
    expect(r.err).not.toMatch(/HEAD is gone/)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a submodule name of many parts (a/b/c/d/e/f/g/h): its git dir is found and protected', async () => {
    const s = scene()
    submodule(s, 'deep', 'a/b/c/d/e/f/g/h')
    expect(fs.existsSync(path.join(s.project, '.git/modules/a/b/c/d/e/f/g/h/HEAD'))).toBe(true)
    const r = await inside(s, [tryConfig(s, '.git/modules/a/b/c/d/e/f/g/h/config'), 'mkdir -p .git/modules/a/b/c/d/e/f/g/h/hooks 2>/dev/null; echo x > .git/modules/a/b/c/d/e/f/g/h/hooks/post-checkout 2>/dev/null && echo ESCAPED || echo BLOCKED'].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('.git/modules made unreadable by a session: reading is given back at its end, and the next launch reads it and protects it (as root, it is read anyway)', async () => {
    const s = scene()
    submodule(s, 'lib')
    const first = await inside(s, 'chmod 000 .git/modules')
    // The put-back of the submodule's HEAD, unreachable meanwhile, once threw and ended every check after it (EACCES).
    expect(first.err).not.toMatch(/checking git failed/)
    if (!IS_ROOT) expect(first.err).toMatch(/\.git\/modules \(made readable to you again: 0 made 500\)/)
    const r = await inside(s, tryConfig(s, '.git/modules/lib/config'))
    expect(r.out).toBe('BLOCKED')
    fs.chmodSync(path.join(s.project, '.git/modules'), 0o755)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a symlinked .git/modules: one the session made is moved aside at its end (round 135: links in a git dir the session made); one there before a launch makes it refuse, naming it', async () => {
    const s = scene()
    const first = await inside(s, 'mkdir .git/mods && ln -s mods .git/modules && echo LINKED')
    expect(first.out).toBe('LINKED')
    expect(first.err).toMatch(/quarantine[^\n]*\.git\/modules -> /)
    expect(fs.lstatSync(path.join(s.project, '.git/modules'), { throwIfNoEntry: false })).toBeUndefined()
    fs.symlinkSync('mods', path.join(s.project, '.git/modules'))
    const r = await inside(s, 'echo RAN')
    expect(r.code).toBe(125)
    expect(r.out).toBe('')
    expect(r.err).toMatch(/\.git\/modules is a symlink, and git would look for repositories through it/)
  })

  test('a submodule moved to another path (git mv): its .git file there is read-only', async () => {
    const s = scene()
    submodule(s, 'lib')
    fs.mkdirSync(path.join(s.project, 'libs'))
    git(s.project, 'mv', 'lib', 'libs/one')
    git(s.project, 'commit', '-qm', 'moved')
    const r = await inside(s, [`mkdir evil && cp -r .git/modules/lib/objects .git/modules/lib/refs .git/modules/lib/HEAD evil/ && ${payload(s, 'evil/config')}`, tryPointer('libs/one/.git'), 'mv libs/one libs/two 2>/dev/null && echo ESCAPED || echo BLOCKED'].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a linked worktree's own submodules (.git/worktrees/<w>/modules) and a submodule's linked worktree (.git/modules/<s>/worktrees)", async () => {
    const s = scene()
    submodule(s, 'lib')
    const wt = path.join(s.world.home, 'src/wt')
    git(s.project, 'worktree', 'add', '-q', wt)
    git(wt, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'update', '--init')
    expect(fs.existsSync(path.join(s.project, '.git/worktrees/wt/modules/lib/HEAD'))).toBe(true)
    git(path.join(s.project, 'lib'), 'worktree', 'add', '-q', '-b', 'side', path.join(s.project, 'libwt'))
    const r = await inside(
      s,
      [
        tryConfig(s, '.git/worktrees/wt/modules/lib/config'),
        tryPointer('libwt/.git'),
        'echo "$PWD/evil" > .git/modules/lib/worktrees/libwt/commondir 2>/dev/null && echo ESCAPED || echo BLOCKED',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    hostGit(wt, s.world)
    hostGit(s.project, s.world)
    hostGit(path.join(s.project, 'libwt'), s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a submodule's own extensions.worktreeConfig: its missing config.worktree cannot be created", async () => {
    const s = scene()
    submodule(s, 'lib')
    git(path.join(s.project, 'lib'), 'config', 'extensions.worktreeConfig', 'true')
    const r = await inside(s, tryConfig(s, '.git/modules/lib/config.worktree'))
    expect(r.out).toBe('BLOCKED')
    hostGit(s.project, s.world)
    hostGit(path.join(s.project, 'lib'), s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a submodule whose git dir stays in the working tree (emb/.git, added from an existing clone)', async () => {
    const s = scene()
    const lib = makeRepo(s.world.home, 'src/lib')
    git(s.project, 'clone', '-q', lib, 'emb')
    git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', './emb', 'emb')
    git(s.project, 'commit', '-qm', 'emb')
    expect(fs.lstatSync(path.join(s.project, 'emb/.git')).isDirectory()).toBe(true)
    const r = await inside(s, [tryConfig(s, 'emb/.git/config'), 'mv emb emb2 2>/dev/null && echo ESCAPED || echo BLOCKED'].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a bare repository in the project that a remote names by a local path (url = ./mirror.git): its hooks are read-only', async () => {
    const s = scene()
    git(s.project, 'clone', '-q', '--bare', '.', 'mirror.git')
    git(s.project, 'remote', 'add', 'mirror', './mirror.git')
    const hook = `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > mirror.git/hooks/pre-receive 2>/dev/null && chmod +x mirror.git/hooks/pre-receive && echo ESCAPED || echo BLOCKED`
    const r = await inside(s, [hook, tryConfig(s, 'mirror.git/config')].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    git(s.project, 'push', '-q', 'mirror', 'main')
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('remotes git reaches by the names it tries (./mirror for mirror.git), by ~/, and through a symlinked path: their hooks are read-only (red team: each ran at git push)', async () => {
    const s = scene()
    git(s.project, 'clone', '-q', '--bare', '.', 'mirror.git')
    git(s.project, 'clone', '-q', '--bare', '.', 'tilde.git')
    git(s.project, 'clone', '-q', '--bare', '.', 'linked.git')
    fs.symlinkSync(s.project, path.join(s.world.root, 'via-link'))
    git(s.project, 'remote', 'add', 'suffix', './mirror')
    git(s.project, 'remote', 'add', 'tilde', `~/${path.relative(s.world.home, s.project)}/tilde.git`)
    git(s.project, 'remote', 'add', 'linked', path.join(s.world.root, 'via-link', 'linked.git'))
    const hook = (repo: string): string => `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${repo}/hooks/pre-receive 2>/dev/null && chmod +x ${repo}/hooks/pre-receive && echo ESCAPED || echo BLOCKED`
    const r = await inside(s, ['mirror.git', 'tilde.git', 'linked.git'].map(hook).join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    for (const remote of ['suffix', 'tilde', 'linked']) {
      const push = spawnSync('git', ['push', '-q', remote, 'main'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' })
      expect(push.status, push.stderr).toBe(0)
    }
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('.gitmodules files a session nested and repeated: the next launch stays quick (red team: it ran git 10^8 times)', async () => {
    const s = scene()
    submodule(s, 'lib')
    const bomb = 'cd lib; d=.; for l in 0 1 2 3 4 5 6 7 8; do mkdir -p $d; : > $d/.gitmodules; for i in 0 1 2 3 4 5 6 7 8 9; do printf "[submodule \\"s$i\\"]\\n\\tpath = x\\n" >> $d/.gitmodules; done; d=$d/x; done'
    await inside(s, bomb)
    const started = Date.now()
    const r = await inside(s, 'echo RAN')
    expect(r.out).toBe('RAN')
    expect(Date.now() - started).toBeLessThan(20_000)
  })

  test('a FIFO planted as the config of the git dir a .git file names: the next launch from there does not hang', async () => {
    const s = scene()
    await inside(s, 'mkdir -p sub evil && cp .git/HEAD evil/ && mkdir evil/objects evil/refs && mkfifo evil/config && echo "gitdir: ../evil" > sub/.git')
    const r = await claudebox(s.world, ['--', '-c', 'echo RAN'], { cwd: path.join(s.project, 'sub'), env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.exitCode).not.toBe(undefined)
    expect(r.exitCode, r.stderr).not.toBe(0) // a git dir git cannot read: refused, not run
  })

  test('a nested include (config includes a committed file, which includes a missing one): the missing one is moved aside when created (red team: ran at git status)', async () => {
    const s = scene()
    fs.writeFileSync(path.join(s.project, '.gitconfig.project'), '[include]\n\tpath = .gitconfig.local\n')
    git(s.project, 'config', 'include.path', '../.gitconfig.project')
    const r = await inside(s, `${payload(s, '.gitconfig.local')}; sleep 0.6; test -e .gitconfig.local && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toBe('BLOCKED')
    expect(r.err).toMatch(/\.gitconfig\.local -> .*claudebox-quarantine/)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a relative core.hooksPath in the user's config: protected in each work tree in the project (a submodule, a linked worktree), and their host-run files too (red team: their hooks ran)", async () => {
    const s = scene()
    fs.appendFileSync(path.join(s.world.home, '.gitconfig'), '[core]\n\thooksPath = .githooks\n')
    submodule(s, 'lib')
    git(s.project, 'worktree', 'add', '-q', '-b', 'side', path.join(s.project, 'wt'))
    fs.writeFileSync(path.join(s.project, 'lib/.envrc'), 'original\n')
    const plant = (dir: string): string => `mkdir -p ${dir}/.githooks && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${dir}/.githooks/pre-commit && chmod +x ${dir}/.githooks/pre-commit; sleep 0.6; test -e ${dir}/.githooks/pre-commit && echo ESCAPED || echo BLOCKED`
    const r = await inside(s, [plant('lib'), plant('wt'), 'echo evil >> lib/.envrc 2>/dev/null && echo ESCAPED || echo BLOCKED'].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    for (const tree of ['lib', 'wt']) {
      fs.appendFileSync(path.join(s.project, tree, 'README'), 'more\n')
      hostGit(path.join(s.project, tree), s.world)
    }
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  // HEAD made a link from a folder of its own: one made beside it (or by ln -sf, which makes one of another name first) is moved aside as it appears (round 139).
  test('.git made one git rejects (refs/ moved away, HEAD a symlink out of refs/) so that the top, shaped as a repository with its own config, is taken instead: refs/ stays, HEAD is put back (red team: ran at git status, unreported)', async () => {
    const s = scene()
    const bare = `mkdir -p objects refs && echo "ref: refs/heads/main" > HEAD && printf "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = %s\\n\\tfsmonitor = %s/.payload\\n" "$PWD" "$PWD" > config && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > .payload && chmod +x .payload`
    const r = await inside(s, [bare, 'mv .git/refs .git/refs.x 2>/dev/null && echo ESCAPED || echo BLOCKED', 'mkdir .git/t && ln -s garbage .git/t/H && mv -f .git/t/H .git/HEAD; sleep 0.6; test "$(readlink .git/HEAD)" = garbage && echo ESCAPED || echo BLOCKED'].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    expect(r.err).toMatch(/made a git dir one git rejects .*put back as it was: .*\.git\/HEAD \(put back: ref: refs\/heads\/main\)/)
    expect(r.err).not.toMatch(/nested git repositories/) // the top's HEAD is a read-only empty folder: the top is no repository (round 85)
    const status = spawnSync('git', ['status'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, timeout: 10_000 })
    expect(status.status).toBe(0)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a subfolder shaped as a repository (HEAD, objects/, refs/, a config with worktree = ..): reported', async () => {
    const s = scene()
    const r = await inside(s, `mkdir -p src/objects src/refs && echo "ref: refs/heads/main" > src/HEAD && ${payload(s, 'src/config')}`)
    expect(r.err).toMatch(/nested git repositories.*src[,;]/)
  })

  test('a new submodule git dir under a name of two parts (.git/modules/vendor/y beside vendor/x): reported (red team: unseen)', async () => {
    const s = scene()
    submodule(s, 'vendor/x')
    const r = await inside(s, 'cp -a .git/modules/vendor/x .git/modules/vendor/y')
    expect(r.err).toMatch(/new git dirs appeared in .*\.git\/modules: vendor\/y/)
  })

  test('a remote ./mirror that git resolves to mirror.git: a bare layout created at ./mirror, which git would take first, is moved aside (red team: its hook ran at push)', async () => {
    const s = scene()
    git(s.project, 'init', '-q', '--bare', 'mirror.git')
    git(s.project, 'remote', 'add', 'backup', './mirror')
    const r = await inside(s, `mkdir -p mirror/objects mirror/refs mirror/hooks && cp mirror.git/HEAD mirror/ && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > mirror/hooks/pre-receive && chmod +x mirror/hooks/pre-receive; sleep 0.6; test -e mirror/hooks/pre-receive && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toBe('BLOCKED')
    const push = spawnSync('git', ['push', '-q', 'backup', 'main'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' })
    expect(push.status, push.stderr).toBe(0)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("host-run files created in a submodule's work tree are reported, as at the top (red team: sub/.npmrc unreported)", async () => {
    const s = scene()
    submodule(s, 'lib')
    const r = await inside(s, 'echo "script-shell=/tmp/x" > lib/.npmrc')
    expect(r.err).toMatch(/changed files that run code outside the sandbox: lib\/\.npmrc \(created\)/)
  })

  test('a subfolder shaped as a repository through symlinks (objects -> ../.git/objects), its files hidden by info/exclude: reported (red team: ran unreported)', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'src'))
    const r = await inside(s, `cd src && echo 'ref: refs/heads/main' > HEAD && ln -s ../.git/objects objects && ln -s ../.git/refs refs && ${payload(s, 'config')} && printf 'HEAD\\nobjects\\nrefs\\nconfig\\n.payload\\n' >> ../.git/info/exclude`)
    expect(r.err).toMatch(/nested git repositories.*src[,;]/)
  })

  test("a git dir's access taken away (chmod 000 .git/refs) so that git rejects it: the mode is put back and reported", async () => {
    const s = scene()
    // Until it is put back (at most 5 s: the watch looks every 200 ms, later on a loaded machine); root's stays.
    const r = await inside(s, `chmod 000 .git/refs; ${IS_ROOT ? 'sleep 0.6' : 'i=0; while [ "$(stat -c %a .git/refs)" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done'}; stat -c %a .git/refs`)
    // Root's git enters a mode-000 folder anyway: nothing to put back for it.
    if (!IS_ROOT) {
      expect(r.out).toBe('755')
      expect(r.err).toMatch(/made a git dir one git rejects .*\.git\/refs \(mode put back: 755\)/)
    }
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' })
    expect(status.status, status.stderr).toBe(0)
  })

  test('a FIFO planted as .gitmodules, packed-refs or info/exclude: moved aside when the session ends; one there at a launch refuses it at once, naming it (red team: 5 s, submodules unprotected; host git hung)', async () => {
    const s = scene()
    const first = await inside(s, 'rm -f .gitmodules; mkfifo .gitmodules; mkfifo .git/packed-refs; rm -f .git/info/exclude; mkfifo .git/info/exclude')
    for (const name of ['packed-refs', 'info/exclude', '.gitmodules']) expect(first.err).toContain(`${name} -> `)
    // One left by a session that could not finish (or made on the host): the launch refuses.
    execFileSync('mkfifo', [path.join(s.project, '.gitmodules')])
    const started = Date.now()
    const second = await inside(s, 'echo RAN')
    expect(second.code).toBe(125)
    expect(second.err).toMatch(/\.gitmodules is not a regular file git can read/)
    expect(Date.now() - started).toBeLessThan(4000)
  })

  test('round 26: a folder shaped as a repository with objects an executable file (git only asks access X_OK), and a HEAD of "ref:\\frefs/..." (git rejects it, \\s in JavaScript accepted it), and a FIFO at refs/heads/main', async () => {
    const s = scene()
    const r = await inside(
      s,
      [
        `mkdir sub && cd sub && echo 'ref: refs/heads/main' > HEAD && : > objects && chmod +x objects && mkdir refs && ${payload(s, 'config')} && cd ..`,
        "printf 'ref:\\frefs/heads/main\\n' > .git/HEAD; sleep 0.6; head -c 4 .git/HEAD | od -c | head -1",
        'git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x; rm .git/refs/heads/main && mkfifo .git/refs/heads/main',
      ].join('; '),
    )
    expect(r.err).toMatch(/nested git repositories.*sub[,;]/)
    expect(r.err).toMatch(/made a git dir one git rejects .*\.git\/HEAD \(put back/)
    expect(r.err).toMatch(/moved aside .*refs\/heads\/main -> /)
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, timeout: 10_000 })
    expect(status.signal).toBeNull()
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 27: a HEAD git rejects for its length ("ref:" and 300 spaces) is put back; an upper-case object id git accepts is left alone; a FIFO planted as a .gitignore is moved aside', async () => {
    const s = scene()
    const r = await inside(
      s,
      [
        "printf 'ref:%300srefs/heads/main\\n' '' > .git/HEAD; sleep 0.6; cat .git/HEAD",
        'git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x && git rev-parse HEAD | tr a-f A-F > .git/H2 && mv .git/H2 .git/HEAD; sleep 0.6; grep -c "^[0-9A-F]\\{40\\}$" .git/HEAD',
        'echo ref: refs/heads/main > .git/HEAD; mkdir sub && mkfifo sub/.gitignore',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['ref: refs/heads/main', '1'])
    expect(r.err).toMatch(/\.git\/HEAD \(put back: ref: refs\/heads\/main\)/)
    expect(r.err).toMatch(/FIFOs or sockets .*moved aside: .*sub\/\.gitignore -> /)
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, timeout: 10_000 })
    expect(status.signal).toBeNull()
    expect(status.status).toBe(0)
  })

  test('round 31: a hooksPath in $XDG_CONFIG_HOME/git/config, and programs a config runs by path (core.fsmonitor, a filter): read-only inside', async () => {
    const s = scene()
    const xdg = path.join(s.world.root, 'xdg')
    fs.mkdirSync(path.join(xdg, 'git'), { recursive: true })
    fs.writeFileSync(path.join(xdg, 'git/config'), '[core]\n\thooksPath = tools/hooks\n')
    fs.mkdirSync(path.join(s.project, 'tools/hooks'), { recursive: true })
    for (const name of ['tools/hooks/pre-commit', 'tools/monitor', 'tools/clean']) fs.writeFileSync(path.join(s.project, name), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    git(s.project, 'config', 'core.fsmonitor', 'tools/monitor')
    git(s.project, 'config', 'filter.x.clean', 'tools/clean %f')
    const writes = ['tools/hooks/pre-commit', 'tools/monitor', 'tools/clean'].map(f => `printf 'touch ${s.marker}\\n' >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`)
    const r = await claudebox(s.world, ['--', '-c', writes.join('; ')], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', XDG_CONFIG_HOME: xdg } })
    expect(r.stdout.trim().split('\n')).toEqual(['tools/hooks/pre-commit-readonly', 'tools/monitor-readonly', 'tools/clean-readonly'])
  })

  test("round 31: a local remote reached through the user's link (mirror -> store/mirror.git) cannot be re-pointed; a nested include relative to a linked folder is protected where git reads it", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'store'))
    execFileSync('git', ['init', '-q', '--bare', path.join(s.project, 'store/mirror.git')])
    fs.symlinkSync('store/mirror.git', path.join(s.project, 'mirror'))
    git(s.project, 'remote', 'add', 'origin', './mirror')
    fs.mkdirSync(path.join(s.project, 'conf/a/b'), { recursive: true })
    fs.symlinkSync('a/b', path.join(s.project, 'conf/link'))
    fs.writeFileSync(path.join(s.project, 'conf/a/b/main.inc'), '[include]\n\tpath = ../extra.inc\n')
    fs.writeFileSync(path.join(s.project, 'conf/a/extra.inc'), '')
    git(s.project, 'config', 'include.path', path.join(s.project, 'conf/link/main.inc'))
    const r = await inside(s, `git init -q --bare "$CLAUDE_CONFIG_DIR/evil.git"; rm mirror && ln -s "$CLAUDE_CONFIG_DIR/evil.git" mirror; sleep 0.5; readlink mirror || echo gone; ${payload(s, 'conf/a/extra.inc')} 2>/dev/null && echo extra-WRITABLE || echo extra-readonly`)
    expect(r.out.split('\n')).toEqual(['gone', 'extra-readonly'])
    expect(r.err).toMatch(/moved aside.*project\/mirror -> /)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 32: files a config runs however it names them (sh tools/a, a quoted path, ~/..., diff.external, config.worktree\'s hooksPath) are read-only; more config files than are read refuses the launch', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'tools'))
    fs.mkdirSync(path.join(s.project, 'hk'))
    const files = ['tools/a', 'tools/b', 'tools/c', 'tools/d', 'hk/pre-commit']
    for (const f of files) fs.writeFileSync(path.join(s.project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    const home = path.relative(s.world.home, s.project)
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), `[core]\n\tfsmonitor = sh tools/a\n[alias]\n\tx = !\\"tools/b\\"\n\ty = !~/${home}/tools/c\n`)
    git(s.project, 'config', 'diff.external', 'tools/d')
    git(s.project, 'config', 'extensions.worktreeConfig', 'true')
    git(s.project, 'config', '--worktree', 'core.hooksPath', 'hk')
    const writes = files.map(f => `echo x >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`)
    const r = await inside(s, writes.join('; '))
    expect(r.out.split('\n')).toEqual(files.map(f => `${f}-readonly`))
    const includes = Array.from({ length: 70 }, (_, i) => path.join(s.world.root, `inc${i}`))
    for (const inc of includes) fs.writeFileSync(inc, '')
    fs.appendFileSync(path.join(s.world.home, '.gitconfig'), includes.map(inc => `[include]\n\tpath = ${inc}\n`).join(''))
    const refused = await inside(s, 'echo RAN')
    expect(refused.code).toBe(125)
    expect(refused.err).toContain('more than 64 git config files to read')
  })

  test("round 33: values read as git reads them (a key on its section's line, quotes and continuation lines, $PWD), and a program not there yet under any key is moved aside when it appears", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'tools'))
    const files = ['tools/a', 'tools/b', 'tools/c']
    for (const f of files) fs.writeFileSync(path.join(s.project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), '[diff] external = tools/a\n[core]\n\tfsmonitor = "tools"/b\n\tpager = $PWD/too\\\nls/c\n[remote "x"]\n\treceivepack = tools/missing\n')
    const writes = files.map(f => `echo x >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`)
    const r = await inside(s, `${writes.join('; ')}; printf 'touch ${s.marker}\\n' > tools/missing; sleep 0.5; test -e tools/missing && echo missing-THERE || echo missing-moved`)
    expect(r.out.split('\n')).toEqual([...files.map(f => `${f}-readonly`), 'missing-moved'])
  })

  test('round 35: a config command that goes to a folder first (cd tools && ./x, sh -c, pushd) runs files there: they are read-only, and one not there yet is moved aside (red team, round 34: ran at git status)', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'tools/sub'), { recursive: true })
    for (const f of ['tools/x', 'tools/sub/y']) fs.writeFileSync(path.join(s.project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), '[core]\n\tfsmonitor = "cd tools && ./x"\n[alias]\n\ty = !sh -c \'cd tools/sub && sh y\'\n\tz = !pushd tools >/dev/null && ./later\n')
    const writes = ['tools/x', 'tools/sub/y'].map(f => `printf 'touch ${s.marker}\\n' >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`)
    const r = await inside(s, `${writes.join('; ')}; printf '#!/bin/sh\\ntouch ${s.marker}\\n' > tools/later; sleep 0.5; test -e tools/later && echo later-THERE || echo later-moved`)
    expect(r.out.split('\n')).toEqual(['tools/x-readonly', 'tools/sub/y-readonly', 'later-moved'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 36: command shapes a config runs through a wrapper or an option (/usr/bin/env bash x, timeout 60 sh x, -c core.hooksPath=.githooks in an alias): their files are read-only, a missing one moved aside', async () => {
    const s = scene()
    for (const f of ['fsmon.sh', 'slow.sh']) fs.writeFileSync(path.join(s.project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    git(s.project, 'config', 'core.fsmonitor', '/usr/bin/env bash fsmon.sh')
    git(s.project, 'config', 'diff.external', 'timeout 60 sh slow.sh')
    git(s.project, 'config', 'alias.ci', '-c core.hooksPath=.githooks commit')
    const writes = ['fsmon.sh', 'slow.sh'].map(f => `echo 'touch ${s.marker}' >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`)
    const r = await inside(s, `${writes.join('; ')}; mkdir .githooks; sleep 0.5; test -e .githooks && echo githooks-THERE || echo githooks-moved`)
    expect(r.out.split('\n')).toEqual(['fsmon.sh-readonly', 'slow.sh-readonly', 'githooks-moved'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 35: repositories a branch's remote, remote.pushDefault, the user's config or a url.*.insteadOf name by a local path: their hooks are read-only (red team, round 34: ran at git push)", async () => {
    const s = scene()
    for (const name of ['by-branch.git', 'by-default.git', 'by-global.git', 'mirrors/by-rewrite.git']) git(s.project, 'init', '-q', '--bare', name)
    git(s.project, 'config', 'branch.main.remote', './by-branch.git')
    git(s.project, 'config', 'remote.pushDefault', './by-default.git')
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), `[remote "global"]\n\turl = ${s.project}/by-global.git\n[url "${s.project}/mirrors/"]\n\tinsteadOf = mine:\n`)
    git(s.project, 'remote', 'add', 'rewritten', 'mine:by-rewrite.git')
    const hooks = ['by-branch.git', 'by-default.git', 'by-global.git', 'mirrors/by-rewrite.git'].map(repo => `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${repo}/hooks/pre-receive 2>/dev/null && chmod +x ${repo}/hooks/pre-receive && echo ${repo}-ESCAPED || echo ${repo}-BLOCKED`)
    const r = await inside(s, hooks.join('; '))
    expect(r.out.split('\n')).toEqual(['by-branch.git-BLOCKED', 'by-default.git-BLOCKED', 'by-global.git-BLOCKED', 'mirrors/by-rewrite.git-BLOCKED'])
    for (const remote of ['./by-branch.git', './by-default.git', 'global', 'rewritten']) {
      const push = spawnSync('git', ['push', '-q', remote, 'main'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' })
      expect(push.status, push.stderr).toBe(0)
    }
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('what git read in a config is kept between launches by its whole text: a config changed since (same size, same time) is read again, a damaged cache is read as none', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'tools'))
    for (const f of ['tools/a', 'tools/b']) fs.writeFileSync(path.join(s.project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    const gitconfig = path.join(s.world.home, '.gitconfig')
    const cache = path.join(s.world.claudeboxHome, 'cache/git-configs.json')
    const tryBoth = ['tools/a', 'tools/b'].map(f => `echo x >> ${f} 2>/dev/null && echo ${f}-WRITABLE || echo ${f}-readonly`).join('; ')
    fs.writeFileSync(gitconfig, '[core]\n\tfsmonitor = tools/a\n')
    expect((await inside(s, tryBoth)).out.split('\n')).toEqual(['tools/a-readonly', 'tools/b-WRITABLE'])
    expect(fs.readFileSync(cache, 'utf8')).toContain('tools/a')
    expect((await inside(s, `cat ${cache} >/dev/null 2>&1 && echo VISIBLE || echo hidden`)).out).toBe('hidden')
    const { mtime } = fs.statSync(gitconfig)
    fs.writeFileSync(gitconfig, '[core]\n\tfsmonitor = tools/b\n')
    fs.utimesSync(gitconfig, mtime, mtime)
    expect((await inside(s, tryBoth)).out.split('\n')).toEqual(['tools/a-WRITABLE', 'tools/b-readonly'])
    fs.writeFileSync(cache, '{"files": {"x": 1')
    expect((await inside(s, tryBoth)).out.split('\n')).toEqual(['tools/a-WRITABLE', 'tools/b-readonly'])
    expect((JSON.parse(fs.readFileSync(cache, 'utf8')) as { files: Record<string, { entries: unknown }> }).files[gitconfig]?.entries).toEqual([['core.fsmonitor', 'tools/b']])
  })

  test("round 35: init.templateDir in the project (the user's config): read-only, for the host's next git init or clone copies its hooks", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'templates/hooks'), { recursive: true })
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), `[init]\n\ttemplateDir = ${s.project}/templates\n`)
    const r = await inside(s, `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > templates/hooks/post-checkout 2>/dev/null && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toBe('BLOCKED')
  })

  test("round 36: git's old remote files (.git/remotes/<name>, .git/branches/<name>), read for a remote the config does not define: cannot be made, so the host's git push does not reach the session's repository", async () => {
    const s = scene()
    const hook = `git init -q --bare "$CLAUDE_CONFIG_DIR/m.git" && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > "$CLAUDE_CONFIG_DIR/m.git/hooks/pre-receive" && chmod +x "$CLAUDE_CONFIG_DIR/m.git/hooks/pre-receive"`
    const remotes = `mkdir -p .git/remotes && printf 'URL: %s\\nPush: refs/heads/*:refs/heads/*\\n' "$CLAUDE_CONFIG_DIR/m.git" > .git/remotes/origin 2>/dev/null && echo remotes-WRITTEN || echo remotes-refused`
    const branches = `mkdir -p .git/branches && echo "$CLAUDE_CONFIG_DIR/m.git" > .git/branches/other 2>/dev/null && echo branches-WRITTEN || echo branches-refused`
    const swapped = 'mv .git/remotes .git/r-old 2>/dev/null && echo remotes-SWAPPED || echo swap-refused'
    const r = await inside(s, `${hook}; ${remotes}; ${branches}; ${swapped}; ls -A .git/remotes .git/branches`)
    // Both folders are there, empty and read-only, during the session (made where missing: round 84).
    expect(r.out.split('\n').slice(-6)).toEqual(['remotes-refused', 'branches-refused', 'swap-refused', '.git/branches:', '', '.git/remotes:'])
    for (const remote of ['origin', 'other']) spawnSync('git', ['push', '-q', remote, 'main'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 36: local remotes git reads otherwise than a path from the top (file://localhost/..., ~user/..., a relative URL from a linked worktree): the repository a session would make there is moved aside', async () => {
    const s = scene()
    const user = os.userInfo().username
    git(s.project, 'remote', 'add', 'a', `file://localhost${s.project}/a.git`)
    git(s.project, 'remote', 'add', 'b', `~${user}${'/..'.repeat(12)}${s.project}/b.git`)
    git(s.project, 'remote', 'add', 'c', '../c.git')
    git(s.project, 'worktree', 'add', '-q', '-b', 'side', path.join(s.project, 'wt'))
    const plant = (name: string): string => `printf 'gitdir: %s\\n' "$CLAUDE_CONFIG_DIR/evil.git" > ${name}`
    const r = await inside(s, `git init -q --bare "$CLAUDE_CONFIG_DIR/evil.git"; ${['a.git', 'b.git', 'c.git'].map(plant).join('; ')}; sleep 0.6; ls -d a.git b.git c.git 2>/dev/null | wc -l`)
    expect(r.out.split('\n').pop()).toBe('0')
  })

  test("round 36: a rebase left in progress with exec lines (run at the user's git rebase --continue) is reported after the session, naming them", async () => {
    const s = scene()
    const r = await inside(s, `mkdir -p .git/rebase-merge && printf 'pick 0000000 x\\nexec touch ${s.marker}\\n' > .git/rebase-merge/git-rebase-todo && echo made`)
    expect(r.out).toBe('made')
    expect(r.err).toMatch(/the session changed files that run code outside the sandbox: .*\.git\/rebase-merge\/git-rebase-todo \(created\)/)
    expect(r.err).toContain(`runs these commands on the host at git rebase --continue (or cherry-pick --continue); read rebase-merge/git-rebase-todo before you continue it: exec touch ${s.marker}`)
  })

  test("round 37: a merge strategy that names a path (git runs git-merge-<strategy>, from the top with a slash) in the user's stopped rebase is moved aside at the session's end, so git rebase --continue runs none", async () => {
    const s = scene()
    const env = { ...process.env, HOME: s.world.home, GIT_EDITOR: 'true' }
    const run = (...args: string[]) => spawnSync('git', args, { cwd: s.project, env, encoding: 'utf8', timeout: 20_000 })
    run('checkout', '-qb', 'side')
    const commit = (text: string): void => {
      fs.writeFileSync(path.join(s.project, 'f'), `${text}\n`)
      run('add', 'f')
      run('commit', '-qm', text)
    }
    commit('a')
    commit('b')
    run('checkout', '-q', 'main')
    commit('c')
    run('checkout', '-q', 'side')
    expect(run('rebase', 'main').status).not.toBe(0) // stopped on the conflict, as a user brings it to a session
    const r = await inside(s, `mkdir -p git-merge- tools && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > tools/x && chmod +x tools/x && printf '/../tools/x\\n' > .git/rebase-merge/strategy && echo planted`)
    expect(r.out).toBe('planted')
    expect(r.err).toMatch(/moved aside .*rebase-merge\/strategy -> /)
    fs.writeFileSync(path.join(s.project, 'f'), 'a\n')
    run('add', 'f')
    run('rebase', '--continue')
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("rounds 38 and 39: index entries renamed to .git/config, .git/hooks/pre-commit and ../.gitconfig (git writes them at the user's git checkout .): the index is moved aside at the session's end, and git checkout . writes nothing into .git", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const rename = renameInIndex('.git/index', { 'Xgit/hooks/pre-commit': '.git/hooks/pre-commit', 'Xgit/config': '.git/config', 'XX/.gitconfig': '../.gitconfig' })
    const script = [
      `b=$(printf '#!/bin/sh\\ntouch ${s.marker}\\n' | git hash-object -w --stdin)`,
      `c=$(printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' | git hash-object -w --stdin)`,
      'git update-index --add --cacheinfo 100755,$b,Xgit/hooks/pre-commit',
      'git update-index --add --cacheinfo 100644,$c,Xgit/config',
      'git update-index --add --cacheinfo 100644,$c,XX/.gitconfig',
      rename,
      'git ls-files | grep -c "^\\.\\{1,2\\}[a-z]*/"',
    ].join(' && ')
    const r = await inside(s, script)
    // 0 when the gitlink watch moved the index aside before the count, empty when it also ended the
    // session first (round 87; CI saw 0 once).
    expect(['3', '0', '']).toContain(r.out)
    // Moved aside at the session's end, or, seen during it, with the session ended (round 87).
    expect(r.err).toMatch(/that git would write outside the work tree or into a \.git folder at your next git checkout or restore[^\n]*\/\.git \(\.\.\/\.gitconfig, \.git\/config, \.git\/hooks\/pre-commit\)|put an entry git would refuse to add [^\n]* the index moved aside/)
    const env = { ...process.env, HOME: s.world.home }
    spawnSync('git', ['checkout', '.'], { cwd: s.project, env, stdio: 'ignore', timeout: 20_000 })
    expect(fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')).toBe(config)
    expect(fs.existsSync(path.join(s.project, '.git/hooks/pre-commit'))).toBe(false)
    expect(fs.existsSync(path.join(path.dirname(s.project), '.gitconfig'))).toBe(false)
    spawnSync('git', ['reset', '-q'], { cwd: s.project, env, timeout: 20_000 })
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 39: an index entry ../.gitconfig alone (git checkout . writes it above the work tree, the user's global config when the project sits in the home): moved aside", async () => {
    const s = scene()
    const rename = renameInIndex('.git/index', { '.X/.gitconfig': '../.gitconfig' })
    const r = await inside(s, `c=$(printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$c,.X/.gitconfig && ${rename} && git ls-files | grep -c "^\\\\.\\\\./"`)
    expect(['1', '0', '']).toContain(r.out) // 0 or empty when the gitlink watch moved the index aside or ended the session first (round 87)
    expect(r.err).toMatch(/\/\.git \(\.\.\/\.gitconfig\)|put an entry git would refuse to add [^\n]* the index moved aside/)
    spawnSync('git', ['checkout', '.'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(path.join(path.dirname(s.project), '.gitconfig'))).toBe(false)
  })

  test("round 40: the index of a linked worktree the session made (git checkout . there wrote ../.git/config): checked at the session's end like the others", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const rename = renameInIndex('../.git/worktrees/wt/index', { '.X/.gxt/config': '../.git/config' })
    const r = await inside(s, `git worktree add -q wt 2>/dev/null && cd wt && c=$(printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$c,.X/.gxt/config && ${rename} && git ls-files | grep -c "^\\.\\./"`)
    expect(r.out).toBe('1')
    expect(r.err).toContain('worktrees/wt (../.git/config)')
    spawnSync('git', ['checkout', '.'], { cwd: path.join(s.project, 'wt'), env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')).toBe(config)
  })

  test("round 41: the index of a nested repository whose git dir lies elsewhere in the project (git init --separate-git-dir): checked at the session's end too", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const rename = renameInIndex('../hid/index', { 'zz/.gix/config': '../.git/config' })
    const r = await inside(s, `mkdir sub && cd sub && git init -q --separate-git-dir ../hid . && mkdir -p zz/.gix && printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' > zz/.gix/config && git add zz/.gix/config && ${rename} && rm -r zz && git ls-files`)
    expect(r.out).toBe('../.git/config')
    expect(r.err).toContain('/hid (../.git/config)')
    spawnSync('git', ['checkout', '.'], { cwd: path.join(s.project, 'sub'), env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')).toBe(config)
  })

  test("round 42: indexes made before the session (a split index's forged sharedindex.*, a nested git dir renamed into place): checked whatever their times", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const evil = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${s.marker}; false"\n`
    // What a session before left: a split index whose shared part names .git/config (its trailer kept, which git does not check) ...
    fs.mkdirSync(path.join(s.project, '.aaa'))
    fs.writeFileSync(path.join(s.project, '.aaa/config'), evil)
    git(s.project, 'add', '.aaa/config')
    git(s.project, 'commit', '-qm', 'aaa')
    git(s.project, 'update-index', '--split-index')
    const shared = fs.readdirSync(path.join(s.project, '.git')).find(name => name.startsWith('sharedindex.')) as string
    const file = path.join(s.project, '.git', shared)
    fs.writeFileSync(file, Buffer.from(fs.readFileSync(file).toString('latin1').replace('.aaa/config', '.git/config'), 'latin1'))
    // ... and a nested repository whose index names ../.git/config.
    const nested = path.join(s.project, 'n')
    execFileSync('git', ['init', '-q', nested])
    fs.mkdirSync(path.join(nested, 'zz/.gix'), { recursive: true })
    fs.writeFileSync(path.join(nested, 'zz/.gix/config'), evil)
    git(nested, 'add', 'zz/.gix/config')
    const index = path.join(nested, '.git/index')
    const body = fs.readFileSync(index).subarray(0, -20)
    const renamed = Buffer.from(body.toString('latin1').replace('zz/.gix/config', '../.git/config'), 'latin1')
    fs.writeFileSync(index, Buffer.concat([renamed, createHash('sha1').update(renamed).digest()]))
    fs.rmSync(path.join(nested, 'zz'), { recursive: true })
    await new Promise(resolve => setTimeout(resolve, 1500)) // older than the session by more than the second the old check allowed
    const r = await inside(s, 'true')
    // At the end, or by the watch's first look when the machine is slow enough for one to come first.
    expect(r.err).toMatch(/\/project\/\.git \(\.git\/config\)|put an entry git would refuse to add [^\n]* in the index of [^\n]*\/project\/\.git:/)
    expect(r.err).toContain('/n/.git (../.git/config)')
    for (const cwd of [s.project, nested]) spawnSync('git', ['checkout', '.'], { cwd, env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')).toBe(config)
  })

  test("round 42: a repository made in the instance folder (writable inside, on the host after) and linked into the project: reported, its top's too", async () => {
    const s = scene()
    const r = await inside(s, 'git init -q "$CLAUDE_CONFIG_DIR/x/sub" && git -C "$CLAUDE_CONFIG_DIR/x/sub" config core.fsmonitor "touch /tmp/x" && ln -s "$CLAUDE_CONFIG_DIR/x/sub" sub && git init -q "$CLAUDE_CONFIG_DIR" && echo made')
    expect(r.out).toBe('made')
    expect(r.err).toMatch(/the session created or changed nested git repositories[^\n]*instances\/[0-9a-f]+\/x\/sub\/\.git/)
    expect(r.err).toMatch(/the session created or changed nested git repositories[^\n]*instances\/[0-9a-f]+\/\.git/)
  })

  test('a repository made in an instance folder a session before had left as it was (its listing kept by then): reported', async () => {
    const s = scene()
    expect((await inside(s, 'mkdir -p "$CLAUDE_CONFIG_DIR/y/deep" && echo made')).out).toBe('made')
    await new Promise(resolve => setTimeout(resolve, 1500)) // older than the folder cache's freshness rule
    expect((await inside(s, 'true')).err).not.toMatch(/nested git repositories/)
    const r = await inside(s, 'git init -q "$CLAUDE_CONFIG_DIR/y/deep/sub" && echo made')
    expect(r.out).toBe('made')
    expect(r.err).toMatch(/the session created or changed nested git repositories[^\n]*instances\/[0-9a-f]+\/y\/deep\/sub\/\.git/)
  })

  test('the end-of-session index check is bounded: 80 nested repositories whose index is a FIFO (moved aside unread) and 70 with one, end the session at once (at most 64 read), said so', async () => {
    const s = scene()
    const started = Date.now()
    const r = await inside(s, 'for i in $(seq 80); do mkdir -p r/$i && git init -q r/$i && mkfifo r/$i/.git/index; done; for i in $(seq 70); do git init -q g/$i && touch g/$i/f && git -C g/$i add f; done; echo made')
    expect(r.out).toBe('made')
    expect(r.err).toMatch(/the project holds \d+ git repositories with an index; claudebox had git read the first 64/)
    for (let i = 1; i <= 80; i++) expect(fs.existsSync(path.join(s.project, `r/${i}/.git/index`))).toBe(false)
    expect(Date.now() - started).toBeLessThan(20_000)
  }, 90_000)

  test("round 43: a .git file whose gitdir: goes through a link and then .. (git resolves it as the kernel does): the index git uses is the one checked", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const script = [
      'mkdir -p h/.git m',
      'git init -q --separate-git-dir "$PWD/h/.git/g" m',
      '(git --git-dir=h/.git/g config --unset core.worktree || true)',
      'cd m',
      ...poisonIndex(s, '../h/.git/g/index'),
      'ln -s ../h x',
      "printf 'gitdir: x/../h/.git/g\\n' > .git",
      'git ls-files',
    ].join(' && ')
    const r = await inside(s, script)
    expect(r.out).toBe('../.git/config')
    expect(r.err).toContain('/h/.git/g (../.git/config)')
    checkoutLeavesConfig(s, 'm', config)
  })

  test("a local remote through the user's link and then .. (url = lnk/../mirror.git, lnk -> sub/deep): the repository git reaches, sub/mirror.git, is the one whose hooks are read-only", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'sub/deep'), { recursive: true })
    fs.symlinkSync('sub/deep', path.join(s.project, 'lnk'))
    git(s.project, 'clone', '-q', '--bare', '.', 'sub/mirror.git')
    git(s.project, 'remote', 'add', 'through', 'lnk/../mirror.git')
    const r = await inside(s, `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > sub/mirror.git/hooks/pre-receive 2>/dev/null && chmod +x sub/mirror.git/hooks/pre-receive && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toBe('BLOCKED')
    const push = spawnSync('git', ['push', '-q', 'through', 'main'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' })
    expect(push.status, push.stderr).toBe(0)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('the folders the nested-repository search kept from the session before (unchanged since): a repository made deep in one of them, a FIFO .gitignore and a folder renamed into place are still found', async () => {
    const s = scene()
    for (const dir of ['a/b/c', 'keep/x/y', 'staged/q']) fs.mkdirSync(path.join(s.project, dir), { recursive: true })
    await new Promise(resolve => setTimeout(resolve, 1_200)) // older than the freshness margin: kept
    expect((await inside(s, 'true')).code).toBe(0)
    const cache = fs.readdirSync(path.join(s.world.claudeboxHome, 'cache')).find(f => f.startsWith('folders-')) ?? ''
    const kept = JSON.parse(fs.readFileSync(path.join(s.world.claudeboxHome, 'cache', cache), 'utf8')) as Record<string, string>
    expect(Object.keys(kept)).toContain(path.join(fs.realpathSync(s.project), 'keep/x/y'))
    const r = await inside(s, `ls ${path.join(s.world.claudeboxHome, 'cache')} >/dev/null 2>&1 && echo CACHE-VISIBLE; git init -q a/b/c/deep && mkfifo keep/x/y/.gitignore && git init -q staged/q/r && mv staged/q keep/x/y/moved; echo done`)
    expect(r.out).toBe('done')
    expect(r.err).toContain('a/b/c/deep/.git')
    expect(r.err).toContain('keep/x/y/moved/r/.git')
    expect(fs.existsSync(path.join(s.project, 'keep/x/y/.gitignore'))).toBe(false)
  })

  test("the git dirs' folders kept from the session before (unchanged since): a link there whose target has become a FIFO, and a FIFO among loose objects, are moved aside", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'junk'))
    fs.writeFileSync(path.join(s.project, 'junk/target'), '')
    fs.mkdirSync(path.join(s.project, '.git/objects/ab'), { recursive: true })
    fs.symlinkSync('../../junk/target', path.join(s.project, '.git/info/exclude-more'))
    await new Promise(resolve => setTimeout(resolve, 1_200)) // older than the freshness margin: kept
    expect((await inside(s, 'true')).code).toBe(0)
    const cache = fs.readdirSync(path.join(s.world.claudeboxHome, 'cache')).find(f => f.startsWith('folders-')) ?? ''
    const kept = JSON.parse(fs.readFileSync(path.join(s.world.claudeboxHome, 'cache', cache), 'utf8')) as Record<string, string>
    expect(kept[path.join(fs.realpathSync(s.project), '.git/info')]).toContain('/lexclude-more')
    const r = await inside(s, 'rm junk/target && mkfifo junk/target && mkfifo .git/objects/ab/cdef && echo done')
    expect(r.out).toBe('done')
    expect(r.err).toContain('info/exclude-more -> ')
    expect(r.err).toContain('objects/ab/cdef -> ')
    expect(fs.existsSync(path.join(s.project, '.git/info/exclude-more'))).toBe(false)
    expect(fs.existsSync(path.join(s.project, '.git/objects/ab/cdef'))).toBe(false)
  })

  test.each([
    ['a symlink to a git dir kept in the main .git', 'ln -s ../.git/x .git'],
    ['a gitdir: file with a NUL after the path (git stops there)', "printf 'gitdir: ../.git/x\\0junk\\n' > .git"],
  ])("round 45: a nested repository whose .git is %s: its index is checked at the session's end", async (_what, pointer) => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const script = [
      'git init -q --separate-git-dir "$PWD/.git/x" sub',
      '(git --git-dir=.git/x config --unset core.worktree || true)',
      'cd sub',
      'rm .git',
      pointer,
      ...poisonIndex(s, '../.git/x/index'),
      'git ls-files',
    ].join(' && ')
    const r = await inside(s, script)
    expect(r.out).toBe('../.git/config')
    expect(r.err).toContain('/.git/x (../.git/config)')
    checkoutLeavesConfig(s, 'sub', config)
  })

  test("round 45: a nested .git link made in one session, the git dir it names made in the next (its config runs at git status there): moved aside at the first session's end, where it leads nowhere yet (round 68); made again with its git dir, reported", async () => {
    const s = scene()
    const first = await inside(s, 'mkdir sub && ln -s ../.git/x sub/.git')
    expect(first.err).toContain('/sub/.git -> ')
    expect(fs.existsSync(path.join(s.project, 'sub/.git'))).toBe(false)
    await inside(s, 'ln -s ../.git/x sub/.git && git init -q --bare .git/x')
    const r = await inside(s, `git --git-dir=.git/x config core.bare false && git --git-dir=.git/x config core.fsmonitor "touch ${s.marker}; false"`)
    expect(r.err).toContain('nested git repositories')
    expect(r.err).toContain('/sub/.git')
  })

  test("round 45: a FIFO as a nested split index's shared part (git ls-files waited out its timeout, each repository): the session ends at once, the index moved aside", async () => {
    const s = scene()
    const links = Array.from({ length: 3 }, (_, i) => `git init -q n${i} && (cd n${i} && touch f && git add f && git update-index --split-index && f=$(ls .git/sharedindex.*) && rm $f && mkfifo $f)`)
    const started = Date.now()
    const r = await inside(s, links.join(' && ') + '; echo made')
    expect(r.out).toBe('made')
    expect(Date.now() - started).toBeLessThan(8_000)
    expect(r.err).toContain('moved aside')
  })

  test("round 45: launched from a subfolder whose .git the session made a repository with a FIFO as HEAD: claudebox's git config runs do not look for a repository there (each waited out its timeout)", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'sub'))
    const nested = Array.from({ length: 3 }, (_, i) => `mkdir -p ../n${i}/.git/objects ../n${i}/.git/refs ../n${i}/.git/sequencer && echo 'ref: refs/heads/main' > ../n${i}/.git/HEAD && printf '[options]\\n\\tstrategy = ort\\n' > ../n${i}/.git/sequencer/opts && printf '[core]\\n\\tbare = false\\n' > ../n${i}/.git/config`)
    const started = Date.now()
    const r = await inside(s, `mkdir -p .git/objects .git/refs && mkfifo .git/HEAD && ${nested.join(' && ')} && echo made`, path.join(s.project, 'sub'))
    expect(r.out).toBe('made')
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  test("round 46: a nested .git whose gitdir: goes through /proc/self/cwd (the launcher's folder, not git's): moved aside, and git checkout . in sub writes nothing into .git", async () => {
    const s = scene()
    const config = fs.readFileSync(path.join(s.project, '.git/config'), 'utf8')
    const script = [
      'git init -q --separate-git-dir "$PWD/.git/x" sub',
      '(git --git-dir=.git/x config --unset core.worktree || true)',
      'cd sub',
      ...poisonIndex(s, '../.git/x/index'),
      "printf 'gitdir: /proc/self/cwd/../.git/x\\n' > .git",
      'echo made',
    ].join(' && ')
    const r = await inside(s, script)
    expect(r.out).toBe('made')
    expect(r.err).toMatch(/leads through \/proc[^\n]*sub\/\.git ->/)
    expect(fs.existsSync(path.join(s.project, 'sub/.git'))).toBe(false)
    checkoutLeavesConfig(s, 'sub', config)
  })

  test.each([
    ['its config, a symlink, changed behind the link', 'git init -q sub && mkdir meta && mv sub/.git/config meta/cfg && ln -s ../../meta/cfg sub/.git/config', 'git config --file meta/cfg core.fsmonitor "touch MARK; false"'],
    ['the config of its commondir', 'git init -q sub && mkdir -p meta && git init -q --bare meta/c && rm -r sub/.git/objects sub/.git/refs sub/.git/config && echo ../../meta/c > sub/.git/commondir', 'git config --file meta/c/config core.fsmonitor "touch MARK; false"'],
    ['re-pointed in the middle of a chain of links', 'git init -q --bare .git/w && git init -q --bare .git/z && git --git-dir=.git/z config core.fsmonitor "touch MARK; false" && mkdir sub meta && ln -s ../.git/w meta/l && ln -s ../meta/l sub/.git', 'ln -sfn ../.git/z meta/l'],
    ['a symlink to a gitdir: file that the next session rewrote', 'git init -q --bare .git/w && git init -q --bare .git/z && git --git-dir=.git/z config core.fsmonitor "touch MARK; false" && mkdir sub meta && echo "gitdir: ../.git/w" > meta/gf && ln -s ../meta/gf sub/.git', 'echo "gitdir: ../.git/z" > meta/gf'],
  ])('round 46: a nested repository made in one session, %s in the next: the second session reports it', async (_what, first, second) => {
    const s = scene()
    expect((await inside(s, first)).err).toContain('/sub/.git')
    await new Promise(resolve => setTimeout(resolve, 1_200)) // what the first made is settled, and kept
    const r = await inside(s, second.replace('MARK', s.marker))
    expect(r.err).toContain('nested git repositories')
    expect(r.err).toContain('/sub/.git')
  })

  test("round 46: a .gitmodules that is a symlink to a FIFO (git opens it through the link, and hung) is moved aside; nested repositories whose hooks lead to a folder of 20,000 entries are read 256 entries in, and so reported at every session", async () => {
    const s = scene()
    await inside(s, 'mkfifo q && ln -s q .gitmodules && mkdir big && (cd big && seq 20000 | xargs touch) && for i in $(seq 100); do mkdir -p n/$i/.git && ln -s ../../../big n/$i/.git/hooks; done')
    expect(lstatKindOf(path.join(s.project, '.gitmodules'))).toBe('missing')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, 'date +%s%3N')
    const end = Date.now() - Number(r.out) // the session's end (before: 100 times 20,000 entries read, ~4 s)
    expect(r.err).toContain('/n/1/.git')
    expect(end).toBeLessThan(8_000)
  }, 90_000)

  test("round 47: a repository kept inside the project's .git and reached by a symlink from the work tree (git status there ran its fsmonitor): reported", async () => {
    const s = scene()
    const r = await inside(s, `git init -q .git/stash/r && git --git-dir=.git/stash/r/.git config core.fsmonitor "touch ${s.marker}; false" && ln -s .git/stash/r tools`)
    expect(r.err).toContain('/.git/stash/r/.git')
  })

  test('round 47: a repository hidden in a nested .git in one session and renamed into the work tree in the next (a rename changes no time inside it): reported', async () => {
    const s = scene()
    expect((await inside(s, `git init -q n && git init -q n/.git/x/r && git --git-dir=n/.git/x/r/.git config core.fsmonitor "touch ${s.marker}; false"`)).err).toContain('/n/.git')
    const record = path.join(s.world.claudeboxHome, 'nested')
    // The record of the first session's repositories, the marks of those it made (reported-repos.ts) and when sessions ran (session-times.ts), which no sandbox sees.
    expect(fs.readdirSync(record).filter(name => !['reported.json', 'sessions'].includes(name))).toHaveLength(1)
    expect(fs.readdirSync(record)).toEqual(expect.arrayContaining(['reported.json', 'sessions']))
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, `ls ${record} >/dev/null 2>&1 && echo RECORD-VISIBLE; mv n/.git/x/r r`)
    expect(r.out).toBe('')
    expect(r.err).toContain('/r/.git')
  })

  test('round 47: two sessions of the project at once, the later ending first (it took the earlier one\'s new repository for an old one, and kept it): the earlier one still reports it', async () => {
    const s = scene()
    const first = inside(s, `git init -q n && git -C n config core.fsmonitor "touch ${s.marker}; false" && sleep 4`)
    await new Promise(resolve => setTimeout(resolve, 2_000))
    await inside(s, 'true')
    expect((await first).err).toContain('/n/.git')
  })

  test('round 47: past the 512 repositories looked into, a repository\'s index is still checked', async () => {
    const s = scene()
    const rename = (r: string): string => renameInIndex(`${r}/.git/index`, { 'zz/.gix/config': '../.git/config' })
    const repo = (r: string): string => `git init -q ${r} && mkdir -p ${r}/zz/.gix && touch ${r}/zz/.gix/config && git -C ${r} add zz/.gix/config && ${rename(r)}`
    const r = await inside(s, `for i in $(seq 600); do mkdir d$i && : > d$i/.git; done; ${repo('zz')} && ${repo('00')} && echo made`)
    expect(r.out).toBe('made')
    for (const dir of ['zz', '00']) expect(fs.existsSync(path.join(s.project, dir, '.git/index'))).toBe(false)
  }, 90_000)

  test("round 47: a nested repository's core.worktree moves where its relative programs run: one made there in the next session is reported", async () => {
    const s = scene()
    expect((await inside(s, 'git init -q n && mkdir w && git -C n config core.worktree ../../w && git -C n config core.fsmonitor ./fsm')).err).toContain('/n/.git')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > w/fsm && chmod +x w/fsm`)
    expect(r.err).toContain('/n/.git')
  })

  test('round 47: a file of a git dir that is a symlink to a FIFO (packed-refs -> ../junk/fifo: git opens it through the link, and hung): moved aside', async () => {
    const s = scene()
    await inside(s, 'mkdir junk && mkfifo junk/ff && ln -s ../junk/ff .git/packed-refs && git init -q n && ln -s ../../junk/ff n/.git/packed-refs')
    for (const file of ['.git/packed-refs', 'n/.git/packed-refs']) expect(lstatKindOf(path.join(s.project, file))).toBe('missing')
  })

  test('round 48: a nested repository with a config over 1 MiB (claudebox cannot read it whole, so cannot tell where it leads): its config is moved aside (round 72)', async () => {
    const s = scene()
    const r = await inside(s, "git init -q n && git -C n config core.fsmonitor ./fsm && head -c 1200000 /dev/zero | tr '\\0' '#' | fold -w 100 >> n/.git/config && touch n/fsm")
    expect(r.err).toContain('n/.git/config -> ')
    expect(fs.existsSync(path.join(s.project, 'n/.git/config'))).toBe(false)
  })

  test("round 48: a nested repository with a program named through /proc/self/cwd (git runs it from the repository, claudebox looked from its own folder): its config is moved aside (round 73: where it leads cannot be known)", async () => {
    const s = scene()
    const r = await inside(s, 'git init -q n && git -C n config core.fsmonitor /proc/self/cwd/fsm && touch n/fsm')
    expect(r.err).toContain('n/.git/config -> ')
    expect(fs.existsSync(path.join(s.project, 'n/.git/config'))).toBe(false)
  })

  test('round 48: 80 nested repositories whose programs the next session rewrites: each is reported (one reader for all of them read the configs of 31)', async () => {
    const s = scene()
    await inside(s, 'for i in $(seq -w 80); do git init -q r$i && git -C r$i config core.fsmonitor ./fsm && touch r$i/fsm; done')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, "for i in $(seq -w 80); do echo 'exit 0' > r$i/fsm; done")
    for (let i = 1; i <= 80; i++) expect(r.err).toContain(`/r${String(i).padStart(2, '0')}/.git`)
  }, 90_000)

  test('round 48: a chain of module git dirs whose worktrees folders link to a folder of 100,000 files ends the session at once', async () => {
    const s = scene()
    const script = 'mkdir big && (cd big && seq 100000 | xargs touch) && d=.git/modules && for i in $(seq 60); do d=$d/a; mkdir -p $d && echo ref: refs/heads/main > $d/HEAD && ln -s "$PWD/big" $d/worktrees; d=$d/modules; done; date +%s%3N'
    const r = await inside(s, script)
    expect(Date.now() - Number(r.out.split('\n').at(-1))).toBeLessThan(8_000)
  }, 180_000)

  test("round 49: a git dir the session made below .git/worktrees/a/b (the launch protects only worktrees/<name>): its config changed in the next session is reported", async () => {
    const s = scene()
    expect((await inside(s, 'git init -q --bare .git/worktrees/a/b && ln -s .git/worktrees/a/b tools')).err).toContain('worktrees')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, `git config --file .git/worktrees/a/b/config core.fsmonitor "touch ${s.marker}; false"`)
    expect(r.err).toContain('/.git/worktrees/a/b')
  })

  test("round 49: a nested repository whose config names 4,000 folders of 255 files: the session ends at once, and the index checks after the search still run", async () => {
    const s = scene()
    const rename = renameInIndex('m/.git/index', { 'zz/.gix/config': '../.git/config' })
    const script = [
      'git init -q n && mkdir big && (cd big && seq 255 | xargs touch)',
      'for i in $(seq 4000); do ln -s ../big n/s$i; done',
      'git -C n config alias.x "!sh $(for i in $(seq 4000); do printf \'s%d/ \' $i; done)"',
      'git init -q m && mkdir -p m/zz/.gix && touch m/zz/.gix/config && git -C m add zz/.gix/config',
      rename,
      'date +%s%3N',
    ].join(' && ')
    const r = await inside(s, script)
    expect(Date.now() - Number(r.out.split('\n').at(-1))).toBeLessThan(4_000)
    expect(r.err).not.toContain('failed')
    expect(r.err).toContain('/n/.git')
    expect(fs.existsSync(path.join(s.project, 'm/.git/index'))).toBe(false)
  }, 180_000)

  test('round 50: 300,001 files in one folder (the search counted every file, stopped, and left a repository beside them unread): its index is still checked', async () => {
    const s = scene({ hardLinks: true }) // hard links of six files: 300,001 files of their own fill a tmpfs
    const rename = renameInIndex('zz/.git/index', { 'zz/.gix/config': '../.git/config' })
    const r = await inside(s, `mkdir bulk && python3 -c "import os; [open('bulk/s%d' % k, 'w').close() for k in range(6)]; [os.link('bulk/s%d' % (i // 60000), 'bulk/f%d' % i) for i in range(300001)]" && git init -q zz && mkdir -p zz/zz/.gix && touch zz/zz/.gix/config && git -C zz add zz/.gix/config && ${rename} && echo made`, s.project, 240_000)
    expect(r.out).toBe('made')
    expect(r.err).not.toContain('stopped after')
    expect(fs.existsSync(path.join(s.project, 'zz/.git/index'))).toBe(false)
  }, 300_000)

  test('round 69: 300,001 symlinks and FIFOs in one folder (the search counted them, stopped, and left a folder beside them writable for others): it is taken back', async () => {
    const s = scene()
    const r = await inside(s, `mkdir -p bulk wide && chmod 777 wide && python3 -c "import os; [os.symlink('x', 'bulk/l%d' % i) for i in range(200001)]; [os.mkfifo('bulk/p%d' % i) for i in range(100001)]" && echo made`, s.project, 240_000)
    expect(r.out, r.err).toBe('made')
    expect(r.err).not.toContain('stopped after')
    expect(fs.statSync(path.join(s.project, 'wide')).mode & 0o022).toBe(0)
    fs.rmSync(path.join(s.project, 'bulk'), { recursive: true })
  }, 300_000)

  test('round 69: 300 gitlinks 1,500 folders deep: the folders on their way are narrowed within a budget, said, and the end comes in seconds (it took 71 s for 1,024 gitlinks 5,000 deep)', async () => {
    const s = scene()
    const deep = Array.from({ length: 1500 }, () => 'a').join('/')
    const started = Date.now()
    const r = await inside(s, `mkdir -p ${deep} && sha=$(git rev-parse HEAD) && for i in $(seq 300); do printf '160000 %s 0\t%s/%d\n' $sha ${deep} $i; done | git update-index --index-info && echo staged`)
    // The session's end looks within its budget; or, when the gitlink watch saw the index first, it
    // ended the session (gitlinks more than 64 folders deep, round 87) and moved the index aside.
    expect(['staged', '']).toContain(r.out)
    expect((Date.now() - started) / 1000).toBeLessThan(20)
    expect(r.err).toMatch(/not all looked at: the folders on the way to gitlinks and nested repositories|put a gitlink more than 64 folders deep in the index [^\n]* the index moved aside/)
    spawnSync('git', ['read-tree', 'HEAD'], { cwd: s.project })
    fs.rmSync(path.join(s.project, 'a'), { recursive: true })
  }, 120_000)

  test('round 50: FIFOs in the git dirs of 80 nested repositories, and a FIFO packed-refs behind 64,000 loose-object names: each is moved aside', async () => {
    const s = scene()
    await inside(s, 'for i in $(seq 80); do git init -q n$i; done')
    const r = await inside(s, 'for i in $(seq 80); do rm n$i/.git/info/exclude && mkfifo n$i/.git/info/exclude; done; for d in $(seq 10 25); do mkdir -p .git/objects/$d && (cd .git/objects/$d && seq 4000 | xargs touch); done; mkfifo .git/packed-refs.fifo && ln -sf packed-refs.fifo .git/packed-refs; echo made')
    expect(r.out).toBe('made')
    for (let i = 1; i <= 80; i++) expect(lstatKindOf(path.join(s.project, `n${i}/.git/info/exclude`))).toBe('missing')
    expect(lstatKindOf(path.join(s.project, '.git/packed-refs'))).toBe('missing')
  }, 180_000)

  test("round 44: the index check never acts on a nested repository's config (a sparse index with a tree removed made ls-files lazily fetch it from a promisor remote, whose uploadpack ran on the host)", async () => {
    const s = scene()
    const script = [
      'mkdir n && cd n && git init -q && mkdir sub && echo f > sub/f && echo t > top && git add . && git -c user.name=u -c user.email=e commit -qm i',
      'git sparse-checkout init --cone --sparse-index && git sparse-checkout set other',
      't=$(git rev-parse HEAD:sub) && rm -f .git/objects/$(echo $t | cut -c1-2)/$(echo $t | cut -c3-)',
      'git config core.repositoryformatversion 1 && git config extensions.partialClone origin && git config remote.origin.url "$PWD"',
      `git config remote.origin.uploadpack "touch ${s.marker}; false"`,
      'echo planted',
    ].join(' && ')
    const r = await inside(s, script)
    expect(r.out).toBe('planted')
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 38: a strategy file that is a symlink (git follows it) is moved aside at the session\'s end too', async () => {
    const s = scene()
    const r = await inside(s, `mkdir -p .git/rebase-merge git-merge- tools && printf '/../tools/x\\n' > notes.txt && ln -s ../../notes.txt .git/rebase-merge/strategy && echo planted`)
    expect(r.out).toBe('planted')
    expect(r.err).toMatch(/moved aside .*rebase-merge\/strategy -> /)
    expect(fs.existsSync(path.join(s.project, '.git/rebase-merge/strategy'))).toBe(false)
  })

  test('round 34: a config claudebox cannot read whole (padded past 1 MiB) refuses the launch rather than be skipped', async () => {
    const s = scene()
    const padding = Array.from({ length: 16_000 }, (_, i) => `\tkey${i} = ${'v'.repeat(60)}\n`).join('')
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), `[core]\n\tfsmonitor = tools/x\n[x]\n${padding}`)
    const r = await inside(s, 'echo RAN')
    expect(r.code).toBe(125)
    expect(r.out).toBe('')
    expect(r.err).toContain(`git reads the config ${s.world.home}/.gitconfig, and claudebox cannot`)
  })
})
