// --network=allow and the host's own addresses: a service listening on one of this machine's
// interface addresses (not loopback, not private) must not be reachable through `*:*`. The
// "machine" is a network namespace of the test's own (unshare -rn) with 198.51.100.1 on its lo,
// so no traffic ever leaves it; the proxy there reads its interfaces like on any host.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { BIN, HAVE_BWRAP, makeRepo, makeWorld, requiredTool } from '../helpers/cli.js'

const HAVE_CURL = requiredTool('curl', ['--version'], 'curl (apt-get install curl)')
const HAVE_NETNS = requiredTool('unshare', ['-rn', 'ip', 'link', 'set', 'lo', 'up'], 'unshare and ip (apt-get install util-linux iproute2)')
const ADDRESS = '198.51.100.1'
const PORT = 18080

describe.skipIf(!HAVE_BWRAP || !HAVE_CURL || !HAVE_NETNS)("--network=allow: this host's own interface address", () => {
  test("refused through *:*, reached when that exact address is listed", async () => {
    const world = makeWorld()
    const project = makeRepo(world.home, 'src/p')
    const log = path.join(world.root, 'connections')
    const server = `require('net').createServer(s => { require('fs').appendFileSync('${log}', 'hit\\n'); s.end('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok') }).listen(${PORT}, '${ADDRESS}')`
    const inside = `curl -s -o /dev/null -w '%{http_code}' -x "$HTTP_PROXY" http://${ADDRESS}:${PORT}/; echo; curl -s -o /dev/null -w '%{http_connect}' -p -x "$HTTP_PROXY" http://${ADDRESS}:${PORT}/; echo`
    const launch = (allow: string): string => `node ${BIN} --network=allow --allow-host '${allow}' -- -c '${inside.replaceAll("'", "'\\''")}'`
    const script = [
      'set -e',
      'ip link set lo up',
      `ip addr add ${ADDRESS}/32 dev lo`,
      `node -e "${server}" & pid=$!`,
      'sleep 0.5',
      `echo "wildcard: $(${launch('*:*')} | tr '\\n' ' ')"`,
      `echo "hits after wildcard: $(cat ${log} 2>/dev/null | wc -l)"`,
      `echo "exact: $(${launch(`${ADDRESS}:${PORT}`)} | tr '\\n' ' ')"`,
      'kill $pid',
    ].join('\n')
    const { stdout } = await promisify(execFile)('unshare', ['-rn', 'sh', '-c', script], { cwd: project, env: { ...world.env, CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout: 60_000 })
    expect(stdout).toContain('wildcard: 403 403 ')
    expect(stdout).toContain('hits after wildcard: 0')
    expect(stdout).toContain('exact: 200 200 ')
    expect(fs.readFileSync(log, 'utf8')).toBe('hit\nhit\n')
  })
})
