// One API call's way through the gateway, rehearsed in memory while Claude starts: the first call
// of a session otherwise pays V8's first compilation of Node's HTTP server and client code (and,
// for an https endpoint, the loading of node:tls and node:https), ~10 ms (plus ~15 ms for TLS)
// before the first answer. Nothing leaves the process: the connections are in-memory pairs, and
// nothing listens anywhere.
import http from 'node:http'
import * as stream from 'node:stream'
import type { Duplex } from 'node:stream'

/** How long the rehearsal may take before it is given up (it never matters to the session). */
const WARM_LIMIT_MS = 2000

/**
 * A POST taken by a server, sent on with http.request to a second one, whose streamed answer is
 * piped back: the gateway's own steps. Whether the answer came whole; never rejects. Nothing is
 * done where Node has no stream.duplexPair (before 20.17).
 */
export async function rehearseApiCall(): Promise<boolean> {
  const pair = (stream as { duplexPair?: () => [Duplex, Duplex] }).duplexPair
  if (pair === undefined) return false
  const api = http.createServer((req, res) => {
    req.resume().once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: message_start\ndata: {}\n\n')
      res.end('event: message_stop\ndata: {}\n\n')
    })
  })
  const gateway = http.createServer((req, res) => {
    const body: Buffer[] = []
    req.on('data', (chunk: Buffer) => body.push(chunk)).once('end', () => {
      const upstream = http.request({ method: 'POST', path: req.url, headers: req.headers, createConnection: () => connectedTo(api, pair) })
      upstream.once('response', answer => answer.pipe(res.writeHead(answer.statusCode ?? 200, answer.headers))).once('error', () => res.destroy())
      upstream.end(Buffer.concat(body))
    })
  })
  const call = new Promise<boolean>(resolve => {
    const body = '{"model":"claudebox-warm-up","messages":[]}'
    const req = http.request({ method: 'POST', path: '/v1/messages', headers: { 'content-type': 'application/json', 'content-length': body.length }, createConnection: () => connectedTo(gateway, pair) })
    req.once('response', answer => answer.resume().once('end', () => resolve(answer.statusCode === 200)).once('error', () => resolve(false))).once('error', () => resolve(false))
    req.end(body)
  })
  let timer: NodeJS.Timeout | undefined
  const done = await Promise.race([call, new Promise<boolean>(resolve => (timer = setTimeout(() => resolve(false), WARM_LIMIT_MS).unref()))])
  clearTimeout(timer)
  for (const server of [gateway, api]) server.closeAllConnections()
  return done
}

/** The client's end of an in-memory connection whose other end `server` takes. */
function connectedTo(server: http.Server, pair: () => [Duplex, Duplex]): Duplex {
  const [client, served] = pair()
  server.emit('connection', served)
  return client
}
