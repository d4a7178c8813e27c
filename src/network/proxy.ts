// The host side of --network=allow: an HTTP proxy on a unix socket that the sandbox reaches
// through its bridge (bridge.ts). It admits CONNECT tunnels and plain-HTTP requests to the
// destinations policy.ts allows, resolves names here on the host, checks every address
// and connects to the address it checked (no second lookup a DNS answer could change).
//
// The protocol is parsed by Node's own HTTP server (llhttp, the parser every Node server uses):
// it hands over CONNECT requests and absolute-URI requests as they are. Proxy libraries (proxy,
// http-proxy, proxy-chain) open the upstream connection themselves, by name, which is the one
// step this proxy must own.
import dns from 'node:dns'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { addressAllowed, decideDestination, normalizedAddresses, normalizeHost, unbracket, type EgressPolicy } from './policy.js'
import { sniFromClientHello } from './tls-sni.js'
import { connectThrough, proxyFor, type UpstreamProxy } from './upstream-proxy.js'
import { requestUnderWay, whenConnectionCloses } from './connection-calls.js'
import { httpProtocol, type Protocol } from './lazy-server.js'

/** Resolves a host name to its addresses (injected by tests). */
export type Resolver = (host: string) => Promise<string[]>

export interface DeniedConnection {
  time: Date
  host: string
  port: number
  reason: string
}

export interface ProxyOptions {
  socketPath: string
  policy: EgressPolicy
  onDenied: (denied: DeniedConnection) => void
  resolve?: Resolver
  connectTimeoutMs?: number
  /** The host's own interface addresses (injected by tests; else read at start). */
  hostAddresses?: readonly string[]
  /** How long a connection may stay open without sending a request (default IDLE_MS). */
  idleTimeoutMs?: number
  /** How many connections may wait for their first request at once (default MAX_WAITING). */
  maxWaiting?: number
  /** How many connections to hosts may be open at once, with those being made (default MAX_UPSTREAM). */
  maxUpstream?: number
  /** The host's own proxy (a company's), reached after the rules are applied here. */
  upstream?: UpstreamProxy
  /** How long a request may take to send its headers (Node's default, 60 s; tests shorten it). */
  headersTimeoutMs?: number
}

/**
 * A sandbox that opens thousands of connections and sends nothing once held the launcher at
 * 10,011 fds and starved Claude's own API calls: a connection that has not sent a request within
 * IDLE_MS is closed, and beyond MAX_WAITING such connections the oldest one makes room, so a new
 * connection (Claude's next API call) is always accepted.
 */
export const IDLE_MS = 10_000
export const MAX_WAITING = 256
/**
 * Connections to hosts open at once, for all the sandbox's tunnels and requests: with at most 1,024
 * client connections of 8 requests each, the sandbox could still hold ~9,200 of the launcher's
 * descriptors, all of them on a host whose limit is lower (red team, round 60). Beyond, 502.
 */
export const MAX_UPSTREAM = 1024

const systemResolver: Resolver = async host => (await dns.promises.lookup(host, { all: true, verbatim: true })).map(a => a.address)

/** Every address of every interface of this machine, read when the proxy starts. */
const interfaceAddresses = (): string[] => Object.values(os.networkInterfaces()).flatMap(list => (list ?? []).map(i => i.address))

/** `host`: the name as the policy checked it (normalized: `api%2eanthropic%2ecom` is api.anthropic.com), the one to connect to. */
type Admission = { ok: true; host: string; addresses: string[] } | { ok: false; status: number; message: string }

/**
 * The proxy's HTTP side, for a server that listens lazily (lazy-server.ts, session.ts startProxy):
 * connections are handed to an http.Server that never listens itself.
 */
export function proxyProtocol(options: ProxyOptions): Protocol {
  const open = new Set<net.Socket>()
  const track = (socket: net.Socket): void => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
  }
  const timeout = options.connectTimeoutMs ?? 15_000
  // No limit on a whole request (Node's requestTimeout, 300 s): a slow upload to an allowed host is
  // legitimate. The headers still have headersTimeout, and silent connections the idle limit.
  const timeouts = options.headersTimeoutMs === undefined ? {} : { headersTimeout: options.headersTimeoutMs, connectionsCheckingInterval: options.headersTimeoutMs }
  const server = http.createServer({ requestTimeout: 0, ...timeouts })
  const context: ProxyContext = {
    options,
    admit: admitter(options),
    // An admitted destination: through the company proxy by name, else the checked address itself.
    reach: counted(options.maxUpstream ?? MAX_UPSTREAM, (host, port, addresses, plainHttp, client) => {
      const via = proxyFor(options.upstream, host, port, plainHttp)
      return via === undefined ? connectFirst(addresses, port, timeout, track, client) : connectThrough(via, host, port, timeout, track)
    }),
    started: limitWaiting(server, track, options),
  }
  server.on('connect', tunnel(context))
  server.on('request', plainRequest(context))
  server.on('upgrade', upgrade(context))
  return httpProtocol(server, () => {
    for (const socket of open) socket.destroy()
  })
}

