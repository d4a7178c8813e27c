// The host end of the API path with real loopback servers: the placeholder is swapped for the real
// credential only on API paths, anything else is refused before it reaches the API, and an OAuth
// login is refreshed once on the host, for every session at once.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterEach, describe, expect, test } from 'vitest'
import type { Credential } from '../../src/network/api-gateway.js'
import { startApiSession, startGateway, type Gateway } from '../../src/network/api-session.js'
import { currentLogin, placeholderFor, readLogin } from '../../src/network/credentials.js'
import { companyProxy, listenOnLoopback } from '../helpers/servers.js'
import { tempDir } from '../helpers/cli.js'
import { useMockApi, type MockApi } from '../helpers/messages-api.js'

const mockApi = useMockApi()
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

function api(unauthorized?: (token: string | undefined) => boolean): Promise<MockApi> {
  return mockApi.start(undefined, unauthorized && (r => unauthorized(String(r.headers['authorization'] ?? r.headers['x-api-key']))))
}

async function gateway(upstream: string, placeholder: string, credential: Credential): Promise<Gateway> {
  const g = await startGateway({ upstream: new URL(upstream), placeholder, credential, extraHeaders: [['X-Corp', 'corp-secret']], listen: { host: '127.0.0.1', port: 0 } })
  closers.push(() => g.close())
  return g
}

const fixed = (header: [string, string]): Credential => ({ header: () => Promise.resolve(header), refreshable: false })

const REQUEST_BODY = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }

function call(port: number | string, pathname: string, headers: Record<string, string>, method = 'POST', body = JSON.stringify(REQUEST_BODY)): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method, headers: { 'content-type': 'application/json', ...headers } }, res => {
      let body = ''
      res.on('data', (c: Buffer) => (body += c.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end(method === 'POST' ? body : undefined)
  })
}

describe('the API gateway', () => {
  test("a credential the host cannot get: 403 to the sandbox without the reason (it may quote the helper's command), the reason kept for the host", async () => {
    const upstream = await api()
    const placeholder = placeholderFor('api-key')
    const failing: Credential = { refreshable: true, header: () => Promise.reject(new Error('apiKeyHelper failed on the host (Command failed: /bin/sh -c echo $(vault read TOKEN=s3cr3t-in-command))')) }
    const g = await gateway(upstream.url, placeholder, failing)
    const r = await call(g.address, '/v1/messages', { 'x-api-key': placeholder })
    expect(r.status).toBe(403)
    expect(r.body).not.toContain('s3cr3t')
    expect(r.body).toContain('the credential could not be had on the host')
    expect(g.usage.problems.join('\n')).toContain('s3cr3t-in-command')
  })

  test('swaps the placeholder for the real key on /v1/messages; streams the answer; counts tokens; adds the host-only headers', async () => {
    const upstream = await api()
    const placeholder = placeholderFor('api-key')
    const g = await gateway(upstream.url, placeholder, fixed(['x-api-key', 'sk-ant-real']))
    const r = await call(g.address, '/v1/messages?beta=true', { 'x-api-key': placeholder })
    expect(r.status).toBe(200)
    expect(r.body).toContain('pong')
    const seen = upstream.messages()[0]?.headers
    expect(seen?.['x-api-key']).toBe('sk-ant-real')
    expect(seen?.['x-corp']).toBe('corp-secret')
    expect(upstream.messages()[0]?.body).toEqual(REQUEST_BODY)
    expect(JSON.stringify(upstream.requests)).not.toContain(placeholder)
    expect(g.usage.requests).toBe(1)
    expect(g.usage.outputTokens).toBeGreaterThan(0)
  })

  test('a request without this session\'s placeholder, or to another path, is refused and never reaches the API', async () => {
    const upstream = await api()
    const placeholder = placeholderFor('oauth-store')
    const g = await gateway(upstream.url, placeholder, fixed(['authorization', 'Bearer sk-ant-oat01-real']))
    expect((await call(g.address, '/v1/messages', { authorization: 'Bearer sk-ant-oat01-someone-else' })).status).toBe(401)
    expect((await call(g.address, '/v1/messages', {})).status).toBe(401)
    expect((await call(g.address, '/api/oauth/claude_cli/create_api_key', { authorization: `Bearer ${placeholder}` })).status).toBe(403)
    expect((await call(g.address, '/v1/files', { authorization: `Bearer ${placeholder}` }, 'GET')).status).toBe(403)
    expect((await call(g.address, '/v1/messages/../../etc', { authorization: `Bearer ${placeholder}` })).status).not.toBe(200)
    expect(upstream.requests).toHaveLength(0)
    expect(g.usage.refused).toBe(5)
  })

  test("Claude's preconnect (HEAD / without a credential) goes upstream without one, and the API calls then take its connection; other calls without the placeholder stay refused", async () => {
    const seen: { method: string; path: string; key: string | undefined; connection: number }[] = []
    let connections = 0
    const upstream = http.createServer((req, res) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', key: (req.headers['x-api-key'] ?? req.headers['authorization']) as string | undefined, connection: connections })
      req.resume()
      // The length, as HTTP servers give it for a HEAD too (Node's client keeps a connection only then).
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end(req.method === 'HEAD' ? undefined : '{}')
    })
    upstream.on('connection', () => connections++)
    const port = await listenOnLoopback(upstream)
    const placeholder = placeholderFor('api-key')
    const g = await gateway(`http://127.0.0.1:${port}`, placeholder, fixed(['x-api-key', 'sk-ant-real']))
    expect((await call(g.address, '/', {}, 'HEAD')).status).toBe(200)
    expect((await call(g.address, '/v1/messages', { 'x-api-key': placeholder })).status).toBe(200)
    expect((await call(g.address, '/v1/messages', { 'x-api-key': placeholder })).status).toBe(200)
    expect((await call(g.address, '/v1/models', {}, 'GET')).status).toBe(401)
    expect(seen).toEqual([
      { method: 'HEAD', path: '/', key: undefined, connection: 1 },
      { method: 'POST', path: '/v1/messages', key: 'sk-ant-real', connection: 1 },
      // and the next call too: a call's end does not close its connection upstream
      { method: 'POST', path: '/v1/messages', key: 'sk-ant-real', connection: 1 },
    ])
    expect(g.usage.requests).toBe(2)
  })
})

