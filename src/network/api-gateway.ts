// The host end of the sandbox's API traffic. Inside, Claude Code holds only this session's random
// placeholder and talks to ANTHROPIC_BASE_URL = this gateway; here, a request that carries the
// placeholder, to an API path Claude Code uses, is sent on to the real endpoint with the real
// credential (refreshed here when it expires). Anything else is refused and never carries it.
import http from 'node:http'
import type { UpstreamProxy } from './upstream-proxy.js'
import { requestTo, tunnelsTo } from './tunnels.js'
import { requestUnderWay } from './connection-calls.js'
import { httpProtocol, type Protocol } from './lazy-server.js'
import { BODY_LIMITS, requestBody, shareOf, type BodyLimits, type Held, type Outgoing, type Share } from './request-body.js'

/** The paths Claude Code calls on its API endpoint in a session (measured with 2.1.330). */
const API_PATHS = [/^\/v1\/messages(\/count_tokens)?$/, /^\/v1\/models(\/[A-Za-z0-9._-]+)?$/, /^\/api\/hello$/, /^\/$/]
/**
 * API calls under way at once: Claude makes a few, its subagents a few more. Beyond, 429 (Claude
 * waits and retries): pipelined on a few connections, the sandbox made the launcher open 20,000
 * calls upstream, all its descriptors and 1.9 GB (red team, round 58).
 */
const CALLS_LIMIT = 64
/** How long a connection may take to send its headers. */
const HEADERS_TIMEOUT_MS = 10_000

export interface Credential {
  /**
   * The header and value to send upstream; after a 401, `rejected` is the value that was refused.
   * Throws with a message for the user.
   */
  header(rejected?: string): Promise<[string, string]>
  /** Whether a 401 may be cured by refreshing (an OAuth login). */
  refreshable: boolean
  /** Resolves once no refresh is under way (one the session's end must not cut short). */
  settled?(): Promise<void>
}

export interface GatewayOptions {
  upstream: URL
  placeholder: string
  credential: Credential
  extraHeaders: readonly [string, string][]
  listen: { path: string; key?: string } | { host: string; port: number }
  /** Called once per forwarded request when its answer is complete. */
  onCall?: (call: ApiCall) => void
  /** The host's company proxy (HTTPS_PROXY, NO_PROXY): the API is reached through it. */
  companyProxy?: UpstreamProxy
  /** How long a connection may take to send its headers (default HEADERS_TIMEOUT_MS; tests shorten it). */
  headersTimeoutMs?: number
  /** The request bodies' limits (default request-body.ts BODY_LIMITS; tests lower them). */
  bodyLimits?: BodyLimits
}

/** One API call, for the optional log: never a body or a header. */
export interface ApiCall {
  time: string
  method: string
  path: string
  status: number
  inputTokens: number
  outputTokens: number
}

export interface Usage {
  requests: number
  refused: number
  inputTokens: number
  outputTokens: number
  problems: string[]
}

/**
 * The gateway's HTTP side, for a server that listens lazily (lazy-server.ts, api-session.ts
 * startGateway): connections are handed to an http.Server that never listens itself.
 */
export function gatewayProtocol(given: GatewayOptions, usage: Usage): Protocol {
  const options: Gateway = { ...given, tunnels: tunnelsTo(given.upstream, given.companyProxy) }
  const load: Load = { calls: 0, bodies: { bytes: 0, limits: options.bodyLimits ?? BODY_LIMITS } }
  const timeouts = options.headersTimeoutMs === undefined ? { headersTimeout: HEADERS_TIMEOUT_MS } : { headersTimeout: options.headersTimeoutMs, connectionsCheckingInterval: options.headersTimeoutMs }
  const server = http.createServer(timeouts, (req, res) => {
    handle(options, usage, load, req, res).catch((error: unknown) => {
      // A credential the host cannot provide is final (403: Claude does not retry it); a failed
      // connection is the API's usual 502, which Claude retries.
      const final = error instanceof CredentialError
      if (final) usage.problems.push(error.message)
      // The reason stays on the host (it may quote the apiKeyHelper command and whatever it holds).
      refuse(res, usage, final ? 403 : 502, final ? 'claudebox: the credential could not be had on the host; claudebox says why on its terminal after the session' : `claudebox: the API request failed on the host: ${(error as Error).message}`)
      // The rest of a body that was going upstream is taken and dropped: the client is not left stalled (round 57).
      drainRest(req)
    })
  })
  return httpProtocol(server, () => options.tunnels?.destroy())
}

