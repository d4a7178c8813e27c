// sandbox/userns.ts: why bwrap cannot create a user namespace here, and the fix, from the host's facts.
import { describe, expect, test } from 'vitest'
import { diagnoseUserns } from '../../src/sandbox/userns.js'

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