describe('the API gateway behind a company proxy', () => {
  test('reaches the API through the host\'s proxy (CONNECT), with the real key, in one tunnel that Claude\'s preconnect opens and its calls take; NO_PROXY goes direct', async () => {
    const keys: (string | undefined)[] = []
    const upstream = http.createServer((req, res) => {
      keys.push(req.headers['x-api-key'] as string | undefined)
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end(req.method === 'HEAD' ? undefined : '{}')
    })
    let connections = 0
    upstream.on('connection', () => connections++)
    const upstreamPort = await listenOnLoopback(upstream)
    closers.push(() => new Promise(resolve => upstream.close(() => resolve()).closeAllConnections()))
    const { url: proxyUrl, asked } = await companyProxy()
    const placeholder = placeholderFor('api-key')
    for (const noProxy of [[], ['127.0.0.1']]) {
      const g = await startGateway({ upstream: new URL(`http://127.0.0.1:${upstreamPort}`), placeholder, credential: fixed(['x-api-key', 'sk-ant-real']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 }, companyProxy: { http: proxyUrl, https: proxyUrl, noProxy } })
      closers.push(() => g.close())
      expect((await call(g.address, '/', {}, 'HEAD')).status).toBe(200)
      for (let i = 0; i < 3; i++) expect((await call(g.address, '/v1/messages', { 'x-api-key': placeholder })).status).toBe(200)
    }
    // Before, each call had a tunnel of its own: a connection to the proxy, a CONNECT and a TLS handshake.
    expect(asked).toEqual([`127.0.0.1:${upstreamPort} auth=-`])
    expect(connections).toBe(2) // the tunnel, and the direct connection with NO_PROXY
    expect(keys).toEqual([undefined, 'sk-ant-real', 'sk-ant-real', 'sk-ant-real', undefined, 'sk-ant-real', 'sk-ant-real', 'sk-ant-real'])
  })
  test('a tunnel the API has closed is not taken again: the next call opens another', async () => {
    const upstream = http.createServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-length': '2' }).end('{}')
    })
    upstream.keepAliveTimeout = 100
    const upstreamPort = await listenOnLoopback(upstream)
    closers.push(() => new Promise(resolve => upstream.close(() => resolve()).closeAllConnections()))
    const { url: proxyUrl, asked } = await companyProxy()
    const g = await startGateway({ upstream: new URL(`http://127.0.0.1:${upstreamPort}`), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 }, companyProxy: { http: proxyUrl, noProxy: [] } })
    closers.push(() => g.close())
    expect((await call(g.address, '/v1/messages', { 'x-api-key': 'p' })).status).toBe(200)
    await new Promise(resolve => setTimeout(resolve, 400))
    expect((await call(g.address, '/v1/messages', { 'x-api-key': 'p' })).status).toBe(200)
    expect(asked).toHaveLength(2)
  })
})