/** The options, with what the gateway keeps between calls: its tunnels through a company proxy. */
interface Gateway extends GatewayOptions {
  tunnels: http.Agent | undefined
}

async function handle(options: Gateway, usage: Usage, load: Load, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://gateway')
  if (!API_PATHS.some(re => re.test(url.pathname))) return refuse(res, usage, 403, `claudebox: ${url.pathname} is not an API path claudebox forwards`)
  const carries = carriesPlaceholder(req, options.placeholder)
  const preconnecting = !carries && req.method === 'HEAD' && url.pathname === '/'
  if (!carries && !preconnecting) return refuse(res, usage, 401, 'claudebox: this request does not carry the credential of this session')
  if (load.calls >= CALLS_LIMIT) return refuse(res, usage, 429, `claudebox: more than ${CALLS_LIMIT} API calls at once`)
  const call = underWay(load, req, res)
  if (call === undefined) return // a ninth call pipelined on one connection: it is closed
  if (preconnecting) return preconnect(options, req, url, res, call.gone.signal)
  const body = await requestBody(req, call.share, options.credential.refreshable)
  if (body === undefined) return refuse(res, usage, 413, 'claudebox: request body too large (or too many large requests at once)')
  usage.requests++
  let sent = await send(options, req, url, body.first, undefined, call)
  if (sent.response.statusCode === 401 && options.credential.refreshable) {
    sent.response.resume()
    dropRest(req, sent.request)
    const again = await body.again()
    if (again === undefined) return refuse(res, usage, 502, 'claudebox: the request could not be sent again after the credential was refreshed')
    sent = await send(options, req, url, { content: again, length: again.length }, sent.sent, call)
  }
  body.drop()
  relay(options, usage, req, res, url, sent)
}

/** The answer to Claude as it comes, its tokens counted; the rest of the body dropped once it has ended. */
function relay(options: Gateway, usage: Usage, req: http.IncomingMessage, res: http.ServerResponse, url: URL, { request, response: upstream }: Call): void {
  upstream.once('end', () => dropRest(req, request))
  res.writeHead(upstream.statusCode ?? 502, upstream.headers)
  const counted = { input: 0, output: 0 }
  upstream.on('data', (chunk: Buffer) => countTokens(counted, chunk))
  // At the end, or when it is cut short (Claude quit mid-answer): what streamed so far is counted.
  upstream.once('close', () => {
    usage.inputTokens += counted.input
    usage.outputTokens += counted.output
    options.onCall?.({ time: new Date().toISOString(), method: req.method ?? '', path: url.pathname, status: upstream.statusCode ?? 0, inputTokens: counted.input, outputTokens: counted.output })
    // An answer the API cut short is cut short for Claude too, which then retries at once; the
    // pipe would leave it waiting for the rest until its own timeout (10 minutes; red team, round 55).
    if (!upstream.complete) res.destroy()
  })
  upstream.pipe(res)
}

/** What the gateway has under way: its calls, and the request bodies they hold. */
interface Load {
  calls: number
  bodies: Held
}

/** One call under way: its part of the bodies held, and the abort of what it sent upstream. */
interface UnderWay {
  share: Share
  gone: AbortController
  /** The request upstream now, ended with the call if it is still being sent. */
  request?: http.ClientRequest
}

/**
 * Counts a call until its end: its answer's, or its connection's when the answer never got one
 * (one queued behind another on a keep-alive connection: red team, round 57, the budget leaked for
 * good). A client gone (Claude quit mid-answer, or the session ended and its connections were
 * closed) ends the call upstream too: a pending one would keep the launcher alive after the
 * session. What it held of its body is given back then, however far it got, and a request still
 * being sent upstream (an API that answered early and kept the connection) is ended (round 58).
 */
function underWay(load: Load, req: http.IncomingMessage, res: http.ServerResponse): UnderWay | undefined {
  const call: UnderWay = { share: shareOf(load.bodies), gone: new AbortController() }
  let ended = false
  const end = (): void => {
    if (ended) return
    ended = true
    load.calls--
    forget?.()
    call.share.release()
    if (call.request?.writableFinished === false) call.request.destroy()
    // Only when the answer was cut short: an abort makes an AbortError (a stack trace) each time.
    if (!res.writableFinished) call.gone.abort()
  }
  const forget = requestUnderWay(req.socket, end)
  if (forget === undefined) return undefined
  load.calls++
  res.once('close', end)
  return call
}

/**
 * Claude's own preconnect (HEAD / without a credential, its answer ignored) goes upstream as it
 * is, without one: the connection it opens (or the tunnel, through a company proxy) is the one the
 * first API call then takes, as without claudebox, instead of a TCP and TLS handshake more before
 * Claude's first answer. Not an API call (not counted).
 */
