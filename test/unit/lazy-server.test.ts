// listenLazily: a real unix socket and real HTTP clients; the protocol is a real http.Server that
// never listens itself, loaded late on purpose.
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { listenLazily, type Protocol } from '../../src/network/lazy-server.js'
import { tempDir } from '../helpers/temp.js'

/** An HTTP protocol answering "hello <url>", and how often it was loaded. */
function helloProtocol(delayMs = 0, fail = false): { load: () => Promise<Protocol>; loads: () => number } {
  let loads = 0
  return {
    loads: () => loads,
    load: async () => {
      loads++
      await sleep(delayMs)
      if (fail) throw new Error('no such module')
      const server = http.createServer((req, res) => res.end(`hello ${req.url ?? ''}`))
      return { accept: socket => void server.emit('connection', socket), close: () => new Promise(done => server.close(() => done())) }
    },
  }
}

/** One request on a fresh connection: the body, or the error's code. */
function get(socketPath: string, url: string): Promise<string> {
  return new Promise(resolve => {
    http
      .get({ socketPath, path: url, agent: false }, res => {
        let body = ''
        res.on('data', (chunk: Buffer) => (body += chunk.toString()))
        res.on('end', () => resolve(body))
      })
      .on('error', error => resolve((error as NodeJS.ErrnoException).code ?? error.message))
  })
}

describe('listenLazily', () => {
  test('listens at once; the protocol loads at the first connection, which it then serves (sent before it loaded)', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const p = helloProtocol(150)
    const server = await listenLazily({ path: socketPath }, 0, p.load)
    expect(server.address).toBe(socketPath)
    await sleep(50)
    expect(p.loads()).toBe(0)
    const answers = await Promise.all([get(socketPath, '/a'), get(socketPath, '/b')])
    expect(answers).toEqual(['hello /a', 'hello /b'])
    expect(await get(socketPath, '/c')).toBe('hello /c')
    expect(p.loads()).toBe(1)
    await server.close()
  })

  test('a request written in pieces before the protocol loads arrives whole', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const server = await listenLazily({ path: socketPath }, 0, helloProtocol(200).load)
    const client = net.connect(socketPath)
    let reply = ''
    client.on('data', (chunk: Buffer) => (reply += chunk.toString()))
    for (const piece of ['GET /pie', 'ces HTTP/1.1\r\nHo', 'st: x\r\nConnection: close\r\n\r\n']) {
      client.write(piece)
      await sleep(30)
    }
    await new Promise(done => client.on('close', done))
    expect(reply).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nhello \/pieces$/)
    await server.close()
  })

  test('loadSoon loads after the delay; closing first cancels it', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const p = helloProtocol()
    const server = await listenLazily({ path: socketPath }, 0, p.load)
    server.loadSoon(50)
    await sleep(120)
    expect(p.loads()).toBe(1)
    await server.close()
    const q = helloProtocol()
    const other = await listenLazily({ path: path.join(tempDir(), 't.sock') }, 0, q.load)
    other.loadSoon(50)
    await other.close()
    await sleep(120)
    expect(q.loads()).toBe(0)
  })

  test('the warm-up runs after a load loadSoon made, once it has loaded; not after one a connection made, nor after a close', async () => {
    const warmed: string[] = []
    const socketPath = path.join(tempDir(), 's.sock')
    const p = helloProtocol(20)
    const server = await listenLazily({ path: socketPath }, 0, p.load, () => Promise.resolve(void warmed.push(`after ${p.loads()} load`)))
    server.loadSoon(10)
    await sleep(100)
    expect(warmed).toEqual(['after 1 load'])
    await server.close()
    const byConnection = path.join(tempDir(), 't.sock')
    const other = await listenLazily({ path: byConnection }, 0, helloProtocol().load, () => Promise.resolve(void warmed.push('connection')))
    expect(await get(byConnection, '/a')).toBe('hello /a')
    other.loadSoon(10)
    await sleep(60)
    await other.close()
    const closed = await listenLazily({ path: path.join(tempDir(), 'u.sock') }, 0, helloProtocol(50).load, () => Promise.resolve(void warmed.push('closed')))
    closed.loadSoon(10)
    await sleep(30)
    await closed.close()
    await sleep(60)
    expect(warmed).toEqual(['after 1 load'])
  })

  test('a protocol that cannot load: the waiting connections are closed, the server stops, the reason is kept', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const server = await listenLazily({ path: socketPath }, 0, helloProtocol(20, true).load)
    expect(await get(socketPath, '/x')).toMatch(/^(ECONNRESET|socket hang up)$/)
    expect(server.problem()).toBe('no such module')
    expect(await get(socketPath, '/y')).toMatch(/^(ECONNREFUSED|ENOENT)$/)
    await server.close()
  })

  test('maxConnections: connections beyond it are closed at once, the others served', async () => {
    const server = await listenLazily({ host: '127.0.0.1', port: 0 }, 2, helloProtocol().load)
    const held = [net.connect(server.address as number, '127.0.0.1'), net.connect(server.address as number, '127.0.0.1')]
    await Promise.all(held.map(socket => new Promise(done => socket.on('connect', done))))
    await sleep(50)
    const third = net.connect(server.address as number, '127.0.0.1')
    const ended = await new Promise<string>(done => {
      third.on('close', () => done('closed'))
      setTimeout(() => done('open'), 1000)
    })
    expect(ended).toBe('closed')
    for (const socket of held) socket.destroy()
    await server.close()
  })
})

describe('listenLazily with a key (the in-sandbox bridge presents its session\'s)', () => {
  const KEY = '0123456789abcdef0123456789abcdef'
  /** Writes `pieces` on a fresh connection, one after the other; everything that comes back, or CLOSED. */
  async function exchange(socketPath: string, pieces: readonly string[]): Promise<string> {
    const client = net.connect(socketPath)
    const closed = new Promise(resolve => client.once('close', resolve))
    let reply = ''
    client.on('data', (chunk: Buffer) => (reply += chunk.toString()))
    client.on('error', () => {})
    for (const piece of pieces) {
      if (!client.destroyed) client.write(piece)
      await sleep(20)
    }
    await closed
    return reply === '' ? 'CLOSED' : reply.split('\r\n')[0] ?? ''
  }
  const request = 'GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

  test('served when the key comes first, even in pieces and before the protocol loaded; what follows it reaches the protocol whole', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const server = await listenLazily({ path: socketPath, key: KEY }, 0, helloProtocol(100).load)
    expect(await exchange(socketPath, [KEY.slice(0, 10), `${KEY.slice(10)}\n${request.slice(0, 9)}`, request.slice(9)])).toBe('HTTP/1.1 200 OK')
    expect(await exchange(socketPath, [`${KEY}\n${request}`])).toBe('HTTP/1.1 200 OK')
    await server.close()
  })

  test('closed unanswered without it: a plain request, a wrong key, a key cut short', async () => {
    const socketPath = path.join(tempDir(), 's.sock')
    const p = helloProtocol()
    const server = await listenLazily({ path: socketPath, key: KEY }, 0, p.load)
    expect(await exchange(socketPath, [request])).toBe('CLOSED')
    expect(await exchange(socketPath, [`${KEY.replace(/.$/, '0')}\n${request}`])).toBe('CLOSED')
    const cut = net.connect(socketPath)
    const cutClosed = new Promise(resolve => cut.once('close', resolve))
    cut.end(KEY.slice(0, 20))
    await cutClosed
    expect(p.loads()).toBe(0)
    await server.close()
  })
})
