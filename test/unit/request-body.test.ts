// How a request's body is held on its way through the API gateway (network/request-body.ts), with
// a stand-in for the client's request: what is held is counted as it comes, and given back with
// the copy kept for a retry once the call ends.
import { PassThrough } from 'node:stream'
import type http from 'node:http'
import { describe, expect, test } from 'vitest'
import { requestBody, shareOf, type Held } from '../../src/network/request-body.js'

type Client = http.IncomingMessage & { write: (chunk: Buffer | string) => void; finish: () => void }

/** A client's request: its headers, then written chunks; `finish()` completes it. */
function request(headers: Record<string, string>): Client {
  const stream = new PassThrough()
  return Object.assign(stream, {
    headers,
    complete: false,
    finish: () => {
      Object.assign(stream, { complete: true })
      stream.end()
    },
  }) as unknown as Client
}

const held = (one: number, all: number): Held => ({ bytes: 0, limits: { one, all } })

describe('request bodies in the API gateway', () => {
  test('a body without a declared length is counted chunk by chunk against both limits, and given back once', async () => {
    const h = held(100, 150)
    const first = shareOf(h)
    const a = request({})
    const reading = requestBody(a, first, false)
    a.write(Buffer.alloc(60))
    a.finish()
    expect((await reading)?.first.length).toBe(60)
    expect(h.bytes).toBe(60)
    // A second body, still coming: over the limit for all of them at its second chunk.
    const second = shareOf(h)
    const b = request({})
    const refused = requestBody(b, second, false)
    b.write(Buffer.alloc(50))
    await new Promise(r => setImmediate(r))
    expect(h.bytes).toBe(110)
    b.write(Buffer.alloc(50))
    expect(await refused).toBeUndefined()
    expect(h.bytes).toBe(60)
    first.release()
    first.release()
    expect(h.bytes).toBe(0)
  })

  test('a declared length over the limit for one body is refused before anything is read', async () => {
    const h = held(100, 150)
    expect(await requestBody(request({ 'content-length': '101' }), shareOf(h), true)).toBeUndefined()
    expect(h.bytes).toBe(0)
  })

  test('a kept copy (a retry may come) is counted at once; dropped when the call ends, it keeps nothing more (red team, round 57)', async () => {
    const h = held(100, 150)
    const share = shareOf(h)
    const req = request({ 'content-length': '30' })
    const body = await requestBody(req, share, true)
    expect(h.bytes).toBe(30)
    req.resume()
    req.write(Buffer.alloc(10))
    share.release()
    expect(h.bytes).toBe(0)
    expect(req.listenerCount('data')).toBe(0)
    req.write(Buffer.alloc(20))
    req.finish()
    expect(await body?.again()).toBeUndefined()
  })

  test('a kept copy is the whole body for the retry, joined once', async () => {
    const h = held(100, 150)
    const req = request({ 'content-length': '6' })
    const body = await requestBody(req, shareOf(h), true)
    req.resume()
    req.write('abc')
    req.write('def')
    req.finish()
    expect((await body?.again())?.toString()).toBe('abcdef')
    expect(req.listenerCount('data')).toBe(0)
    expect(await body?.again()).toBeUndefined()
  })
})
