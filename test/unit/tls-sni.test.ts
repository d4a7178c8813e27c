// The TLS server-name check of CONNECT tunnels: the ClientHello parser on real hellos from Node's
// TLS client (whole, split byte by byte, across records, damaged), and the proxy refusing a tunnel
// whose hello names another server than the one the CONNECT was admitted for.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import tls from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildPolicy } from '../../src/network/policy.js'
import type { DeniedConnection } from '../../src/network/proxy.js'
import { NETWORK_LOG_DIR, startEgress, startProxy } from '../../src/network/session.js'
import { OWN_DIR } from '../../src/state/registry.js'
import { MAX_HELLO, sniFromClientHello } from '../../src/network/tls-sni.js'
import { suiteTempDir } from '../helpers/temp.js'

/** The first bytes Node's TLS client sends for `servername` (captured by a plain TCP server). */
async function realHello(servername: string | undefined): Promise<Buffer> {
  const server = net.createServer()
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  const port = (server.address() as net.AddressInfo).port
  const first = new Promise<Buffer>(done => server.once('connection', socket => socket.once('data', (d: Buffer) => { done(d); socket.destroy() })))
  const client = tls.connect({ host: '127.0.0.1', port, ...(servername === undefined ? {} : { servername }), rejectUnauthorized: false })
  client.on('error', () => {})
  const bytes = await first
  client.destroy()
  server.close()
  return bytes
}

describe('sniFromClientHello', () => {
  test('a real hello: its server name; fed byte by byte, "need more" until the last byte', async () => {
    const hello = await realHello('api.example.test')
    expect(sniFromClientHello(hello)).toEqual({ state: 'done', sni: 'api.example.test' })
    for (let i = 1; i < hello.length; i += 97) expect(sniFromClientHello(hello.subarray(0, i))).toEqual({ state: 'need-more' })
  })

  test('a hello without a server name (an address literal): done, no name', async () => {
    expect(sniFromClientHello(await realHello(undefined))).toEqual({ state: 'done', sni: undefined })
  })

  test('a hello split across two TLS records (the name in the second) is joined', async () => {
    const hello = await realHello('split.example.test')
    const body = hello.subarray(5)
    const cut = 40
    const record = (part: Buffer): Buffer => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part])
    const twoRecords = Buffer.concat([record(body.subarray(0, cut)), record(body.subarray(cut))])
    expect(sniFromClientHello(twoRecords)).toEqual({ state: 'done', sni: 'split.example.test' })
  })

  test.each([
    ['plain HTTP', Buffer.from('GET / HTTP/1.1\r\n'), 'not-tls'],
    ['an SSH banner', Buffer.from('SSH-2.0-OpenSSH_9\r\n'), 'not-tls'],
    ['a record length of 0', Buffer.from([0x16, 3, 1, 0, 0]), 'malformed'],
    ['a record length over 16 KiB', Buffer.from([0x16, 3, 1, 0x48, 0]), 'malformed'],
    ['a ServerHello instead', Buffer.from([0x16, 3, 1, 0, 4, 0x02, 0, 0, 0]), 'malformed'],
    ['a truncated hello', Buffer.from([0x16, 3, 1, 0, 6, 0x01, 0, 0, 2, 3, 3]), 'malformed'],
  ])('%s: %s', (_name, bytes, state) => {
    expect(sniFromClientHello(bytes).state).toBe(state)
  })

  test('a hello that announces more than the limit is refused before it is all buffered', () => {
    const header = Buffer.from([0x16, 3, 1, 0x40, 0x00, 0x01, 0x02, 0x00, 0x00]) // handshake length 128 KiB
    expect(sniFromClientHello(Buffer.concat([header, Buffer.alloc(16380)]))).toMatchObject({ state: 'malformed' })
    expect(MAX_HELLO).toBe(65536)
  })
})

