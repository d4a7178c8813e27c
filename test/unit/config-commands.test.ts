// What a git config value may run, as the launch reads it: the path words, from every folder a
// `cd` takes the command to, and the file an interpreter runs; and the URLs git may push to.
import { describe, expect, test } from 'vitest'
import { commandWords } from '../../src/host/config-commands.js'
import { remoteUrls, type RemoteSettings } from '../../src/host/git-dirs.js'

const HOME = '/home/u'
const words = (value: string): string[] => commandWords(value, HOME).sort()

describe('commandWords', () => {
  test('path words as before: sh tools/x, quoted, ~/, $HOME, $PWD, $(...)/, -c key=path', () => {
    expect(words('sh tools/x')).toEqual(['tools/x'])
    expect(words('"tools"/x')).toEqual(['tools/x'])
    expect(words('~/p/x')).toEqual(['/home/u/p/x'])
    expect(words('$HOME/p/x')).toEqual(['/home/u/p/x'])
    expect(words('$PWD/tools/x')).toEqual(['./tools/x'])
    expect(words('"$(git rev-parse --show-toplevel)"/tools/x')).toEqual(['tools/x'])
    expect(words('-c core.fsmonitor=tools/x status')).toEqual(['tools/x'])
    expect(words('less -R')).toEqual([])
    expect(words('git-lfs clean -- %f')).toEqual([])
  })

  test("rounds 109 and 110: a path with a space, quoted, escaped or quoted in part, is taken whole; bash's $'...' too; the files ssh and credential helpers read, a slash or not", () => {
    expect(words("'/home/u/My Proj/tools/difft' --color")).toContain('/home/u/My Proj/tools/difft')
    expect(words('"$HOME/My Proj/"tools/x')).toContain('/home/u/My Proj/tools/x')
    expect(words('/home/u/My\\ Proj/x arg')).toContain('/home/u/My Proj/x')
    expect(words("$'tools/x'")).toEqual(['tools/x'])
    expect(words('ssh -F ssh_config -i key -o UserKnownHostsFile=known -oIdentityFile=id2 host')).toEqual(['id2', 'key', 'known', 'ssh_config'])
    expect(words('ssh -Fcfg host')).toEqual(['cfg'])
    expect(words('store --file=creds')).toEqual(['creds'])
    expect(words('ssh -o IdentitiesOnly=yes -i ~/.ssh/id_ed25519 host')).toEqual(['/home/u/.ssh/id_ed25519'])
    // Round 111: bundled flags, settings whose value is a command or a file, --file given apart, none.
    expect(words('ssh -vF ssh_config -qi key host')).toEqual(['key', 'ssh_config'])
    expect(words("ssh -o 'ProxyCommand sh proxy.sh %h %p' host")).toContain('proxy.sh')
    expect(words('ssh -o "IdentityFile key2" -o LocalCommand=tools/x -S none host')).toEqual(['key2', 'tools/x'])
    expect(words('cache --socket sock')).toEqual(['sock'])
  })

  test('round 34: a cd (or pushd, or -C) before the program: its words are taken from that folder too', () => {
    expect(words('cd tools && ./x')).toEqual(['./x', 'tools/./x'])
    expect(words('!cd tools; cd sub; ./x')).toEqual(['./x', 'tools/./x', 'tools/sub/./x'].concat('sub/./x').sort())
    expect(words('pushd "tools" >/dev/null && bin/x')).toEqual(['/dev/null', 'bin/x', 'tools/bin/x'])
    expect(words('git -C sub/dir run/x')).toEqual(['run/x', 'sub/dir/run/x'])
    expect(words('!f() { cd tools; ./x; }; f')).toEqual(['./x', 'tools/./x'])
    expect(words('cd "$(git rev-parse --show-toplevel)/tools" && ./x')).toEqual(['./x', 'tools/./x'])
    expect(words('cd ~/p && ./x')).toEqual(['./x', '/home/u/p/./x'])
  })

  test('an interpreter runs its first argument from its folder: sh x, bash -c "cd a && sh b", env python3 -u x.py', () => {
    expect(words('sh x')).toEqual(['x'])
    expect(words('bash -c "cd a && sh b"')).toEqual(['a/b', 'b'])
    expect(words('env FOO=1 python3 -u x.py')).toEqual(['x.py'])
    expect(words('node -e 1')).toEqual(['1'])
  })

  test('round 36: wrappers by their base name and with their options, interpreter options that take a value, -m, $SHELL, redirected input, startup files, -c hooksPath, variables the value sets, --chdir, sh -c --', () => {
    const has = (value: string, ...paths: string[]): void => expect(words(value)).toEqual(expect.arrayContaining(paths))
    has('timeout 60 sh hook.sh', 'hook.sh')
    has('timeout -s KILL 60 sh hook.sh', 'hook.sh')
    has('nice -n 10 sh hook.sh', 'hook.sh')
    has('busybox sh x', 'x')
    has('/usr/bin/env bash hook.sh', 'hook.sh')
    has('bash -o pipefail x', 'x')
    has('python3 -W ignore x.py', 'x.py')
    has('perl -I lib x.pl', 'x.pl')
    has('node --require dotenv/config x.js', 'x.js', 'dotenv/config')
    has('deno run -A x.ts', 'x.ts')
    has('python3.12 x.py', 'x.py')
    has('tsx x.ts', 'x.ts')
    has('python3 -m tools.fsmon', 'tools/fsmon.py', 'tools/fsmon/__main__.py')
    has('sh < x', 'x')
    has('cat x | sh', 'x')
    has('env BASH_ENV=x bash -c true', 'x')
    has('-c core.hooksPath=.githooks commit', '.githooks')
    has('D=tools; $D/x', 'tools/x')
    has('env --chdir=tools ./x', 'tools/./x')
    has('bash -c -- "cd tools && ./x"', 'tools/./x')
    has('~+/tools/x', './tools/x')
    has('!git --git-dir=.meta --work-tree=. status', '.meta')
    has('!GIT_DIR=.meta git status', '.meta')
    has('!git --exec-path=tools status', 'tools')
    has('!cd "${TOOLS_DIR:-tools}" && ./x', 'tools/./x')
    has('!export D=tools; $D/x', 'tools/x')
    has('!f() { local d=tools; $d/x; }; f', 'tools/x')
    has('!npx tsx x.ts', 'x.ts')
    has('!uv run x.py', 'x.py')
    const shell = process.env['SHELL']
    process.env['SHELL'] = '/bin/bash'
    try {
      has('$SHELL x', 'x')
    } finally {
      if (shell === undefined) delete process.env['SHELL']
      else process.env['SHELL'] = shell
    }
  })

  test('cd targets are bounded: a value with many cds does not take every combination', () => {
    const value = Array.from({ length: 40 }, (_, i) => `cd d${i}`).join('; ') + '; ./x'
    expect(words(value).length).toBeLessThanOrEqual(16)
  })
})

describe('remoteUrls', () => {
  const none: RemoteSettings = { urls: [], names: [], used: [], rewrites: [] }

  test("round 34: a branch's remote, pushRemote or remote.pushDefault that no remote has is a URL", () => {
    expect(remoteUrls({ ...none, names: ['origin'], urls: ['git@h:x'], used: ['origin', './mirror.git', '.'] })).toEqual(['git@h:x', './mirror.git', '.'])
  })

  test('url.*.insteadOf and pushInsteadOf rewrite a URL by their longest prefix, each kind apart', () => {
    const rewrites = [
      { prefix: 'gh:', base: 'https://github.com/', push: false },
      { prefix: 'gh:me/', base: '/home/u/p/mirrors/', push: false },
      { prefix: 'gh:', base: '../pushes/', push: true },
    ]
    expect(remoteUrls({ ...none, urls: ['gh:me/x.git'], rewrites })).toEqual(['gh:me/x.git', '/home/u/p/mirrors/x.git', '../pushes/me/x.git'])
  })
})
