import { describe, expect, test } from 'vitest'
import { diffSnapshots } from '../../src/sandbox/persistence.js'
import { bindRefusal, dangerousRootReason } from '../../src/sandbox/policy.js'
import { diagnoseUserns } from '../../src/sandbox/userns.js'

const home = '/home/ada'
const state = '/home/ada/.claudebox'

describe('dangerous roots', () => {
  test.each([
    ['/', /contains your home/],
    ['/home', /contains your home/],
    [home, /your home directory/],
    ['/usr', /part of the system/],
    ['/usr/local/src/x', /part of the system/],
    ['/etc', /part of the system/],
    ['/var', /system-wide/],
    ['/tmp', /system-wide/],
    ['/opt', /system-wide/],
    ['/home/ada/.claudebox/instances/0123456789abcdef', /inside claudebox's state/],
  ])('%s is refused (%s)', (dir, reason) => {
    expect(dangerousRootReason(dir, home, state)).toMatch(reason)
  })
  test('a directory containing a custom state dir is refused', () => {
    expect(dangerousRootReason('/data', home, '/data/claudebox')).toMatch(/contains claudebox's state/)
  })
  test.each(['/home/ada/src/shop', '/tmp/project', '/srv/www/site', '/opt/work/repo'])('%s is a project', dir => {
    expect(dangerousRootReason(dir, home, state)).toBeUndefined()
  })
})

describe('extra binds', () => {
  test.each([
    [undefined, /does not exist/],
    ['/', /whole file system/],
    [home, /home directory/],
    ['/home', /home directory/],
    [state, /claudebox's state/],
    [`${state}/instances`, /claudebox's state/],
  ])('%s is refused', (real, reason) => {
    expect(bindRefusal(real, home, state)).toMatch(reason)
  })
  test('an existing directory of the user is fine', () => {
    expect(bindRefusal('/home/ada/datasets', home, state)).toBeUndefined()
  })
})

describe('persistence report', () => {
  test('created, changed and removed files are listed', () => {
    expect(diffSnapshots({ '/p/.envrc': '1:2:3', '/p/.mcp.json': '1:1:1' }, { '/p/.envrc': '1:2:4', '/p/.vscode/tasks.json': '9:9:9' })).toEqual([
      { path: '/p/.envrc', kind: 'changed' },
      { path: '/p/.mcp.json', kind: 'removed' },
      { path: '/p/.vscode/tasks.json', kind: 'created' },
    ])
  })
})

describe('user namespace diagnosis', () => {
  const base = { sysctl: {}, bwrapSetuid: false, container: false, insideClaudebox: false, uid: 1000 }
  test.each([
    [{ ...base, sysctl: { 'user/max_user_namespaces': '0' } }, /user.max_user_namespaces = 0/, /sysctl -w user.max_user_namespaces/],
    [{ ...base, sysctl: { 'kernel/unprivileged_userns_clone': '0' } }, /kernel.unprivileged_userns_clone = 0/, /sysctl -w kernel.unprivileged_userns_clone=1/],
    [{ ...base, sysctl: { 'kernel/apparmor_restrict_unprivileged_userns': '1' } }, /AppArmor/, /AppArmor profile/],
    [{ ...base, bwrapSetuid: true }, /setuid/, /chmod u-s/],
    [{ ...base, container: true }, /container/, /on the host/],
    [base, /bwrap failed: boom/, /--check/],
    // Nested in claudebox: its --disable-userns, not "a container" (a sandbox looks like one).
    [{ ...base, container: true, insideClaudebox: true }, /already inside a claudebox sandbox/, /outside the sandbox/],
  ])('%#', (facts, cause, fix) => {
    const d = diagnoseUserns(facts, 'boom')
    expect(d.cause).toMatch(cause)
    expect(d.fix).toMatch(fix)
  })
  test("bwrap's ENOSPC is the namespace limit, not a container", () => {
    const d = diagnoseUserns({ ...base, container: true }, 'No space left on device')
    expect(d.cause).toMatch(/limit on user namespaces is reached \(bwrap: No space left on device\)/)
  })
})
