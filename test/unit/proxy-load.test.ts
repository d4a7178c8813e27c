// The proxy under a flood of silent connections: each is closed after the idle timeout, beyond the
// cap the oldest makes room, and a real request (Claude's next API call) still gets through.
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { buildPolicy } from '../../src/network/policy.js'
import { startProxy } from '../../src/network/proxy.js'

const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (condition()) return true
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return condition()
}

test('silent connections are capped and timed out; a CONNECT still gets through', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-flood-'))
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
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
