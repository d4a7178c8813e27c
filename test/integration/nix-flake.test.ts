// The Nix flake, evaluated by test/nix/check.sh with nix against a small local stand-in for nixpkgs
// (test/nix/nixpkgs-stub): nixpkgs itself cannot be downloaded here, so the full `nix build` is not
// run; evaluation checks the outputs, the wrapper, the source sets and the npm dependencies.
import path from 'node:path'
import { execa } from 'execa'
import { expect, test } from 'vitest'
import { REPO, requiredTool } from '../helpers/cli.js'

const HAVE_NIX = requiredTool('nix', ['--version'], 'nix (apt-get install nix-bin)')

test.skipIf(!HAVE_NIX)('the flake evaluates for both systems with the expected outputs (test/nix/check.sh)', async () => {
  const r = await execa('bash', [path.join(REPO, 'test/nix/check.sh')], {
    // check.sh keeps nix's store, HOME and caches in a temporary directory of its own.
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...(process.env['TMPDIR'] ? { TMPDIR: process.env['TMPDIR'] } : {}) },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  })
  expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0)
  expect(r.stdout.split('\n').filter(line => line.startsWith('ok: '))).toEqual(['ok: packages', 'ok: checks', 'ok: apps', 'ok: devShells', 'ok: overlays'])
}, 150_000)