describe('the API gateway under load from the sandbox', () => {
  test('a connection that never finishes its headers is closed after the headers timeout (the gateway is handed its connections)', async () => {
    const upstream = await api()
    const g = await startGateway({ upstream: new URL(upstream.url), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 }, headersTimeoutMs: 300 })
    closers.push(() => g.close())
    const socket = net.connect(g.address as number, '127.0.0.1')
    socket.write('POST /v1/messages HTTP/1.1\r\nHost: x\r\n')
    let reply = ''
    socket.on('data', (chunk: Buffer) => (reply += chunk.toString()))
    const started = Date.now()
    const outcome = await new Promise<string>(done => {
      socket.on('close', () => done('closed'))
      setTimeout(() => done('still open'), 5000)
    })
    socket.destroy()
    expect(outcome).toBe('closed')
    expect(Date.now() - started).toBeLessThan(2000)
    expect(reply).toMatch(/^HTTP\/1\.1 408 /)
  })

  test('a call still pending upstream ends when its client goes (also in the middle of its body), or when the gateway closes (it kept the launcher alive after the session)', async () => {
    const upstreamSockets: net.Socket[] = []
    const closedUpstream: boolean[] = []
    const blackhole = net.createServer(socket => {
      const i = upstreamSockets.push(socket) - 1
      closedUpstream[i] = false
      socket.on('close', () => (closedUpstream[i] = true))
      socket.resume() // reads the request, answers nothing
    })
    await new Promise<void>(done => blackhole.listen(0, '127.0.0.1', done))
    closers.push(() => new Promise(done => blackhole.close(() => done())))
    const url = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}`
    const g = await startGateway({ upstream: new URL(url), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 } })
    const ask = (): http.ClientRequest => {
      const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } })
      req.on('error', () => {})
      req.end('{}')
      return req
    }
    const waitFor = async (condition: () => boolean): Promise<boolean> => {
      for (const end = Date.now() + 3000; Date.now() < end && !condition(); ) await new Promise(r => setTimeout(r, 20))
      return condition()
    }
    const first = ask()
    expect(await waitFor(() => upstreamSockets.length === 1)).toBe(true)
    first.destroy()
    expect(await waitFor(() => closedUpstream[0] === true)).toBe(true)
    // Gone in the middle of its body, which was on its way upstream as it came.
    const partial = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p', 'content-length': '100' } })
    partial.on('error', () => {})
    partial.write('{"half":')
    expect(await waitFor(() => upstreamSockets.length === 2)).toBe(true)
    partial.destroy()
    expect(await waitFor(() => closedUpstream[1] === true)).toBe(true)
    ask()
    expect(await waitFor(() => upstreamSockets.length === 3)).toBe(true)
    await g.close()
    expect(await waitFor(() => closedUpstream[2] === true)).toBe(true)
  })

  test('an answer cut short (Claude quit while it streamed) still counts the tokens that came', async () => {
    const streaming = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1234,"output_tokens":1}}}\n\n') // then nothing more
    })
    await new Promise<void>(done => streaming.listen(0, '127.0.0.1', done))
    closers.push(() => new Promise(done => { streaming.closeAllConnections(); streaming.close(() => done()) }))
    const g = await startGateway({ upstream: new URL(`http://127.0.0.1:${(streaming.address() as AddressInfo).port}`), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 } })
    closers.push(() => g.close())
    const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } }, res => res.once('data', () => req.destroy()))
    req.on('error', () => {})
    req.end('{}')
    for (const end = Date.now() + 3000; Date.now() < end && g.usage.inputTokens === 0; ) await new Promise(r => setTimeout(r, 20))
    expect(g.usage).toMatchObject({ requests: 1, inputTokens: 1234, outputTokens: 1 })
  })

  test('an answer the API cuts short is cut short for the client too, which can then retry (red team, round 55: it waited for the rest until its own timeout)', async () => {
    const cutting = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}\n\n')
      setTimeout(() => res.socket?.destroy(), 100)
    })
    await new Promise<void>(done => cutting.listen(0, '127.0.0.1', done))
    closers.push(() => new Promise(done => { cutting.closeAllConnections(); cutting.close(() => done()) }))
    const g = await startGateway({ upstream: new URL(`http://127.0.0.1:${(cutting.address() as AddressInfo).port}`), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 } })
    closers.push(() => g.close())
    const outcome = await new Promise<string>(resolve => {
      const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } }, res => {
        res.on('data', () => {})
        res.on('end', () => resolve('ended as if whole'))
        res.on('error', () => resolve('cut short'))
        res.on('aborted', () => resolve('cut short'))
      })
      req.on('error', () => resolve('cut short'))
      req.end('{}')
      setTimeout(() => resolve('still waiting'), 5000)
    })
    expect(outcome).toBe('cut short')
    expect(g.usage.inputTokens).toBe(7)
  })

  test('bodies still coming in chunks count against the limit for all of them as they come, and are given back when their call ends (red team, round 56: 24 of them held 1.5 GB)', async () => {
    const upstream = await api()
    const g = await startGateway({ upstream: new URL(upstream.url), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 }, bodyLimits: { one: 1 << 20, all: 2 << 20 } })
    closers.push(() => g.close())
    const answered: (number | 'no answer')[] = []
    const holding: http.ClientRequest[] = []
    for (let i = 0; i < 3; i++) {
      // Chunked (no Content-Length), 900 KiB each, never ended.
      const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } }, res => {
        res.resume()
        answered.push(res.statusCode ?? 0)
      })
      req.on('error', () => {})
      req.write(Buffer.alloc(900 << 10, 0x61))
      holding.push(req)
      for (const end = Date.now() + 1000; Date.now() < end && g.usage.refused === 0; ) await new Promise(r => setTimeout(r, 20))
    }
    expect(answered).toEqual([413])
    for (const req of holding) req.destroy()
    await new Promise(r => setTimeout(r, 200))
    // Given back: a body of the same size goes through now.
    const r = await call(g.address, '/v1/messages', { 'x-api-key': 'p' }, 'POST', JSON.stringify({ ...REQUEST_BODY, pad: 'x'.repeat(900 << 10) }))
    expect(r.status).toBe(200)
    expect(upstream.requests).toHaveLength(1)
  })

  test('an answer that comes before the whole body (the API answers early): the rest is taken and dropped, the client is not left stalled (red team, round 56)', async () => {
    const g = await gatewayTo(
      await rawUpstream(socket =>
        socket.once('data', () => {
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
          socket.pause() // reads nothing more of the body
        }),
      ),
    )
    const size = 20 << 20
    const outcome = await upload(g.address as number, size)
    expect(outcome).toBe('sent all, 200')
  })

  test("a call queued behind another on a keep-alive connection that closes gives back what its body held (red team, round 57: its answer never ended, and the budget leaked for good)", async () => {
    const slow = http.createServer((req, res) => {
      req.resume()
      req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), req.method === 'GET' ? 1500 : 0))
    })
    await new Promise<void>(done => slow.listen(0, '127.0.0.1', done))
    closers.push(() => new Promise(done => { slow.closeAllConnections(); slow.close(() => done()) }))
    const g = await startGateway({ upstream: new URL(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 }, bodyLimits: { one: 1 << 20, all: (3 << 20) / 2 } })
    closers.push(() => g.close())
    // A GET the API answers slowly, and behind it a chunked POST of 1 MiB, read whole (counted) while its answer waits in line.
    const chunk = 'a'.repeat(1 << 20)
    const socket = net.connect(g.address as number, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(`GET /v1/models HTTP/1.1\r\nhost: x\r\nx-api-key: p\r\n\r\nPOST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: p\r\ntransfer-encoding: chunked\r\n\r\n${(1 << 20).toString(16)}\r\n${chunk}\r\n0\r\n\r\n`)
    await new Promise(r => setTimeout(r, 500))
    socket.destroy()
    await new Promise(r => setTimeout(r, 300))
    // Another chunked body (counted) of 1 MiB: within the limits only if the first was given back.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.write(chunk)
      req.end()
    })
    expect(status).toBe(200)
  })

  test('an upstream connection that fails in the middle of a body: the client gets its 502 and is not left stalled (red team, round 57)', async () => {
    const g = await gatewayTo(
      await rawUpstream(socket => {
        let got = 0
        socket.on('data', chunk => {
          got += chunk.length
          if (got > 1 << 20) socket.destroy()
        })
      }),
    )
    const size = 32 << 20
    const outcome = await upload(g.address as number, size)
    expect(outcome).toBe('sent all, 502')
  })

  test("calls pipelined on one connection: eight are answered, without a warning of Node's on the user's terminal; a ninth closes the connection (red team, round 59)", async () => {
    let seen = 0
    const g = await gatewayTo(
      await rawUpstream(socket =>
        socket.on('data', () => {
          seen++
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}')
        }),
      ),
    )
    const warnings: string[] = []
    const note = (warning: Error): void => void warnings.push(warning.name)
    process.on('warning', note)
    const pipeline = async (n: number): Promise<{ answers: number; closed: boolean }> => {
      const socket = net.connect(g.address as number, '127.0.0.1')
      socket.on('error', () => {})
      let answers = ''
      let closed = false
      socket.on('data', (chunk: Buffer) => (answers += chunk.toString()))
      socket.on('close', () => (closed = true))
      socket.write('GET /v1/models HTTP/1.1\r\nhost: x\r\nx-api-key: p\r\n\r\n'.repeat(n))
      const count = (): number => (answers.match(/HTTP\/1\.1 200/g) ?? []).length
      for (const end = Date.now() + 3000; Date.now() < end && count() < n && !closed; ) await new Promise(r => setTimeout(r, 20))
      socket.destroy()
      return { answers: count(), closed }
    }
    expect(await pipeline(8)).toEqual({ answers: 8, closed: false })
    seen = 0
    expect((await pipeline(30)).closed).toBe(true)
    expect(seen).toBeLessThanOrEqual(8)
    await new Promise(r => setTimeout(r, 100))
    process.off('warning', note)
    expect(warnings).toEqual([])
  })

  test('at most 64 API calls at once: beyond, 429 without reaching the API, and a call that ends frees its place (red team, round 58: 20,000 pipelined calls held all the descriptors)', async () => {
    const upstreamSockets: net.Socket[] = []
    const g = await gatewayTo(await rawUpstream(socket => void upstreamSockets.push(socket))) // answers nothing
    const ask = (): Promise<number> =>
      new Promise(resolve => {
        const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' }, agent: false }, res => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', () => resolve(0))
        req.end('{}')
        pending.push(req)
      })
    const pending: http.ClientRequest[] = []
    for (let i = 0; i < 64; i++) void ask()
    for (const end = Date.now() + 5000; Date.now() < end && upstreamSockets.length < 64; ) await new Promise(r => setTimeout(r, 20))
    expect(upstreamSockets).toHaveLength(64)
    expect(await ask()).toBe(429)
    expect(upstreamSockets).toHaveLength(64)
    pending[0]?.destroy()
    for (const end = Date.now() + 3000; Date.now() < end && upstreamSockets.length < 65; ) {
      void ask()
      await new Promise(r => setTimeout(r, 50))
    }
    expect(upstreamSockets).toHaveLength(65)
    for (const req of pending) req.destroy()
  })

  test('an answer before the whole of a body read whole first (chunked): the request upstream, still being sent, is ended (red team, round 58: its copy stayed held)', async () => {
    let closed = false
    let got = 0
    const g = await gatewayTo(
      await rawUpstream(socket => {
        socket.once('data', () => {
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}')
          // Reads nothing more for a while, keeping the connection; then reads on, to see the close.
          socket.pause()
          setTimeout(() => socket.resume(), 500)
        })
        socket.on('data', (chunk: Buffer) => (got += chunk.length))
        socket.on('close', () => (closed = true))
      }),
    )
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p' } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.write(Buffer.alloc(20 << 20, 0x61))
      req.end()
    })
    expect(status).toBe(200)
    for (const end = Date.now() + 3000; Date.now() < end && !closed; ) await new Promise(r => setTimeout(r, 20))
    expect(closed).toBe(true)
    expect(got).toBeLessThan(20 << 20)
  })

  test('a body over 64 MiB is refused (413) and never reaches the API', async () => {
    const upstream = await api()
    const placeholder = placeholderFor('api-key')
    const g = await gateway(upstream.url, placeholder, fixed(['x-api-key', 'sk-ant-real']))
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: g.address, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': placeholder } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      const chunk = Buffer.alloc(1 << 20, 0x61)
      let sent = 0
      const write = (): void => {
        while (sent < 65 && req.write(chunk)) sent++
        if (sent < 65) req.once('drain', write)
        else req.end()
      }
      write()
    }).catch(() => 413)
    expect(status).toBe(413)
    expect(upstream.requests).toHaveLength(0)
  })

  test('a declared length over 64 MiB is refused (413) at once; nothing reaches the API', async () => {
    const upstream = await api()
    const placeholder = placeholderFor('api-key')
    const g = await gateway(upstream.url, placeholder, fixed(['x-api-key', 'sk-ant-real']))
    const status = await new Promise<number | 'no answer'>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: g.address, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': placeholder, 'content-length': String(65 << 20) } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.write('{}')
      setTimeout(() => resolve('no answer'), 5000)
    })
    expect(status).toBe(413)
    expect(upstream.requests).toHaveLength(0)
  })

  test('a body of a declared length goes upstream as it comes: the API has the request before the client has sent all of it', async () => {
    let received: ((body: string) => void) | undefined
    const started = new Promise<void>(resolve => {
      const server = http.createServer((req, res) => {
        resolve()
        let body = ''
        req.on('data', (c: Buffer) => (body += c.toString()))
        req.on('end', () => {
          received?.(body)
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"usage":{"input_tokens":1,"output_tokens":1}}')
        })
      })
      server.listen(0, '127.0.0.1', () => {
        closers.push(() => new Promise(done => server.close(() => done())))
        startGateway({ upstream: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 } }).then(g => {
          closers.push(() => g.close())
          const req = http.request({ host: '127.0.0.1', port: g.address as number, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p', 'content-length': '10' } }, res => res.resume())
          req.on('error', () => {})
          req.write('{"a":')
          // The rest only once the API has the request: a gateway that read bodies whole first never forwards it.
          void started.then(() => req.end('"bc"}'))
        }, () => {})
      })
    })
    const body = new Promise<string>(resolve => (received = resolve))
    const bounded = <T>(p: Promise<T>): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>(r => setTimeout(() => r('timeout'), 5000))])
    expect(await bounded(started)).toBeUndefined()
    expect(await bounded(body)).toBe('{"a":"bc"}')
  })
})

