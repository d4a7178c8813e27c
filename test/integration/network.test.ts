// --network=open|none|allow with real bwrap, real processes and a temporary HOME: every attempt
// below is made from inside the sandbox (curl through the proxy variables, python3 for raw TCP,
// UDP, name lookups and abstract unix sockets), against servers this test runs on the host.
// Each blocked case has an open-network control that succeeds, so a test that cannot fail would show.
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import dgram from 'node:dgram'
import dns from 'node:dns'
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, onTestFinished, test } from 'vitest'
import { listenOnLoopback } from '../helpers/servers.js'
import { BIN, claudebox, HAVE_BWRAP, landlockScopeSupported, makeRepo, makeWorld, requiredTool, type CliResult, type World, instancePath } from '../helpers/cli.js'

const PYTHON = '/usr/bin/python3'
const HAVE_CURL = requiredTool('curl', ['--version'], 'curl (apt-get install curl)')
const HAVE_PYTHON = requiredTool(PYTHON, ['--version'], 'python3 (apt-get install python3)')
/** Whether this kernel takes the Landlock scope claudebox sets (then the host's abstract sockets are refused even with open). */
const LANDLOCK_SCOPE = landlockScopeSupported()

/**
 * The raw-socket client run inside: `probe.py LABEL KIND ARGS...` prints `LABEL: RESULT`, where
 * RESULT is `CONNECTED <reply>`, `SENT`, `RESOLVED <address>` or `FAILED <errno name>`.
 */
const PROBE = String.raw`
import errno, socket, sys
label, kind, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def connect_abstract(name):
    # Node 20 binds an abstract name padded with NULs to the whole sun_path (108 bytes): try both forms.
    refused = None
    for address in ("\0" + name, ("\0" + name).ljust(108, "\0")):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect(address)
            return s
        except ConnectionRefusedError as e:
            refused = e
    raise refused
try:
    if kind == "tcp":
        s = socket.create_connection((args[0], int(args[1])), timeout=3)
        s.sendall(b"GET /direct HTTP/1.0\r\nHost: direct\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        result = "CONNECTED " + data.split(b"\r\n\r\n", 1)[-1].decode().strip()
    elif kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(args[2].encode(), (args[0], int(args[1])))
        result = "SENT"
    elif kind == "abstract":
        s = connect_abstract(args[0])
        result = "CONNECTED " + s.recv(100).decode().strip()
    elif kind == "abstract-self":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind("\0" + args[0])
        server.listen()
        s = connect_abstract(args[0])
        peer, _ = server.accept()
        peer.sendall(b"hello from inside\n")
        result = "CONNECTED " + s.recv(100).decode().strip()
    elif kind == "resolve":
        result = "RESOLVED " + socket.getaddrinfo(args[0], 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    else:
        result = "BAD KIND " + kind
except socket.gaierror as e:
    result = "FAILED gaierror " + str(e.args[0])
except TimeoutError:
    result = "FAILED timeout"
except OSError as e:
    result = "FAILED " + errno.errorcode.get(e.errno, str(e.errno))
print(label + ": " + result, flush=True)
`

/**
 * Shell functions for the scripts run inside: `probe LABEL KIND ARGS` (the python client, at most
 * 10 s) and `req LABEL CURL-ARGS` (curl with a 5 s limit, one line: body, HTTP status, CONNECT
 * status, exit status, and curl's own message).
 */
const FUNCTIONS = [
  `probe() { timeout 10 ${PYTHON} ./.probe.py "$@" || echo "$1: probe exited $?"; }`,
  `req() { label=$1; shift; out=$(curl -sS -m 5 -w ' code=%{http_code} connect=%{http_connect}' "$@" 2>&1); rc=$?; printf '%s: %s rc=%s\\n' "$label" "$(printf %s "$out" | tr '\\n' ' ' | tr -s ' ')" "$rc"; }`,
].join('\n')

interface HostServer {
  port: number
  /** The paths requested, in order. */
  hits: string[]
}

/** An HTTP server on the host's 127.0.0.1 that answers `NAME:PATH` (or `body` on /big) and records every request. */
async function hostServer(name: string, body?: Buffer): Promise<HostServer> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '')
    if (body !== undefined && req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
      res.end(body)
      return
    }
    res.end(`${name}:${req.url ?? ''}\n`)
  })
  return { port: await listenOnLoopback(server), hits }
}

interface Project {
  world: World
  repo: string
  instance: string
}

function makeProject(): Project {
  const world = makeWorld()
  const repo = makeRepo(world.home, 'src/app')
  fs.writeFileSync(path.join(repo, '.probe.py'), PROBE)
  return { world, repo, instance: instancePath(world, `${repo}/.git`) }
}

