// Runs inside the sandbox when it has no network but loopback (node bridge.js SOCKET=PORT,... KEY):
// tools speak TCP, so this forwards each 127.0.0.1:PORT to its unix socket, byte for byte: the
// launcher's egress proxy (--network=allow) and its API gateway (the credential stays on the host).
// Each connection to a socket starts with a line of its own, KEY: the launcher's servers take only
// the connections that present their session's key (another sandbox that can reach them cannot).
// It writes "ok" to fd 3 once every port listens, so the sandboxed program starts only when they work.
// Kept free of imports from the rest of claudebox: it is its own small bundle.
import fs from 'node:fs'
import net from 'node:net'

const pairs = (process.argv[2] ?? '').split(',').map(pair => {
  const at = pair.lastIndexOf('=')
  return { socketPath: pair.slice(0, at), port: Number(pair.slice(at + 1)) }
})
const key = `${process.argv[3] ?? ''}\n`

// Ctrl-C and a closed terminal are for the program in front; the bridge ends with the sandbox.
for (const signal of ['SIGINT', 'SIGQUIT', 'SIGHUP'] as const) process.on(signal, () => {})

function forward(socketPath: string): net.Server {
  return net.createServer({ allowHalfOpen: true, noDelay: true }, client => {
    const upstream = net.connect({ path: socketPath, allowHalfOpen: true })
    upstream.write(key)
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
}

let listening = 0
for (const { socketPath, port } of pairs) {
  forward(socketPath).listen({ host: '127.0.0.1', port }, () => {
    if (++listening < pairs.length) return
    fs.writeSync(3, 'ok\n')
    fs.closeSync(3)
  })
}