/** `reach`, with at most `limit` connections open or being made at once (MAX_UPSTREAM). */
function counted(limit: number, reach: ProxyContext['reach']): ProxyContext['reach'] {
  let open = 0
  return async (...args) => {
    if (open >= limit) return new Error(`more than ${limit} connections at once`)
    open++
    const socket = await reach(...args)
    if (socket instanceof Error) open--
    else socket.once('close', () => open--)
    return socket
  }
}

interface ProxyContext {
  options: ProxyOptions
  admit: (host: string, port: number) => Promise<Admission>
  reach: (host: string, port: number, addresses: readonly string[], plainHttp: boolean, client: net.Socket) => Promise<net.Socket | Error>
  /** A connection that sent a request is no longer idle; a tunnel may then stay quiet for long. */
  started: (socket: net.Socket) => void
}

/** The policy's decision for a destination, then its addresses, each checked (names resolved here, on the host). */
function admitter(options: ProxyOptions): (host: string, port: number) => Promise<Admission> {
  const resolve = options.resolve ?? systemResolver
  const hostAddresses = normalizedAddresses(options.hostAddresses ?? interfaceAddresses())
  return async (host, port) => {
    const deny = (reason: string): Admission => {
      options.onDenied({ time: new Date(), host, port, reason })
      return { ok: false, status: 403, message: `claudebox: ${host}:${port} is blocked: ${reason} (allow it with --allow-host)` }
    }
    const decision = decideDestination(options.policy, host, port)
    if (!decision.allowed) return deny(decision.reason)
    let addresses: string[]
    try {
      addresses = net.isIP(decision.host) ? [decision.host] : await resolve(decision.host)
    } catch (error) {
      // Behind a company proxy the host often has no DNS for outside names: the proxy resolves them.
      if (proxyFor(options.upstream, decision.host, port, false) !== undefined) return { ok: true, host: decision.host, addresses: [] }
      return { ok: false, status: 502, message: `claudebox: cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }
    }
    const permitted = addresses.filter(a => addressAllowed(options.policy, decision, a, port, hostAddresses))
    if (permitted.length === 0) {
      return deny(`resolves to ${addresses.join(', ') || 'nothing'}, a loopback, private, link-local or this host's own address that is not listed`)
    }
    return { ok: true, host: decision.host, addresses: permitted }
  }
}

/** Connections that send nothing are closed after a while, and at most so many wait (the oldest makes room). */
function limitWaiting(server: http.Server, track: (socket: net.Socket) => void, options: ProxyOptions): (socket: net.Socket) => void {
  const waiting = new Set<net.Socket>() // in arrival order: the first is the oldest
  const idleMs = options.idleTimeoutMs ?? IDLE_MS
  const maxWaiting = options.maxWaiting ?? MAX_WAITING
  server.on('connection', (socket: net.Socket) => {
    track(socket)
    waiting.add(socket)
    socket.on('close', () => waiting.delete(socket))
    socket.setTimeout(idleMs, () => waiting.has(socket) && socket.destroy())
    if (waiting.size > maxWaiting) waiting.values().next().value?.destroy()
  })
  return socket => {
    waiting.delete(socket)
    socket.setTimeout(0)
  }
}

/** CONNECT host:port -> a tunnel to the checked address (HTTPS and anything else over TCP), held to its host by TLS name. */
function tunnel(context: ProxyContext): (req: http.IncomingMessage, client: net.Socket, head: Buffer) => void {
  return (req, client, head) => {
    client.on('error', () => client.destroy())
    context.started(client)
    const target = parseAuthority(req.url ?? '')
    if (target === undefined) return void client.end(statusLine(400, 'claudebox: CONNECT needs host:port'))
    void context.admit(target.host, target.port).then(async admission => {
      if (!admission.ok) return void client.end(statusLine(admission.status, admission.message))
      // The name checked, not the one sent: a company proxy or NO_PROXY must see the same (round 89).
      const checked = { host: admission.host, port: target.port }
      const upstream = await context.reach(checked.host, checked.port, admission.addresses, false, client)
      if (upstream instanceof Error) return void client.end(statusLine(502, `claudebox: cannot connect to ${req.url}: ${upstream.message}`))
      if (client.destroyed) return void upstream.destroy()
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      holdToHost(client, upstream, head, checked, reason => context.options.onDenied({ time: new Date(), host: target.host, port: target.port, reason }))
    })
  }
}

/** GET http://host/path -> the same request to the checked address (plain HTTP). */
function plainRequest(context: ProxyContext): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    context.started(req.socket)
    // Its upstream connection ends with the client's, even when its answer waits behind another's
    // (then the answer never closes); a ninth request pipelined at once closes the connection.
    const call: { upstream?: net.Socket } = {}
    const forget = requestUnderWay(req.socket, () => call.upstream?.destroy())
    if (forget === undefined) return
    res.once('close', forget)
    const url = absoluteHttpUrl(req.url ?? '')
    if (url === undefined) return void reply(res, 400, "claudebox's proxy takes CONNECT or absolute http:// URLs")
    const port = url.port === '' ? 80 : Number(url.port)
    void context.admit(unbracket(url.hostname), port).then(async admission => {
      if (!admission.ok) return reply(res, admission.status, admission.message)
      const connect = (): Promise<net.Socket | Error> => context.reach(unbracket(url.hostname), port, admission.addresses, true, req.socket)
      const reused = mayRepeat(req) ? takeKept(req.socket, url.host) : undefined
      forward(req, res, url, call, reused ?? (await connect()), reused === undefined ? undefined : connect)
    })
  }
}

