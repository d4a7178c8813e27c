// The escape suite, git: each attack plants, from inside a real sandbox, a way to make the host's git
// run a program (core.fsmonitor of a config git should never read); then the host's git runs
// status, diff, add -A and commit -a in the project, and the payload must not have run. What mounts
// cannot prevent (a nested repository, a gitlink) must be reported on stderr after the session.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, FIXTURES, git, HAVE_BWRAP, IS_ROOT, makeRepo } from '../helpers/cli.js'
import { fileOutside, hostGit, inside, payload, payloadWorks, plainFolder, readableAgain, scene, type Scene } from '../helpers/git-scene.js'

/**
 * A shell function for the session: `moved P` waits until P is gone (at most 5 s), then says MOVED,
 * or THERE. A fixed sleep before one look lost to a loaded machine (the watch's git run took 191 ms).
 */
const MOVED = 'moved() { i=0; while [ -e "$1" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; [ -e "$1" ] && echo THERE || echo MOVED; }'

/** A session's wait until the test writes `release` in the project (at most 60 s). */
const UNTIL_RELEASED = 'i=0; while [ ! -e release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done'

/** Shell lines (run inside): a program that touches the marker, and a config in `dir` whose fsmonitor runs it, named relative to the work tree, so what the config names stays inside. */
const plantConfig = (marker: string, dir: string): string => `mkdir -p ${dir} && printf '#!/bin/sh\\ntouch ${marker}\\n' > pl && chmod +x pl && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ../pl\\n' > ${dir}/config`

/** Shell lines: the planted folder gd renamed into sub/.git and made a repository with a commit, which a rename leaves with gd/config's times. */
const RENAME_INTO_GIT = "mkdir -p sub && mv gd sub/.git && mkdir -p sub/.git/objects sub/.git/refs/heads && echo 'ref: refs/heads/main' > sub/.git/HEAD && git -C sub -c core.fsmonitor= commit -q --allow-empty -m x && echo RENAMED"

/** Shell lines: sub staged as a gitlink after the watch's first look, then whether its .git is still there. */
const STAGE_SUB = 'sleep 1; git update-index --add --cacheinfo "160000,$(git -C sub -c core.fsmonitor= rev-parse HEAD),sub" && sleep 1 && test -d sub/.git && echo THERE || echo MOVED'

/** A scene whose project holds an untracked clone of the user's, `lib`, older than the next session by more than the watch's look needs. */
async function sceneWithClone(): Promise<Scene> {
  const s = scene()
  makeRepo(s.project, 'lib')
  fs.appendFileSync(path.join(s.project, '.git/info/exclude'), 'lib/\n')
  await new Promise(resolve => setTimeout(resolve, 1_200))
  return s
}

/** The planted gd renamed into sub/.git in one session (after the shell lines `first`), staged in the next: its .git is moved aside, and the host's git runs nothing. */
async function renamedThenStaged(s: Scene, first: string): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, 1_200))
  const renamed = await inside(s, `${first}${RENAME_INTO_GIT}`)
  expect(renamed.out, renamed.err).toBe('RENAMED')
  await new Promise(resolve => setTimeout(resolve, 1_200))
  const r = await inside(s, STAGE_SUB)
  expect(r.out, r.err).toBe('MOVED')
  hostGit(s.project, s.world)
  expect(fs.existsSync(s.marker)).toBe(false)
}

/** Tracked NOTES and docs/x in the scene's project: old files and a folder of the user's that a session can rename or hard-link. */
function trackedNotesAndDocs(s: Scene): void {
  fs.writeFileSync(path.join(s.project, 'NOTES'), 'n\n')
  fs.mkdirSync(path.join(s.project, 'docs'))
  fs.writeFileSync(path.join(s.project, 'docs/x'), 'd\n')
  git(s.project, 'add', 'NOTES', 'docs')
  git(s.project, 'commit', '-qm', 'notes')
}

/**
 * A scene whose project holds, besides tracked NOTES and docs/, an untracked clone of the user's,
 * v/lib, with a submodule dep (its .git a `gitdir: ../.git/modules/dep` file), seen by one session's end.
 */
async function sceneWithNestedSubmodule({ hardLinks = true } = {}): Promise<Scene & { startedMs: number }> {
  const s = scene({ hardLinks })
  trackedNotesAndDocs(s)
  const upstream = makeRepo(s.world.root, 'upstream')
  fs.mkdirSync(path.join(s.project, 'v'))
  execFileSync('git', ['clone', '-q', upstream, path.join(s.project, 'v/lib')])
  git(path.join(s.project, 'v/lib'), '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', upstream, 'dep')
  git(path.join(s.project, 'v/lib'), 'commit', '-qm', 'dep')
  fs.appendFileSync(path.join(s.project, '.git/info/exclude'), 'v/\n')
  await new Promise(resolve => setTimeout(resolve, 1_200))
  await inside(s, 'true')
  await new Promise(resolve => setTimeout(resolve, 1_200))
  return { ...s, startedMs: Date.now() }
}

/** The user discards the session's edits (git checkout .), which moves the change times of what the session hard-linked out of every session's. */
async function discardedByTheUser(s: Scene): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, 1_200))
  spawnSync('git', ['checkout', '.'], { cwd: s.project, stdio: 'ignore', timeout: 20_000 })
  await new Promise(resolve => setTimeout(resolve, 1_200))
}

/** Shell lines: the planted a/gitx made a/.git, the clone's submodule moved to a/sub (its gitdir: file now leads into a/.git/modules/dep) and staged; whether its .git is still there. */
const MOVE_SUBMODULE_AND_STAGE = 'g=a/gitx/modules/dep; mkdir -p $g/objects $g/refs/heads && mv a/gitx a/.git && mv v/lib/dep a/sub && git -C a/sub -c core.fsmonitor= commit -q --allow-empty -m x && sleep 1 && git update-index --add --cacheinfo "160000,$(git -C a/sub -c core.fsmonitor= rev-parse HEAD),a/sub" && sleep 1 && test -e a/sub/.git && echo THERE || echo MOVED'

