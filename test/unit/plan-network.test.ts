// planLaunch with --network=allow: the proxy variables, the bridge in front of the program, the
// socket bound. Pure: no bwrap needed.
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { BRIDGE_PORT, PROXY_SOCKET, SOCKETS_DIR } from '../../src/network/egress-plan.js'
import { BRIDGE_FD, BRIDGE_PROGRAM, BRIDGE_SCRIPT, BRIDGE_WRAPPER, planLaunch, GO_GATE, SCOPE_HELPER, sessionSettings } from '../../src/sandbox/plan.js'

/** This session's key for its sockets (setup.ts makes a random one). */
const KEY = '0123456789abcdef0123456789abcdef'

const GATE = ['/bin/sh', '-c', GO_GATE, 'claudebox-go']
import { DEFAULT_SANDBOX, type SandboxOptions } from '../../src/config/sandbox-options.js'
import { CLAUDE_HOSTS, PRESETS } from '../../src/network/policy.js'
import { nativeBridge } from '../../src/network/bridge-native.js'
import { debianFacts, optionArgs } from '../helpers/facts.js'


describe('planLaunch with --network=allow', () => {
  const socket = '/run/user/1000/claudebox-net-0123456789ab/proxy.sock'
  const bridge = '/home/ada/.npm-global/lib/node_modules/claudebox/dist/bridge.js'
  const hostProxy = 'http://ada:hunter2@corp-proxy.lan:3128'
  const facts = (over: Parameters<typeof debianFacts>[0] = {}) =>
    debianFacts({
      egress: { node: '/usr/bin/node', nodeRoot: '/usr', bridge },
      env: { ...debianFacts().env, HTTP_PROXY: hostProxy, https_proxy: hostProxy, ALL_PROXY: hostProxy, NO_PROXY: 'corp.lan', no_proxy: 'corp.lan' },
      ...over,
    })
  const sandbox = (over: Partial<SandboxOptions> = {}): SandboxOptions => ({ ...DEFAULT_SANDBOX, network: 'allow', ...over })
  const plan = (over: Partial<SandboxOptions> = {}, f = facts()) => planLaunch(f, { claudeArgs: ['-c'], sandbox: sandbox(over), egressSocket: socket, socketsKey: KEY })
  const proxyUrl = `http://127.0.0.1:${BRIDGE_PORT}`

  test('no --share-net: its own network namespace', () => {
    const argv = plan().argv
    expect(argv).not.toContain('--share-net')
    expect(argv.slice(0, 6)).toEqual(['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--cap-drop', 'ALL'])
  })

  test('the proxy variables in both spellings, NO_PROXY for loopback, NODE_USE_ENV_PROXY', () => {
    const env = plan().env
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      expect(env[name], name).toBe(proxyUrl)
      expect(env[name.toLowerCase()], name.toLowerCase()).toBe(proxyUrl)
    }
    expect(env['NO_PROXY']).toBe('localhost,127.0.0.1,::1')
    expect(env['no_proxy']).toBe('localhost,127.0.0.1,::1')
    expect(env['NODE_USE_ENV_PROXY']).toBe('1')
  })

  test("the host's own proxy (it may carry a password) appears neither in argv nor in bwrap's environment", () => {
    const p = plan()
    expect(p.argv.join('\n')).not.toContain('hunter2')
    expect(p.argv.join('\n')).not.toContain('corp-proxy')
    expect(Object.values(p.env).join('\n')).not.toContain('hunter2')
    // Every proxy variable is set once, to the bridge.
    const names = Object.keys(p.env).filter(name => /proxy$/i.test(name) && name !== 'NODE_USE_ENV_PROXY')
    expect(names.sort()).toEqual(['ALL_PROXY', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'all_proxy', 'http_proxy', 'https_proxy', 'no_proxy'].sort())
  })

  test("... even when --env asks for it", () => {
    const p = plan({ env: ['HTTPS_PROXY', 'http_proxy=http://x:pw@elsewhere:1'] })
    expect(p.argv.join('\n')).not.toMatch(/hunter2|elsewhere/)
    expect(Object.values(p.env).join('\n')).not.toMatch(/hunter2|elsewhere/)
    expect(p.env['HTTPS_PROXY']).toBe(proxyUrl)
    // ... and says so, rather than dropping the user's value silently.
    expect(p.warnings).toContain('--env HTTPS_PROXY: claudebox sets it itself (--network=allow: the proxy inside); yours is not used')
    expect(p.warnings).toContain('--env http_proxy: claudebox sets it itself (--network=allow: the proxy inside); yours is not used')
  })

  test("with the network open the host's proxy passes, through bwrap's environment only", () => {
    const p = planLaunch(facts(), { claudeArgs: [], sandbox: { ...DEFAULT_SANDBOX, network: 'open' } })
    expect(p.env['HTTP_PROXY']).toBe(hostProxy)
    expect(p.argv.join('\n')).not.toContain('hunter2')
    expect(p.argv).not.toContain(BRIDGE_SCRIPT)
  })

  test.each<[string[], string]>([
    [[], 'localhost,127.0.0.1,::1'],
    [['git.corp.lan', '*'], 'localhost,127.0.0.1,::1'],
    // A listed loopback destination means the host's, through the proxy; the API gateway's port stays direct.
    [['localhost:8080'], '127.0.0.1:3129'],
    [['127.0.0.1:5432'], '127.0.0.1:3129'],
    [['[::1]:8080'], '127.0.0.1:3129'],
  ])('allowHosts %j -> NO_PROXY %j', (allowHosts, noProxy) => {
    const env = plan({ allowHosts }).env
    expect(env['NO_PROXY']).toBe(noProxy)
    expect(env['no_proxy']).toBe(noProxy)
  })

  test("x86_64: the native bridge copied in from fd 6, the sockets' directory bound read-only, the bridge in front of the program", () => {
    const p = plan()
    // The directory, made before bwrap starts: the proxy listens while bwrap builds the sandbox.
    expect(optionArgs(p.argv, '--ro-bind', 2)).toContainEqual([path.dirname(socket), SOCKETS_DIR])
    expect(p.socketsDir).toBe(path.dirname(socket))
    expect(PROXY_SOCKET).toBe(`${SOCKETS_DIR}/proxy.sock`)
    expect(p.argv).not.toContain(socket)
    expect(optionArgs(p.argv, '--file', 2)).toContainEqual([String(BRIDGE_FD), BRIDGE_PROGRAM])
    expect(p.argv[p.argv.indexOf(BRIDGE_PROGRAM) - 3]).toBe('0555') // --perms 0555 --file 6 /run/claudebox/bridge
    const file = p.files.find(f => f.path.startsWith('/home/ada/.claudebox/bridge/x64-'))
    expect(file?.content).toEqual(nativeBridge('x64'))
    expect(p.fds).toContainEqual({ fd: BRIDGE_FD, kind: 'file', path: file?.path })
    expect(BRIDGE_PROGRAM).toBe('/run/claudebox/bridge')
    expect(SOCKETS_DIR).toBe('/run/claudebox/net')
    expect(p.argv.slice(p.argv.indexOf('--') + 1)).toEqual([
      SCOPE_HELPER,
      ...GATE,
      BRIDGE_PROGRAM,
      KEY,
      PROXY_SOCKET,
      String(BRIDGE_PORT),
      '--',
      '/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe',
      '--settings',
      sessionSettings(false),
      '-c',
    ])
    // No node inside for the bridge: neither the script nor the wrapper.
    expect(p.argv).not.toContain(BRIDGE_SCRIPT)
    expect(p.argv).not.toContain(BRIDGE_WRAPPER)
  })

  test('--shell runs behind the same bridge', () => {
    const p = plan({ shell: true })
    const command = p.argv.slice(p.argv.indexOf('--') + 1)
    expect(command).toEqual([SCOPE_HELPER, ...GATE, BRIDGE_PROGRAM, KEY, PROXY_SOCKET, String(BRIDGE_PORT), '--', '/bin/sh', '-c'])
  })

  describe('other architectures: bridge.js under node, behind the shell wrapper', () => {
    const arm = (over: Parameters<typeof debianFacts>[0] = {}) => facts({ arch: 'arm64', ...over })

    test('the bridge read-only, the socket bound, and the wrapper in front of the program', () => {
      const p = plan({}, arm())
      expect(optionArgs(p.argv, '--ro-bind', 2)).toContainEqual([bridge, BRIDGE_SCRIPT])
      expect(optionArgs(p.argv, '--ro-bind', 2)).toContainEqual([path.dirname(socket), SOCKETS_DIR])
      expect(BRIDGE_SCRIPT).toBe('/run/claudebox/bridge.js')
      expect(p.argv.slice(p.argv.indexOf('--') + 1)).toEqual([
        ...GATE,
        '/bin/sh',
        '-c',
        BRIDGE_WRAPPER,
        'claudebox-bridge',
        '/usr/bin/node',
        BRIDGE_SCRIPT,
        `${PROXY_SOCKET}=${BRIDGE_PORT}`,
        KEY,
        '/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe',
        '--settings',
        sessionSettings(false),
        '-c',
      ])
      expect(p.argv).not.toContain(BRIDGE_PROGRAM)
      // node under /usr is visible already: not bound again
      expect(optionArgs(p.argv, '--ro-bind', 2).filter(([src]) => src === '/usr')).toHaveLength(1)
    })

    test('a node outside the system dirs gets its installation bound read-only', () => {
      const root = '/home/ada/.nvm/versions/node/v22.1.0'
      const p = plan({}, arm({ egress: { node: `${root}/bin/node`, nodeRoot: root, bridge } }))
      expect(optionArgs(p.argv, '--ro-bind', 2).filter(([src]) => src === root)).toEqual([[root, root]])
      expect(p.summary.readOnly).toContain(root)
    })

    test('--shell runs behind the same wrapper', () => {
      const { argv } = plan({ shell: true }, arm())
      const command = argv.slice(argv.indexOf('--') + 1)
      expect(command.slice(0, 8)).toEqual([...GATE, '/bin/sh', '-c', BRIDGE_WRAPPER, 'claudebox-bridge'])
      expect(command.slice(11)).toEqual([KEY, '/bin/sh', '-c'])
    })

    test('without node for the bridge (facts.egress missing) the launch stops with status 125', () => {
      const f = arm()
      delete f.egress
      expect(() => plan({}, f)).toThrow(/the sandbox's network bridge needs node inside the sandbox/)
      expect(() => plan({}, f)).toThrow(expect.objectContaining({ exitCode: 125 }))
    })
  })

  test('the summary shows the mode and the lists', () => {
    const p = plan({ allowHosts: ['git.corp.lan'], denyHosts: ['*.bad.example'], allowPresets: ['npm'] })
    expect(p.summary.network).toBe('allow')
    expect(p.summary.egress).toEqual({ allow: [...CLAUDE_HOSTS, ...(PRESETS['npm'] ?? []), 'git.corp.lan'], deny: ['*.bad.example'] })
  })

  test('open and none modes: no proxy, no bridge', () => {
    for (const network of ['open', 'none'] as const) {
      const p = planLaunch(facts(), { claudeArgs: [], sandbox: { ...DEFAULT_SANDBOX, network } })
      expect(p.argv).not.toContain(BRIDGE_SCRIPT)
      expect(p.env).not.toHaveProperty('NODE_USE_ENV_PROXY')
      expect(p.summary).not.toHaveProperty('egress')
      expect(p.argv.includes('--share-net')).toBe(network === 'open')
    }
  })

  test('x86_64 needs no node for the bridge (facts.egress missing)', () => {
    const f = facts()
    delete f.egress
    expect(plan({}, f).argv).toContain(BRIDGE_PROGRAM)
  })

  test.each<[Partial<SandboxOptions>, Record<string, string>, RegExp | undefined]>([
    [{ denyHosts: ['api.anthropic.com'] }, {}, /does not admit Claude's API \(https:\/\/api\.anthropic\.com\): in the deny list \(api\.anthropic\.com\), so Claude could not work; remove it from the deny list/],
    // The endpoint the user named on the host is admitted exactly, loopback included; the deny list still wins.
    [{}, { ANTHROPIC_BASE_URL: 'http://localhost:8080' }, undefined],
    [{ allowHosts: ['*'] }, { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080' }, undefined],
    [{ denyHosts: ['localhost:8080'] }, { ANTHROPIC_BASE_URL: 'http://localhost:8080' }, /does not admit ANTHROPIC_BASE_URL \(http:\/\/localhost:8080\): in the deny list/],
    [{ allowHosts: ['localhost:8080'] }, { ANTHROPIC_BASE_URL: 'http://localhost:8080' }, undefined],
    [{}, { ANTHROPIC_BASE_URL: 'https://gateway.example' }, undefined],
    [{ allowHosts: ['gateway.example'] }, { ANTHROPIC_BASE_URL: 'https://gateway.example' }, undefined],
    [{ denyHosts: ['api.anthropic.com'] }, { CLAUDE_CODE_USE_BEDROCK: '1' }, undefined],
  ])("Claude's API must be admitted: %j %j", (over, env, error) => {
    const f = facts({ env: { ...facts().env, ...env } })
    if (error === undefined) {
      expect(() => plan(over, f)).not.toThrow()
    } else {
      expect(() => plan(over, f)).toThrow(error)
      expect(() => plan(over, f)).toThrow(expect.objectContaining({ exitCode: 2 }))
      // --shell starts no Claude: nothing to check
      expect(() => plan({ ...over, shell: true }, f)).not.toThrow()
    }
  })

  test('a bad pattern that reached the plan unchecked is a usage error', () => {
    expect(() => plan({ allowPresets: ['nope'] })).toThrow(/^network allowlist: unknown preset "nope"/)
    expect(() => plan({ allowPresets: ['nope'] })).toThrow(expect.objectContaining({ exitCode: 2 }))
  })

  test("sockets in a directory the sandbox writes (the project, its .git, a --bind) are refused: it could swap them", () => {
    for (const dir of ['/home/ada/src/shop/tmp', '/home/ada/src/shop/.git/x', '/home/ada/scratch/t']) {
      const inside = { claudeArgs: ['-c'], sandbox: sandbox({ binds: ['/home/ada/scratch'] }), egressSocket: `${dir}/claudebox-net-0123456789ab/proxy.sock`, socketsKey: KEY }
      const f = facts({ paths: { '/home/ada/scratch': { kind: 'dir', real: '/home/ada/scratch' } } })
      expect(() => planLaunch(f, inside), dir).toThrow(/which the sandbox can write; drop that --bind/)
    }
    expect(planLaunch(facts({ paths: { '/home/ada/scratch': { kind: 'dir', real: '/home/ada/scratch' } } }), { claudeArgs: ['-c'], sandbox: sandbox({ binds: ['/home/ada/scratch'] }), egressSocket: socket, socketsKey: KEY }).socketsDir).toBe(path.dirname(socket))
  })
})
