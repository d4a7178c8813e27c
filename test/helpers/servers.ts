// Host servers for tests: listening on an ephemeral port of 127.0.0.1 (loopback only, never the
// machine's own addresses), closed when the test that started them ends, every connection with it
// (upgraded and tunnelled ones too, which an HTTP server's own close would wait for).
import http from 'node:http'
import net from 'node:net'
import { onTestFinished } from 'vitest'

/** Listens on 127.0.0.1 for the current test; the port. */
export async function listenOnLoopback(server: net.Server): Promise<number> {
  const sockets = new Set<net.Socket>()
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(
    () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  )
  return (server.address() as net.AddressInfo).port
}

/** A company proxy on loopback: CONNECT only; records each tunnel asked for as "host:port auth=<Proxy-Authorization or ->". */
export async function companyProxy(): Promise<{ port: number; url: URL; asked: string[] }> {
  const asked: string[] = []
  const server = http.createServer((_req, res) => res.writeHead(405).end())
  server.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
    asked.push(`${req.url} auth=${req.headers['proxy-authorization'] ?? '-'}`)
    const [host, port] = (req.url ?? '').split(':')
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
  })
  const port = await listenOnLoopback(server)
  return { port, url: new URL(`http://127.0.0.1:${port}`), asked }
}