describe.skipIf(!HAVE_BWRAP)('git escapes: the host git never runs what the agent planted', () => {
  test('the fsmonitor payload runs when git reads such a config (control)', () => {
    payloadWorks(scene())
  })

  test(".git/commondir pointing at a git dir the agent built: none can be planted, a read-only placeholder holds the name during the session, and it is gone after it (red team, round 84: one planted the moment the host's git commit started its maintenance child, which finds the repository again, won 7 of 9 against moving it aside)", async () => {
    const s = scene()
    const commondir = path.join(s.project, '.git/commondir')
    const r = await inside(
      s,
      [
        `mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ && ${payload(s, 'evil/config')}`,
        'cat .git/commondir',
        'echo "$PWD/evil" > .git/commondir 2>/dev/null || echo WRITE-REFUSED',
        'echo "$PWD/evil" > cd.tmp; mv -f cd.tmp .git/commondir 2>/dev/null || echo RENAME-REFUSED',
        'ln -s evil .git/cd.link; mv -f .git/cd.link .git/commondir 2>/dev/null || echo LINK-REFUSED',
        'rm -f .git/commondir 2>/dev/null || echo REMOVE-REFUSED',
        'git rev-parse --git-common-dir',
      ].join('; '),
    )
    expect(r.out.split('\n'), r.err).toEqual(['./', 'WRITE-REFUSED', 'RENAME-REFUSED', 'LINK-REFUSED', 'REMOVE-REFUSED', path.join(s.project, '.git')])
    expect(fs.existsSync(commondir)).toBe(false)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('the commondir placeholder: the host\'s git takes the repository as before while a session runs; a second session ending first leaves it to the one still running; one a killed launcher left is taken over and removed; anything else there still refuses the launch', async () => {
    const s = scene()
    const commondir = path.join(s.project, '.git/commondir')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    // The first session runs until the test releases it (a fixed sleep ended it first under load).
    const first = claudebox(s.world, ['--', '-c', `touch first-runs; ${UNTIL_RELEASED}`], { cwd: s.project, env })
    await until(() => fs.existsSync(path.join(s.project, 'first-runs')))
    expect(fs.readFileSync(commondir, 'utf8')).toBe('./\n')
    const host = (args: string[]): string => execFileSync('git', args, { cwd: s.project, env: { ...process.env, HOME: s.world.home }, encoding: 'utf8' }).trim()
    expect(host(['rev-parse', '--git-dir'])).toBe('.git')
    expect(host(['status', '--porcelain'])).toBe('?? first-runs')
    const second = await claudebox(s.world, ['--', '-c', 'cat .git/commondir'], { cwd: s.project, env })
    expect(second.stdout.trim(), second.stderr).toBe('./')
    expect(fs.readFileSync(commondir, 'utf8')).toBe('./\n')
    fs.writeFileSync(path.join(s.project, 'release'), '')
    expect((await first).exitCode).toBe(0)
    expect(fs.existsSync(commondir)).toBe(false)
    // What a launcher killed during its session leaves: taken over, then removed at the end.
    fs.writeFileSync(commondir, './\n')
    const after = await claudebox(s.world, ['--', '-c', 'echo x > .git/commondir || echo REFUSED'], { cwd: s.project, env })
    expect(after.stdout.trim(), after.stderr).toBe('REFUSED')
    expect(fs.existsSync(commondir)).toBe(false)
    const other = `${makeRepo(s.world.home, 'src/other')}/.git\n`
    fs.writeFileSync(commondir, other)
    const refused = await claudebox(s.world, ['--', '-c', 'echo RAN'], { cwd: s.project, env })
    expect(refused.stdout).not.toContain('RAN')
    expect(refused.stderr).toMatch(/refusing to trust this repository: \S*project\/\.git points git at \S*other\/\.git \(a commondir file\)/)
    expect(fs.readFileSync(commondir, 'utf8')).toBe(other)
  })

  test("a session started in a submodule, ending while one at the top runs, leaves the placeholders both bind to the one still running (red team, round 85: it removed the submodule's commondir placeholder, which freed the name in the top's sandbox, and a plant timed to a host commit in the submodule won 4 of 9)", async () => {
    const s = scene()
    const lib = makeRepo(s.world.home, 'src/lib')
    git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', lib, 'lib')
    git(s.project, 'commit', '-qm', 'lib')
    const shared = [path.join(s.project, '.git/modules/lib/commondir'), path.join(s.project, 'lib/HEAD')]
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh' }
    const top = claudebox(s.world, ['--', '-c', `touch top-runs; ${UNTIL_RELEASED}; echo x > .git/modules/lib/commondir 2>/dev/null || echo STILL-HELD`], { cwd: s.project, env })
    await until(() => fs.existsSync(path.join(s.project, 'top-runs')))
    const inLib = await claudebox(s.world, ['--', '-c', 'cat "$(git rev-parse --git-dir)/commondir"'], { cwd: path.join(s.project, 'lib'), env })
    expect(inLib.stdout.trim(), inLib.stderr).toBe('./')
    for (const p of shared) expect(fs.existsSync(p), p).toBe(true)
    fs.writeFileSync(path.join(s.project, 'release'), '')
    const done = await top
    expect(done.stdout.trim(), done.stderr).toBe('STILL-HELD')
    expect(done.stderr).not.toMatch(/removed again/)
    for (const p of shared) expect(fs.existsSync(p), p).toBe(false)
  })

  test("a HEAD git rejects swapped into .git for 30 ms is put back within them, each time, and reported; the tenth ends the session (red team, round 84: swapped for 10 ms, timed to a host git commit, it made git take the top for the repository, and was put back by itself before the 200 ms look)", async () => {
    const s = scene()
    const swaps = (n: number): string => [
      'import os, time',
      "orig = open('.git/HEAD').read()",
      'seen = []',
      `for i in range(${n}):`,
      "    open('.git/junk', 'w').write('junk\\n'); os.rename('.git/junk', '.git/HEAD')",
      '    time.sleep(0.03)',
      "    seen.append(open('.git/HEAD').read() == orig)",
      "    open('.git/keep', 'w').write(orig); os.rename('.git/keep', '.git/HEAD')",
      '    time.sleep(0.25)',
      'print(seen)',
    ].join('\n')
    fs.writeFileSync(path.join(s.project, 'swap3.py'), `${swaps(3)}\n`)
    const r = await inside(s, 'python3 swap3.py')
    expect(r.out, r.err).toBe('[True, True, True]')
    expect(r.err).toMatch(/put back as it was: \S*project\/\.git\/HEAD \(put back: ref: refs\/heads\/main\)/)
    fs.writeFileSync(path.join(s.project, 'swap12.py'), `${swaps(12)}\n`)
    const ended = await inside(s, 'python3 swap12.py')
    expect(ended.code).toBe(137)
    expect(ended.err).toMatch(/the session made \S*project\/\.git\/HEAD 10 times, each moved aside, and was ended/)
  })

  test("a HEAD at the top of a work tree cannot be made during the session: an empty read-only folder holds the name, removed after it (rounds 84 and 85: with .git's HEAD swapped, git took the top, shaped as a repository, for one, and ran its config)", async () => {
    const s = scene()
    const r = await inside(s, `mkdir -p objects refs && ${payload(s, 'config')}; printf 'ref: refs/heads/main\\n' > HEAD 2>/dev/null || echo WRITE-REFUSED; printf 'ref: refs/heads/main\\n' > H; mv -f -T H HEAD 2>/dev/null || echo RENAME-REFUSED; rmdir HEAD 2>/dev/null || echo REMOVE-REFUSED; ls -A HEAD; git status --porcelain --untracked-files=all | grep -c HEAD`)
    expect(r.out.split('\n'), r.err).toEqual(['WRITE-REFUSED', 'RENAME-REFUSED', 'REMOVE-REFUSED', '0'])
    expect(fs.existsSync(path.join(s.project, 'HEAD'))).toBe(false)
    const plain = plainFolder(s)
    const inPlain = await inside(s, 'test -d HEAD && echo HELD', plain)
    expect(inPlain.out).toBe('HELD')
    expect(fs.existsSync(path.join(plain, 'HEAD'))).toBe(false)
  })

  test("a nested repository registered as a gitlink in the index during the session: its .git is moved aside within moments, also one made there later, and reported, so the host's git status at the top does not enter it meanwhile (red team, round 84: 3 of 3 ran its fsmonitor, and nothing was reported once the session took both out again); the project's own submodule, and a repository of the user's kept as a gitlink, are left alone", async () => {
    const s = scene()
    const lib = makeRepo(s.world.home, 'src/lib')
    git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', lib, 'lib')
    git(s.project, 'commit', '-qm', 'lib')
    // The user's own repository kept inside as a gitlink (git add of a clone), from before the session.
    makeRepo(s.project, 'own')
    git(s.project, 'add', 'own')
    await new Promise(resolve => setTimeout(resolve, 50))
    const r = await inside(
      s,
      [
        'git init -q sub && git -C sub commit -q --allow-empty -m s',
        `(cd sub && ${payload(s, '.git/config')})`,
        'git update-index --add --cacheinfo "160000,$(git -C sub rev-parse HEAD),sub"',
        `${MOVED}; moved sub/.git`,
        'git init -q later && mv later/.git sub/.git; moved sub/.git',
        'test -f lib/.git && echo LIB-KEPT',
        'test -d own/.git && echo OWN-KEPT',
        'git rm -q --cached sub',
      ].join('; '),
    )
    expect(r.out.split('\n'), r.err).toEqual(['MOVED', 'MOVED', 'LIB-KEPT', 'OWN-KEPT'])
    expect(r.err).toMatch(/moved aside[^\n]*project\/sub\/\.git -> /)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("gitlinks the watch cannot keep end the session: a path that is not UTF-8, more than 256 (red team, round 86: each let the nested repository's config run at the host's git status, 3 of 3); a gitlink folder made after the gitlink, and made again, is watched at once (round 86: only the 200 ms poll looked there, and a .git held for 30 ms won 8 of 9)", async () => {
    const s = scene()
    const sha = git(s.project, 'rev-parse', 'HEAD').trim()
    const odd = await inside(s, `D=$(printf 'd\\377'); git update-index --add --cacheinfo "160000,${sha},$D"; sleep 3; echo SURVIVED`)
    expect(odd.out).not.toContain('SURVIVED')
    expect(odd.err).toMatch(/put a gitlink whose path is not UTF-8 in the index .* The session was ended and the index moved aside/)
    // The index went with the ending (round 87: it stayed, and the host's git status after the session ran the nested config).
    expect(git(s.project, 'ls-files', '-s')).not.toMatch(/^160000/m)
    git(s.project, 'read-tree', 'HEAD')
    const many = await inside(s, `for i in $(seq 1 257); do echo "160000 ${sha} 0\tg$i"; done | git update-index --index-info; sleep 3; echo SURVIVED`)
    expect(many.out).not.toContain('SURVIVED')
    expect(many.err).toMatch(/put more than 256 gitlinks in the index .* The session was ended/)
    const later = [
      'import os, subprocess, time',
      `subprocess.run(['git', 'update-index', '--add', '--cacheinfo', '160000,${sha},sub'], check=True)`,
      "subprocess.run(['git', 'init', '-q', 'stash'], check=True)",
      'time.sleep(0.5)',
      'seen = []',
      'for i in range(8):',
      "    os.makedirs('sub', exist_ok=True); time.sleep(0.2)",
      // Held 100 ms: the watch's few milliseconds with room for a loaded CI machine (50 ms lost once
      // in ~20 runs; 100 ms once in a round of five, as uid 1001 beside a suite), while the 200 ms
      // poll alone would still miss about half the rounds: one of eight rounds may be lost (the poll
      // alone passes that 9 times in 256).
      "    os.rename('stash/.git', 'sub/.git'); time.sleep(0.1)",
      "    seen.append(os.path.lexists('sub/.git'))",
      "    if seen[-1]: os.rename('sub/.git', 'stash/.git')",
      "    else: subprocess.run(['git', 'init', '-q', 'stash'], check=True)",
      "    os.rmdir('sub') if not os.listdir('sub') else None; time.sleep(0.25)",
      'print(seen)',
    ].join('\n')
    git(s.project, 'read-tree', 'HEAD')
    fs.writeFileSync(path.join(s.project, 'later.py'), `${later}\n`)
    const lostAtMostOnce = (out: string, err: string): void => {
      expect(out.split(',').length, err).toBe(8)
      expect(out.match(/True/g)?.length ?? 0, out).toBeLessThanOrEqual(1)
    }
    const r = await inside(s, 'python3 later.py')
    lostAtMostOnce(r.out, r.err)
    // Two folders deep, the first one missing too (round 88: watched by the poll alone, 8 of 9).
    git(s.project, 'read-tree', 'HEAD')
    const deeperScript = later
      .replace(`160000,${sha},sub'`, `160000,${sha},a/b/sub'`)
      .replace("os.makedirs('sub', exist_ok=True)", "os.makedirs('a/b/sub', exist_ok=True)")
      .replaceAll("'sub/.git'", "'a/b/sub/.git'")
      .replace("os.rmdir('sub') if not os.listdir('sub') else None", "subprocess.run(['rm', '-rf', 'a'])")
    fs.writeFileSync(path.join(s.project, 'deeper.py'), `${deeperScript}\n`)
    const deeper = await inside(s, 'python3 deeper.py')
    lostAtMostOnce(deeper.out, deeper.err)
  })

  test("an index the gitlink watch cannot keep ends the session and goes: a gitlink named oddly (./sub, which git enters as sub; round 87: never watched, 3 of 3, silent once undone), one more than 64 folders deep; a gitlink in a submodule's own index is watched too (round 86: 3 of 3)", async () => {
    const s = scene()
    const lib = makeRepo(s.world.home, 'src/lib')
    git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', lib, 'lib')
    git(s.project, 'commit', '-qm', 'lib')
    fs.copyFileSync(path.join(FIXTURES, 'index-rename.py'), path.join(s.project, 'index-rename.py'))
    const nested = (dir: string): string => `git init -q ${dir} && git -C ${dir} commit -q --allow-empty -m n && (cd ${dir} && ${payload(s, '.git/config')})`
    const odd = await inside(s, [nested('sub'), 'git update-index --add --cacheinfo "160000,$(git -C sub rev-parse HEAD),xsub"', 'python3 index-rename.py .git/index xsub ./sub', 'sleep 3; git read-tree HEAD; echo SURVIVED'].join('; '))
    expect(odd.out).not.toContain('SURVIVED')
    expect(odd.err).toMatch(/put an entry git would refuse to add .* The session was ended and the index moved aside/)
    expect(git(s.project, 'ls-files', '-s')).not.toMatch(/sub/)
    fs.rmSync(path.join(s.project, 'sub'), { recursive: true, force: true })
    git(s.project, 'reset', '-q')
    const deep = await inside(s, `D=$(printf 'a/%.0s' $(seq 1 65))s; git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),$D"; sleep 3; echo SURVIVED`)
    expect(deep.out).not.toContain('SURVIVED')
    expect(deep.err).toMatch(/put a gitlink more than 64 folders deep in the index/)
    git(s.project, 'reset', '-q')
    const inSub = await inside(s, [nested('lib/inner'), 'git -C lib update-index --add --cacheinfo "160000,$(git -C lib/inner rev-parse HEAD),inner"', `${MOVED}; moved lib/inner/.git`].join('; '))
    expect(inSub.out, inSub.err).toBe('MOVED')
    expect(inSub.err).toMatch(/moved aside[^\n]*lib\/inner\/\.git -> /)
  })

  test("a placeholder removed on the host during the session (git clean -fdx takes the empty HEAD folder) ends the session, which says why (red team, round 86: the sandbox's mount went with it, and a plant timed to a host commit then won 7 of 9)", async () => {
    const s = scene()
    const run = claudebox(s.world, ['--', '-c', 'touch runs; sleep 5; echo SURVIVED'], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    await until(() => fs.existsSync(path.join(s.project, 'runs')))
    execFileSync('git', ['clean', '-fdxq', '-e', 'runs'], { cwd: s.project })
    const r = await run
    expect(r.stdout).not.toContain('SURVIVED')
    expect(r.stderr).toMatch(/project\/HEAD, a placeholder claudebox bound read-only for the session, was removed or replaced outside it .* so the session was ended/)
  })

  test('a project that is not a repository: a .git made at its top is moved aside at once, reported, and a HEAD cannot be made there (red team: the prompt ran its fsmonitor)', async () => {
    const s = scene()
    const plain = plainFolder(s)
    const bare = `printf 'ref: refs/heads/main\\n' > HEAD 2>/dev/null || echo HEAD-REFUSED; mkdir -p objects refs; ${payload(s, 'config')}`
    const r = await inside(s, `git init -q . 2>/dev/null; ${payload(s, '.git/config')} 2>/dev/null; ${bare}; sleep 0.5; ls -A; ls -A HEAD`, plain)
    expect(r.out.split('\n')).not.toContain('.git')
    expect(r.out.split('\n')).toContain('HEAD-REFUSED')
    expect(r.err).toMatch(/moved aside.*plain\/\.git -> \S*\/quarantine\/[0-9a-f]{16}\/\.git\.claudebox-quarantine-/)
    hostGit(plain, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
    // The opt-in: a session may make the repository.
    const other = path.join(s.world.home, 'src/new-repo')
    fs.mkdirSync(other)
    const allowed = await claudebox(s.world, ['--writable-git-config', '--', '-c', 'git init -q . && echo MADE'], { cwd: other, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(allowed.stdout.trim()).toBe('MADE')
    expect(fs.existsSync(path.join(other, '.git/HEAD'))).toBe(true)
  })

  test('round 28: what is moved aside goes out of the session\'s reach (it cannot put it back for a git the host runs meanwhile); a dangling .git at the top refuses the launch', async () => {
    const s = scene()
    const plain = plainFolder(s)
    const r = await inside(s, 'git init -q . 2>/dev/null; sleep 0.5; echo "here: $(ls -A)"; ls "$CLAUDE_CONFIG_DIR/../../quarantine" 2>/dev/null || echo not-reachable', plain)
    expect(r.out.split('\n')).toEqual(['here: HEAD', 'not-reachable']) // the empty folder that holds HEAD's name
    // Outside every sandbox, where a git the user runs to look finds no repository the session made above it.
    const quarantine = path.join(s.world.claudeboxHome, 'quarantine')
    const [id] = fs.readdirSync(quarantine)
    expect(fs.readdirSync(path.join(quarantine, id ?? '')).filter(name => name.startsWith('.git.claudebox-quarantine-')).length).toBeGreaterThanOrEqual(1)
    expect(r.err).toContain(`${plain}/.git -> ${quarantine}/${id ?? ''}/.git.claudebox-quarantine-`)
    expect(fs.existsSync(path.join(plain, '.git'))).toBe(false)
    fs.symlinkSync(path.join(s.world.root, 'gone/repo'), path.join(plain, '.git'))
    const dangling = await inside(s, 'echo RAN', plain)
    expect(dangling.code).toBe(125)
    expect(dangling.err).toContain(`${plain}/.git is there, but git takes no repository from it`)
  })

  test("round 28: a git dir kept in the work tree (gitdir: .meta/gd): the folders on its way are pinned, so it cannot be swapped for the session's own", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, '.meta'))
    fs.renameSync(path.join(s.project, '.git'), path.join(s.project, '.meta/gd'))
    fs.writeFileSync(path.join(s.project, '.git'), 'gitdir: .meta/gd\n')
    git(s.project, 'config', 'core.worktree', s.project)
    const r = await inside(s, `mkdir -p evil && git init -q --bare evil/gd && ${payload(s, 'evil/gd/config')}; mv .meta .meta.old 2>/dev/null && mv evil .meta && echo SWAPPED || echo pinned`)
    expect(r.out).toBe('pinned')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 28: a top folder the session made unreadable (chmod 300, then 100) does not stop the move (as a user, the launcher could not open it)', async () => {
    const s = scene()
    const plain = plainFolder(s)
    const r = await inside(s, `git init -q --bare prep && git --git-dir=prep config core.bare false && ${payload(s, 'prep/config')}; chmod 300 .; mv prep .git; chmod 100 .; sleep 0.5; echo done`, plain)
    expect(r.out).toMatch(/done$/)
    fs.chmodSync(plain, 0o755)
    expect(fs.existsSync(path.join(plain, '.git'))).toBe(false)
    expect(r.err).toMatch(/plain\/\.git -> \S*quarantine\/[0-9a-f]{16}\/\.git\.claudebox-quarantine-/)
    hostGit(plain, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('round 29: a .git file whose gitdir: goes down a folder and back up (sub/../meta/gd): that folder is pinned; one through a symlinked folder refuses the launch', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'sub'))
    fs.mkdirSync(path.join(s.project, 'meta'))
    fs.renameSync(path.join(s.project, '.git'), path.join(s.project, 'meta/gd'))
    fs.writeFileSync(path.join(s.project, '.git'), 'gitdir: sub/../meta/gd\n')
    git(s.project, 'config', 'core.worktree', s.project)
    const r = await inside(s, `mkdir -p evil/meta && git init -q --bare evil/meta/gd && ${payload(s, 'evil/meta/gd/config')}; mkdir -p evil/x; mv sub sub.old 2>/dev/null && ln -s evil/x sub && echo SWAPPED || echo pinned`)
    expect(r.out).toBe('pinned')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
    fs.renameSync(path.join(s.project, 'meta'), path.join(s.project, 'metadata'))
    fs.symlinkSync('metadata', path.join(s.project, 'meta'))
    fs.writeFileSync(path.join(s.project, '.git'), 'gitdir: meta/gd\n')
    const refused = await inside(s, 'echo RAN')
    expect(refused.code).toBe(125)
    expect(refused.err).toContain(`${s.project}/.git names its git dir through the symlink ${s.project}/meta`)
  })

  test('round 29: an include.path target below a symlinked folder of the project (conf -> cfgdir) is moved when it appears; a planted folder made read-only (chmod 500) still goes out of reach', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'cfgdir'))
    fs.symlinkSync('cfgdir', path.join(s.project, 'conf'))
    git(s.project, 'config', 'include.path', path.join(s.project, 'conf/inc'))
    const r = await inside(s, `${payload(s, 'cfgdir/inc')}; ${MOVED}; moved cfgdir/inc | sed s/THERE/STILL-THERE/`)
    expect(r.out).toBe('MOVED')
    expect(r.err).toMatch(/cfgdir\/inc -> \S*quarantine\/[0-9a-f]{16}\/inc\.claudebox-quarantine-/)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
    const plain = plainFolder(s)
    const locked = await inside(s, `git init -q --bare prep && ${payload(s, 'prep/config')}; chmod 500 prep; mv prep .git; sleep 0.5; echo done`, plain)
    const moved = /plain\/\.git -> (\S*quarantine\/[0-9a-f]{16}\/\.git\.claudebox-quarantine-[0-9a-f]+)/.exec(locked.err)?.[1]
    expect(moved, locked.err).toBeDefined()
    expect(fs.existsSync(path.join(plain, '.git'))).toBe(false)
    fs.chmodSync(moved ?? '', 0o700) // as the session left it, not even the test could remove it
  })

  test('round 29: a session that plants the same name again and again (racing a git the host runs) is ended at the tenth, and says so', async () => {
    const s = scene()
    const plain = plainFolder(s)
    const r = await inside(s, 'for i in $(seq 40); do mkdir .git 2>/dev/null; sleep 0.1; done; echo LOOP-FINISHED', plain)
    expect(r.code).toBe(137)
    expect(r.out).not.toContain('LOOP-FINISHED')
    expect(r.err).toContain(`WARNING: the session made ${plain}/.git 10 times, each moved aside, and was ended`)
    expect(fs.existsSync(path.join(plain, '.git'))).toBe(false)
  })

  test('round 30: a gitdir: read as git reads it (a space kept), through a linked folder above the project (followed), and a folder on the way to a guarded link or a watched name: pinned or refused', async () => {
    const s = scene()
    // gitdir:  x/../meta/gd (two spaces): git walks " x", which is pinned.
    fs.mkdirSync(path.join(s.project, ' x'))
    fs.mkdirSync(path.join(s.project, 'meta'))
    fs.renameSync(path.join(s.project, '.git'), path.join(s.project, 'meta/gd'))
    fs.writeFileSync(path.join(s.project, '.git'), 'gitdir:  x/../meta/gd\n')
    git(s.project, 'config', 'core.worktree', s.project)
    const spaced = await inside(s, 'mv " x" " x.old" 2>/dev/null && echo SWAPPED || echo pinned')
    expect(spaced.out).toBe('pinned')
    // An absolute gitdir: through a link above the project, to a linked folder inside it: refused.
    fs.symlinkSync(path.dirname(s.project), path.join(s.world.root, 'above'))
    fs.renameSync(path.join(s.project, 'meta'), path.join(s.project, 'metadata'))
    fs.symlinkSync('metadata', path.join(s.project, '.meta'))
    fs.writeFileSync(path.join(s.project, '.git'), `gitdir: ${s.world.root}/above/${path.basename(s.project)}/.meta/gd\n`)
    const linked = await inside(s, 'echo RAN')
    expect(linked.code).toBe(125)
    expect(linked.err).toContain(`names its git dir through the symlink ${s.project}/.meta`)
  })

  test('round 30: the folder holding a guarded link (a/conf -> ../cfgdir) and one on the way to a missing include are pinned, so they cannot be swapped for links into the instance', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'a'))
    fs.mkdirSync(path.join(s.project, 'cfgdir'))
    fs.mkdirSync(path.join(s.project, 'b'))
    fs.symlinkSync('../cfgdir', path.join(s.project, 'a/conf'))
    git(s.project, 'config', 'include.path', path.join(s.project, 'a/conf/inc'))
    git(s.project, 'config', '--add', 'include.path', path.join(s.project, 'b/inc'))
    const r = await inside(s, `D=$CLAUDE_CONFIG_DIR/x; mkdir -p $D; ln -s ../cfgdir $D/conf; ln -s x $CLAUDE_CONFIG_DIR/b; for f in a b; do mv $f $f.old 2>/dev/null && echo $f-SWAPPED || echo $f-pinned; done`)
    expect(r.out.split('\n')).toEqual(['a-pinned', 'b-pinned'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 30: a nested clone's own core.hooksPath folder (.husky) changed in the session is reported", async () => {
    const s = scene()
    const clone = makeRepo(s.project, 'vendor/foo')
    fs.mkdirSync(path.join(clone, '.husky'))
    fs.writeFileSync(path.join(clone, '.husky/pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    git(clone, 'config', 'core.hooksPath', '.husky')
    const quiet = await inside(s, 'echo nothing')
    expect(quiet.err).not.toMatch(/nested git/)
    const r = await inside(s, `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > vendor/foo/.husky/pre-commit`)
    expect(r.err).toMatch(/nested git repositories, .*vendor\/foo\/\.git; inspect them/)
  })

  test('.git renamed away and rebuilt: the rename fails', async () => {
    const s = scene()
    const r = await inside(s, `mv .git .git-old && mkdir .git && cp -r .git-old/objects .git-old/refs .git-old/HEAD .git/ && ${payload(s, '.git/config')} && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toMatch(/BLOCKED$/)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('junk in .git/HEAD (git would reject the repository and look further up): put back within moments, reported', async () => {
    const s = scene()
    const first = await inside(s, 'echo junk > .git/HEAD; sleep 0.6; cat .git/HEAD')
    expect(first.out).toBe('ref: refs/heads/main')
    expect(first.err).toMatch(/WARNING: the session made a git dir one git rejects .*\.git\/HEAD \(put back: ref: refs\/heads\/main\)/)
    const second = await inside(s, 'echo RAN')
    expect(second.out).toBe('RAN')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('extensions.worktreeConfig: a missing config.worktree, here and in another worktree, cannot be created', async () => {
    const s = scene()
    git(s.project, 'config', 'core.repositoryformatversion', '1')
    git(s.project, 'config', 'extensions.worktreeConfig', 'true')
    const other = path.join(s.world.home, 'src/other-wt')
    git(s.project, 'worktree', 'add', '-q', other)
    const wtName = path.basename(other)
    const r = await inside(s, `${payload(s, '.cfg')}; for f in .git/config.worktree .git/worktrees/${wtName}/config.worktree; do cat .cfg >> $f 2>/dev/null && echo ESCAPED || echo BLOCKED; done`)
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    // The empty file claudebox put there means what a missing one means to git.
    expect(fs.readFileSync(path.join(s.project, '.git/config.worktree'), 'utf8')).toBe('')
    hostGit(s.project, s.world)
    hostGit(other, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("another worktree's commondir, gitdir and admin dir cannot be changed or swapped", async () => {
    const s = scene()
    const other = path.join(s.world.home, 'src/other-wt')
    git(s.project, 'worktree', 'add', '-q', other)
    const admin = `.git/worktrees/${path.basename(other)}`
    const r = await inside(
      s,
      [
        `mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ && ${payload(s, 'evil/config')}`,
        `echo "$PWD/evil" > ${admin}/commondir 2>/dev/null && echo ESCAPED || echo BLOCKED`,
        `mv ${admin} .git/worktrees/moved 2>/dev/null && echo ESCAPED || echo BLOCKED`,
        'mv .git/worktrees .git/wt-moved 2>/dev/null && echo ESCAPED || echo BLOCKED',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    hostGit(other, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a linked worktree's .git file cannot be pointed elsewhere", async () => {
    const s = scene()
    const other = path.join(s.world.home, 'src/other-wt')
    git(s.project, 'worktree', 'add', '-q', other)
    const r = await inside(s, `mkdir evil && cp -r ${s.project}/.git/objects ${s.project}/.git/refs ${s.project}/.git/HEAD evil/ && ${payload(s, 'evil/config')} && echo "gitdir: $PWD/evil" > .git && echo ESCAPED || echo BLOCKED`, other)
    expect(r.out).toMatch(/BLOCKED$/)
    hostGit(other, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a submodule: its .git file, its config, a commondir in its git dir", async () => {
    const s = scene()
    const lib = makeRepo(s.world.home, 'src/lib')
    git(s.project, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', lib, 'lib')
    git(s.project, 'commit', '-qm', 'lib')
    const r = await inside(
      s,
      [
        `mkdir evil && cp -r .git/modules/lib/objects .git/modules/lib/refs .git/modules/lib/HEAD evil/ && ${payload(s, 'evil/config')}`,
        `echo "gitdir: $PWD/evil" > lib/.git 2>/dev/null && echo ESCAPED || echo BLOCKED`,
        `mv lib lib-old 2>/dev/null && mkdir lib && echo "gitdir: $PWD/evil" > lib/.git && echo ESCAPED || echo BLOCKED`,
        'cat evil/config >> .git/modules/lib/config 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'echo "$PWD/evil" > .git/modules/lib/commondir 2>/dev/null; sleep 0.5; test "$(cat .git/modules/lib/commondir)" = ./ && echo BLOCKED || echo ESCAPED',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED', 'BLOCKED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a gitlink staged as the session ends, before the watch has looked at the index: its .git is moved aside at the end, and the host's git status at the top does not enter it (CI: it stayed, reported only)", async () => {
    const s = scene()
    for (let round = 0; round < 3; round++) {
      const name = `fast${round}`
      const r = await inside(s, `git init -q ${name} && (cd ${name} && git commit -q --allow-empty -m n && ${payload(s, '.git/config')}) && git add ${name} 2>/dev/null && echo STAGED`)
      expect(r.out, r.err).toBe('STAGED')
      expect(r.err).toMatch(new RegExp(`moved aside[^\\n]*project/${name}/\\.git -> `))
      // Not said again as an index of its own that is gone (round 125's check of the repro).
      expect(r.err).not.toMatch(/no regular file/)
      expect(fs.existsSync(path.join(s.project, name, '.git'))).toBe(false)
      hostGit(s.project, s.world)
      expect(fs.existsSync(s.marker)).toBe(false)
      git(s.project, 'rm', '-q', '--cached', name)
    }
  })

  test("round 103: a gitlink whose path is not UTF-8, staged as the session ends: the index goes at the end (the host's git status does not enter it); a repository of the user's kept as a gitlink, whose .git the session's git status changes, stays", async () => {
    const s = scene()
    const r = await inside(s, `D=$(printf 'n\\377'); git init -q "$D" && (cd "$D" && git commit -q --allow-empty -m n && ${payload(s, '.git/config')}) && git update-index --add --cacheinfo "160000,$(git -C "$D" rev-parse HEAD),$D" && echo STAGED`)
    expect(r.out, r.err).toBe('STAGED')
    expect(git(s.project, 'ls-files', '-s')).not.toMatch(/^160000/m)
    // The user's git status at the top (the nested repository itself is reported, for git add -A to leave alone).
    spawnSync('git', ['status'], { cwd: s.project, env: { ...process.env, HOME: s.world.home }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(s.marker)).toBe(false)
    expect(r.err).toMatch(/the session created or changed nested git repositories/)
    // Made well after that session's end: one made within the session times' slack counts as its (CI, loaded, once).
    await new Promise(resolve => setTimeout(resolve, 1_200))
    makeRepo(s.project, 'own')
    git(s.project, 'add', 'own')
    await new Promise(resolve => setTimeout(resolve, 50))
    const kept = await inside(s, 'sleep 0.3; git -C own status --porcelain >/dev/null; echo x > own/y; git -C own add y; echo TOUCHED')
    expect(kept.out, kept.err).toBe('TOUCHED')
    expect(fs.existsSync(path.join(s.project, 'own/.git'))).toBe(true)
    expect(kept.err).not.toMatch(/own\/\.git -> /)
  })

  test("round 125: a nested repository staged as a gitlink is moved aside when an earlier session made it, it was renamed into place, or its config was changed in place before it was staged: the host's git status at the top ran its fsmonitor, 5 of 5; one of the user's that a session's end saw as it is stays", async () => {
    const s = scene()
    for (const name of ['own', 'own2']) makeRepo(s.project, name)
    const stage = (name: string): string => `git update-index --add --cacheinfo "160000,$(git -C ${name} rev-parse HEAD),${name}"`
    const append = (name: string): string => `printf '[core]\\n\\tfsmonitor = %s/.payload\\n' "$PWD/made" >> ${name}/.git/config`
    const first = await inside(s, [`git init -q made && git -C made commit -q --allow-empty -m m && (cd made && ${payload(s, '.git/config')})`, `git init -q prep && git -C prep commit -q --allow-empty -m p && (cd prep && ${payload(s, '.git/config')})`, 'echo MADE'].join('; '))
    expect(first.out, first.err).toBe('MADE')
    await new Promise(resolve => setTimeout(resolve, 1500))
    const r = await inside(
      s,
      [
        MOVED,
        `${stage('made')}; moved made/.git`,
        `mv prep renamed; ${stage('renamed')}; moved renamed/.git`,
        `${append('own2')}; ${stage('own2')}; moved own2/.git`,
        `${stage('own')}; sleep 0.5; test -d own/.git && echo KEPT`,
      ].join('; '),
    )
    expect(r.out.split('\n'), r.err).toEqual(['MOVED', 'MOVED', 'MOVED', 'KEPT'])
    expect(fs.existsSync(path.join(s.project, 'own/.git'))).toBe(true)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 126: a nested repository a session made is marked for every project, by the identity of its .git: staged after the project was renamed (a new instance), from the project around the one it was made in, or past the 512 repositories a record holds, its .git is moved aside (the host's git status ran its fsmonitor, 3 of 3 each)", async () => {
    const s = scene()
    const stage = (name: string): string => `git update-index --add --cacheinfo "160000,$(git -C ${name} rev-parse HEAD),${name}"; sleep 0.5; test -d ${name}/.git && echo THERE || echo MOVED`
    makeRepo(s.project, 'lib')
    fs.appendFileSync(path.join(s.project, '.git/info/exclude'), 'lib/\n')
    const made = [
      await inside(s, `git init -q sub && git -C sub commit -q --allow-empty -m s && (cd sub && ${payload(s, '.git/config')}) && echo MADE`),
      await inside(s, `git init -q x && git -C x commit -q --allow-empty -m x && (cd x && ${payload(s, '.git/config')}) && echo MADE`, path.join(s.project, 'lib')),
      await inside(s, `git init -q t && git -C t commit -q --allow-empty -m t && (cd t && ${payload(s, '.git/config')}) && for i in $(seq 520); do mkdir r$i && cp -a t/.git r$i/.git; done && echo MADE`),
    ]
    expect(made.map(r => r.out)).toEqual(['MADE', 'MADE', 'MADE'])
    const record = fs.readdirSync(path.join(s.world.claudeboxHome, 'nested')).filter(name => name.endsWith('.json') && name !== 'reported.json').map(name => fs.readFileSync(path.join(s.world.claudeboxHome, 'nested', name), 'utf8')).join('')
    const unrecorded = Array.from({ length: 520 }, (_, i) => `r${i + 1}`).find(name => !record.includes(`/${name}/.git"`))
    expect(unrecorded).toBeDefined()
    const renamed = `${s.project}-renamed`
    fs.renameSync(s.project, renamed)
    await new Promise(resolve => setTimeout(resolve, 1100))
    const r = await inside(s, [stage('sub'), stage('lib/x'), stage(unrecorded ?? '')].join('; '), renamed)
    expect(r.out.split('\n'), r.err).toEqual(['MOVED', 'MOVED', 'MOVED'])
    hostGit(renamed, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  }, 120_000)

  test("round 127: a nested repository of the user's, staged by the session and taken for the user's, whose config the session writes afterwards: its .git is moved aside at the end (the host's git status ran its fsmonitor, 3 of 3)", async () => {
    const s = scene()
    makeRepo(s.project, 'lib')
    await new Promise(resolve => setTimeout(resolve, 50))
    const r = await inside(s, `git update-index --add --cacheinfo "160000,$(git -C lib rev-parse HEAD),lib"; sleep 1; test -d lib/.git && echo KEPT; (cd lib && ${payload(s, '.git/config')})`)
    expect(r.out, r.err).toBe('KEPT')
    expect(r.err).toMatch(/moved aside[^\n]*project\/lib\/\.git -> /)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 128: the user's nested clone staged as a gitlink, and a repository of the session's staged in that clone's own index: its .git is moved aside (the host's git status entered the clone, then it, and ran its fsmonitor, 9 of 9)", async () => {
    const s = await sceneWithClone()
    expect((await inside(s, `cd lib && git init -q inner && git -C inner commit -q --allow-empty -m i && (cd inner && ${payload(s, '.git/config')}) && echo MADE`)).out).toBe('MADE')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const stage = [
      'git update-index --add --cacheinfo "160000,$(git -C lib rev-parse HEAD),lib" && sleep 0.5',
      // In place, as the session can: the clone's config and hooks stay as they were.
      'cd lib && cp .git/index /tmp/i && GIT_INDEX_FILE=/tmp/i git update-index --add --cacheinfo "160000,$(git -C inner -c core.fsmonitor= rev-parse HEAD),inner" && cat /tmp/i > .git/index && echo STAGED',
    ]
    const r = await inside(s, stage.join(' && '))
    expect(r.out, r.err).toBe('STAGED')
    expect(fs.existsSync(path.join(s.project, 'lib/.git'))).toBe(true) // the user's, kept
    expect(fs.existsSync(path.join(s.project, 'lib/inner/.git'))).toBe(false)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 128: the user's nested clone taken for the user's by the watch, then its .git swapped for one the session made (whose config kept its time): moved aside at the end (the host's git status ran its fsmonitor, 3 of 3)", async () => {
    const s = await sceneWithClone()
    expect((await inside(s, `mkdir gd && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${s.marker}; false"\\n' > gd/config && echo MADE`)).out).toBe('MADE')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, 'git update-index --add --cacheinfo "160000,$(git -C lib rev-parse HEAD),lib" && sleep 1 && cp -a lib/.git/objects lib/.git/refs lib/.git/HEAD lib/.git/index gd/ && mv lib/.git lib/.git.user && mv gd lib/.git && echo SWAPPED')
    expect(r.out, r.err).toBe('SWAPPED')
    expect(r.err).toMatch(/moved aside[^\n]*project\/lib\/\.git -> /)
    expect(fs.existsSync(path.join(s.project, 'lib/.git.user/config'))).toBe(true) // the user's, where the session put it
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 129: a config written in one session into a folder that was no repository, renamed into a .git in the next (a rename leaves its time), staged in a third: moved aside (the host's git status ran its fsmonitor, 3 of 3)", async () => {
    const s = scene()
    await new Promise(resolve => setTimeout(resolve, 1_200))
    expect((await inside(s, `${plantConfig(s.marker, 'gd')} && echo MADE`)).out).toBe('MADE')
    await renamedThenStaged(s, '')
  })

  test("round 129: a nested clone of the user's, staged and taken for the user's, whose config the session then writes: moved aside during the session (the host's git status, run every second as an IDE does, ran its fsmonitor for the rest of the session, 3 of 3)", async () => {
    const s = await sceneWithClone()
    const r = await inside(s, `git update-index --add --cacheinfo "160000,$(git -C lib rev-parse HEAD),lib" && sleep 1 && test -d lib/.git && echo TAKEN; (cd lib && ${payload(s, '.git/config')}); sleep 1; test -d lib/.git && echo THERE || echo MOVED`)
    expect(r.out.split('\n'), r.err).toEqual(['TAKEN', 'MOVED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test.each([
    ['a new path', '', ''],
    ['the path of a repository the session made before, whose .git the record held (round 131, 5 of 5)', 'git init -q sub && ', 'rm -rf sub/.git && '],
  ])("round 130: a config planted in one session and hard-linked over a tracked file, whose time the host's git checkout . then moved out of every session's, renamed into a .git at %s in the next session, staged in a third: moved aside, also with --hard-links (the host's git status ran its fsmonitor, 4 of 4)", async (_where, before, replace) => {
    const s = scene({ hardLinks: true })
    fs.writeFileSync(path.join(s.project, 'NOTES'), 'n\n')
    git(s.project, 'add', 'NOTES')
    git(s.project, 'commit', '-qm', 'notes')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    expect((await inside(s, `${before}${plantConfig(s.marker, 'gd')} && ln -f gd/config README && ln -f pl NOTES && echo MADE`)).out).toBe('MADE')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    spawnSync('git', ['checkout', '.'], { cwd: s.project, stdio: 'ignore', timeout: 20_000 }) // the user discards the session's edits
    expect(['gd/config', 'pl'].map(f => fs.statSync(path.join(s.project, f)).nlink)).toEqual([1, 1])
    await renamedThenStaged(s, replace)
  })

  test("round 132: a submodule of the user's nested clone (its .git a gitdir: file) moved by the session with its folder to lead into a git dir the session planted, hard-linked and discarded by the user's git checkout . before: moved aside, also with --hard-links (the host's git status ran its fsmonitor, 3 of 3)", async () => {
    const s = await sceneWithNestedSubmodule()
    const plant = `g=a/gitx/modules/dep; mkdir -p $g && echo 'ref: refs/heads/main' > $g/HEAD && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > a/pl && chmod +x a/pl && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ../pl\\n' > $g/config && ln -f $g/config README && ln -f a/pl NOTES && echo PLANTED`
    expect((await inside(s, plant)).out).toBe('PLANTED')
    await discardedByTheUser(s)
    const r = await inside(s, MOVE_SUBMODULE_AND_STAGE)
    expect(r.out, r.err).toBe('MOVED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 133: the same with old inodes, a tracked folder of the user's renamed into the git dir and tracked files hard-linked as its config and program, their times moved by the user's git checkout .: moved aside, also with --hard-links (the host's git status ran its fsmonitor, 3 of 3)", async () => {
    const s = await sceneWithNestedSubmodule()
    const plant = `g=a/gitx/modules/dep; mkdir -p a/gitx/modules && mv docs $g && echo 'ref: refs/heads/main' > $g/HEAD && ln README $g/config && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ../pl\\n' > $g/config && ln NOTES a/pl && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > a/pl && chmod +x a/pl && echo PLANTED`
    expect((await inside(s, plant)).out).toBe('PLANTED')
    await discardedByTheUser(s)
    expect(['a/gitx/modules/dep', 'a/gitx/modules/dep/config', 'a/pl'].map(f => fs.statSync(path.join(s.project, f)).birthtimeMs < s.startedMs)).toEqual([true, true, true])
    const r = await inside(s, MOVE_SUBMODULE_AND_STAGE)
    expect(r.out, r.err).toBe('MOVED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 133: a repository of old inodes planted where its session's end did not look (past the search's bound: 300,100 folders), staged in the next session: moved aside, also with --hard-links (the host's git status ran its fsmonitor, 1 of 1)", async () => {
    const s = scene({ hardLinks: true })
    trackedNotesAndDocs(s)
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const plant = `mkdir -p big/p && g=big/p/sub/.git && mkdir big/p/sub && mv docs $g && echo 'ref: refs/heads/main' > $g/HEAD && mkdir -p $g/objects $g/refs/heads && ln README $g/config && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ../pl\\n' > $g/config && ln NOTES big/p/pl && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > big/p/pl && chmod +x big/p/pl && git -C big/p/sub -c core.fsmonitor= commit -q --allow-empty -m x && echo PLANTED`
    expect((await inside(s, plant)).out).toBe('PLANTED')
    // What a search stopped at its bound leaves: no record of the repository, no mark, the
    // session's time kept. (Making 300,100 folders for real takes minutes; the red team's repro did.)
    const nested = path.join(s.world.claudeboxHome, 'nested')
    for (const name of fs.readdirSync(nested).filter(n => n !== 'sessions')) fs.rmSync(path.join(nested, name))
    await discardedByTheUser(s)
    const r = await inside(s, `mv big/p a && sleep 1 && git update-index --add --cacheinfo "160000,$(git -C a/sub -c core.fsmonitor= rev-parse HEAD),a/sub" && sleep 1 && test -e a/sub/.git && echo THERE || echo MOVED`)
    expect(r.out, r.err).toBe('MOVED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test.each([
    ['refused: the hard link fails, as across file systems', false],
    ['with --hard-links: moved aside (the end of the planting session had marked the git dir, which the gitlink watch did not look up)', true],
  ])("round 134: the user's nested clone's submodule parked where its .git leads nowhere, and a tracked file made a second name of its git dir's own config, rewritten, and discarded by the user's git checkout .; the submodule put back and staged in the next session: %s (the host's git status ran its fsmonitor, 3 of 3 as root and as uid 1001)", async (_how, hardLinks) => {
    const s = await sceneWithNestedSubmodule({ hardLinks })
    const plant = `c=v/lib/.git/modules/dep/config && mv v/lib/dep park && rm README && ln $c README && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tworktree = ../../../dep\\n\\tfsmonitor = ${s.project}/pl\\n' > README && ln NOTES pl && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > pl && chmod +x pl && echo PLANTED`
    const planted = await inside(s, plant)
    if (hardLinks) expect(planted.out, planted.err).toBe('PLANTED')
    else expect(planted.err).toContain('Invalid cross-device link')
    await discardedByTheUser(s)
    const r = await inside(s, 'mv park v/lib/dep && sleep 1 && git update-index --add --cacheinfo "160000,$(git -C v/lib/dep -c core.fsmonitor= rev-parse HEAD),v/lib/dep" && sleep 1 && test -e v/lib/dep/.git && echo THERE || echo MOVED')
    if (hardLinks) expect(r.out, r.err).toBe('MOVED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 135: links the session makes in the project's git dir, which git writes through (a reflog in logs/, COMMIT_EDITMSG), leading outside the project: moved aside at the session's end, and your commit writes nothing there (a reflog appended to a nested repository's config and made its HEAD, moving their times to yours: 3 of 3 as root and as uid 1001)", async () => {
    const s = scene()
    const outside = fileOutside(s)
    const r = await inside(s, `rm -f .git/logs/HEAD .git/logs/refs/heads/main && ln -s ${outside} .git/logs/HEAD && ln -s ${outside} .git/logs/refs/heads/main && rm -f .git/COMMIT_EDITMSG && ln -s ${outside} .git/COMMIT_EDITMSG && echo LINKED`)
    expect(r.out, r.err).toBe('LINKED')
    expect(r.err).toMatch(/quarantine[^\n]*\.git\/logs\/HEAD/)
    for (const name of ['logs/HEAD', 'logs/refs/heads/main', 'COMMIT_EDITMSG']) expect(fs.lstatSync(path.join(s.project, '.git', name), { throwIfNoEntry: false })?.isSymbolicLink() ?? false, name).toBe(false)
    fs.writeFileSync(path.join(s.project, 'work.txt'), 'the user works on\n')
    hostGit(s.project, s.world)
    expect(git(s.project, 'log', '--oneline').split('\n')).toHaveLength(2) // the host's commit went in
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
  })

  test("round 136: links the session makes where git writes through (logs/HEAD, COMMIT_EDITMSG, a folder brought into logs/ with a branch's reflog a link in it, logs/ swapped whole) are moved aside as they appear, so your commit while the session runs writes nothing outside the project (an IDE's commit appended its reflog line there, 5 of 5); a tenth plant ends the session", async () => {
    const s = scene()
    const outside = fileOutside(s)
    const plants = [
      `rm -f .git/logs/HEAD && ln -s ${outside} .git/logs/HEAD && moved .git/logs/HEAD`,
      // Not ln -sf, which makes a link of another name beside it first, itself moved aside.
      `rm -f .git/COMMIT_EDITMSG && ln -s ${outside} .git/COMMIT_EDITMSG && moved .git/COMMIT_EDITMSG`,
      `mkdir -p t/heads && ln -s ${outside} t/heads/main && rm -rf .git/logs/refs && mv t .git/logs/refs && moved .git/logs/refs/heads/main`,
      `mkdir -p l/refs/heads && ln -s ${outside} l/HEAD && mv .git/logs .git/logs.old && mv l .git/logs && moved .git/logs/HEAD`,
    ]
    const session = claudebox(s.world, ['--', '-c', `${MOVED}; ${plants.join('; ')}; touch planted; ${UNTIL_RELEASED}`], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    await until(() => fs.existsSync(path.join(s.project, 'planted')))
    fs.writeFileSync(path.join(s.project, 'work.txt'), 'the user works on\n')
    hostGit(s.project, s.world)
    fs.writeFileSync(path.join(s.project, 'release'), '')
    const r = await session
    expect(r.stdout.trim().split('\n'), r.stderr).toEqual(['MOVED', 'MOVED', 'MOVED', 'MOVED'])
    expect(r.stderr).toMatch(/quarantine[^\n]*\.git\/COMMIT_EDITMSG/)
    expect(git(s.project, 'log', '--oneline').split('\n')).toHaveLength(2) // the host's commit went in
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
    const ended = await inside(s, `for i in $(seq 1 12); do rm -f .git/MERGE_MSG; ln -s ${outside} .git/MERGE_MSG; sleep 0.1; done; echo NOT-ENDED`)
    expect(ended.code).toBe(137)
    expect(ended.err).toMatch(/the session made \S*project\/\.git\/MERGE_MSG 10 times, each moved aside, and was ended/)
  })

  test("round 141: what the watch of write-through links cannot watch ends the session: a name that is not UTF-8 made in .git/logs (a branch's reflog link there went unseen); more than 2,000 folders there at the launch (an earlier session's, which left logs/refs unwatched) stop it before anything runs", async () => {
    const s = scene()
    const odd = await inside(s, `mkdir -p .git/logs/refs/heads && touch "$(printf '.git/logs/refs/heads/w\\377')"; sleep 3; echo NOT-ENDED`)
    expect(odd.code, odd.err).toBe(137)
    expect(odd.err).toMatch(/a name that is not UTF-8 appeared in \S*\.git\/logs\/refs\/heads/)
    for (const name of fs.readdirSync(path.join(s.project, '.git/logs/refs/heads'), { encoding: 'buffer' })) if (name.toString('latin1') !== 'main') fs.rmSync(Buffer.concat([Buffer.from(path.join(s.project, '.git/logs/refs/heads/')), name]))
    const bulk = path.join(s.project, '.git/logs/b')
    for (let i = 0; i < 2_100; i++) fs.mkdirSync(path.join(bulk, `d${i}`), { recursive: true })
    const stopped = await inside(s, 'echo RAN')
    expect(stopped.out).toBe('')
    expect(stopped.err).toMatch(/more than 2000 folders where git writes through links \(\S*\.git\/logs\/b\/d\d+\) could not all be watched[^\n]*; nothing ran/)
    fs.rmSync(bulk, { recursive: true })
    expect((await inside(s, 'echo RAN')).out).toBe('RAN')
  })

  test("round 142: a chain of long folder names renamed into .git/logs (past the kernel's 4,096 bytes a path) no longer crashes the launcher, whose checks after the session then never ran; refs/heads and objects/00 made links to a folder outside are moved aside as they appear (your commit meanwhile wrote a branch file and its objects there)", async () => {
    const s = scene()
    const outside = path.join(s.world.root, 'outside-dir')
    fs.mkdirSync(outside)
    // Made one folder at a time from the one above (a shell's cd names the whole path, which the kernel refuses past 4,096 bytes).
    fs.writeFileSync(path.join(s.project, 'chain.py'), ['import os', "os.makedirs('.git/tmpc/chain')", "fd = os.open('.git/tmpc/chain', os.O_RDONLY)", 'for i in range(20):', "    os.mkdir('x' * 250, dir_fd=fd)", "    fd = os.open('x' * 250, os.O_RDONLY, dir_fd=fd)", ''].join('\n'))
    const chain = 'python3 chain.py && mv .git/tmpc/chain .git/logs/chain' // .git is a mount of its own inside: made there, renamed in
    const plants = [
      `${chain}; sleep 0.5; echo ALIVE`,
      `git pack-refs --all && rm -rf .git/refs/heads && ln -s ${outside} .git/refs/heads && moved .git/refs/heads`,
      `ln -s ${outside} .git/objects/00 && moved .git/objects/00`,
    ]
    const r = await inside(s, `${MOVED}; ${plants.join('; ')}`)
    expect(r.out.split('\n'), r.err).toEqual(['ALIVE', 'MOVED', 'MOVED'])
    expect(r.code, r.err).toBe(0)
    expect(r.err).not.toMatch(/internal error/)
    expect(fs.readdirSync(outside)).toEqual([])
    execFileSync('rm', ['-rf', path.join(s.project, '.git/logs/chain')]) // deeper than fs.rmSync can name
  })

  test("round 134: the user's nested clone moved past the 512 repositories a session's end looks into, its config made a second name of a tracked file and rewritten, discarded by the user's git checkout ., moved back and staged in the next session: moved aside, also with --hard-links (the host's git status ran its fsmonitor, 3 of 3 as root and as uid 1001)", async () => {
    const s = scene({ hardLinks: true })
    trackedNotesAndDocs(s)
    const upstream = makeRepo(s.world.root, 'upstream')
    fs.mkdirSync(path.join(s.project, 'v'))
    execFileSync('git', ['clone', '-q', upstream, path.join(s.project, 'v/lib')])
    fs.appendFileSync(path.join(s.project, '.git/info/exclude'), 'v/\n')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    await inside(s, 'true')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const chain = `git init -q --bare dummy.git && d=chain && for i in $(seq 1 520); do mkdir -p $d && echo "gitdir: ${s.project}/dummy.git" > $d/.git; d=$d/c; done && mkdir -p $d && mv v/lib $d/lib && echo $d > deep.txt`
    const plant = `rm README && ln $(cat deep.txt)/lib/.git/config README && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = ${s.project}/pl\\n' > README && ln NOTES pl && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > pl && chmod +x pl && echo PLANTED`
    expect((await inside(s, `${chain} && ${plant}`, s.project, 120_000)).out).toBe('PLANTED')
    await discardedByTheUser(s)
    const r = await inside(s, `mv $(cat deep.txt)/lib v/lib && rm -rf chain dummy.git deep.txt && sleep 1 && git update-index --add --cacheinfo "160000,$(git -C v/lib -c core.fsmonitor= rev-parse HEAD),v/lib" && sleep 1 && test -e v/lib/.git && echo THERE || echo MOVED`, s.project, 120_000)
    expect(r.out, r.err).toBe('MOVED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  }, 300_000)

  test.each([
    ['kept in a plain folder under .git/modules (rerere would write through it once moved to rr-cache)', 'mkdir -p .git/modules/stash/x && ln -s OUT .git/modules/stash/x/thisimage', '.git/modules/stash/x/thisimage', '.'],
    // In a nested repository's git dir, which no watch looks at during the session (the project's is: round 139).
    ['in a .git/logs the session made unreadable (chmod 311: git still writes through it)', 'git init -q n && mkdir -p n/.git/logs && ln -s OUT n/.git/logs/HEAD && chmod 311 n/.git/logs', 'n/.git/logs', 'n'],
  ])("round 136: a link to a file outside the project %s: moved aside at the session's end, and your commit writes nothing there (rerere replaced ~/.bashrc, 3 of 3 as root and as uid 1001; the unreadable folder, 3 of 3 as uid 1001)", async (_where, plant, moved, repo) => {
    const s = scene()
    const outside = fileOutside(s)
    const r = await inside(s, `${plant.replaceAll('OUT', outside)} && echo LINKED`)
    expect(r.out, r.err).toBe('LINKED')
    expect(r.err).toContain(moved) // as root the folder is read, and the link in it goes
    fs.writeFileSync(path.join(s.project, repo, 'work.txt'), 'the user works on\n')
    hostGit(path.join(s.project, repo), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
  })

  test("round 136: links in a nested repository's .git/logs behind 200,100 folders the session made in the project's git dir, past what the sweep looks at: the folders git writes through go whole, a later git dir's own files are still looked at, and your commit writes nothing outside (3 of 3 as root, 2 of 2 as uid 1001; round 137, 3 of 3 and 4 of 4 each); the same folders in the project's .git/logs end the session (round 139)", async () => {
    const s = scene()
    const outside = fileOutside(s)
    const bulk = (dir: string): string => `mkdir -p ${dir} && (cd ${dir} && seq -f 'd%.0f' 1 200100 | xargs mkdir)`
    // A git dir swept after the budget ran out: its own files still are (round 137: MERGE_MSG), and its logs/ goes whole.
    const plant = `git init -q n && mkdir -p n/.git/logs && ln -s ${outside} n/.git/logs/HEAD && ln -s ${outside} n/.git/MERGE_MSG && ${bulk('.git/modules/bulk')} && echo LINKED`
    const r = await inside(s, plant, s.project, 240_000)
    expect(r.out, r.err).toBe('LINKED')
    expect(r.err).toMatch(/quarantine[^\n]*n\/\.git\/logs -> /)
    expect(r.err).toContain('n/.git/MERGE_MSG -> ')
    fs.writeFileSync(path.join(s.project, 'n/work.txt'), 'the user works on\n')
    hostGit(path.join(s.project, 'n'), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
    fs.rmSync(path.join(s.project, '.git/modules/bulk'), { recursive: true }) // here, not in the 60 s of the clean-up
    // Where the watch looks during the session, past 2,000 folders it can no longer watch each: the session is ended.
    const ended = await inside(s, `${bulk('.git/logs/bulk')}; echo NOT-ENDED`, s.project, 240_000)
    expect(ended.code, ended.err).toBe(137)
    expect(ended.err).toMatch(/more than 2000 folders where git writes through links \(\S*\.git\/logs\/bulk\/d\d+\) could not all be watched, and the session was ended/)
  }, 400_000)

  test("round 138: a nested repository whose git dir the session put in the instance (writable inside, outside the work trees), its COMMIT_EDITMSG a link to a file outside: its .git in the project is moved aside at the session's end (your commit there wrote through the link, 4 of 4 as uid 1001, 2 of 2 as root)", async () => {
    const s = scene()
    const outside = fileOutside(s)
    const r = await inside(s, `I=$(ls -d ${s.world.claudeboxHome}/instances/*) && git init -q --separate-git-dir $I/g sub && ln -sf ${outside} $I/g/COMMIT_EDITMSG && echo MADE`)
    expect(r.out, r.err).toBe('MADE')
    expect(fs.existsSync(path.join(s.project, 'sub/.git'))).toBe(false)
    fs.writeFileSync(path.join(s.project, 'sub/s'), 's\n')
    hostGit(path.join(s.project, 'sub'), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
  })

  test.each([
    ['its COMMIT_EDITMSG a link to a file outside', 'ln -sf OUT stash/gd/COMMIT_EDITMSG', 'sub/.git/COMMIT_EDITMSG -> '],
    ['its logs/ a link (a name users link) to a folder of the work tree whose HEAD leads to a file outside', 'mkdir wt && ln -s OUT wt/HEAD && rm -rf stash/gd/logs && ln -s ../../wt stash/gd/logs', 'sub/.git/logs -> '],
  ])("round 139: a nested repository's git dir kept in a plain folder in one session (no repository there, links are normal), %s, renamed into its .git in the next (the link keeps the first session's time): the link is moved aside, and your commit there writes nothing outside (3 of 3 as root and as uid 1001)", async (_what, plant, moved) => {
    const s = scene()
    const outside = fileOutside(s)
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const first = await inside(s, `git init -q sub && git -C sub commit -q --allow-empty -m s && mkdir stash && mv sub/.git stash/gd && mv stash/gd/HEAD stash/gd/HEAD.x && ${plant.replaceAll('OUT', outside)} && echo KEPT`)
    expect(first.out, first.err).toBe('KEPT')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const second = await inside(s, 'mv stash/gd/HEAD.x stash/gd/HEAD && mv stash/gd sub/.git && echo RENAMED')
    expect(second.out, second.err).toBe('RENAMED')
    expect(second.err).toContain(moved)
    fs.writeFileSync(path.join(s.project, 'sub/s'), 's\n')
    hostGit(path.join(s.project, 'sub'), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
  })

  test.each([
    ['its commondir naming a folder of the instance, which the session made unreadable (chmod 311)', 'git init -q sub && git -C sub commit -q --allow-empty -m s && mkdir -p $C/logs && (cd sub/.git && mv objects refs config hooks info description $C/ && mv logs/refs $C/logs/refs) && echo $C > sub/.git/commondir && rm -f $C/logs/refs/heads/main && ln -s OUT $C/logs/refs/heads/main && chmod 311 $C', ''],
    ['its gitdir: a link in the project, re-pointed into the instance among 1,200 decoy repositories (past the 512 the end looks into)', 'git init -q --separate-git-dir "$PWD/gd" sub && printf \'gitdir: ../lnk\\n\' > sub/.git && ln -s gd lnk && git -C sub commit -q --allow-empty -m s', 'for i in $(seq 1 600); do mkdir -p aaa/r$i/.git zzz/r$i/.git; done && cp -a gd $C && ln -sfn $C lnk && ln -sf OUT $C/COMMIT_EDITMSG && rm -f $C/logs/HEAD && ln -s OUT $C/logs/HEAD && chmod 311 $C'],
  ])("round 139: a nested repository whose way leads into the instance by %s: its .git is moved aside, whatever its times, and your commit there writes nothing outside (3 of 3 as root and as uid 1001)", async (_how, first, second) => {
    const s = scene()
    const outside = fileOutside(s)
    const inInstance = (lines: string): string => `C=$(ls -d ${s.world.claudeboxHome}/instances/*)/c && ${lines.replaceAll('OUT', outside)} && echo DONE`
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const made = await inside(s, inInstance(first))
    expect(made.out, made.err).toBe('DONE')
    if (second !== '') {
      await new Promise(resolve => setTimeout(resolve, 1_200))
      const again = await inside(s, inInstance(second), s.project, 120_000)
      expect(again.out, again.err).toBe('DONE')
    }
    expect(fs.existsSync(path.join(s.project, 'sub/.git'))).toBe(false)
    fs.writeFileSync(path.join(s.project, 'sub/s'), 's\n')
    hostGit(path.join(s.project, 'sub'), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
    readableAgain(s.world.root)
  }, 200_000)

  test("round 139: a project whose git dir lies outside it (git init --separate-git-dir): a nested repository's git dir the session put in it, made unreadable (chmod 311), past the sweep's budget, is moved aside whole, and your commit there writes nothing outside (3 of 3 as uid 1001: the mode guard reopens only in work trees)", async () => {
    const s = scene()
    const gitDir = path.join(s.world.home, 'gitdirs/project.git')
    fs.rmSync(path.join(s.project, '.git'), { recursive: true })
    fs.mkdirSync(path.dirname(gitDir))
    execFileSync('git', ['init', '-q', '--separate-git-dir', gitDir, s.project])
    git(s.project, 'config', 'core.worktree', s.project)
    git(s.project, 'add', '-A')
    git(s.project, 'commit', '-qm', 'init')
    const outside = fileOutside(s)
    const plant = `G=$(git rev-parse --absolute-git-dir) && mkdir -p $G/modules/bulk && (cd $G/modules/bulk && seq -f 'd%.0f' 1 200100 | xargs mkdir) && mkdir -p $G/stash && git init -q --separate-git-dir $G/stash/g sub && git -C sub commit -q --allow-empty -m s && ln -sf ${outside} $G/stash/g/COMMIT_EDITMSG && rm -f $G/stash/g/logs/HEAD && ln -s ${outside} $G/stash/g/logs/HEAD && chmod 311 $G/stash/g && echo PLANTED`
    const r = await inside(s, plant, s.project, 240_000)
    expect(r.out, r.err).toBe('PLANTED')
    expect(r.err).toMatch(/moved aside at the session's end[^\n]*project\.git\/stash\/g(\/COMMIT_EDITMSG)? -> /) // as root, the folder is read, and its links go
    fs.rmSync(path.join(gitDir, 'modules/bulk'), { recursive: true }) // here, not in the 60 s of the clean-up
    fs.writeFileSync(path.join(s.project, 'sub/s'), 's\n')
    hostGit(path.join(s.project, 'sub'), s.world)
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n')
    readableAgain(s.world.root)
  }, 400_000)

  test("git's own work needs no hard link: a commit and a clone of a local repository inside; git clone --local, which asks for them, fails as across file systems (--no-hardlinks copies)", async () => {
    const s = scene()
    const r = await inside(s, 'git init -q r && git -C r commit -q --allow-empty -m a && git -C r gc -q && git clone -q r r2 && git -C r2 log --oneline | wc -l && git clone -q --no-hardlinks r r3 && echo COPIED; git clone -q --local r r4 2>&1 | grep -c "cross-device"')
    expect(r.out.split('\n'), r.err).toEqual(['1', 'COPIED', '1'])
  })

  test("a nested clone of the user's that a session committed in, on a branch of its own, staged by a later session: kept (the end of the session that committed vouched for it, as the end before had)", async () => {
    const s = await sceneWithClone()
    expect((await inside(s, 'true')).code).toBe(0)
    await new Promise(resolve => setTimeout(resolve, 1_200))
    expect((await inside(s, 'git -C lib checkout -q -b feature && git -C lib commit -q --allow-empty -m vendored && echo COMMITTED')).out).toBe('COMMITTED')
    await new Promise(resolve => setTimeout(resolve, 1_200))
    const r = await inside(s, 'git update-index --add --cacheinfo "160000,$(git -C lib rev-parse HEAD),lib" && sleep 1 && test -d lib/.git && echo THERE || echo MOVED')
    expect(r.out, r.err).toBe('THERE')
  })

  test('a nested repository registered as a gitlink, a nested one elsewhere, and a new .git/modules dir: reported loudly after the session', async () => {
    const s = scene()
    const r = await inside(
      s,
      [
        `git init -q nested && (cd nested && git commit -q --allow-empty -m n && ${payload(s, '.git/config')}) && git add nested && git ls-files -s nested | grep -q ^160000`,
        'mkdir -p deep/dir && git init -q deep/dir',
        'mkdir -p .git/modules/planted && cp -r .git/objects .git/refs .git/HEAD .git/modules/planted/',
      ].join('; '),
    )
    expect(r.code).toBe(0) // the gitlink was staged
    // Registered as a gitlink at the top: its .git moved aside during the session (round 84).
    expect(r.err).toMatch(/moved aside[^\n]*project\/nested\/\.git -> /)
    expect(r.err).toMatch(/deep\/dir\/\.git/)
    expect(r.err).toMatch(/WARNING: new git dirs appeared in .*\.git\/modules: planted/)
  })

  test('a nested repository below a folder whose name is not UTF-8, or below one that can be entered but not listed: reported (red team: unreported)', async () => {
    const s = scene()
    const r = await inside(
      s,
      [
        `D=$(printf 'd\\377'); mkdir -p "$D/sub" && git init -q "$D/sub" && (cd "$D/sub" && ${payload(s, '.git/config')})`,
        `mkdir -p hidden/sub && git init -q hidden/sub && (cd hidden/sub && ${payload(s, '.git/config')}) && chmod 111 hidden`,
      ].join('; '),
    )
    expect(r.code, r.err).toBe(0)
    expect(r.err).toMatch(/nested git repositories.*d\uFFFD\/sub\/\.git/)
    expect(r.err).toMatch(/nested git repositories.*hidden\/sub\/\.git/)
    // The session made it unreadable to you: given back, and said (round 68), so the search goes on.
    if (!IS_ROOT) expect(r.err).toMatch(/hidden \(made readable to you again: 111 made 511\)/)
    fs.chmodSync(path.join(s.project, 'hidden'), 0o755)
  })

  test('a nested repository that existed before: a config changed during the session is reported', async () => {
    const s = scene()
    execFileSync('git', ['init', '-q', path.join(s.project, 'vendored')])
    const quiet = await inside(s, 'true')
    expect(quiet.err).not.toMatch(/nested git/)
    const r = await inside(s, `cd vendored && ${payload(s, '.git/config')}`)
    expect(r.err).toMatch(/nested git repositories.*vendored\/\.git/)
  })

  test('files the host runs are read-only while they exist; creating one is reported', async () => {
    const s = scene()
    const present = ['.envrc', '.npmrc', '.husky/pre-commit', '.vscode/settings.json', '.mcp.json', '.claude/settings.json', '.zed/tasks.json', '.helix/languages.toml', '.nvim.lua', '.exrc', '.vimrc', '.hg/hgrc', '.hg/requires', '.jj/repo/config.toml']
    for (const f of present) {
      fs.mkdirSync(path.dirname(path.join(s.project, f)), { recursive: true })
      fs.writeFileSync(path.join(s.project, f), 'original\n')
    }
    const r = await inside(
      s,
      [...present, '.vscode/tasks.json']
        .map(f => `echo evil >> ${f} 2>/dev/null && echo ESCAPED || echo BLOCKED`)
        .concat(['mv .claude .claude-old 2>/dev/null && echo ESCAPED || echo BLOCKED', 'mv .vscode .vscode-old 2>/dev/null && echo ESCAPED || echo BLOCKED', 'mv .hg .hg-old 2>/dev/null && echo ESCAPED || echo BLOCKED'])
        .concat(['echo "yarnPath: x.js" > .yarnrc.yml', 'echo store > .hg/store-file && echo "hg store: writable"', 'echo "[hooks]" > .hg/hgrc-not-shared']).join('; '),
    )
    // Renaming the parent away and planting a new one is refused too (the parent is pinned).
    expect(r.out.split('\n')).toEqual([...Array<string>(present.length + 4).fill('BLOCKED'), 'hg store: writable'])
    for (const f of present) expect(fs.readFileSync(path.join(s.project, f), 'utf8'), f).toBe('original\n')
    expect(r.err).toMatch(/changed files that run code outside the sandbox: .*\.hg\/hgrc-not-shared \(created\).*\.yarnrc\.yml \(created\)/)
  })

  test('.git/hooks and .git/config kept as symlinks into the project: what they lead to is read-only, a replaced link is moved aside at once', async () => {
    const s = scene()
    payloadWorks(s)
    const dotGit = path.join(s.project, '.git')
    fs.mkdirSync(path.join(s.project, 'tools/githooks'), { recursive: true })
    fs.rmSync(path.join(dotGit, 'hooks'), { recursive: true, force: true })
    fs.symlinkSync('../tools/githooks', path.join(dotGit, 'hooks'))
    fs.renameSync(path.join(dotGit, 'config'), path.join(s.project, 'tools/gitconfig'))
    fs.symlinkSync('../tools/gitconfig', path.join(dotGit, 'config'))
    const hook = `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > .git/hooks/pre-commit 2>/dev/null && chmod +x .git/hooks/pre-commit && echo ESCAPED || echo BLOCKED`
    const r = await inside(
      s,
      [
        hook,
        `${payload(s, '.git/config')} 2>/dev/null && echo ESCAPED || echo BLOCKED`,
        'mv tools tools-old 2>/dev/null && echo ESCAPED || echo BLOCKED',
        // Whether the hook is written before the move is a race; what counts is that it is gone.
        `rm .git/hooks && mkdir .git/hooks && { ${hook}; } >/dev/null 2>&1; sleep 0.6; test -e .git/hooks/pre-commit && echo ESCAPED || echo BLOCKED`,
        `rm .git/config && ${payload(s, '.git/config')}; sleep 0.6; test -e .git/config && echo ESCAPED || echo BLOCKED`,
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(Array(5).fill('BLOCKED'))
    expect(r.err).toMatch(/moved aside .*\.git\/hooks -> .*claudebox-quarantine/)
    fs.symlinkSync('../tools/gitconfig', path.join(dotGit, 'config'))
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a host-run file kept as a symlink (.envrc -> config/envrc): its target is read-only; a missing target is moved aside when created', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'config'))
    fs.writeFileSync(path.join(s.project, 'config/envrc'), 'original\n')
    fs.symlinkSync('config/envrc', path.join(s.project, '.envrc'))
    fs.symlinkSync('config/npmrc', path.join(s.project, '.npmrc'))
    const r = await inside(
      s,
      [
        'echo evil >> config/envrc 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'echo evil >> .envrc 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'echo "script-shell=/tmp/x" > config/npmrc; sleep 0.6; test -e config/npmrc && echo ESCAPED || echo BLOCKED',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    expect(fs.readFileSync(path.join(s.project, 'config/envrc'), 'utf8')).toBe('original\n')
    expect(r.err).toMatch(/config\/npmrc -> .*claudebox-quarantine/)
  })

  test('a host-run file below a symlinked folder (.claude -> config/claude): the launch works, the file is read-only, a swapped link is moved aside', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'config/claude'), { recursive: true })
    fs.writeFileSync(path.join(s.project, 'config/claude/settings.json'), '{}\n')
    fs.symlinkSync('config/claude', path.join(s.project, '.claude'))
    const r = await inside(
      s,
      [
        'echo evil >> .claude/settings.json 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'mv config config-old 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'rm .claude && mkdir .claude && echo "{}" > .claude/settings.json; sleep 0.6; test -e .claude/settings.json && echo ESCAPED || echo BLOCKED',
      ].join('; '),
    )
    expect(r.code, r.err).toBe(0)
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED'])
    expect(fs.readFileSync(path.join(s.project, 'config/claude/settings.json'), 'utf8')).toBe('{}\n')
    expect(r.err).toMatch(/\.claude -> .*claudebox-quarantine/)
  })

  test('a stow-like chain through a folder link (.envrc -> dotfiles/envrc, dotfiles -> config/dotfiles): launches, the file is read-only, the folder link guarded (red team: no launch ever)', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'config/dotfiles'), { recursive: true })
    fs.writeFileSync(path.join(s.project, 'config/dotfiles/envrc'), 'original\n')
    fs.symlinkSync('config/dotfiles', path.join(s.project, 'dotfiles'))
    fs.symlinkSync('dotfiles/envrc', path.join(s.project, '.envrc'))
    const r = await inside(
      s,
      [
        'echo evil >> .envrc 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'mkdir -p other && echo evil > other/envrc && rm dotfiles && ln -s other dotfiles; sleep 0.6; test "$(readlink dotfiles)" = other && echo ESCAPED || echo BLOCKED',
      ].join('; '),
    )
    expect(r.code, r.err).toBe(0)
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    expect(fs.readFileSync(path.join(s.project, 'config/dotfiles/envrc'), 'utf8')).toBe('original\n')
  })

  test('a hooks link whose target and its folder are missing (.git/hooks -> ../tools/githooks, no tools/): what a session creates there is moved aside, over two sessions (red team: ran at commit)', async () => {
    const s = scene()
    fs.rmSync(path.join(s.project, '.git/hooks'), { recursive: true, force: true })
    fs.symlinkSync('../tools/githooks', path.join(s.project, '.git/hooks'))
    const hook = `mkdir -p tools/githooks && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > tools/githooks/pre-commit && chmod +x tools/githooks/pre-commit; sleep 0.6; test -e tools/githooks/pre-commit && echo ESCAPED || echo BLOCKED`
    const first = await inside(s, hook)
    expect(first.out).toBe('BLOCKED')
    expect(first.err).toMatch(/tools -> .*claudebox-quarantine/)
    const second = await inside(s, hook)
    expect(second.out).toBe('BLOCKED')
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("core.hooksPath inside the project: its target is read-only", async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'tools/hooks'), { recursive: true })
    git(s.project, 'config', 'core.hooksPath', 'tools/hooks')
    const r = await inside(s, `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > tools/hooks/pre-commit 2>/dev/null && echo ESCAPED || echo BLOCKED`)
    expect(r.out).toMatch(/BLOCKED$/)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a config include or a hooksPath in the project: read-only when present, moved aside when created', async () => {
    const s = scene()
    fs.writeFileSync(path.join(s.project, 'team.gitconfig'), '[user]\n\tname = team\n')
    git(s.project, 'config', 'include.path', '../team.gitconfig')
    git(s.project, 'config', 'includeIf.onbranch:main.path', '../later.gitconfig')
    git(s.project, 'config', 'core.hooksPath', 'missing-hooks')
    const r = await inside(
      s,
      [
        `${payload(s, '.cfg')}`,
        'cat .cfg >> team.gitconfig 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'cp .cfg later.gitconfig; mkdir missing-hooks',
        `printf '#!/bin/sh\ntouch ${s.marker}\n' > missing-hooks/pre-commit; chmod +x missing-hooks/pre-commit`,
      ].join('; '),
    )
    expect(r.out).toBe('BLOCKED')
    expect(r.err).toMatch(/moved aside into claudebox's quarantine \(look at them with ls and cat, not with git, which would take one for a repository; a nested repository's \.git of yours goes back with mv, after a look at its config and hooks; delete the rest\): .*later\.gitconfig -> .*quarantine.*missing-hooks -> /)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('a FIFO planted as .git/HEAD hangs neither the end of the session nor the next launch: it is put back', async () => {
    const s = scene()
    const first = await claudebox(s.world, ['--', '-c', 'rm .git/HEAD && mkfifo .git/HEAD'], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 30_000 })
    expect(first.signal).toBeUndefined()
    expect(first.stderr).toMatch(/WARNING: the session made a git dir one git rejects .*\.git\/HEAD \(put back/)
    const second = await claudebox(s.world, ['--', '-c', 'echo RAN'], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 30_000 })
    expect(second.signal).toBeUndefined()
    expect(second.exitCode).toBe(0)
    expect(second.stdout.trim()).toBe('RAN')
  })

  test("core.hooksPath in the user's own git config (a relative .githooks): created inside, moved aside", async () => {
    const s = scene()
    fs.appendFileSync(path.join(s.world.home, '.gitconfig'), '[core]\n\thooksPath = .githooks\n')
    const r = await inside(s, `mkdir .githooks && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit`)
    expect(r.err).toMatch(/moved aside into claudebox's quarantine \(look at them with ls and cat, not with git, which would take one for a repository; a nested repository's \.git of yours goes back with mv, after a look at its config and hooks; delete the rest\): .*\.githooks -> /)
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("a ~/.gitconfig kept as a symlink (stow) and a .git/config kept in the project: read through, so their hooksPath is protected (red team: both went unprotected)", async () => {
    const s = scene()
    const gitconfig = path.join(s.world.home, '.gitconfig')
    fs.mkdirSync(path.join(s.world.home, 'dotfiles'))
    fs.writeFileSync(path.join(s.world.home, 'dotfiles/gitconfig'), `${fs.existsSync(gitconfig) ? fs.readFileSync(gitconfig, 'utf8') : ''}[core]\n\thooksPath = .githooks\n`)
    fs.rmSync(gitconfig, { force: true })
    fs.symlinkSync('dotfiles/gitconfig', gitconfig)
    fs.mkdirSync(path.join(s.project, '.githooks'))
    fs.mkdirSync(path.join(s.project, 'tools/hooks'), { recursive: true })
    const dotGit = path.join(s.project, '.git')
    fs.renameSync(path.join(dotGit, 'config'), path.join(s.project, 'tools/gitconfig'))
    fs.appendFileSync(path.join(s.project, 'tools/gitconfig'), '[core]\n\thooksPath = tools/hooks\n')
    fs.symlinkSync('../tools/gitconfig', path.join(dotGit, 'config'))
    const hook = (dir: string): string => `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${dir}/pre-commit 2>/dev/null && chmod +x ${dir}/pre-commit && echo ESCAPED || echo BLOCKED`
    const r = await inside(s, [hook('tools/hooks'), hook('.githooks')].join('; '))
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 106: the user's own git configs lying in the project are read-only, or moved aside when made: a GIT_CONFIG_GLOBAL of a direnv setup, an XDG_CONFIG_HOME there whose git/config is missing, a stow-managed ~/.gitconfig linked into a dotfiles project that is no repository (the session added a core.fsmonitor, 3 of 3 each)", async () => {
    const s = scene()
    const fsmonitor = `printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n'`
    const global = path.join(s.project, '.gitconfig-project')
    fs.writeFileSync(global, '[user]\n\tname = Project Identity\n')
    const viaGlobal = await claudebox(s.world, ['--', '-c', `${fsmonitor} >> ${global} 2>/dev/null && echo ESCAPED || echo BLOCKED`], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', GIT_CONFIG_GLOBAL: global } })
    expect(viaGlobal.stdout.trim(), viaGlobal.stderr).toBe('BLOCKED')
    const xdg = path.join(s.project, '.config')
    const viaXdg = await claudebox(s.world, ['--', '-c', `mkdir -p ${xdg}/git 2>/dev/null; ${fsmonitor} > ${xdg}/git/config 2>/dev/null; sleep 0.6; echo DONE`], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', XDG_CONFIG_HOME: xdg } })
    expect(viaXdg.stdout.trim(), viaXdg.stderr).toBe('DONE')
    expect(viaXdg.stderr).toMatch(/moved aside[^\n]*project\/\.config -> /)
    expect(fs.existsSync(path.join(xdg, 'git/config'))).toBe(false)
    const dotfiles = path.join(s.world.home, 'dotfiles')
    fs.mkdirSync(dotfiles)
    fs.writeFileSync(path.join(dotfiles, 'gitconfig'), '[user]\n\tname = T\n\temail = t@e\n')
    fs.rmSync(path.join(s.world.home, '.gitconfig'), { force: true })
    fs.symlinkSync('dotfiles/gitconfig', path.join(s.world.home, '.gitconfig'))
    const viaStow = await claudebox(s.world, ['--', '-c', `${fsmonitor} >> gitconfig 2>/dev/null && echo ESCAPED || echo BLOCKED`], { cwd: dotfiles, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(viaStow.stdout.trim(), viaStow.stderr).toBe('BLOCKED')
    hostGit(s.project, s.world)
    spawnSync('git', ['status'], { cwd: s.project, env: { ...process.env, HOME: s.world.home, GIT_CONFIG_GLOBAL: global }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 107: what the user's configs name is protected in a project that is no repository (an include of ~/.gitconfig), and so is what the environment's config names (GIT_CONFIG_COUNT's include.path and core.hooksPath, GIT_CONFIG_PARAMETERS's), 3 of 3 each before", async () => {
    const s = scene()
    const fsmonitor = `printf '[core]\\n\\tfsmonitor = "touch ${s.marker}; false"\\n'`
    const plain = plainFolder(s)
    fs.appendFileSync(path.join(s.world.home, '.gitconfig'), `[include]\n\tpath = ${plain}/team.gitconfig\n`)
    const r = await claudebox(s.world, ['--', '-c', `${fsmonitor} > team.gitconfig 2>/dev/null; sleep 0.6; test -e team.gitconfig && echo ESCAPED || echo BLOCKED`], { cwd: plain, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(r.stdout.trim(), r.stderr).toBe('BLOCKED')
    fs.writeFileSync(path.join(s.world.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@e\n')
    const given = { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'include.path', GIT_CONFIG_VALUE_0: `${s.project}/.git-local.config`, GIT_CONFIG_KEY_1: 'core.hooksPath', GIT_CONFIG_VALUE_1: `${s.project}/.githooks`, GIT_CONFIG_PARAMETERS: `'include.path'='${s.project}/.params.config'` }
    const plants = [`${fsmonitor} > .git-local.config`, `${fsmonitor} > .params.config`, `mkdir -p .githooks && printf '#!/bin/sh\\ntouch ${s.marker}\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit`]
    const e = await claudebox(s.world, ['--', '-c', `${plants.map(p => `(${p}) 2>/dev/null`).join('; ')}; sleep 0.6; ls -a; echo DONE`], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...given } })
    expect(e.stdout, e.stderr).toContain('DONE')
    for (const name of ['.git-local.config', '.params.config', '.githooks']) expect(fs.existsSync(path.join(s.project, name)), name).toBe(false)
    spawnSync('git', ['commit', '--allow-empty', '-qm', 'x'], { cwd: s.project, env: { ...process.env, HOME: s.world.home, ...given }, stdio: 'ignore', timeout: 20_000 })
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 108: what git's program variables name in the project is protected as a config's program values: GIT_EXTERNAL_DIFF read-only (a direnv setup's; the session's ran at the user's git diff, 3 of 3), a missing GIT_TEMPLATE_DIR moved aside when made", async () => {
    const s = scene()
    const difft = path.join(s.project, 'tools/difft')
    fs.mkdirSync(path.dirname(difft))
    fs.writeFileSync(difft, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(s.project, 'file'), 'a\n')
    const given = { GIT_EXTERNAL_DIFF: difft, GIT_TEMPLATE_DIR: path.join(s.project, '.templates') }
    const r = await claudebox(s.world, ['--', '-c', `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > tools/difft 2>/dev/null && echo ESCAPED || echo BLOCKED; mkdir -p .templates/hooks 2>/dev/null; sleep 0.6; test -e .templates && echo KEPT || echo GONE`], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...given } })
    expect(r.stdout.trim().split('\n'), r.stderr).toEqual(['BLOCKED', 'GONE'])
    fs.appendFileSync(path.join(s.project, 'file'), 'b\n')
    spawnSync('git', ['diff'], { cwd: s.project, env: { ...process.env, HOME: s.world.home, ...given }, stdio: 'ignore', timeout: 20_000 })
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test("round 109: in a project whose path holds a space, GIT_SSH and a quoted GIT_EXTERNAL_DIFF are read-only; every folder of a GIT_EXEC_PATH list is; a GIT_TRACE file is (the session made it a link to ~/.bashrc); GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM of /dev/null launch", async () => {
    const s = scene()
    const project = path.join(s.world.home, 'My Projects/p')
    fs.mkdirSync(path.dirname(project))
    fs.renameSync(s.project, project)
    for (const f of ['tools/ssh', 'tools/difft', 'bin/git-lint']) {
      fs.mkdirSync(path.dirname(path.join(project, f)), { recursive: true })
      fs.writeFileSync(path.join(project, f), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    }
    fs.writeFileSync(path.join(project, 'trace.log'), '')
    const given = { GIT_SSH: `${project}/tools/ssh`, GIT_EXTERNAL_DIFF: `'${project}/tools/difft' --color`, GIT_EXEC_PATH: `/usr/lib/git-core:${project}/bin`, GIT_TRACE: `${project}/trace.log`, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' }
    const tries = ['tools/ssh', 'tools/difft', 'bin/git-lint', 'bin/git-new'].map(f => `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > ${f} 2>/dev/null && echo ESCAPED || echo BLOCKED`)
    const r = await claudebox(s.world, ['--', '-c', [...tries, 'ln -sf ~/.bashrc trace.log 2>/dev/null && echo ESCAPED || echo BLOCKED'].join('; ')], { cwd: project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...given } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED', 'BLOCKED', 'BLOCKED'])
    const plain = plainFolder(s)
    const devNull = await claudebox(s.world, ['--', '-c', 'echo RAN'], { cwd: plain, env: { CLAUDEBOX_CLAUDE: '/bin/sh', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } })
    expect(devNull.stdout.trim(), devNull.stderr).toBe('RAN')
  })

  test("round 110: the files ssh and a credential helper read, named without a slash (core.sshCommand = ssh -F ssh_config: the session's ProxyCommand ran at the user's git fetch), are read-only or moved aside when made", async () => {
    const s = scene()
    fs.writeFileSync(path.join(s.project, 'ssh_config'), 'Host *\n  IdentitiesOnly yes\n')
    git(s.project, 'config', 'core.sshCommand', 'ssh -F ssh_config')
    git(s.project, 'config', 'credential.helper', 'store --file=creds')
    const r = await inside(s, `printf 'Host *\\n  ProxyCommand touch ${s.marker}\\n' >> ssh_config 2>/dev/null && echo ESCAPED || echo BLOCKED; ln -s ~/.git-credentials creds 2>/dev/null; sleep 0.6; test -e creds && echo KEPT || echo GONE`)
    expect(r.out.split('\n'), r.err).toEqual(['BLOCKED', 'GONE'])
  })

  test("round 112: files git trusts or writes, named without a slash (gpg.ssh.allowedSignersFile: a session's key verified as the maintainer's, 3 of 3), are read-only, or moved aside when made", async () => {
    const s = scene()
    fs.writeFileSync(path.join(s.project, 'allowed_signers'), 'maintainer@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA\n')
    git(s.project, 'config', 'gpg.ssh.allowedSignersFile', 'allowed_signers')
    git(s.project, 'config', 'http.cookieFile', 'cookies.txt')
    const r = await inside(s, "echo 'maintainer@example.com ssh-ed25519 AAAAforged' >> allowed_signers 2>/dev/null && echo ESCAPED || echo BLOCKED; ln -s ~/.bashrc cookies.txt 2>/dev/null; sleep 0.6; test -e cookies.txt -o -L cookies.txt && echo KEPT || echo GONE")
    expect(r.out.split('\n'), r.err).toEqual(['BLOCKED', 'GONE'])
  })

  test("round 106: claudebox's own git run in the project writes no trace2 target a config names (a session that wrote one got ~/.bashrc appended at the next launch)", async () => {
    const s = scene()
    const target = path.join(s.world.root, 'TRACE2')
    const global = path.join(s.world.root, 'gitconfig')
    fs.writeFileSync(global, `[trace2]\n\teventTarget = ${target}\n\tnormalTarget = ${target}\n\tperfTarget = ${target}\n`)
    spawnSync('git', ['rev-parse', '--git-dir'], { cwd: s.project, env: { ...process.env, GIT_CONFIG_GLOBAL: global }, stdio: 'ignore' })
    expect(fs.existsSync(target), 'the control: git writes it').toBe(true)
    fs.rmSync(target)
    const r = await claudebox(s.world, ['--', '-c', 'echo RAN'], { cwd: s.project, env: { CLAUDEBOX_CLAUDE: '/bin/sh', GIT_CONFIG_GLOBAL: global } })
    expect(r.stdout.trim(), r.stderr).toBe('RAN')
    expect(fs.existsSync(target)).toBe(false)
  })

  test('a planted file in a folder the session made read-only is still moved aside (as a user, it stayed, and the host ran it)', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'config'))
    fs.symlinkSync('config/npmrc', path.join(s.project, '.npmrc'))
    // The folder on the way is pinned (round 30): it cannot be swapped for one made read-only, only made so.
    const r = await inside(s, 'rmdir config 2>/dev/null && echo SWAPPED; echo "script-shell=/tmp/x" > config/npmrc; chmod 555 config; sleep 0.6; test -e config/npmrc && echo ESCAPED || echo BLOCKED')
    expect(r.out).toBe('BLOCKED')
    expect(r.err).toMatch(/config\/npmrc -> .*claudebox-quarantine/)
    expect(fs.statSync(path.join(s.project, 'config')).mode & 0o777).toBe(0o555) // its mode is given back
    fs.chmodSync(path.join(s.project, 'config'), 0o755) // for the test's cleanup
  })

  test('links kept inside protected folders (.git/hooks/pre-commit -> ../../scripts/pre-commit.sh): what they lead to is read-only', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'scripts'))
    fs.writeFileSync(path.join(s.project, 'scripts/pre-commit.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(s.project, 'scripts/task.sh'), 'echo task\n')
    fs.symlinkSync('../../scripts/pre-commit.sh', path.join(s.project, '.git/hooks/pre-commit'))
    fs.mkdirSync(path.join(s.project, '.vscode'))
    fs.symlinkSync('../scripts/task.sh', path.join(s.project, '.vscode/task.sh'))
    fs.symlinkSync('..', path.join(s.project, '.vscode/up')) // a folder holding the project: watched only
    const r = await inside(
      s,
      [
        `printf '#!/bin/sh\\ntouch ${s.marker}\\n' > scripts/pre-commit.sh 2>/dev/null && echo ESCAPED || echo BLOCKED`,
        'echo evil >> scripts/task.sh 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'mv scripts scripts-old 2>/dev/null && echo ESCAPED || echo BLOCKED',
        'echo ok > README && git add README && git commit -qm inside && echo COMMITTED',
      ].join('; '),
    )
    expect(r.out.split('\n')).toEqual(['BLOCKED', 'BLOCKED', 'BLOCKED', 'COMMITTED'])
    hostGit(s.project, s.world)
    expect(fs.existsSync(s.marker)).toBe(false)
  })

  test('links a session left in folders it created: dangling decoys cost nothing (the user\'s hook script stays protected); hundreds into the project refuse the next launch, naming the folder (red team: a budget used up left the hook writable)', async () => {
    const s = scene()
    fs.mkdirSync(path.join(s.project, 'scripts'))
    fs.writeFileSync(path.join(s.project, 'scripts/pre-commit.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    fs.symlinkSync('../../scripts/pre-commit.sh', path.join(s.project, '.git/hooks/pre-commit'))
    await inside(s, 'for d in .githooks .vscode .idea .devcontainer; do mkdir -p $d; for i in $(seq 10 60); do ln -s /nonexistent $d/l$i; done; done')
    const r = await inside(s, 'echo evil >> scripts/pre-commit.sh 2>/dev/null && echo ESCAPED || echo BLOCKED')
    expect(r.out).toBe('BLOCKED')
    await inside(s, 'mkdir .husky; for i in $(seq 100 499); do echo x > scripts/f$i; ln -s ../scripts/f$i .husky/l$i; done')
    const flooded = await inside(s, 'echo RAN')
    expect(flooded.code).toBe(125)
    expect(flooded.out).toBe('')
    expect(flooded.err).toMatch(/\.husky holds more links into the project than claudebox protects .*remove the links you do not use/)
  })

  test('a watched path whose parent the agent turned into a symlink out of the project: nothing outside is moved', async () => {
    const s = scene()
    const outside = path.join(s.world.root, 'outside')
    fs.mkdirSync(path.join(outside, 'hooks'), { recursive: true })
    fs.writeFileSync(path.join(outside, 'hooks/keep'), 'user data\n')
    git(s.project, 'config', 'core.hooksPath', 'tools/hooks')
    const r = await inside(s, `rm -rf tools; ln -s '${outside}' tools`)
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(outside, 'hooks/keep'), 'utf8')).toBe('user data\n')
    expect(fs.readdirSync(outside)).toEqual(['hooks'])
    // tools, missing, is the name watched for (round 31): the link itself is moved, never what it leads to.
    expect(r.err).toMatch(/project\/tools -> \S*quarantine\/[0-9a-f]{16}\/tools\.claudebox-quarantine-/)
  })

  test('a parent swapped between a directory and a symlink out, in a loop (racing the watch): nothing outside is ever moved', async () => {
    const s = scene()
    const outside = path.join(s.world.root, 'outside')
    fs.mkdirSync(path.join(outside, 'hooks'), { recursive: true })
    fs.writeFileSync(path.join(outside, 'hooks/keep'), 'user data\n')
    git(s.project, 'config', 'core.hooksPath', 'tools/hooks')
    const swap = `i=0; while [ $i -lt 600 ]; do rm -rf tools; mkdir -p tools/hooks; rm -rf tools; ln -s '${outside}' tools; i=$((i+1)); done; rm -f tools`
    const r = await inside(s, swap)
    // Planting the watched name again and again ends the session (round 29); nothing outside moved meanwhile.
    expect([0, 137]).toContain(r.code)
    expect(fs.readdirSync(outside)).toEqual(['hooks'])
    expect(fs.readFileSync(path.join(outside, 'hooks/keep'), 'utf8')).toBe('user data\n')
  })
})

/** Resolves once `done()` holds, checked every 20 ms; fails after 20 s. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 20_000) throw new Error('timed out waiting')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}