/**
 * The request to the upstream connection, its answer back. A request on a kept connection that
 * fails before any answer (the server closed it meanwhile) is sent once more on a new one: only
 * such requests use one (mayRepeat).
 */
function forward(req: http.IncomingMessage, res: http.ServerResponse, url: URL, call: { upstream?: net.Socket }, socket: net.Socket | Error, again?: () => Promise<net.Socket | Error>): void {
  if (socket instanceof Error) return reply(res, 502, `claudebox: cannot connect to ${url.host}: ${socket.message}`)
  // Once the response is done or the client gone, the connection is kept (below) or has no further use.
  if (req.socket.destroyed) return void socket.destroy()
  call.upstream = socket
  res.on('close', () => {
    if (kept.get(req.socket)?.socket !== socket) socket.destroy()
  })
  const headers = { ...req.headers }
  for (const name of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive']) delete headers[name]
  const upstream = http.request({
    method: req.method,
    path: `${url.pathname}${url.search}`,
    // The Host header names the host that was checked: a different one would reach another
    // site on a shared address (a CDN). CONNECT cannot be held to this without TLS interception.
    headers: { ...headers, host: url.host, connection: 'keep-alive' },
    setHost: false,
    createConnection: () => socket,
  })
  let answered = false
  upstream.on('response', response => {
    answered = true
    response.on('end', () => keep(req.socket, url.host, socket, upstream))
    res.writeHead(response.statusCode ?? 502, response.headers)
    response.pipe(res)
  })
  upstream.on('error', error => {
    if (!answered && again !== undefined) return void again().then(next => forward(req, res, url, call, next))
    if (res.headersSent) res.destroy()
    else reply(res, 502, `claudebox: ${url.host}: ${error.message}`)
  })
  if (mayRepeat(req)) {
    req.resume()
    upstream.end()
  } else req.pipe(upstream)
}

/**
 * Plain HTTP keeps its upstream connection for the same client connection's next request to the
 * same host and port (a package manager fetching file after file): a new connection for every
 * request cost ~2.5 ms of time to first byte. Every request is still admitted first; a kept
 * connection serves only the host it was admitted for, one per client connection, and closes
 * with it. Only requests that may be repeated use one (mayRepeat).
 */
const kept = new WeakMap<net.Socket, { socket: net.Socket; authority: string; drop: () => void }>()

/**
 * Only GET, HEAD and OPTIONS without a body take a kept connection: they may be sent again when it
 * fails (RFC 9110 9.2.2); a POST, even an empty one, never goes twice.
 */
const mayRepeat = (req: http.IncomingMessage): boolean =>
  ['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? '') && (req.headers['content-length'] ?? '0') === '0' && req.headers['transfer-encoding'] === undefined

/** After a complete exchange that Node left open (both sides said keep-alive), the connection waits for the next request. */
function keep(client: net.Socket, authority: string, socket: net.Socket, upstream: http.ClientRequest): void {
  if (!upstream.writableFinished || !socket.writable || socket.destroyed || client.destroyed) return void socket.destroy()
  kept.get(client)?.drop()
  const drop = (): void => {
    if (kept.get(client)?.socket === socket) kept.delete(client)
    for (const [emitter, event] of endings(client, socket)) emitter.off(event, drop)
    socket.destroy()
  }
  for (const [emitter, event] of endings(client, socket)) emitter.once(event, drop)
  kept.set(client, { socket, authority, drop })
}

/** The client's kept connection when it is for this host and port; one for another host is closed. */
function takeKept(client: net.Socket, authority: string): net.Socket | undefined {
  const entry = kept.get(client)
  if (entry === undefined) return undefined
  if (entry.authority !== authority) return void entry.drop()
  kept.delete(client)
  for (const [emitter, event] of endings(client, entry.socket)) emitter.off(event, entry.drop)
  return entry.socket
}

/** What ends a kept connection: the server closing it, an error, or the client going away. */
const endings = (client: net.Socket, socket: net.Socket): [net.Socket, string][] => [[socket, 'end'], [socket, 'close'], [socket, 'error'], [client, 'close']]

/** GET http://host/path with Upgrade (WebSocket over plain HTTP) -> the same handshake to the checked address; spliced once it answers 101. */
function upgrade(context: ProxyContext): (req: http.IncomingMessage, client: net.Socket, head: Buffer) => void {
  return (req, client, head) => {
    client.on('error', () => client.destroy())
    context.started(client)
    const url = absoluteHttpUrl(req.url ?? '')
    if (url === undefined) return void client.end(statusLine(400, "claudebox's proxy takes absolute http:// URLs"))
    // Nothing of the client's goes on before the answer (handshake): a body would wait there forever.
    if ((req.headers['content-length'] ?? '0') !== '0' || req.headers['transfer-encoding'] !== undefined) {
      return void client.end(statusLine(400, "claudebox's proxy takes no body with an Upgrade request"))
    }
    const port = url.port === '' ? 80 : Number(url.port)
    void context.admit(unbracket(url.hostname), port).then(async admission => {
      if (!admission.ok) return void client.end(statusLine(admission.status, admission.message))
      const upstream = await context.reach(unbracket(url.hostname), port, admission.addresses, true, client)
      if (upstream instanceof Error) return void client.end(statusLine(502, `claudebox: cannot connect to ${url.host}: ${upstream.message}`))
      if (client.destroyed) return void upstream.destroy()
      handshake(req, url, client, upstream, head)
    })
  }
}

/**
 * The handshake to the origin (origin-form path, Host the checked host, no proxy headers), then
 * nothing from the client until the server's answer has arrived: a 101 splices both ways, any
 * other answer is relayed and both connections close. Spliced at once, a server that took the
 * handshake for an ordinary request (keep-alive) read the client's next bytes as a new request
 * with a Host of the client's choosing: another site on a shared address (red team, round 89).
 */
function handshake(req: http.IncomingMessage, url: URL, client: net.Socket, upstream: net.Socket, head: Buffer): void {
  const headers = { ...req.headers }
  for (const name of ['host', 'proxy-connection', 'proxy-authorization', 'keep-alive']) delete headers[name]
  const request = http.request({ method: req.method, path: `${url.pathname}${url.search}`, headers: { ...headers, host: url.host }, setHost: false, createConnection: () => upstream })
  const gone = (): void => void upstream.destroy()
  client.once('close', gone)
  request.on('upgrade', (response: http.IncomingMessage, socket: net.Socket, early: Buffer) => {
    client.off('close', gone)
    client.write(responseHead(response, false))
    if (early.length > 0) client.write(early)
    if (head.length > 0) socket.write(head)
    splice(client, socket)
  })
  let answered = false
  request.on('response', (response: http.IncomingMessage) => {
    answered = true
    client.write(responseHead(response, true))
    response.pipe(client)
    response.on('close', () => {
      if (!response.complete) client.destroy()
      upstream.destroy()
    })
  })
  request.on('error', error => {
    if (answered) client.destroy()
    else if (client.writable) client.end(statusLine(502, `claudebox: ${url.host}: ${error.message}`))
    upstream.destroy()
  })
  request.end()
}

/** The server's answer head as it sent it; for one relayed before closing, without its framing but the length, and Connection: close. */
function responseHead(response: http.IncomingMessage, closing: boolean): string {
  const lines = [`HTTP/1.1 ${response.statusCode ?? 502} ${response.statusMessage ?? ''}`]
  for (let i = 0; i < response.rawHeaders.length; i += 2) {
    const name = response.rawHeaders[i] as string
    if (!closing || !/^(connection|keep-alive|transfer-encoding)$/i.test(name)) lines.push(`${name}: ${response.rawHeaders[i + 1] ?? ''}`)
  }
  if (closing) lines.push('Connection: close')
  return `${lines.join('\r\n')}\r\n\r\n`
}

/** `host:port` of a CONNECT request (IPv6 in brackets); the port is required. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority)
  if (!match) return undefined
  const port = Number(match[2])
  if (port < 1 || port > 65535) return undefined
  return { host: unbracket(match[1] as string), port }
}

function absoluteHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' && text.toLowerCase().startsWith('http://') ? url : undefined
  } catch {
    return undefined
  }
}

/**
 * The first of `addresses` that accepts a connection on `port`, or the last error. Every socket
 * it opens is tracked at once, so closing the proxy also ends an attempt in progress (else its
 * socket and timer keep the launcher alive for up to `timeoutMs` after the session), and it gives
 * up when `client` goes away meanwhile (else the attempt lingers, and a late connection stays open).
 */
async function connectFirst(addresses: readonly string[], port: number, timeoutMs: number, track: (socket: net.Socket) => void, client: net.Socket): Promise<net.Socket | Error> {
  let last = new Error('no address')
  for (const host of addresses) {
    if (client.destroyed) return new Error('the client went away')
    const result = await new Promise<net.Socket | Error>(done => {
      // No Nagle delay: a request or a tunnel's small writes go out at once (time to first byte).
      const socket = net.connect({ host, port, allowHalfOpen: true, noDelay: true })
      track(socket)
      const settle = (outcome: net.Socket | Error): void => {
        clearTimeout(timer)
        forget()
        socket.off('error', fail)
        socket.off('close', closed)
        if (outcome instanceof Error) socket.destroy()
        done(outcome)
      }
      const fail = (error: Error): void => settle(error)
      const closed = (): void => settle(new Error('closed before it connected'))
      const abandon = (): void => settle(new Error('the client went away'))
      const timer = setTimeout(() => settle(new Error(`timed out after ${timeoutMs / 1000} s`)), timeoutMs)
      const forget = whenConnectionCloses(client, abandon)
      socket.once('error', fail)
      socket.once('close', closed)
      socket.once('connect', () => settle(socket))
    })
    if (!(result instanceof Error)) return result
    last = result
  }
  return last
}

/**
 * A tunnel held to the host it was admitted for: the server's bytes flow at once (protocols where
 * the server speaks first), the client's first bytes wait until they are known to be neither a TLS
 * ClientHello naming another server nor a plain HTTP request (either would reach another site on
 * a shared CDN address: SNI, or a Host header the client chose; red team, round 89). A hello
 * without a server name, other protocols (ssh) and tunnels to an address literal pass; the Host
 * header inside TLS cannot be seen without interception (README).
 */
function holdToHost(client: net.Socket, upstream: net.Socket, head: Buffer, target: { host: string; port: number }, deny: (reason: string) => void): void {
  // An address however written (`2130706433`): the policy admitted that address, whatever site is on it.
  const expected = net.isIP(normalizeHost(target.host) ?? target.host) ? undefined : target.host.toLowerCase().replace(/\.$/, '')
  if (expected === undefined) {
    if (head.length > 0) upstream.write(head)
    return splice(client, upstream)
  }
  upstream.pipe(client)
  // Both end together (closeTogether), but a refused client is answered first, and then gets
  // a moment to read the answer: closed at once while it still sends, it may never see it.
  let answering = false
  const drop = (): void => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', drop).on('close', drop)
  upstream.on('error', drop).on('close', () => answering || drop())
  let pending = head
  const check = (ended: boolean): void => {
    const verdict = firstBytes(pending, expected, target.host)
    if (verdict === 'need-more' && !ended) return
    client.off('data', onData).off('end', onEnd)
    if (verdict === 'plain-http') {
      deny(PLAIN_HTTP_IN_TUNNEL)
      answering = true
      upstream.unpipe(client)
      upstream.destroy()
      client.resume().end(statusLine(403, `claudebox: ${target.host}:${target.port}: ${PLAIN_HTTP_IN_TUNNEL}`))
      const timer = setTimeout(drop, REFUSED_GRACE_MS)
      return void client.once('close', () => clearTimeout(timer))
    }
    if (verdict !== 'need-more' && verdict !== 'pass') {
      deny(verdict.reason)
      return drop()
    }
    upstream.write(pending)
    client.pipe(upstream)
  }
  const onData = (chunk: Buffer): void => {
    pending = Buffer.concat([pending, chunk])
    check(false)
  }
  // A client that ends its side before its first bytes are whole sends them as they are: incomplete, they are no request.
  const onEnd = (): void => check(true)
  client.on('data', onData).on('end', onEnd)
  if (pending.length > 0) check(false)
}

/** How long a tunnel refused for plain HTTP stays open for the client to read the 403. */
const REFUSED_GRACE_MS = 2_000

const PLAIN_HTTP_IN_TUNNEL = 'plain HTTP inside a CONNECT tunnel is refused, since its Host header would not be checked there (send http:// requests to the proxy as plain HTTP)'

/** The client's first bytes in a tunnel to `expected`: wait for more, pass, plain HTTP, or a TLS hello refused and why. */
function firstBytes(pending: Buffer, expected: string, host: string): 'need-more' | 'pass' | 'plain-http' | { reason: string } {
  const result = sniFromClientHello(pending)
  if (result.state === 'need-more') return 'need-more'
  if (result.state === 'malformed') return { reason: `a TLS hello that does not parse (${result.why})` }
  if (result.state === 'done') {
    const sni = result.sni?.toLowerCase().replace(/\.$/, '')
    return sni !== undefined && sni !== expected ? { reason: `the TLS server name ${sni} is not ${host}` } : 'pass'
  }
  const http = plainHttpRequest(pending)
  return http === 'need-more' ? 'need-more' : http ? 'plain-http' : 'pass'
}

/** The longest first line read to tell a plain HTTP request line (longer ones are taken for one). */
export const MAX_REQUEST_LINE = 64 * 1024

/** tchar (RFC 9110), the characters of a method token. */
const TOKEN = "[-!#$%&'*+.^_`|~0-9A-Za-z]"

/**
 * Whether a tunnel's first bytes are an HTTP request line: a method token, white space, a target,
 * and `HTTP/<digit>` on the first line (empty lines before it skipped, as servers do; HTTP/2's
 * preface `PRI * HTTP/2.0` too). 'need-more' while a line that starts so has not ended yet.
 */
export function plainHttpRequest(data: Uint8Array): boolean | 'need-more' {
  const text = Buffer.from(data.subarray(0, MAX_REQUEST_LINE)).toString('latin1').replace(/^[\r\n\t ]+/, '')
  const end = text.search(/[\r\n]/)
  const line = end === -1 ? text : text.slice(0, end)
  if (new RegExp(`^${TOKEN}+[^\\S\\r\\n]+.*HTTP/\\d`, 'i').test(line)) return true
  if (end !== -1) return false
  // The line so far: nothing yet, a token that may go on, or a token, white space and more.
  if (!new RegExp(`^(${TOKEN}+([^\\S\\r\\n].*)?)?$`).test(line)) return false
  return data.length >= MAX_REQUEST_LINE ? line.includes(' ') || line.includes('\t') : 'need-more'
}

/** Both directions, ends passed on, either side's error closes both. */
function splice(a: net.Socket, b: net.Socket): void {
  a.pipe(b)
  b.pipe(a)
  closeTogether(a, b)
}

/** Either side's error or close ends both; returns the function that does it. */
function closeTogether(a: net.Socket, b: net.Socket): () => void {
  const close = (): void => {
    a.destroy()
    b.destroy()
  }
  for (const socket of [a, b]) socket.on('error', close).on('close', close)
  return close
}

function statusLine(status: number, message: string): string {
  const body = `${message}\n`
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

function reply(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' })
  res.end(`${message}\n`)
}
