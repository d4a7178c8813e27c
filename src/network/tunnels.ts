// Requests from the host to one server through the company proxy (HTTPS_PROXY on the host): a
// CONNECT tunnel, then TLS to the server inside it for https. Used by the API gateway (its calls)
// and by the OAuth refresh; loaded with them, never on the launch path.
import http from 'node:http'
import net from 'node:net'
import type * as Https from 'node:https'
import type * as Tls from 'node:tls'
import { connectThrough, proxyFor, type UpstreamProxy } from './upstream-proxy.js'

/** How long the proxy may take to answer a CONNECT. */
const CONNECT_TIMEOUT_MS = 30_000

/** https and tls load at the first request that needs them (~15 ms), not with this module. */
let tlsModules: Promise<{ https: typeof Https; tls: typeof Tls }> | undefined
export const loadTls = (): NonNullable<typeof tlsModules> => (tlsModules ??= Promise.all([import('node:https'), import('node:tls')]).then(([h, t]) => ({ https: h.default, tls: t.default })))

/**
 * Tunnels to `target`'s host and port through `via`, kept between requests as Node keeps direct
 * connections (its global agent's keep-alive, 5 s idle): without it every API call paid a
 * connection to the proxy, a CONNECT and a TLS handshake with the API. Requests through it go as
 * plain HTTP (http.request with this agent): the tunnel carries its own TLS.
 */
export function tunnelAgent(via: URL, target: URL): http.Agent {
  const port = portOf(target)
  const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 })
  // Node's agent takes a connection made later through the callback (then nothing is returned).
  const tunnel = (_: unknown, made: (error: Error | null, stream?: net.Socket) => void): undefined => {
    void Promise.all([connectThrough(via, target.hostname, port, CONNECT_TIMEOUT_MS, () => undefined), target.protocol === 'https:' ? loadTls() : undefined]).then(([socket, modules]) => {
      if (socket instanceof Error) return made(socket)
      // Ended with the far end, as Node's own connections are (connectThrough keeps a tunnel
      // half-open, for the egress proxy's relaying).
      socket.allowHalfOpen = false
      // An address is checked against the certificate as it is, and sent as no server name (RFC 6066).
      const name = target.hostname.replace(/^\[|\]$/g, '')
      made(null, modules === undefined ? socket : modules.tls.connect({ socket, host: name, ...(net.isIP(name) === 0 && { servername: name }) }))
    })
    return undefined
  }
  agent.createConnection = tunnel as unknown as typeof agent.createConnection
  return agent
}

/** Tunnels to `target` through the company proxy when one applies to it (not NO_PROXY), else undefined. */
export function tunnelsTo(target: URL, companyProxy: UpstreamProxy | undefined): http.Agent | undefined {
  const via = proxyFor(companyProxy, target.hostname, portOf(target), target.protocol === 'http:')
  return via === undefined ? undefined : tunnelAgent(via, target)
}

const portOf = (url: URL): number => Number(url.port || (url.protocol === 'https:' ? 443 : 80))

/** A request to `target`, through `tunnels` when there are (an agent of tunnelAgent), else directly. */
export async function requestTo(target: URL, options: http.RequestOptions, tunnels: http.Agent | undefined): Promise<http.ClientRequest> {
  if (tunnels !== undefined) return http.request({ ...options, host: target.hostname, port: target.port, path: target.pathname + target.search, agent: tunnels })
  const client = target.protocol === 'https:' ? (await loadTls()).https : http
  return client.request(target, options)
}
