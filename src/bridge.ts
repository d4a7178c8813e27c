// Runs inside the sandbox of --network=allow (node bridge.js SOCKET PORT): the sandbox has no
// network but loopback, and tools speak HTTP proxy over TCP, so this forwards 127.0.0.1:PORT
// to the unix socket of the launcher's proxy, byte for byte. It writes "ok" to fd 3 once it
// listens, so the sandboxed program starts only when its proxy works.
// Kept free of imports from the rest of claudebox: it is its own small bundle.
import fs from 'node:fs'
import net from 'node:net'

const [socketPath, port] = process.argv.slice(2)

// Ctrl-C and a closed terminal are for the program in front; the bridge ends with the sandbox.
for (const signal of ['SIGINT', 'SIGQUIT', 'SIGHUP'] as const) process.on(signal, () => {})

const server = net.createServer({ allowHalfOpen: true }, client => {
  const upstream = net.connect({ path: socketPath as string, allowHalfOpen: true })
  client.pipe(upstream)
  upstream.pipe(client)
  const close = (): void => {
    client.destroy()
    upstream.destroy()
  }
  for (const socket of [client, upstream]) {
    socket.on('error', close)
    socket.on('close', close)
  }
})

server.listen({ host: '127.0.0.1', port: Number(port) }, () => {
  fs.writeSync(3, 'ok\n')
  fs.closeSync(3)
})
