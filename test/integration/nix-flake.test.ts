// The Nix flake, evaluated with Debian's nix against a small local stand-in for nixpkgs
// (test/nix/nixpkgs-stub): nixpkgs itself cannot be downloaded here, so the full `nix build` is
// not run in CI; evaluation checks the outputs, the wrapper and the source set.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, onTestFinished, test } from 'vitest'
import { IS_ROOT, REPO, tempDir } from '../helpers/cli.js'

const HAVE_NIX = (() => {
  try {
    execFileSync('nix', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env['CI']) throw new Error('nix is required in CI (apt-get install nix-bin)')
    return false
  }
})()

const SYSTEMS = ['x86_64-linux', 'aarch64-linux']

describe.skipIf(!HAVE_NIX)('nix flake', () => {
  /** Evaluates `<repo>#attr` (git+file: the tracked files) with nixpkgs replaced by the stub. */
  async function nixEval(attr: string, apply?: string): Promise<unknown> {
    const tmp = tempDir('cb-nix-', false)
    // A private nix store is read-only by design: make it writable again to remove it.
    onTestFinished(() => {
      execFileSync('chmod', ['-R', 'u+w', tmp])
      fs.rmSync(tmp, { recursive: true, force: true })
    })
    // Unprivileged users cannot write /nix/store: give them a store of their own.
    const store = IS_ROOT ? [] : ['--store', path.join(tmp, 'store')]
    const r = await execa(
      'nix',
      [
        ...store,
        'eval',
        '--json',
        '--no-write-lock-file',
        '--override-input',
        'nixpkgs',
        `path:${path.join(REPO, 'test/nix/nixpkgs-stub')}`,
        `git+file://${REPO}#${attr}`,
        ...(apply ? ['--apply', apply] : []),
      ],
      {
        env: { HOME: tmp, XDG_CACHE_HOME: path.join(tmp, 'cache'), PATH: process.env['PATH'] ?? '', NIX_CONFIG: 'experimental-features = nix-command flakes' },
        extendEnv: false,
        reject: false,
        timeout: 120_000,
      },
    )
    expect(r.exitCode, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as unknown
  }

  test('outputs exist for both systems', async () => {
    const outputs = (await nixEval(
      'packages',
      'p: builtins.mapAttrs (s: v: builtins.attrNames v) p',
    )) as Record<string, string[]>
    for (const system of SYSTEMS) expect(outputs[system]).toEqual(['claudebox', 'default'])
    const others = (await nixEval(
      'checks',
      `c: { checks = builtins.mapAttrs (s: v: builtins.attrNames v) c; }`,
    )) as { checks: Record<string, string[]> }
    for (const system of SYSTEMS) expect(others.checks[system]).toEqual(['build', 'unit-tests'])
    for (const [attr, expected] of [
      ['apps', 'default'],
      ['devShells', 'default'],
    ] as const) {
      const names = (await nixEval(attr, 'a: builtins.mapAttrs (s: v: builtins.attrNames v) a')) as Record<string, string[]>
      for (const system of SYSTEMS) expect(names[system]).toEqual([expected])
    }
    expect(await nixEval('overlays', 'o: builtins.attrNames o')).toEqual(['default'])
    expect(await nixEval('apps.x86_64-linux.default.program')).toMatch(/\/bin\/claudebox$/)
  })

  test('the wrapper puts bubblewrap, git and coreutils on PATH; the claude package is optional', async () => {
    const args = (await nixEval('packages.x86_64-linux.default.passthru.args.makeWrapperArgs')) as string[]
    expect(args.slice(0, 3)).toEqual(['--prefix', 'PATH', ':'])
    expect(args[3]).toMatch(/-bubblewrap\/bin:.*-git\/bin:.*-coreutils\/bin$/)
    const withClaude = (await nixEval(
      'packages.x86_64-linux.default',
      `p: (p.passthru.args.makeWrapperArgs)`,
    )) as string[]
    expect(withClaude).not.toContain('CLAUDEBOX_CLAUDE') // not unless a claude-code package is given
  })

  test('the package source excludes tests and docs; the check runs the unit tests', async () => {
    const files = ((await nixEval('packages.x86_64-linux.default.passthru.args.src.files')) as string[]).map(f => f.replace(/^.*\/nix\/store\/[^/]+-source\//, ''))
    expect(files.sort()).toEqual(['bin', 'package-lock.json', 'package.json', 'scripts/build.mjs', 'src', 'tsconfig.json'])
    expect(files.some(f => f.startsWith('test') || f.endsWith('.md'))).toBe(false)
    const check = (await nixEval('checks.x86_64-linux.unit-tests.passthru.args', 'a: { inherit (a) doCheck checkPhase; files = a.src.files; }')) as {
      doCheck: boolean
      checkPhase: string
      files: string[]
    }
    expect(check.doCheck).toBe(true)
    expect(check.checkPhase).toContain('npm run test:unit')
    expect(check.files.some(f => f.endsWith('/test/unit'))).toBe(true)
  })

  test('npm dependencies come from the lockfile through importNpmLock (no hash to update by hand)', async () => {
    const args = (await nixEval('packages.x86_64-linux.default.passthru.args', 'a: { hook = a.npmConfigHook; hasRoot = a.npmDeps ? npmRoot; }')) as { hook: string; hasRoot: boolean }
    expect(args).toEqual({ hook: 'importNpmLock.npmConfigHook', hasRoot: true })
  })
})