describe('CONNECT tunnels are held to their host by the TLS server name', () => {
  const tmp = suiteTempDir('cb-sni-')
  let dir: string
  let server: tls.Server
  let port: number
  const accepted: string[] = []

  beforeAll(async () => {
    dir = tmp()
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' })
    server = tls.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, socket => {
      accepted.push(socket.servername || '(none)')
      socket.end('hello over tls\n')
    })
    await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
    port = (server.address() as net.AddressInfo).port
  })
  afterAll(() => {
    server.close()
  })

  /** CONNECT localhost:port through the proxy, then TLS with `servername`; what came back. */
  async function throughProxy(socketPath: string, servername: string): Promise<string> {
    const raw = net.connect(socketPath)
    raw.write(`CONNECT localhost:${port} HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`)
    await new Promise<void>(done => {
      let head = ''
      const onData = (d: Buffer): void => {
        head += d.toString('latin1')
        if (head.includes('\r\n\r\n')) {
          raw.off('data', onData)
          done()
        }
      }
      raw.on('data', onData)
    })
    return await new Promise<string>(done => {
      const secure = tls.connect({ socket: raw, servername, rejectUnauthorized: false })
      let text = ''
      secure.on('data', (d: Buffer) => (text += d.toString()))
      secure.on('error', (error: Error) => done(`error: ${error.message}`))
      secure.on('close', () => done(text))
    })
  }

  test('a matching name passes; another name is refused, logged, and never reaches the server', async () => {
    const denied: DeniedConnection[] = []
    const socketPath = path.join(dir, 'proxy.sock')
    const proxy = await startProxy({ socketPath, policy: buildPolicy({ allowHosts: [`localhost:${port}`], denyHosts: [], presets: [] }), onDenied: d => void denied.push(d), resolve: () => Promise.resolve(['127.0.0.1']) })
    try {
      expect(await throughProxy(socketPath, 'localhost')).toBe('hello over tls\n')
      expect(await throughProxy(socketPath, 'other-site.example')).toMatch(/^error: |^$/)
      expect(accepted).toEqual(['localhost'])
      expect(denied).toHaveLength(1)
      expect(denied[0]).toMatchObject({ host: 'localhost', port, reason: 'the TLS server name other-site.example is not localhost' })
    } finally {
      await proxy.close()
    }
  })

  test('a server name with terminal escapes is written to the denied log escaped: no control byte reaches the file (red team, round 89)', async () => {
    // A real hello for zzzzzz.example, its name's first six bytes made OSC 0 (set the window title).
    const hello = await realHello('zzzzzz.example')
    const at = hello.indexOf('zzzzzz.example')
    Buffer.from('\x1b]0;x\x07', 'latin1').copy(hello, at)
    expect(sniFromClientHello(hello)).toEqual({ state: 'done', sni: '\x1b]0;x\x07.example' })
    const instance = path.join(dir, 'instance')
    const key = 'k'.repeat(32)
    const egress = await startEgress({ socket: path.join(dir, 'egress.sock'), key, policy: buildPolicy({ allowHosts: [`localhost:${port}`], denyHosts: [], presets: [] }) }, instance)
    const raw = net.connect(path.join(dir, 'egress.sock'))
    raw.on('error', () => {})
    let reply = ''
    raw.on('data', (d: Buffer) => {
      reply += d.toString('latin1')
      if (reply.endsWith('\r\n\r\n')) raw.write(hello)
    })
    const closed = new Promise(resolve => raw.once('close', resolve))
    raw.write(`${key}\nCONNECT localhost:${port} HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`)
    await closed
    expect(reply).toMatch(/^HTTP\/1\.1 200 /)
    expect(await egress.finish()).toMatch(/^1 connection blocked by the network allowlist; see /)
    const logDir = path.join(instance, OWN_DIR, NETWORK_LOG_DIR)
    const [file] = fs.readdirSync(logDir)
    const text = fs.readFileSync(path.join(logDir, file as string), 'utf8')
    expect(text).toMatch(new RegExp(`^\\S+\\tlocalhost\\t${port}\\tthe TLS server name \\\\x1b\\]0;x\\\\x07\\.example is not localhost\\n$`))
    expect([...text].filter(c => c !== '\t' && c !== '\n' && (c < ' ' || (c >= '\x7f' && c <= '\x9f')))).toEqual([])
  })
})