/** Runs `script` (after FUNCTIONS) inside the sandbox with /bin/sh, through --shell. */
function run(p: Project, args: readonly string[], script: string, timeout = 20_000): Promise<CliResult> {
  return claudebox(p.world, [...args, '--shell', '--', '-c', `${FUNCTIONS}\n${script}`], { cwd: p.repo, timeout })
}

/** `LABEL: RESULT` lines of the output, by label. */
function results(stdout: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of stdout.split('\n')) {
    const match = /^([\w-]+): (.*)$/.exec(line)
    if (match) out[match[1] as string] = (match[2] as string).trim()
  }
  return out
}

interface DeniedEntry {
  time: string
  host: string
  port: string
  reason: string
}

/** The session's denied-connection logs in the instance: their paths and parsed lines. */
function deniedLogs(p: Project): { files: string[]; entries: DeniedEntry[] } {
  const dir = path.join(p.instance, 'claudebox/network')
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).map(name => path.join(dir, name)) : []
  const entries = files.flatMap(file =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(line => line !== '')
      .map(line => {
        const [time = '', host = '', port = '', reason = ''] = line.split('\t')
        return { time, host, port, reason }
      }),
  )
  return { files, entries }
}

const BLOCKED_LINE = /^claudebox: (\d+) connections? blocked by the network allowlist; see (\S+\.log) /m

const MODES = ['open', 'none', 'allow'] as const

