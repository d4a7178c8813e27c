// A company proxy in front of the host (HTTPS_PROXY / HTTP_PROXY / NO_PROXY on the host): the
// egress proxy applies its own allow and deny rules first, then reaches an admitted destination
// through that proxy with CONNECT host:port (by name: company proxies filter by name and resolve
// themselves), or directly for a NO_PROXY destination.
import net from 'node:net'

export interface UpstreamProxy {
  /** For CONNECT tunnels (HTTPS and other TCP). */
  https?: URL
  /** For plain-HTTP requests (also tunnelled with CONNECT). */
  http?: URL
  noProxy: readonly string[]
}

/** The host's proxy settings, as curl and most tools read them (lower case first). Pure. */
export function upstreamFromEnv(env: Readonly<Record<string, string | undefined>>): UpstreamProxy | undefined {
  const pick = (name: string): URL | undefined => {
    const value = env[name.toLowerCase()] || env[name]
    if (!value) return undefined
    try {
      const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`)
      return url.protocol === 'http:' ? url : undefined
    } catch {
      return undefined
    }
  }
  const https = pick('HTTPS_PROXY') ?? pick('ALL_PROXY')
  const http = pick('HTTP_PROXY') ?? pick('ALL_PROXY')
  if (https === undefined && http === undefined) return undefined
  const noProxy = (env['no_proxy'] || env['NO_PROXY'] || '').split(',').map(e => e.trim().toLowerCase()).filter(Boolean)
  return { ...(https ? { https } : {}), ...(http ? { http } : {}), noProxy }
}

/** The company proxy to use for host:port, or undefined to connect directly (NO_PROXY, or none). Pure. */
export function proxyFor(upstream: UpstreamProxy | undefined, host: string, port: number, plainHttp: boolean): URL | undefined {
  if (upstream === undefined) return undefined
  const name = host.toLowerCase().replace(/\.$/, '')
  for (const entry of upstream.noProxy) {
    if (entry === '*') return undefined
    const [pattern, entryPort] = entry.startsWith('[') ? [entry.slice(1, entry.indexOf(']')), entry.split(']:')[1]] : (entry.split(':') as [string, string?])
    if (entryPort !== undefined && Number(entryPort) !== port) continue
    const suffix = pattern.replace(/^\*?\./, '')
    if (name === suffix || name.endsWith(`.${suffix}`)) return undefined
  }
  return plainHttp ? (upstream.http ?? upstream.https) : (upstream.https ?? upstream.http)
}

/**
 * A socket tunnelled to host:port through `proxy` (CONNECT), or the error. Bytes the proxy sent
 * after its answer are handed back to the socket's reader.
 */
export function connectThrough(proxy: URL, host: string, port: number, timeoutMs: number, track: (socket: net.Socket) => void): Promise<net.Socket | Error> {
  return new Promise(done => {
    // Without Nagle's algorithm, as the proxy's direct connections: a tunnel's small writes (TLS
    // records of a request) would otherwise wait for the far end's delayed ACK.
    const socket = net.connect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port || 80), allowHalfOpen: true, noDelay: true })
    track(socket)
    const authority = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`
    const auth = proxy.username ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n` : ''
    let head = Buffer.alloc(0)
    const timer = setTimeout(() => finish(new Error(`the proxy ${proxy.host} did not answer within ${timeoutMs / 1000} s`)), timeoutMs)
    let settled = false
    const finish = (outcome: net.Socket | Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.off('data', onData)
      if (outcome instanceof Error) socket.destroy()
      done(outcome)
    }
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) return head.length > 16384 ? finish(new Error(`the proxy ${proxy.host} sent an oversized answer`)) : undefined
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1]
      if (status !== '200') return finish(new Error(`the proxy ${proxy.host} answered ${status ?? 'something else'} to CONNECT ${authority}`))
      const rest = head.subarray(end + 4)
      if (rest.length > 0) socket.unshift(rest)
      finish(socket)
    }
    socket.on('data', onData)
    socket.once('error', error => finish(error))
    socket.once('close', () => finish(new Error(`the proxy ${proxy.host} closed the connection`)))
    socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`))
  })
}
