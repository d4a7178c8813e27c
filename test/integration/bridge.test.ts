// The network bridge that carries the launcher's unix sockets to 127.0.0.1 ports inside a sandbox
// with no network but loopback: the native one (x86_64, bridge.x86_64.c) and the Node one behind its
// shell wrapper (other architectures), each run by real bwrap in a network namespace of its own,
// against servers of this test on unix sockets.
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { nativeBridge } from '../../src/network/bridge-native.js'
import { BRIDGE_WRAPPER } from '../../src/sandbox/plan.js'
import { HAVE_BWRAP, REPO, requiredTool, tempDir } from '../helpers/cli.js'

const HAVE_PYTHON = requiredTool('python3', ['--version'], 'python3')
const NATIVE = nativeBridge(os.arch())

/** The session's key the bridge presents first on each connection to a socket (plan.ts socketsKey). */
const KEY = '0123456789abcdef0123456789abcdef'

/** The bridge command in front of the program, for SOCKET=PORT pairs. */
type Bridge = (pairs: readonly [string, number][]) => string[]

function nativeCommand(dir: string): Bridge {
  const file = path.join(dir, 'bridge')
  fs.writeFileSync(file, NATIVE ?? new Uint8Array(), { mode: 0o755 })
  return pairs => [file, KEY, ...pairs.flatMap(([socket, port]) => [socket, String(port)]), '--']
}

const nodeCommand: Bridge = pairs => ['/bin/sh', '-c', BRIDGE_WRAPPER, 'claudebox-bridge', process.execPath, path.join(REPO, 'dist/bridge.js'), pairs.map(([s, p]) => `${s}=${p}`).join(','), KEY]

/** Runs the program behind the bridge in a fresh network namespace (only loopback, up). */
function inSandbox(prefix: readonly string[], program: readonly string[], dir: string) {
  const args = ['--dev-bind', '/', '/', '--proc', '/proc', '--unshare-user', '--unshare-net', '--unshare-pid', '--die-with-parent', '--bind', dir, dir, '--', ...prefix, ...program]
  return execa('bwrap', args, { reject: false, timeout: 30_000, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } })
}

/**
 * `server` behind the check the launcher's servers make (lazy-server.ts): a connection that does
 * not start with the key line is closed; the rest of it is `server`'s. Returns what to close.
 */
async function listen(server: net.Server, socket: string): Promise<{ close: () => void }> {
  const front = net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, connection => {
    const take = (): void => {
      const first = connection.read(KEY.length + 1) as Buffer | null
      if (first === null) return void connection.once('readable', take)
      if (first.toString() !== `${KEY}\n`) return void connection.destroy()
      server.emit('connection', connection)
      connection.resume()
    }
    take()
  })
  await new Promise<void>(resolve => front.listen(socket, resolve))
  return { close: () => void front.close() }
}

// A Python client: connects at once (no retry: the port must listen before the program starts),
// sends its input, half-closes, and prints what came back.
const HALF_CLOSE_CLIENT = `
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(sys.argv[2].encode())
s.shutdown(socket.SHUT_WR)
data = b''
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
print(data.decode())
`

const bridges: [string, (dir: string) => Bridge][] = [
  ['native', nativeCommand],
  ['node', () => nodeCommand],
]

