// The allow-mode proxy behind a company proxy (a second local proxy stands in for it), and HTTP
// upgrades (WebSocket) through it, from inside the real sandbox. Loopback only.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type net from 'node:net'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { companyProxy, listenOnLoopback } from '../helpers/servers.js'
import { claudebox, HAVE_BWRAP, makeRepo, makeWorld, tempDir } from '../helpers/cli.js'

const listen = listenOnLoopback

/** The site: answers plain requests, and echoes after an upgrade handshake. */
async function site(): Promise<{ port: number; hosts: string[] }> {
  const hosts: string[] = []
  const server = http.createServer((req, res) => {
    hosts.push(req.headers.host ?? '')
    res.end(`site says hi to ${req.url}`)
  })
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    hosts.push(req.headers.host ?? '')
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    socket.on('data', data => socket.write(`echo:${data.toString()}`))
  })
  return { port: await listen(server), hosts }
}

const wsClient = (target: string): string => `
const http = require('http')
const r = http.request({ host: '127.0.0.1', port: 3128, path: 'http://${target}/ws', headers: { Host: '${target}', Connection: 'Upgrade', Upgrade: 'websocket' } })
r.on('upgrade', (res, s) => { s.write('ping'); s.on('data', d => { console.log('WS ' + d); process.exit(0) }) })
r.on('response', res => { console.log('STATUS ' + res.statusCode); process.exit(0) })
r.on('error', e => { console.log('ERROR ' + e.message); process.exit(0) })
r.end()
setTimeout(() => { console.log('TIMEOUT'); process.exit(0) }, 10000)
`

describe.skipIf(!HAVE_BWRAP)('behind a company proxy, and WebSocket upgrades', () => {
  test('admitted destinations go through the host\'s HTTPS_PROXY (CONNECT, with its credentials); refused ones never reach it', async () => {
    const target = await site()
    const company = await companyProxy()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const env = { HTTPS_PROXY: `http://corp%20user:s3cret@127.0.0.1:${company.port}`, HTTP_PROXY: `http://corp%20user:s3cret@127.0.0.1:${company.port}` }
    const script = [
      `curl -s http://127.0.0.1:${target.port}/plain; echo`,
      `curl -s -p http://127.0.0.1:${target.port}/tunnel; echo`,
      `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.2:${target.port}/denied; echo`,
      // The company proxy's credentials never reach the sandbox.
      'env | grep -c s3cret || true',
    ].join('\n')
    const run = await claudebox(world, ['--network=allow', '--allow-host', `127.0.0.1:${target.port}`, '--', '-c', script], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...env } })
    expect(run.exitCode, run.stderr).toBe(0)
    const lines = run.stdout.split('\n')
    expect(lines[0]).toBe('site says hi to /plain')
    expect(lines[1]).toBe('site says hi to /tunnel')
    expect(lines[2]).toBe('403')
    expect(lines[3]).toBe('0')
    const basic = `Basic ${Buffer.from('corp user:s3cret').toString('base64')}`
    expect(company.asked).toEqual([`127.0.0.1:${target.port} auth=${basic}`, `127.0.0.1:${target.port} auth=${basic}`])
  })

  test('round 89: the company proxy is asked for the name the policy checked, not the one the sandbox wrote (LocalHost. is localhost)', async () => {
    const target = await site()
    const company = await companyProxy()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const env = { HTTPS_PROXY: `http://127.0.0.1:${company.port}`, HTTP_PROXY: `http://127.0.0.1:${company.port}` }
    const connect = `const s = require('net').connect(3128, '127.0.0.1', () => s.write('CONNECT LocalHost.:${target.port} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')); s.on('data', d => { console.log(String(d).split('\\r\\n')[0]); process.exit(0) }); setTimeout(() => process.exit(0), 5000)`
    const run = await claudebox(world, ['--network=allow', '--allow-host', `localhost:${target.port}`, '--', '-c', `node -e "${connect}"`], { cwd: repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh', ...env } })
    expect(run.stdout.trim(), run.stderr).toBe('HTTP/1.1 200 Connection Established')
    expect(company.asked).toEqual([`localhost:${target.port} auth=-`])
  })

  test("the API gateway's calls take one tunnel through it, with TLS to the API inside (the company's CA from NODE_EXTRA_CA_CERTS)", async () => {
    const dir = tempDir()
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')]
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', key, '-out', cert], { stdio: 'ignore' })
    const keys: string[] = []
    let handshakes = 0
    const api = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
      keys.push(String(req.headers['x-api-key']))
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end(req.method === 'HEAD' ? undefined : '{}')
    })
    api.on('secureConnection', () => handshakes++)
    const port = await listen(api)
    const company = await companyProxy()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    // Claude's preconnect, then three calls, each curl a connection of its own to the gateway.
    const call = 'curl -s -w "\\n" -H "x-api-key: $ANTHROPIC_API_KEY" -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"'
    const script = ['curl -s -o /dev/null -w "%{http_code}\\n" -I "$ANTHROPIC_BASE_URL/"', call, call, call].join('\n')
    const env = { CLAUDEBOX_CLAUDE: '/bin/sh', ANTHROPIC_API_KEY: 'sk-ant-api03-corp', ANTHROPIC_BASE_URL: `https://127.0.0.1:${port}`, HTTPS_PROXY: `http://127.0.0.1:${company.port}`, NODE_EXTRA_CA_CERTS: cert }
    const run = await claudebox(world, ['--', '-c', script], { cwd: repo, env })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stdout.split('\n')).toEqual(['200', '{}', '{}', '{}'])
    expect(keys).toEqual(['undefined', 'sk-ant-api03-corp', 'sk-ant-api03-corp', 'sk-ant-api03-corp'])
    // Before, each call had a tunnel and a TLS handshake of its own.
    expect(company.asked).toEqual([`127.0.0.1:${port} auth=-`])
    expect(handshakes).toBe(1)
    api.close()
  })

  test('NO_PROXY on the host: that destination is reached directly', async () => {
    const target = await site()
    const company = await companyProxy()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const run = await claudebox(world, ['--network=allow', '--allow-host', `127.0.0.1:${target.port}`, '--', '-c', `curl -s http://127.0.0.1:${target.port}/direct`], {
      cwd: repo,
      env: { CLAUDEBOX_CLAUDE: '/bin/sh', HTTPS_PROXY: `http://127.0.0.1:${company.port}`, HTTP_PROXY: `http://127.0.0.1:${company.port}`, NO_PROXY: 'localhost,127.0.0.1' },
    })
    expect(run.stdout).toBe('site says hi to /direct')
    expect(company.asked).toEqual([])
  })

  test('a WebSocket upgrade to an allowed host works through the proxy; to another host it is refused', async () => {
    const target = await site()
    const world = makeWorld()
    const repo = makeRepo(world.home, 'p')
    const run = (host: string) =>
      claudebox(world, ['--network=allow', '--allow-host', `127.0.0.1:${target.port}`, '--env', 'NODE', '--env', 'SCRIPT', '--', '-c', `"$NODE" -e "$SCRIPT"`], {
        cwd: repo,
        env: { CLAUDEBOX_CLAUDE: '/bin/sh', NODE: process.execPath, SCRIPT: wsClient(`${host}:${target.port}`) },
      })
    const allowed = await run('127.0.0.1')
    expect(allowed.stdout.trim(), allowed.stderr).toBe('WS echo:ping')
    expect(target.hosts).toEqual([`127.0.0.1:${target.port}`])
    const refused = await run('127.0.0.2')
    expect(refused.stdout.trim()).toBe('STATUS 403')
    expect(target.hosts).toHaveLength(1)
  })
})
