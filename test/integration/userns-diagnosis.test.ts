// Machines that refuse user namespaces: fixture bwrap programs fail the way each does, kernel
// settings come from a fixture directory (CLAUDEBOX_PROC_SYS), and both the failed launch and
// --check name the cause and its fix, never a raw bwrap message alone.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { claudebox, IS_ROOT, makeRepo, makeWorld, type World } from '../helpers/cli.js'

function fixture(world: World, sysctl: Record<string, string>, message: string): { procSys: string; bwrap: string } {
  const procSys = path.join(world.root, 'proc-sys')
  for (const [name, value] of Object.entries(sysctl)) {
    fs.mkdirSync(path.dirname(path.join(procSys, name)), { recursive: true })
    fs.writeFileSync(path.join(procSys, name), `${value}\n`)
  }
  fs.mkdirSync(procSys, { recursive: true })
  const bwrap = path.join(world.root, 'bwrap')
  fs.writeFileSync(bwrap, `#!/bin/sh\n[ "$1" = --version ] && { echo 'bubblewrap 0.9.0'; exit 0; }\necho '${message}' >&2\nexit 1\n`, { mode: 0o755 })
  return { procSys, bwrap }
}

const cases = [
  {
    name: 'Ubuntu AppArmor restriction',
    sysctl: { 'kernel/apparmor_restrict_unprivileged_userns': '1' },
    message: 'bwrap: setting up uid map: Permission denied',
    cause: IS_ROOT ? /bwrap failed|container/ : /AppArmor restricts unprivileged user namespaces/,
  },
  {
    name: 'unprivileged_userns_clone = 0 (older Debian)',
    sysctl: { 'kernel/unprivileged_userns_clone': '0' },
    message: 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.',
    cause: IS_ROOT ? /bwrap failed|container/ : /kernel.unprivileged_userns_clone = 0.*sysctl -w kernel.unprivileged_userns_clone=1/,
  },
  {
    name: 'max_user_namespaces = 0',
    sysctl: { 'user/max_user_namespaces': '0' },
    message: 'bwrap: No space left on device',
    cause: /user.max_user_namespaces = 0.*sysctl -w user.max_user_namespaces/,
  },
]

describe('user namespaces refused', () => {
  test.each(cases)('$name: the failed launch names the cause and the fix', async ({ sysctl, message, cause }) => {
    const world = makeWorld()
    const { procSys, bwrap } = fixture(world, sysctl, message)
    const r = await claudebox(world, [], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_BWRAP: bwrap, CLAUDEBOX_PROC_SYS: procSys, CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(r.exitCode).toBe(125)
    expect(r.stderr).toContain(message) // bwrap's own line, then ours
    expect(r.stderr).toMatch(/claudebox: bwrap could not create the sandbox/)
    expect(r.stderr).toMatch(cause)
  })

  test.each(cases)('$name: --check fails and says why', async ({ sysctl, message, cause }) => {
    const world = makeWorld()
    const { procSys, bwrap } = fixture(world, sysctl, message)
    const r = await claudebox(world, ['--check'], { cwd: makeRepo(world.home, 'p'), env: { CLAUDEBOX_BWRAP: bwrap, CLAUDEBOX_PROC_SYS: procSys, CLAUDEBOX_CLAUDE: '/bin/true' } })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/^fail user namespaces: a test sandbox failed: /m)
    expect(r.stdout).toMatch(cause)
  })
})