async function preconnect(options: Gateway, req: http.IncomingMessage, url: URL, res: http.ServerResponse, gone: AbortSignal): Promise<void> {
  const upstream = (await forward(options, req, url, { content: Buffer.alloc(0), length: 0 }, undefined, gone).catch(() => undefined))?.response
  if (upstream === undefined) return void res.writeHead(502).end()
  // Answered once the answer has come whole (a HEAD's has no body): its connection is in the pool
  // then (Node's client keeps it when the answer gave its length, as servers do for a HEAD).
  await new Promise(resolve => upstream.once('end', resolve).once('close', resolve).resume())
  res.writeHead(upstream.statusCode ?? 502, upstream.headers).end()
}

function carriesPlaceholder(req: http.IncomingMessage, placeholder: string): boolean {
  return req.headers['x-api-key'] === placeholder || req.headers['authorization'] === `Bearer ${placeholder}`
}

/** The host could not provide the credential (no login, a refresh refused): said once, not retried. */
class CredentialError extends Error {}

/** Sends the request with the current credential; also says which credential value it carried. */
async function send(options: Gateway, req: http.IncomingMessage, url: URL, body: Outgoing, rejected: string | undefined, call: UnderWay): Promise<Call & { sent: string }> {
  const [name, value] = await options.credential.header(rejected).catch((error: unknown) => {
    throw new CredentialError((error as Error).message)
  })
  const sent = await forward(options, req, url, body, [name, value], call.gone.signal, request => (call.request = request))
  return { ...sent, sent: value.replace(/^Bearer /, '') }
}

/** One request upstream and its answer. */
interface Call {
  request: http.ClientRequest
  response: http.IncomingMessage
}

/**
 * An answer that came before the whole body (an early 401 or 413): the request upstream is ended,
 * where it would stall on the rest the API no longer reads until the connection timed out, and
 * Claude's with it; the rest of the body is read here and dropped (red team, rounds 56 and 58).
 */
function dropRest(req: http.IncomingMessage, request: http.ClientRequest): void {
  if (!request.writableFinished) request.destroy()
  drainRest(req)
}

/** The rest of the client's body, if it is still coming, taken and dropped (no longer piped anywhere). */
function drainRest(req: http.IncomingMessage): void {
  if (!req.complete) req.unpipe().resume()
}

/** The request to the API, with `credential` (none for a preconnect). */
async function forward(options: Gateway, req: http.IncomingMessage, url: URL, body: Outgoing, credential: [string, string] | undefined, signal: AbortSignal, made?: (request: http.ClientRequest) => void): Promise<Call> {
  const target = new URL(options.upstream.pathname.replace(/\/$/, '') + url.pathname + url.search, options.upstream)
  const headers: http.OutgoingHttpHeaders = {}
  for (const [key, v] of Object.entries(req.headers)) if (!DROPPED.has(key)) headers[key] = v
  for (const [key, v] of options.extraHeaders) headers[key.toLowerCase()] = v
  if (credential !== undefined) headers[credential[0]] = credential[1]
  headers['host'] = target.host
  headers['content-length'] = String(body.length)
  const request = await requestTo(target, { method: req.method ?? 'GET', headers, signal }, options.tunnels)
  return new Promise((resolve, reject) => {
    made?.(request)
    request.on('error', reject)
    request.once('response', response => resolve({ request, response }))
    if (Buffer.isBuffer(body.content)) request.end(body.content)
    else body.content.pipe(request)
  })
}


/** Hop-by-hop headers, and the placeholder's own headers (replaced by the real credential). */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'authorization', 'x-api-key', 'content-length'])

/** The API's own error types for the refusals whose meaning Claude acts on (429: wait and retry). */
const ERROR_TYPES: Readonly<Record<number, string>> = { 401: 'authentication_error', 413: 'request_too_large', 429: 'rate_limit_error' }

function refuse(res: http.ServerResponse, usage: Usage, status: number, message: string): void {
  usage.refused++
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'permission_error', message } }))
}

/**
 * Token counts as the API reports them: input in message_start (or a JSON body), output in the
 * last message_delta, which is cumulative; so the largest of each per response.
 */
function countTokens(counted: { input: number; output: number }, chunk: Buffer): void {
  for (const match of chunk.toString('utf8').matchAll(/"(input|output)_tokens":\s*(\d+)/g)) {
    const key = match[1] === 'input' ? 'input' : 'output'
    counted[key] = Math.max(counted[key], Number(match[2]))
  }
}
