// Everyday tools under --network=allow, against the real npm registry (CI reaches it: it runs
// `npm ci`): npm and git find the proxy in the environment, and only the preset's hosts answer.
import { describe, expect, test } from 'vitest'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld } from '../helpers/cli.js'

describe.skipIf(!HAVE_BWRAP)('tools through the proxy of --network=allow', () => {
  test('npm install works with the npm preset; git over HTTPS reaches the registry; a host outside the list does not answer', async () => {
    const world = makeWorld()
    const repo = makeRepo(world.home, 'src/app')
    const script = [
      'cd "$(mktemp -d)" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error left-pad@1.3.0 >/dev/null 2>&1; echo "npm=$?"',
      'node -p "require(\'./node_modules/left-pad/package.json\').version"',
      // A 404 from the registry proves the TLS tunnel reached it.
      'git ls-remote https://registry.npmjs.org/no-such-repo 2>&1 | tail -1',
      'curl -sS -m 10 -o /dev/null https://deb.debian.org/ 2>&1; echo "debian=$?"',
    ].join('\n')
    const r = await claudebox(world, ['--network=allow', '--allow-preset', 'npm', '--', '-c', script], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 60_000 })
    expect(r.stdout, r.stderr).toContain('npm=0')
    expect(r.stdout).toContain('1.3.0')
    expect(r.stdout).toMatch(/fatal: repository 'https:\/\/registry\.npmjs\.org\/no-such-repo\/' not found/)
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403\s+debian=56/)
  }, 60_000)
})