/** An API stand-in on raw TCP: `serve` handles each connection; all of them are closed at the test's end. */
async function rawUpstream(serve: (socket: net.Socket) => void): Promise<string> {
  const sockets: net.Socket[] = []
  const server = net.createServer(socket => {
    sockets.push(socket)
    socket.on('error', () => {})
    serve(socket)
  })
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  closers.push(() => new Promise(done => { for (const socket of sockets) socket.destroy(); server.close(() => done()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A gateway to `upstream` whose placeholder is `p`, with a fixed key. */
async function gatewayTo(upstream: string): Promise<Gateway> {
  const g = await startGateway({ upstream: new URL(upstream), placeholder: 'p', credential: fixed(['x-api-key', 'k']), extraHeaders: [], listen: { host: '127.0.0.1', port: 0 } })
  closers.push(() => g.close())
  return g
}

/** Sends a body of `size` bytes of a declared length: 'sent all, <status>', 'error <code>', or 'stalled' after 4 s. */
function upload(port: number, size: number): Promise<string> {
  return new Promise<string>(resolve => {
    let status = 0
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/messages', method: 'POST', headers: { 'x-api-key': 'p', 'content-length': String(size) } }, res => {
      status = res.statusCode ?? 0
      res.resume()
    })
    req.on('error', error => resolve(`error ${(error as NodeJS.ErrnoException).code ?? ''}`))
    req.end(Buffer.alloc(size, 0x61), () => setTimeout(() => resolve(`sent all, ${status}`), 100))
    setTimeout(() => resolve('stalled'), 4000)
  })
}

/** A gateway whose OAuth login the API no longer takes (401) until it is refreshed at a local token endpoint. */
async function expiredLogin(upstreamUrl?: string): Promise<{ endpoint: Awaited<ReturnType<typeof tokenEndpoint>>; upstream: MockApi; placeholder: string; g: Gateway }> {
  const endpoint = await tokenEndpoint()
  const file = store('sk-ant-oat01-expired', Date.now() + 3_600_000)
  const upstream = await api(token => token === 'Bearer sk-ant-oat01-expired')
  const placeholder = placeholderFor('oauth-store')
  const credential: Credential = {
    refreshable: true,
    header: async rejected => {
      const { login, problem } = await currentLogin(file, rejected, endpoint.url)
      if (login === undefined) throw new Error(problem)
      return ['authorization', `Bearer ${login.accessToken}`]
    },
  }
  return { endpoint, upstream, placeholder, g: await gateway(upstreamUrl ?? upstream.url, placeholder, credential) }
}

/**
 * An API that answers 401 to the expired token at once, before the body, then does `after` to that
 * request; with the refreshed token it reads the whole body (its size goes in `bodies`) and answers.
 */
async function earlyUnauthorized(after: (req: http.IncomingMessage) => void): Promise<{ bodies: number[]; placeholder: string; g: Gateway }> {
  const bodies: number[] = []
  const early = http.createServer((req, res) => {
    if (req.headers['authorization'] === 'Bearer sk-ant-oat01-expired') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{}')
      after(req)
      return
    }
    let size = 0
    req.on('data', (c: Buffer) => (size += c.length))
    req.on('end', () => {
      bodies.push(size)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"usage":{"input_tokens":1,"output_tokens":1}}')
    })
  })
  await new Promise<void>(done => early.listen(0, '127.0.0.1', done))
  closers.push(() => new Promise(done => { early.closeAllConnections(); early.close(() => done()) }))
  return { bodies, ...(await expiredLogin(`http://127.0.0.1:${(early.address() as AddressInfo).port}`)) }
}

/** A local stand-in for the OAuth token endpoint: each refresh token works once. */
async function tokenEndpoint(delayMs = 100): Promise<{ url: string; calls: () => number }> {
  let calls = 0
  let n = 0
  const used = new Set<string>()
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      calls++
      const { refresh_token: token, grant_type: grant } = JSON.parse(body) as { refresh_token: string; grant_type: string }
      if (grant !== 'refresh_token' || used.has(token)) {
        res.writeHead(400).end('{"error":"invalid_grant"}')
        return
      }
      used.add(token)
      n++
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `sk-ant-oat01-new-${n}`, refresh_token: `sk-ant-ort01-new-${n}`, expires_in: 28800 })), delayMs)
    })
  })
  return { url: `http://127.0.0.1:${await listenOnLoopback(server)}/v1/oauth/token`, calls: () => calls }
}

