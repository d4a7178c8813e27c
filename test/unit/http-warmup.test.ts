// The in-memory rehearsal of an API call (network/http-warmup.ts): it completes, fast, and leaves
// nothing behind that would keep the launcher alive or listen anywhere.
import { expect, test } from 'vitest'
import { rehearseApiCall } from '../../src/network/http-warmup.js'

test('the rehearsal gets its answer whole and leaves no handle, timer or listening socket', async () => {
  const before = process.getActiveResourcesInfo().sort()
  expect(await rehearseApiCall()).toBe(true)
  await new Promise(resolve => setImmediate(resolve))
  expect(process.getActiveResourcesInfo().sort()).toEqual(before)
})
