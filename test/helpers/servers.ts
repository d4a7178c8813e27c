// Host servers for tests: listening on an ephemeral port of 127.0.0.1 (loopback only, never the
// machine's own addresses), closed when the test that started them ends, every connection with it
// (upgraded and tunnelled ones too, which an HTTP server's own close would wait for).
import type net from 'node:net'
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