function store(accessToken: string, expiresAt: number): string {
  const dir = tempDir()
  const file = path.join(dir, '.credentials.json')
  fs.writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken, refreshToken: 'sk-ant-ort01-old', expiresAt, scopes: ['user:inference'], subscriptionType: 'max' } }), { mode: 0o600 })
  return file
}

describe('refreshing an OAuth login on the host', () => {
  test('round 89: 401s the sandbox brings about at will (a call without the OAuth beta header) refresh the shared login once, not at each call', async () => {
    const endpoint = await tokenEndpoint(10)
    const file = store('sk-ant-oat01-fine', Date.now() + 3_600_000)
    const upstream = await api(() => true)
    const session = await oauthSession(upstream.url, endpoint.url, file)
    for (let i = 0; i < 5; i++) expect((await call(session.port, '/v1/messages', { authorization: `Bearer ${session.placeholder}` })).status).toBe(401)
    await session.finish()
    expect(endpoint.calls()).toBe(1)
    expect(readLogin(file)?.refreshToken).toBe('sk-ant-ort01-new-1')
  })

  test('a refresh that throws (the store unreadable when the new login is written) is a refused call, not the end of the launcher', async () => {
    const file = store('sk-ant-oat01-refused', Date.now() + 3_600_000)
    const endpoint = http.createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        fs.writeFileSync(file, '{broken')
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'sk-ant-oat01-new', refresh_token: 'sk-ant-ort01-new', expires_in: 28800 }))
      })
    })
    const url = `http://127.0.0.1:${await listenOnLoopback(endpoint)}/v1/oauth/token`
    const upstream = await api(token => token === 'Bearer sk-ant-oat01-refused')
    const session = await oauthSession(upstream.url, url, file)
    const r = await call(session.port, '/v1/messages', { authorization: `Bearer ${session.placeholder}` })
    expect(r.status).toBe(403)
    await session.finish()
    await new Promise(resolve => setTimeout(resolve, 50)) // an unhandled rejection would be reported by now
  })

  test("round 89: a refresh under way when the session ends is waited for: the endpoint has used up the old refresh token, and the new one is stored (the login was lost for every project)", async () => {
    const endpoint = await tokenEndpoint(400)
    const file = store('sk-ant-oat01-refused', Date.now() + 3_600_000)
    const upstream = await api(token => token === 'Bearer sk-ant-oat01-refused')
    const session = await oauthSession(upstream.url, endpoint.url, file)
    // The sandbox makes the call that brings the refresh about, and goes 50 ms later.
    const req = http.request({ host: '127.0.0.1', port: session.port, path: '/v1/messages', method: 'POST', headers: { authorization: `Bearer ${session.placeholder}`, 'content-type': 'application/json' } })
    req.on('error', () => {})
    req.end(JSON.stringify(REQUEST_BODY))
    await new Promise(resolve => setTimeout(resolve, 150))
    req.destroy()
    await session.finish()
    expect(endpoint.calls()).toBe(1)
    expect(readLogin(file)).toMatchObject({ accessToken: 'sk-ant-oat01-new-1', refreshToken: 'sk-ant-ort01-new-1' })
  })

  test('an expiring token is refreshed once for two sessions at once; the new tokens are stored once', async () => {
    const endpoint = await tokenEndpoint()
    const file = store('sk-ant-oat01-old', Date.now() + 60_000)
    const [a, b] = await Promise.all([currentLogin(file, undefined, endpoint.url), currentLogin(file, undefined, endpoint.url)])
    expect(a.login?.accessToken).toBe('sk-ant-oat01-new-1')
    expect(b.login?.accessToken).toBe('sk-ant-oat01-new-1')
    expect(endpoint.calls()).toBe(1)
    expect(readLogin(file)).toMatchObject({ accessToken: 'sk-ant-oat01-new-1', refreshToken: 'sk-ant-ort01-new-1', subscriptionType: 'max' })
    expect(fs.readdirSync(path.dirname(file))).toEqual(['.credentials.json'])
  })

  test('a 401 from the API refreshes and retries the request once; the API sees only real tokens', async () => {
    const { endpoint, upstream, placeholder, g } = await expiredLogin()
    const r = await call(g.address, '/v1/messages', { authorization: `Bearer ${placeholder}` })
    expect(r.status).toBe(200)
    expect(upstream.requests.map(q => q.headers['authorization'])).toEqual(['Bearer sk-ant-oat01-expired', 'Bearer sk-ant-oat01-new-1'])
    expect(upstream.requests.map(q => q.body)).toEqual([REQUEST_BODY, REQUEST_BODY])
    expect(endpoint.calls()).toBe(1)
  })

  test('a 401 to a long body sent as it came: the retry carries the same bytes', async () => {
    const { upstream, placeholder, g } = await expiredLogin()
    const long = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(3 << 20) }], stream: true }
    const r = await call(g.address, '/v1/messages', { authorization: `Bearer ${placeholder}` }, 'POST', JSON.stringify(long))
    expect(r.status).toBe(200)
    expect(upstream.requests.map(q => JSON.stringify(q.body) === JSON.stringify(long))).toEqual([true, true])
  })

  test('a 401 the API gives early, closing before the body is all sent: the retry still gets the whole body', async () => {
    const { bodies, placeholder, g } = await earlyUnauthorized(req => setTimeout(() => req.socket.destroy(), 50))
    const part = Buffer.alloc(1 << 20, 0x61)
    const status = await new Promise<number | 'no answer'>(resolve => {
      const req = http.request({ host: '127.0.0.1', port: g.address, path: '/v1/messages', method: 'POST', headers: { authorization: `Bearer ${placeholder}`, 'content-length': String(3 * part.length) } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', () => resolve('no answer'))
      req.write(part)
      // The rest once the API has answered 401 and closed that connection.
      setTimeout(() => req.end(Buffer.concat([part, part])), 400)
      setTimeout(() => resolve('no answer'), 8000)
    })
    expect(status).toBe(200)
    expect(bodies).toEqual([3 * part.length])
  })

  test('a 401 the API gives early, then reading no more of a long body: the retry goes at once with the whole body (red team, round 56: it stalled until a timeout)', async () => {
    const { bodies, placeholder, g } = await earlyUnauthorized(req => req.socket.pause()) // reads nothing more of that body
    const size = 20 << 20
    const status = await new Promise<number | 'no answer'>(resolve => {
      const req = http.request({ host: '127.0.0.1', port: g.address, path: '/v1/messages', method: 'POST', headers: { authorization: `Bearer ${placeholder}`, 'content-length': String(size) } }, res => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', () => resolve('no answer'))
      req.end(Buffer.alloc(size, 0x61))
      setTimeout(() => resolve('no answer'), 4000)
    })
    expect(status).toBe(200)
    expect(bodies).toEqual([size])
  })

  test('a 401 for a token another session has already replaced: the new one is used, no second refresh', async () => {
    const endpoint = await tokenEndpoint()
    const file = store('sk-ant-oat01-new-0', Date.now() + 3_600_000)
    const result = await currentLogin(file, 'sk-ant-oat01-expired', endpoint.url)
    expect(result.login?.accessToken).toBe('sk-ant-oat01-new-0')
    expect(endpoint.calls()).toBe(0)
  })

  test('a sign-in stored by claudebox --login while another session refreshes the old login is kept (five rounds)', async () => {
    const home = tempDir()
    const bundle = path.join(home, 'api-session.cjs')
    await build({ entryPoints: [path.resolve('src/network/api-session.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'error' })
    const file = path.join(home, 'shared/credentials/.credentials.json')
    const instance = path.join(home, 'instances/0123456789abcdef')
    const sessionStore = path.join(home, 'session-stores/0123456789abcdef-session-1')
    // The --login launcher after its session, writing while the other launcher waits for the endpoint.
    const login = `const { storeNewLogin } = require(process.argv[1]); const start = Number(process.argv[3])
while (Date.now() < start);
storeNewLogin(process.argv[2], 'session-1', process.argv[4])`
    const endpoint = await tokenEndpoint(400)
    const lost: number[] = []
    for (let round = 0; round < 5; round++) {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-old', refreshToken: `sk-ant-ort01-old-${round}`, expiresAt: Date.now() - 1000 } }))
      fs.mkdirSync(sessionStore, { recursive: true })
      fs.writeFileSync(path.join(sessionStore, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: `sk-ant-oat01-signed-in-${round}`, refreshToken: 'sk-ant-ort01-signed-in' } }))
      const start = Date.now() + 500
      const other = promisify(execFile)(process.execPath, ['-e', login, bundle, instance, String(start + 100), home])
      while (Date.now() < start) await new Promise(resolve => setTimeout(resolve, 5))
      await currentLogin(file, undefined, endpoint.url)
      await other
      if (readLogin(file)?.accessToken !== `sk-ant-oat01-signed-in-${round}`) lost.push(round)
    }
    expect(lost).toEqual([])
  }, 60_000)

  test('behind a company proxy the refresh goes through it (CONNECT), as the API calls do: directly it failed where only the proxy reaches out', async () => {
    const endpoint = await tokenEndpoint(0)
    const { url: proxyUrl, asked } = await companyProxy()
    const file = store('sk-ant-oat01-old', Date.now() - 1000)
    const result = await currentLogin(file, undefined, endpoint.url, { https: proxyUrl, http: proxyUrl, noProxy: [] })
    expect(result.problem).toBeUndefined()
    expect(result.login?.accessToken).toBe('sk-ant-oat01-new-1')
    expect(asked).toEqual([`${new URL(endpoint.url).host} auth=-`])
    expect(readLogin(file)?.accessToken).toBe('sk-ant-oat01-new-1')
  })

  test('a refresh the endpoint refuses: one clear problem naming the fix, the stored login untouched', async () => {
    const endpoint = await tokenEndpoint()
    const file = store('sk-ant-oat01-old', Date.now() - 1000)
    const before = fs.readFileSync(file, 'utf8')
    await currentLogin(file, undefined, endpoint.url)
    fs.writeFileSync(file, before) // the old refresh token again: now refused (single use)
    const again = await currentLogin(file, undefined, endpoint.url)
    expect(again.login).toBeUndefined()
    expect(again.problem).toMatch(/could not be refreshed .* answered 400\); run claudebox --login/)
    expect(fs.readFileSync(file, 'utf8')).toBe(before)
  })
})

/** A session's gateway (startApiSession, as a launch makes it) for the OAuth login in `file`, refreshed at `tokenUrl`. */
async function oauthSession(upstream: string, tokenUrl: string, file: string): Promise<{ port: number; placeholder: string; finish: () => Promise<unknown> }> {
  const placeholder = placeholderFor('oauth-store')
  const api: { kind: 'oauth-store'; placeholder: string; port?: number } = { kind: 'oauth-store', placeholder }
  const session = await startApiSession({ api, signIn: { kind: 'oauth-store', header: 'authorization' }, storeFile: file }, { ANTHROPIC_BASE_URL: upstream, CLAUDEBOX_TEST_OAUTH_TOKEN_URL: tokenUrl })
  return { port: api.port as number, placeholder, finish: () => session.finish() }
}
