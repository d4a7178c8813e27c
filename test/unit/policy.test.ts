// sandbox/policy.ts: the project roots and extra binds claudebox refuses, and why.
import { describe, expect, test } from 'vitest'
import { bindRefusal, dangerousRootReason, launcherWithin } from '../../src/sandbox/policy.js'

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

describe("claudebox's own files", () => {
  const files = ['/home/ada/.local/bin/claudebox', '/home/ada/src/claudebox/bin/claudebox.js', '/home/ada/src/claudebox', '/usr/bin/node']
  test.each([
    [['/home/ada/src/claudebox'], '/home/ada/src/claudebox/bin/claudebox.js'],
    [['/home/ada/src'], '/home/ada/src/claudebox/bin/claudebox.js'],
    [['/home/ada/.local'], '/home/ada/.local/bin/claudebox'],
    [['/usr'], '/usr/bin/node'],
  ])('a session writing %j would reach %s', (writes, file) => {
    expect(launcherWithin(files, writes)?.file).toBe(file)
  })
  test.each([[['/home/ada/src/shop']], [['/home/ada/src/claudebox/test/fixtures/x']], [['/home/ada/src/claudebox-x']], [[]]])('nothing in %j', writes => {
    expect(launcherWithin(files, writes)).toBeUndefined()
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
    ['/run/user/1000', /a login's runtime directory/],
    ['/run', /\(or contains\) \/run\/user, where other programs and other claudebox sessions keep their sockets/],
    ['/run/user', /\(or contains\) \/run\/user/],
    ['/run/user/1000/claudebox-net-0badc0de-12-0123456789ab', /a claudebox session's sockets directory/],
    ['/tmp', /is \(or contains\) \/tmp/],
    ['/tmp/claudebox-net-0badc0de-12-0123456789ab/proxy.sock', /a claudebox session's sockets directory/],
  ])('%s is refused', (real, reason) => {
    expect(bindRefusal(real, home, state)).toMatch(reason)
  })
  test("the default claudebox home is refused too when CLAUDEBOX_HOME points elsewhere (its run/ holds other sessions' sockets)", () => {
    expect(bindRefusal(`${home}/.claudebox/run`, home, '/data/cb')).toMatch(/claudebox's state/)
  })
  test('the real paths the probe found behind $XDG_RUNTIME_DIR, /tmp and ~/.claudebox count as those', () => {
    const guarded = { state: ['/data/cb-real'], sockets: ['/mnt/wslg/runtime-dir', '/private/tmp'] }
    expect(bindRefusal('/mnt/wslg', home, state, guarded)).toMatch(/\(or contains\) \/mnt\/wslg\/runtime-dir/)
    expect(bindRefusal('/private/tmp', home, state, guarded)).toMatch(/\(or contains\) \/private\/tmp/)
    expect(bindRefusal('/data', home, state, guarded)).toMatch(/claudebox's state/)
  })
  test("anything inside a claudebox session's sockets directory, wherever it lies (another home's run/)", () => {
    expect(bindRefusal('/srv/cb/run/claudebox-net-0badc0de-12-0123456789ab/proxy.sock', home, state)).toMatch(/inside a claudebox session's sockets directory/)
    expect(bindRefusal('/srv/cb/run/claudebox-net-0badc0de-12-0123456789ab', home, state)).toMatch(/inside a claudebox session's sockets directory/)
  })
  test("the host's /proc and cgroup tree, or anything in or around them: another session's key is in /proc (red team), cgroup.procs would let the sandbox leave its limits", () => {
    for (const real of ['/proc', '/proc/1234', '/proc/sys/kernel', '/sys/fs/cgroup', '/sys/fs/cgroup/pids', '/sys', '/sys/fs']) {
      expect(bindRefusal(real, home, state), real).toMatch(/the host's \/(proc|sys\/fs\/cgroup)/)
    }
    expect(bindRefusal('/sys/class/net', home, state)).toBeUndefined()
    expect(bindRefusal('/procedures', home, state)).toBeUndefined()
  })
  test("a directory the probe found holding other sessions' sockets or state is refused, after the other reasons", () => {
    expect(bindRefusal('/srv/cb', home, state, undefined, true)).toMatch(/holds claudebox sessions' sockets or state/)
    expect(bindRefusal('/', home, state, undefined, true)).toMatch(/whole file system/)
  })
  test('a socket or directory of your own inside those places is fine', () => {
    for (const real of ['/run/user/1000/docker.sock', '/run/user/1000/gnupg', '/tmp/mine', '/var/tmp/claudebox-net-notes']) expect(bindRefusal(real, home, state), real).toBeUndefined()
  })
  test('an existing directory of the user is fine', () => {
    expect(bindRefusal('/home/ada/datasets', home, state)).toBeUndefined()
  })
  test("a claudebox state whose name starts with '..' is still inside what contains it", () => {
    expect(bindRefusal('/srv/data', home, '/srv/data/..cb')).toMatch(/claudebox's state/)
    expect(dangerousRootReason('/srv/data', home, '/srv/data/..cb')).toMatch(/claudebox/)
  })
})