describe.skipIf(!HAVE_BWRAP || !HAVE_CURL || !HAVE_PYTHON)('--network: attempts from inside the sandbox', () => {
  test('allow: a listed loopback service answers through the proxy (plain HTTP); plain HTTP in a CONNECT tunnel to it is refused inside the tunnel; another port gets 403; each refusal is logged and reported, and never sees a request', async () => {
    const p = makeProject()
    const [a, b] = [await hostServer('server-A'), await hostServer('server-B')]
    const script = [
      'echo "noproxy: [$NO_PROXY|$no_proxy] proxy=$HTTP_PROXY $https_proxy $ALL_PROXY"',
      `req a-plain http://localhost:${a.port}/plain`,
      `req a-tunnel -p http://localhost:${a.port}/tunnel`,
      `req b-plain http://localhost:${b.port}/plain`,
      `req b-tunnel -p http://localhost:${b.port}/tunnel`,
      // The log is the agent's record of what it was refused: it cannot erase it.
      'for f in "$CLAUDE_CONFIG_DIR"/claudebox/network/denied-*.log; do if (true >"$f") 2>/dev/null; then echo "truncate: yes"; else echo "truncate: refused"; fi; done',
    ].join('\n')
    const r = await run(p, ['--network=allow', '--allow-host', `localhost:${a.port}`], script)
    expect(r.exitCode, r.stderr).toBe(0)
    const out = results(r.stdout)
    // The list names a loopback destination, so loopback requests are sent to the proxy.
    expect(out['noproxy']).toBe('[127.0.0.1:3129|127.0.0.1:3129] proxy=http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128')
    expect(out['a-plain']).toBe('server-A:/plain code=200 connect=000 rc=0')
    // Its Host could name any site on the address (red team, round 89): the proxy answers 403 itself.
    expect(out['a-tunnel']).toBe(`claudebox: localhost:${a.port}: plain HTTP inside a CONNECT tunnel is refused, since its Host header would not be checked there (send http:// requests to the proxy as plain HTTP) code=403 connect=200 rc=0`)
    expect(out['b-plain']).toBe(`claudebox: localhost:${b.port} is blocked: not in the allowlist (allow it with --allow-host) code=403 connect=000 rc=0`)
    expect(out['b-tunnel']).toMatch(/CONNECT tunnel failed, response 403 code=000 connect=403 rc=56$/)
    expect(out['truncate']).toBe('refused')
    expect(a.hits).toEqual(['/plain'])
    expect(b.hits).toEqual([])

    const log = deniedLogs(p)
    expect(log.files).toHaveLength(1)
    expect(path.basename(log.files[0] as string)).toMatch(/^denied-.*\.log$/)
    expect(log.entries).toHaveLength(3)
    expect(log.entries[0]).toMatchObject({ host: 'localhost', port: String(a.port), reason: expect.stringMatching(/^plain HTTP inside a CONNECT tunnel is refused/) as unknown })
    for (const entry of log.entries.slice(1)) expect(entry).toMatchObject({ host: 'localhost', port: String(b.port), reason: 'not in the allowlist' })
    for (const entry of log.entries) expect(Number.isNaN(Date.parse(entry.time))).toBe(false)
    const blocked = BLOCKED_LINE.exec(r.stderr)
    expect(blocked, r.stderr).not.toBeNull()
    expect(blocked?.[1]).toBe('3')
    expect(blocked?.[2]).toBe(log.files[0])
  })

  test('direct TCP to the host loopback (no proxy) fails with none and allow, even to a listed port; with open it connects', async () => {
    const p = makeProject()
    const [a, b] = [await hostServer('server-A'), await hostServer('server-B')]
    const script = [
      `probe a-ip tcp 127.0.0.1 ${a.port}`,
      `probe a-name tcp localhost ${a.port}`,
      `probe b-ip tcp 127.0.0.1 ${b.port}`,
      `req a-noproxy --noproxy '*' http://127.0.0.1:${a.port}/noproxy`,
    ].join('\n')
    const seen: Record<string, Record<string, string>> = {}
    for (const mode of MODES) {
      const r = await run(p, [`--network=${mode}`, ...(mode === 'allow' ? ['--allow-host', `localhost:${a.port}`] : [])], script)
      expect(r.exitCode, r.stderr).toBe(0)
      seen[mode] = results(r.stdout)
    }
    expect(seen['open']).toEqual({
      'a-ip': 'CONNECTED server-A:/direct',
      'a-name': 'CONNECTED server-A:/direct',
      'b-ip': 'CONNECTED server-B:/direct',
      'a-noproxy': 'server-A:/noproxy code=200 connect=000 rc=0',
    })
    for (const mode of ['none', 'allow']) {
      expect(seen[mode]?.['a-ip'], mode).toBe('FAILED ECONNREFUSED')
      expect(seen[mode]?.['a-name'], mode).toBe('FAILED ECONNREFUSED')
      expect(seen[mode]?.['b-ip'], mode).toBe('FAILED ECONNREFUSED')
      expect(seen[mode]?.['a-noproxy'], mode).toMatch(/Failed to connect to 127\.0\.0\.1 port \d+.* code=000 connect=000 rc=7$/)
    }
    // Only the open launch reached the host's servers.
    expect(a.hits).toEqual(['/direct', '/direct', '/noproxy'])
    expect(b.hits).toEqual(['/direct'])
    expect(deniedLogs(p).files).toEqual([])
  })

  test('no route out but the proxy: a public address is unreachable, UDP goes nowhere, names do not resolve (none and allow; open as control)', async () => {
    const p = makeProject()
    const received: string[] = []
    const udp = dgram.createSocket('udp4')
    udp.on('message', message => received.push(message.toString()))
    await new Promise<void>(done => udp.bind(0, '127.0.0.1', done))
    onTestFinished(() => new Promise<void>(done => udp.close(() => done())))
    const udpPort = udp.address().port
    // A name this machine resolves (CI resolves it: it runs npm ci), else the open control is skipped.
    const name = 'registry.npmjs.org'
    const hostResolves = await dns.promises.lookup(name, { family: 4 }).then(
      () => true,
      () => false,
    )
    const script = (mode: string): string =>
      [
        `probe udp-host udp 127.0.0.1 ${udpPort} from-${mode}`,
        'probe udp-public udp 8.8.8.8 53 query',
        'probe tcp-public tcp 1.1.1.1 443',
        `probe resolve-name resolve ${name}`,
        'probe resolve-localhost resolve localhost',
        `timeout 10 getent hosts ${name} >/dev/null; echo "getent: $?"`,
      ].join('\n')
    const seen: Record<string, Record<string, string>> = {}
    for (const mode of MODES) {
      const r = await run(p, [`--network=${mode}`], script(mode))
      expect(r.exitCode, r.stderr).toBe(0)
      seen[mode] = results(r.stdout)
    }
    await new Promise(done => setTimeout(done, 200)) // a datagram in flight would land by now
    // Open: the host's UDP socket got the datagram, the name resolves as it does outside.
    expect(received).toEqual(['from-open'])
    expect(seen['open']?.['udp-host']).toBe('SENT')
    if (hostResolves) {
      expect(seen['open']?.['resolve-name']).toMatch(/^RESOLVED /)
      expect(seen['open']?.['getent']).toBe('0')
    }
    for (const mode of ['none', 'allow']) {
      const s = seen[mode] as Record<string, string>
      expect(s['udp-host'], mode).toBe('SENT') // to the sandbox's own loopback: the host never saw it (above)
      expect(s['udp-public'], mode).toBe('FAILED ENETUNREACH')
      expect(s['tcp-public'], mode).toBe('FAILED ENETUNREACH')
      expect(s['resolve-name'], mode).toMatch(/^FAILED gaierror -\d+$/)
      expect(s['getent'], mode).toBe('2')
      expect(s['resolve-localhost'], mode).toBe('RESOLVED 127.0.0.1') // /etc/hosts still works: the lookup itself is fine
    }
  })

  test("the host's abstract unix socket: found with open, absent with none and allow (their own network namespace)", async () => {
    const p = makeProject()
    const abstractName = `claudebox-test-${process.pid}-${crypto.randomBytes(6).toString('hex')}`
    let connections = 0
    const server = net.createServer(socket => {
      connections++
      socket.end('hello from the host\n')
    })
    await new Promise<void>(done => server.listen(`\0${abstractName}`, done))
    onTestFinished(() => new Promise<void>(done => server.close(() => done())))
    const script = [`probe host abstract ${abstractName}`, `probe own abstract-self ${abstractName}-inside`].join('\n')
    const seen: Record<string, Record<string, string>> = {}
    for (const mode of MODES) {
      const r = await run(p, [`--network=${mode}`], script)
      expect(r.exitCode, r.stderr).toBe(0)
      seen[mode] = results(r.stdout)
    }
    // Open shares the host's namespace: the name is found. It then connects, or, on a kernel with
    // the Landlock scope claudebox sets (Linux 6.12+), is refused with EPERM; never "no such name".
    const open = seen['open'] as Record<string, string>
    expect(open['host']).toBe(LANDLOCK_SCOPE ? 'FAILED EPERM' : 'CONNECTED hello from the host')
    expect(connections).toBe(LANDLOCK_SCOPE ? 0 : 1)
    expect(open['own']).toBe('CONNECTED hello from inside')
    for (const mode of ['none', 'allow']) {
      // ECONNREFUSED: no such name in the sandbox's namespace, while the same client reaches a
      // listener of that very name inside.
      expect(seen[mode]?.['host'], mode).toBe('FAILED ECONNREFUSED')
      expect(seen[mode]?.['own'], mode).toBe('CONNECTED hello from inside')
    }
  })

  test('allow: private and loopback addresses not listed are refused: IP-literal CONNECT, metadata address, a wildcard that leads to loopback, the deny list', async () => {
    const p = makeProject()
    const [a, b] = [await hostServer('server-A'), await hostServer('server-B')]

    // Only localhost:PORT_A is listed: other loopback and private destinations are not.
    const literal = await run(
      p,
      ['--network=allow', '--allow-host', `localhost:${a.port}`],
      [
        `req b-ip-tunnel -p http://127.0.0.1:${b.port}/`,
        `req b-v6-tunnel -p http://[::1]:${b.port}/`,
        'req lan-tunnel -p http://10.0.0.1:80/',
        'req metadata-plain http://169.254.169.254/latest/meta-data/',
      ].join('\n'),
    )
    expect(literal.exitCode, literal.stderr).toBe(0)
    const lit = results(literal.stdout)
    for (const label of ['b-ip-tunnel', 'b-v6-tunnel', 'lan-tunnel']) expect(lit[label], label).toMatch(/response 403 code=000 connect=403 rc=56$/)
    expect(lit['metadata-plain']).toBe('claudebox: 169.254.169.254:80 is blocked: not in the allowlist (allow it with --allow-host) code=403 connect=000 rc=0')
    expect(deniedLogs(p).entries.map(e => `${e.host} ${e.port} ${e.reason}`)).toEqual([
      `127.0.0.1 ${b.port} not in the allowlist`,
      `::1 ${b.port} not in the allowlist`,
      '10.0.0.1 80 not in the allowlist',
      '169.254.169.254 80 not in the allowlist',
    ])
    expect(BLOCKED_LINE.exec(literal.stderr)?.[1]).toBe('4')

    // `*:*` admits every name and port, but a wildcard never leads to loopback, however written.
    // NO_PROXY keeps loopback direct in this mode, so the client is told to use the proxy anyway.
    const wildcard = makeProject()
    const viaWildcard = await run(
      wildcard,
      ['--network=allow', '--allow-host', '*:*'],
      [
        'unset NO_PROXY no_proxy',
        `req name-plain http://localhost:${a.port}/`,
        `req name-tunnel -p http://localhost:${a.port}/`,
        `req ip-plain http://127.0.0.1:${a.port}/`,
        `req short-tunnel -p http://127.1:${a.port}/`,
        `req mapped-tunnel -p http://[::ffff:127.0.0.1]:${a.port}/`,
        `req decimal-plain http://2130706433:${a.port}/`,
      ].join('\n'),
    )
    expect(viaWildcard.exitCode, viaWildcard.stderr).toBe(0)
    const wild = results(viaWildcard.stdout)
    for (const label of ['name-plain', 'ip-plain', 'decimal-plain']) {
      expect(wild[label], label).toMatch(new RegExp(`is blocked: resolves to [^ ]*127\\.0\\.0\\.1.*, a loopback, private, link-local or this host's own address that is not listed .* code=403 connect=000 rc=0$`))
    }
    for (const label of ['name-tunnel', 'short-tunnel', 'mapped-tunnel']) expect(wild[label], label).toMatch(/response 403 code=000 connect=403 rc=56$/)
    const wildLog = deniedLogs(wildcard).entries
    expect(wildLog).toHaveLength(6)
    for (const entry of wildLog) expect(entry.reason).toMatch(/^resolves to .*a loopback, private, link-local or this host's own address that is not listed$/)
    expect(BLOCKED_LINE.exec(viaWildcard.stderr)?.[1]).toBe('6')

    // The deny list wins over an exact allow.
    const denied = makeProject()
    const viaDeny = await run(denied, ['--network=allow', '--allow-host', `localhost:${a.port}`, '--deny-host', 'localhost:*'], `req deny-plain http://localhost:${a.port}/`)
    expect(viaDeny.exitCode, viaDeny.stderr).toBe(0)
    expect(results(viaDeny.stdout)['deny-plain']).toBe(`claudebox: localhost:${a.port} is blocked: in the deny list (localhost:*) (allow it with --allow-host) code=403 connect=000 rc=0`)

    expect(a.hits).toEqual([])
    expect(b.hits).toEqual([])
  })

  test('allow: 20 MB through the proxy (plain HTTP and CONNECT) arrive intact; a session without refusals prints nothing', async () => {
    const p = makeProject()
    const body = crypto.randomBytes(20 * 1024 * 1024)
    const digest = crypto.createHash('sha256').update(body).digest('hex')
    const server = await hostServer('big', body)
    const script = [
      `curl -sS -m 15 -o /tmp/plain http://localhost:${server.port}/big; echo "plain-rc: $?"`,
      // Through a tunnel to the address: one to a name refuses plain HTTP (its Host is not checked there).
      `curl -sS -m 15 -p -o /tmp/tunnel http://127.0.0.1:${server.port}/big; echo "tunnel-rc: $?"`,
      'for f in plain tunnel; do echo "$f: $(stat -c %s /tmp/$f) $(sha256sum </tmp/$f | cut -d" " -f1)"; done',
    ].join('\n')
    const started = Date.now()
    const r = await run(p, ['--network=allow', '--allow-host', `localhost:${server.port}`, '--allow-host', `127.0.0.1:${server.port}`], script)
    const seconds = (Date.now() - started) / 1000
    expect(r.exitCode, r.stderr).toBe(0)
    const out = results(r.stdout)
    expect(out['plain-rc']).toBe('0')
    expect(out['tunnel-rc']).toBe('0')
    expect(out['plain']).toBe(`${body.length} ${digest}`)
    expect(out['tunnel']).toBe(`${body.length} ${digest}`)
    expect(server.hits).toEqual(['/big', '/big'])
    expect(seconds).toBeLessThan(10)
    expect(r.stderr).not.toMatch(/blocked/)
    expect(deniedLogs(p).files).toEqual([])
  })
})

/** A host port that never answers: python listens with a full backlog and never accepts, so SYNs are dropped. */
async function silentPort(): Promise<number> {
  const script = [
    'import socket, sys, time',
    's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)',
    'fill = [socket.socket() for _ in range(3)]',
    'for c in fill:',
    '    c.setblocking(False)',
    '    try: c.connect(s.getsockname())',
    '    except BlockingIOError: pass',
    'print(s.getsockname()[1], flush=True)',
    'sys.stdin.read()', // until the test closes stdin (or dies)
  ].join('\n')
  const child = spawn(PYTHON, ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  onTestFinished(() => void child.kill())
  const [line] = (await once(child.stdout, 'data')) as [Buffer]
  return Number(line.toString().trim())
}

/** The script's last line: when the session's program ended (the launcher's own start is not what these tests time). */
const ENDED = 'echo "ended: $(date +%s%3N)"'

/** Seconds from the session's program's end (its ENDED line in `stdout`) to now, the launcher having exited. */
function secondsAfterEnd(stdout: string): number {
  const ended = Number(results(stdout)['ended'])
  expect(ended).toBeGreaterThan(0)
  return (Date.now() - ended) / 1000
}

describe.skipIf(!HAVE_BWRAP || !HAVE_CURL || !HAVE_PYTHON)('--network=allow: the end of a session', () => {
  test('a connection attempt still pending when the sandbox ends does not hold the launcher (nor one the client gave up)', async () => {
    const p = makeProject()
    const port = await silentPort()
    const script = [
      // The attempt really is pending: a client that waits 1 s times out (28), neither refused nor connected.
      `req given-up -m 1 -p http://127.0.0.1:${port}/`,
      `req given-up-plain -m 1 http://127.0.0.1:${port}/`,
      `curl -sS -m 30 -p http://127.0.0.1:${port}/ >/dev/null 2>&1 &`,
      'sleep 0.3',
      'echo "left: yes"',
      ENDED,
    ].join('\n')
    const r = await run(p, ['--network=allow', '--allow-host', `127.0.0.1:${port}`], script, 30_000)
    const seconds = secondsAfterEnd(r.stdout)
    expect(r.exitCode, r.stderr).toBe(0)
    const out = results(r.stdout)
    expect(out['given-up']).toMatch(/Connection timed out after \d+ milliseconds code=000 connect=000 rc=28$/)
    expect(out['given-up-plain']).toMatch(/Operation timed out after \d+ milliseconds with 0 bytes received code=000 connect=000 rc=28$/)
    expect(out['left']).toBe('yes')
    // The proxy gives an attempt 15 s; the launcher used to wait that long after the sandbox ended.
    expect(seconds).toBeLessThan(8)
  }, 30_000)

  test('an API call still pending upstream when the sandbox ends does not hold the launcher', async () => {
    const p = makeProject()
    const silent = await silentPort()
    const script = `curl -s -m 1 -o /dev/null -w "api: %{http_code}\\n" -H "x-api-key: $ANTHROPIC_API_KEY" -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"; echo "left: yes"; ${ENDED}`
    const r = await claudebox(p.world, ['--shell', '--', '-c', script], { cwd: p.repo, env: { ANTHROPIC_API_KEY: 'sk-ant-api03-test', ANTHROPIC_BASE_URL: `http://127.0.0.1:${silent}` }, timeout: 30_000 })
    const seconds = secondsAfterEnd(r.stdout)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(results(r.stdout)).toMatchObject({ api: '000', left: 'yes' })
    // It stayed until the API answered (never, here): the gateway now ends the call with its client.
    expect(seconds).toBeLessThan(8)
  }, 30_000)

  test('nor one waiting for a company proxy that never answers (HTTPS_PROXY on the host)', async () => {
    const p = makeProject()
    const silent = await silentPort()
    const script = `curl -s -m 1 -o /dev/null -w "api: %{http_code}\\n" -H "x-api-key: $ANTHROPIC_API_KEY" -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"; echo "left: yes"; ${ENDED}`
    const env = { ANTHROPIC_API_KEY: 'sk-ant-api03-test', ANTHROPIC_BASE_URL: 'https://api.example.test', HTTPS_PROXY: `http://127.0.0.1:${silent}` }
    const r = await claudebox(p.world, ['--shell', '--', '-c', script], { cwd: p.repo, env, timeout: 60_000 })
    const seconds = secondsAfterEnd(r.stdout)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(results(r.stdout)).toMatchObject({ api: '000', left: 'yes' })
    // The tunnel through the company proxy waited up to 30 s after the session.
    expect(seconds).toBeLessThan(8)
  }, 60_000)
})

describe.skipIf(!HAVE_BWRAP || !HAVE_CURL || !HAVE_PYTHON)("--network=allow: the session's sockets", () => {
  test('a TMPDIR and XDG_RUNTIME_DIR inside the project: the sockets go elsewhere, out of the sandbox\'s reach, and work', async () => {
    const p = makeProject()
    const a = await hostServer('server-A')
    // "..tmp" is a name inside the project too (red team: a check on "starts with .." missed it).
    for (const [tmpName, runName] of [['tmp', 'run'], ['..tmp', '..run']] as const) {
      const [tmp, runtime] = [path.join(p.repo, tmpName), path.join(p.repo, runName)]
      for (const dir of [tmp, runtime]) fs.mkdirSync(dir, { mode: 0o700 })
      const script = [`echo "inside: [$(ls -A '${tmp}' '${runtime}' | grep -c claudebox-net)]"`, `req a-plain http://127.0.0.1:${a.port}/plain`].join('\n')
      const r = await claudebox(p.world, ['--network=allow', '--allow-host', `127.0.0.1:${a.port}`, '--shell', '--', '-c', `${FUNCTIONS}\n${script}`], {
        cwd: p.repo,
        env: { TMPDIR: tmp, XDG_RUNTIME_DIR: runtime },
      })
      expect(r.exitCode, r.stderr).toBe(0)
      const out = results(r.stdout)
      // There the agent could rename the directory (it stayed in the project) or swap its contents.
      expect(out['inside'], tmpName).toBe('[0]')
      expect(out['a-plain']).toBe('server-A:/plain code=200 connect=000 rc=0')
      expect([...fs.readdirSync(tmp), ...fs.readdirSync(runtime)]).toEqual([])
    }
  })

  test("without $XDG_RUNTIME_DIR they are in claudebox's own run/; /tmp, /run/user and a claudebox home cannot be bound, not even read-only", async () => {
    const p = makeProject()
    const r = await claudebox(p.world, ['--shell', '--', '-c', 'echo RAN'], { cwd: p.repo, env: { CLAUDEBOX_DEBUG: '1' } })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe('RAN')
    expect(r.stderr).toContain(`"--ro-bind","${p.world.claudeboxHome}/run/claudebox-net-`)
    expect(fs.readdirSync(path.join(p.world.claudeboxHome, 'run'))).toEqual([])
    // Connecting to a socket needs no write access: a read-only view of another session's is enough.
    const elsewhere = path.join(p.world.root, 'cb2')
    fs.mkdirSync(path.join(p.world.claudeboxHome, 'run'), { recursive: true })
    // (This world lives in /tmp: binding /tmp is refused first for holding its home.)
    for (const [bind, reason] of [['/tmp', /\/tmp, where other programs and other claudebox sessions keep their sockets|your home directory/], ['/run', /\/run\/user, where other programs/], [path.join(p.world.claudeboxHome, 'run'), /claudebox's state/], ['/proc', /the host's \/proc, which would show the sandbox every process/]] as const) {
      const refused = await claudebox(p.world, ['--ro-bind', bind, '--shell', '--', '-c', 'echo RAN'], { cwd: p.repo, env: { CLAUDEBOX_HOME: elsewhere } })
      expect(refused.exitCode, bind).toBe(2)
      expect(refused.stdout).not.toContain('RAN')
      expect(refused.stderr).toMatch(reason)
    }
    // Another $CLAUDEBOX_HOME, or a directory holding sessions' sockets directories (another $XDG_RUNTIME_DIR).
    const other = path.join(p.world.root, 'other-cb')
    fs.mkdirSync(path.join(other, 'run', 'claudebox-net-0badc0de-1-0123456789ab'), { recursive: true })
    fs.mkdirSync(path.join(other, 'instances'))
    const otherHome = path.join(p.world.root, 'other-home') // another HOME's ~/.claudebox/run
    fs.mkdirSync(path.join(otherHome, '.claudebox', 'run', 'claudebox-net-0badc0de-1-0123456789ab'), { recursive: true })
    for (const bind of [other, path.join(other, 'run'), otherHome]) {
      const refused = await claudebox(p.world, ['--ro-bind', bind, '--shell', '--', '-c', 'echo RAN'], { cwd: p.repo })
      expect(refused.exitCode, bind).toBe(2)
      expect(refused.stderr).toMatch(/holds claudebox sessions' sockets or state/)
    }
    // A data directory that merely has instances/ and run/ in it is not a claudebox home.
    const data = path.join(p.world.root, 'data')
    for (const name of ['instances', 'run']) fs.mkdirSync(path.join(data, name), { recursive: true })
    const allowed = await claudebox(p.world, ['--ro-bind', data, '--shell', '--', '-c', 'echo RAN'], { cwd: p.repo })
    expect(allowed.stdout, allowed.stderr).toBe('RAN')
  })
})

describe.skipIf(!HAVE_BWRAP || !HAVE_CURL || !HAVE_PYTHON)("--network=allow: another session's sockets", () => {
  test('reached through a directory bound far above them (which the bind checks do not see): its proxy and gateway close the connection unanswered, while its own bridge is served', async () => {
    const a = makeProject()
    const server = await hostServer('server-A')
    // Session A's claudebox home three levels under the directory B is given.
    const above = path.join(a.world.root, 'data')
    const home = path.join(above, 'srv', 'cb')
    const env = { CLAUDEBOX_HOME: home, ANTHROPIC_API_KEY: 'sk-ant-session-a', ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}` }
    const flag = path.join(a.repo, 'done')
    const script = `${FUNCTIONS}\nreq a-own http://127.0.0.1:${server.port}/own\necho up\nfor i in $(seq 300); do [ -e ${flag} ] && exit 0; sleep 0.1; done`
    const sessionA = spawn(process.execPath, [BIN, '--allow-host', `127.0.0.1:${server.port}`, '--shell', '--', '-c', script], { cwd: a.repo, env: { ...a.world.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    onTestFinished(() => void sessionA.kill('SIGKILL'))
    let outA = ''
    sessionA.stdout.on('data', (chunk: Buffer) => (outA += chunk.toString()))
    for (let i = 0; i < 300 && !outA.includes('up'); i++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(results(outA)['a-own']).toBe('server-A:/own code=200 connect=000 rc=0')

    const b = makeProject()
    const knock = `import glob, socket
for name in ('proxy', 'api'):
    found = glob.glob('${home}/run/claudebox-net-*/%s.sock' % name)
    if not found:
        print(name + ': MISSING'); continue
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(found[0])
    s.sendall(b'GET http://127.0.0.1:${server.port}/stolen HTTP/1.1\\r\\nHost: 127.0.0.1:${server.port}\\r\\nx-api-key: sk-ant-guess\\r\\n\\r\\n')
    try:
        got = s.recv(100)
    except Exception as e:
        got = repr(e).encode()
    print(name + ': ' + (got.split(b'\\r\\n')[0].decode() if got else 'CLOSED'))`
    fs.writeFileSync(path.join(b.repo, 'knock.py'), knock)
    const r = await claudebox(b.world, ['--network=none', '--ro-bind', above, '--shell', '--', '-c', `${PYTHON} knock.py`], { cwd: b.repo })
    fs.writeFileSync(flag, '')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(results(r.stdout)).toEqual({ proxy: 'CLOSED', api: 'CLOSED' })
    expect(server.hits).toEqual(['/own'])
    await once(sessionA, 'exit')
  })
})

describe.skipIf(!HAVE_BWRAP)('--network: what the audit shows and what is refused before launch', () => {
  test('--dry-run and --check show the mode and the lists in force', async () => {
    const p = makeProject()
    const args = ['--network=allow', '--allow-host', 'x.example:8443', '--allow-preset', 'npm', '--deny-host', '*.bad.example']
    const dry = await claudebox(p.world, ['--dry-run', ...args, '--shell'], { cwd: p.repo })
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/^# network: allow \(no network inside; .*proxy admits only the allowlist.*\)$/m)
    expect(dry.stdout).toContain('# network allow: api.anthropic.com, platform.claude.com, claude.ai, console.anthropic.com, registry.npmjs.org, registry.yarnpkg.com, x.example:8443\n')
    expect(dry.stdout).toContain('# network deny: *.bad.example\n')
    expect(dry.stdout).toContain('HTTPS_PROXY=http://127.0.0.1:3128 \\\n')
    expect(dry.stdout).toContain('NO_PROXY=localhost,127.0.0.1,::1 \\\n') // no loopback destination listed
    expect(dry.stdout).not.toContain('--share-net')
    // A dry run creates nothing but the programs its script names by digest.
    expect(fs.readdirSync(p.world.claudeboxHome).filter(name => !['seccomp', 'landlock', 'bridge'].includes(name))).toEqual([])

    // No option: the default is allow with Claude's own hosts.
    const defaultDry = await claudebox(p.world, ['--dry-run', '--shell'], { cwd: p.repo })
    expect(defaultDry.stdout).toMatch(/^# network: allow \(/m)
    expect(defaultDry.stdout).toContain('# network allow: api.anthropic.com, platform.claude.com, claude.ai, console.anthropic.com\n')
    expect(defaultDry.stdout).not.toContain('--share-net')
    const openDry = await claudebox(p.world, ['--dry-run', '--network=open', '--shell'], { cwd: p.repo })
    expect(openDry.stdout).toMatch(/^# network: open \(the host's network, shared\) -- warning: /m)
    expect(openDry.stdout).toContain('--share-net')
    const noneDry = await claudebox(p.world, ['--dry-run', '--network=none', '--shell'], { cwd: p.repo })
    expect(noneDry.stdout).toMatch(/^# network: none \(loopback only.*\)$/m)
    expect(noneDry.stdout).not.toContain('--share-net')
    expect(noneDry.stdout).not.toContain('HTTPS_PROXY=')

    const check = await claudebox(p.world, ['--check', ...args], { cwd: p.repo, env: { CLAUDEBOX_CLAUDE: '/bin/sh' } })
    expect(check.exitCode, check.stdout + check.stderr).toBe(0)
    expect(check.stdout).toMatch(/^ok {3}network: allow: no network inside; a proxy run by claudebox admits only the hosts below/m)
    expect(check.stdout).toContain('ok   network allow: api.anthropic.com, platform.claude.com, claude.ai, console.anthropic.com, registry.npmjs.org, registry.yarnpkg.com, x.example:8443\n')
    expect(check.stdout).toContain('ok   network deny: *.bad.example\n')
  })

  test('list options without --network=allow, a bad pattern, port or preset: exit 2 with the reason, nothing runs', async () => {
    const p = makeProject()
    // The list options without allow are refused at launch (src/commands/setup.ts): those three stay.
    // A bad pattern, port, preset or mode is refused by parseArgs, whose cases are unit tests
    // (test/unit/cli.test.ts): one of them here shows such a refusal reaches the user.
    const cases: [string[], RegExp][] = [
      [['--network=open', '--allow-host', 'foo'], /^claudebox: --allow-host, --deny-host and --allow-preset need --network=allow \(the network is open for this launch\)$/m],
      [['--network=none', '--deny-host', 'foo'], /need --network=allow \(the network is none for this launch\)|need --network=allow/],
      [['--network=open', '--allow-preset', 'npm'], /need --network=allow/],
      [['--network=allow', '--allow-host', 'a*b'], /^claudebox: --allow-host\/--deny-host "a\*b": a wildcard may only be a leading "\*\." \(like \*\.example\.com\)/m],
    ]
    for (const [args, message] of cases) {
      const r = await claudebox(p.world, [...args, '--shell', '--', '-c', 'touch ran'], { cwd: p.repo })
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(message)
    }
    expect(fs.existsSync(path.join(p.repo, 'ran'))).toBe(false)
  })
})