describe.skipIf(!HAVE_BWRAP || !HAVE_PYTHON)('the network bridge inside a sandbox', () => {
  test('a native bridge exists for x86_64, where the tests run', () => {
    if (os.arch() === 'x64') expect(NATIVE?.length).toBeGreaterThan(1000)
    else expect(NATIVE).toBeUndefined()
  })

  describe.each(bridges)('%s', (name, makeBridge) => {
    test.skipIf(name === 'native' && NATIVE === undefined)('relays both ways, keeps a half-close, and is listening before the program starts', async () => {
      const dir = tempDir('cb-bridge-')
      const socket = path.join(dir, 'echo.sock')
      const server = net.createServer({ allowHalfOpen: true }, c => {
        let got = ''
        c.on('data', d => (got += String(d)))
        c.on('end', () => c.end(`echo:${got}:bye`))
      })
      const front = await listen(server, socket)
      try {
        const r = await inSandbox(makeBridge(dir)([[socket, 3128]]), ['python3', '-c', HALF_CLOSE_CLIENT, '3128', 'hello'], dir)
        expect(r.stderr).toBe('')
        expect(r.stdout.trim()).toBe('echo:hello:bye')
        expect(r.exitCode).toBe(0)
      } finally {
        front.close()
      }
    })

    test.skipIf(name === 'native' && NATIVE === undefined)('carries 16 MB each way intact, two ports, 8 connections at once', async () => {
      const dir = tempDir('cb-bridge-')
      const body = crypto.randomBytes(16 << 20)
      const digest = crypto.createHash('sha256').update(body).digest('hex')
      const uploads: string[] = []
      const handler = (port: number) => (q: http.IncomingMessage, r: http.ServerResponse) => {
        const hash = crypto.createHash('sha256')
        q.on('data', d => hash.update(d as Buffer))
        q.on('end', () => {
          if (q.method === 'POST') {
            uploads.push(hash.digest('hex'))
            r.end(`port ${port}`)
          } else r.end(body)
        })
      }
      const servers = [http.createServer(handler(3128)), http.createServer(handler(3129))]
      const sockets = [path.join(dir, 'a.sock'), path.join(dir, 'b.sock')]
      const fronts = await Promise.all(servers.map((s, i) => listen(s, sockets[i] as string)))
      fs.writeFileSync(path.join(dir, 'upload'), body)
      const script = [
        `for i in 1 2 3 4; do curl -sS http://127.0.0.1:3128/ | sha256sum & done; wait`,
        `for i in 1 2 3 4; do curl -sS --data-binary @${dir}/upload http://127.0.0.1:3129/ & done; wait; echo`,
      ].join('\n')
      try {
        const r = await inSandbox(makeBridge(dir)([[sockets[0] as string, 3128], [sockets[1] as string, 3129]]), ['/bin/sh', '-c', script], dir)
        expect(r.stderr).toBe('')
        const lines = r.stdout.trim().split('\n')
        expect(lines.slice(0, 4)).toEqual(Array(4).fill(`${digest}  -`))
        expect(lines[4]).toBe('port 3129'.repeat(4))
        expect(uploads).toEqual(Array(4).fill(digest))
      } finally {
        for (const front of fronts) front.close()
      }
    }, 60_000)

    test.skipIf(name === 'native' && NATIVE === undefined)("the program's status passes through; a socket that cannot be reached closes that connection only", async () => {
      const dir = tempDir('cb-bridge-')
      const live = path.join(dir, 'live.sock')
      const server = net.createServer(c => c.end('live'))
      const front = await listen(server, live)
      // Under a file, not a directory: connect fails at once (ENOTDIR, not "not there yet").
      fs.writeFileSync(path.join(dir, 'file'), '')
      const unreachable = path.join(dir, 'file/api.sock')
      try {
        const script = `curl -sS -m 5 http://127.0.0.1:3129/ >/dev/null 2>&1; echo "gone=$?"; python3 -c "import socket; print(socket.create_connection(('127.0.0.1', 3128)).recv(9).decode())"; exit 7`
        const r = await inSandbox(makeBridge(dir)([[live, 3128], [unreachable, 3129]]), ['/bin/sh', '-c', script], dir)
        expect(r.stdout).toMatch(/^gone=(52|56)\nlive$/)
        expect(r.exitCode).toBe(7)
      } finally {
        front.close()
      }
    })

    test.skipIf(name === 'native' && NATIVE === undefined)('Ctrl-C, Ctrl-\\ and a hang-up leave the bridge serving', async () => {
      const dir = tempDir('cb-bridge-')
      const socket = path.join(dir, 'echo.sock')
      const server = net.createServer(c => c.end('still here'))
      const front = await listen(server, socket)
      // A terminal's Ctrl-C, Ctrl-\\ and hang-up reach the whole foreground group, the bridge too
      // (a child of the program): the program sends them to its children, then connects.
      const program = `
import os, signal, socket, time
children = open('/proc/self/task/%d/children' % os.getpid()).read().split()
assert children, 'the bridge is not a child of the program'
for pid in children:
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        os.kill(int(pid), sig)
time.sleep(0.2)
print(socket.create_connection(('127.0.0.1', 3128)).recv(64).decode())`
      try {
        const r = await inSandbox(makeBridge(dir)([[socket, 3128]]), ['python3', '-c', program], dir)
        expect(r.stdout.trim(), r.stderr).toBe('still here')
        expect(r.exitCode).toBe(0)
      } finally {
        front.close()
      }
    })
  })

  describe.skipIf(NATIVE === undefined)('native only', () => {
    test('bad arguments and a program that cannot run: one line and a distinct status', async () => {
      const dir = tempDir('cb-bridge-')
      const bridge = nativeCommand(dir)([])[0] as string
      const cases: [string[], number, RegExp][] = [
        [[], 125, /usage: bridge KEY SOCKET PORT\.\.\. -- PROGRAM/],
        [[KEY], 125, /usage: bridge KEY SOCKET PORT\.\.\. -- PROGRAM/],
        [[KEY, '/s', '0', '--', 'true'], 125, /bad SOCKET PORT pair: \/s/],
        [[KEY, '/s', '70000', '--', 'true'], 125, /bad SOCKET PORT pair/],
        [[KEY, '/s', '3128', 'true'], 125, /usage/],
        [[KEY, '/s', '3128', '--'], 125, /usage/],
        [[KEY, '/s', '3128', '--', 'no-such-program-here'], 127, /cannot execute no-such-program-here/],
      ]
      for (const [args, status, message] of cases) {
        const r = await inSandbox([bridge, ...args], [], dir)
        expect(r.exitCode, args.join(' ')).toBe(status)
        expect(r.stderr).toMatch(message)
      }
      // A port already taken in this namespace.
      const r = await inSandbox([bridge, KEY, '/s', '3128', '/s', '3128', '--', 'true'], [], dir)
      expect(r.exitCode).toBe(125)
      expect(r.stderr).toMatch(/cannot listen on 127\.0\.0\.1:3128/)
    })

    test('a program named without a slash is found on PATH; the bridge ends with the program, even without a pid namespace', async () => {
      const dir = tempDir('cb-bridge-')
      const bridge = nativeCommand(dir)([[path.join(dir, 's'), 3128]])
      const r = await execa('bwrap', ['--dev-bind', '/', '/', '--unshare-user', '--unshare-net', '--', ...bridge, 'sh', '-c', 'echo $$'], { reject: false, timeout: 10_000 })
      expect(r.exitCode).toBe(0)
      expect(r.stdout.trim()).toMatch(/^\d+$/)
      // The bridge dies with its parent (PR_SET_PDEATHSIG): nothing runs from this file any more.
      await new Promise(resolve => setTimeout(resolve, 200))
      const left = fs.readdirSync('/proc').filter(pid => /^\d+$/.test(pid) && readExe(pid) === bridge[0])
      expect(left).toEqual([])
    })
  })
})

function readExe(pid: string): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`)
  } catch {
    return undefined
  }
}
