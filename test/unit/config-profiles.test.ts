import { describe, expect, test } from 'vitest'
import { EMPTY_CONFIG, parseConfig, type Config, type ProjectFile } from '../../src/config/file.js'
import { resolveOptions, widening } from '../../src/config/profiles.js'
import { DEFAULT_SANDBOX, type SandboxOptions } from '../../src/config/sandbox-options.js'

const F = '/h/.claudebox/config.json'
const DIGEST = 'a'.repeat(64)

describe('profiles and the narrowing rule', () => {
  const config: Config = {
    ...parseConfig(
      JSON.stringify({
        roBind: ['/data'],
        env: ['EDITOR'],
        profiles: {
          offline: { network: false },
          lean: { roBind: [], env: [] },
          keys: { bind: ['/h/.ssh'] },
          agent: { sshAgent: true },
          opus: { model: 'claude-opus-4-8' },
          verbose: { claudeArgs: ['--dangerously-skip-permissions'] },
        },
      }),
      F,
    ),
  }
  const resolve = (over: Partial<Parameters<typeof resolveOptions>[0]>) =>
    resolveOptions({ config, cli: {}, cliProfile: undefined, cliClaudeArgs: [], project: undefined, projectRoot: '/h/src/shop', ...over })

  test('merge order: defaults < config < profile < command line', () => {
    const r = resolve({ cliProfile: 'offline', cli: { sshAgent: true } })
    expect(r.sandbox).toMatchObject({ network: 'none', sshAgent: true, roBinds: ['/data'], env: ['EDITOR'] })
    expect(r.applied).toEqual([`config ${F}`, 'profile offline (--profile)'])
  })
  test("a profile's model becomes --model unless the command line names one", () => {
    expect(resolve({ cliProfile: 'opus' }).claudeArgs).toEqual(['--model', 'claude-opus-4-8'])
    expect(resolve({ cliProfile: 'opus', cliClaudeArgs: ['--model', 'haiku'] }).claudeArgs).toEqual([])
  })
  test('an unknown profile is a usage error naming the known ones', () => {
    expect(() => resolve({ cliProfile: 'nope' })).toThrow(/--profile asks for profile "nope", which .* does not define \(profiles: offline, lean, keys, agent, opus, verbose\)/)
  })
  test.each<[ProjectFile, string]>([
    [{ file: '/h/src/shop/.claudebox.json', profile: 'offline', options: {} }, 'network off'],
    [{ file: '/h/src/shop/.claudebox.json', profile: 'lean', options: {} }, 'fewer binds and variables'],
    [{ file: '/h/src/shop/.claudebox.json', profile: 'opus', options: {} }, 'a model'],
    [{ file: '/h/src/shop/.claudebox.json', options: { network: 'none' } }, 'inline network off'],
  ])('a project file that narrows is applied: %j (%s)', project => {
    const r = resolve({ project })
    expect(r.applied[1]).toMatch(/\.claudebox\.json.*narrowing only/)
  })
  test.each([
    [{ profile: 'keys' }, /adds --bind \/h\/.ssh/],
    [{ profile: 'agent' }, /forwards the ssh-agent/],
    [{ profile: 'verbose' }, /claude arguments --dangerously-skip-permissions/],
    [{ options: { binds: ['/h/.ssh'] } }, /adds --bind \/h\/.ssh/],
    [{ options: { env: ['AWS_SECRET_ACCESS_KEY'] } }, /adds --env AWS_SECRET_ACCESS_KEY/],
  ])('a project file that widens is refused unless approved: %j', (project, what) => {
    const file: ProjectFile = { file: '/h/src/shop/.claudebox.json', options: {}, sha256: 'c'.repeat(64), ...project }
    expect(() => resolve({ project: file })).toThrow(what)
    expect(() => resolve({ project: file })).toThrow(
      /a file in the repository would widen the sandbox .*unless you approve these exact contents: run claudebox on a terminal to be asked, or add \{"root":"\/h\/src\/shop","sha256":"c{64}"\} to "approvedProjects"/,
    )
    const approved = { ...config, approvedProjects: [{ root: '/h/src/shop', sha256: 'c'.repeat(64) }] }
    const run = (p: ProjectFile) => resolveOptions({ config: approved, cli: {}, cliProfile: undefined, cliClaudeArgs: [], project: p, projectRoot: '/h/src/shop' })
    expect(run(file).applied[1]).toMatch(/approved project/)
    // The agent rewrote the approved file: other bytes, another digest, asked again.
    expect(() => run({ ...file, sha256: 'd'.repeat(64) })).toThrow(/changed since you approved it; it now would widen the sandbox/)
    // An approval without a digest (older config.json) approves nothing any more.
    expect(() => run({ file: file.file, options: file.options, ...(file.profile === undefined ? {} : { profile: file.profile }) })).toThrow(/would widen/)
    const legacy = { ...config, approvedProjects: [{ root: '/h/src/shop' }] }
    expect(() => resolveOptions({ config: legacy, cli: {}, cliProfile: undefined, cliClaudeArgs: [], project: file, projectRoot: '/h/src/shop' })).toThrow(/changed since you approved it/)
  })

  test("a repository's allow list cannot ride on --network=allow from the command line", () => {
    const file: ProjectFile = { file: '/h/src/shop/.claudebox.json', options: { allowHosts: ['*:*'] }, sha256: 'c'.repeat(64) }
    expect(() => resolveOptions({ config, cli: { network: 'allow' }, cliProfile: undefined, cliClaudeArgs: [], project: file, projectRoot: '/h/src/shop' })).toThrow(/adds --allow-host \*:\*/)
  })
  test('--profile overrides the project file', () => {
    const r = resolve({ cliProfile: 'offline', project: { file: '/p/.claudebox.json', profile: 'keys', options: {} } })
    expect(r.sandbox.binds).toEqual([])
    expect(r.applied).toContain('/p/.claudebox.json ignored: --profile given')
  })
  test('widening() lists each way a candidate opens the sandbox', () => {
    // A project may lower a limit, never raise or remove one.
    expect(widening(DEFAULT_SANDBOX, { ...DEFAULT_SANDBOX, pidsLimit: 512, memoryLimit: '2G', cpuLimit: 1 })).toEqual([])
    expect(widening({ ...DEFAULT_SANDBOX, memoryLimit: '2G', cpuLimit: 1 }, { ...DEFAULT_SANDBOX, pidsLimit: 0, memoryLimit: '3G' })).toEqual([
      'raises the process limit to none',
      'raises the memory limit to 3G',
      'raises the CPU limit to none',
    ])
    expect(widening(DEFAULT_SANDBOX, { ...DEFAULT_SANDBOX, writableGitConfig: true, roBinds: ['/x'] })).toEqual(['makes .git/config writable', 'adds --ro-bind /x'])
    expect(widening(DEFAULT_SANDBOX, { ...DEFAULT_SANDBOX, ioUring: true })).toEqual(['allows io_uring'])
    expect(widening(DEFAULT_SANDBOX, { ...DEFAULT_SANDBOX, hardLinks: true })).toEqual(['allows hard links'])
    expect(widening({ ...DEFAULT_SANDBOX, network: 'none' }, { ...DEFAULT_SANDBOX, network: 'open' })).toEqual(['sets the network to open'])
    // An allowlist of any length is narrower than the open network; within allow, more hosts widen.
    const allow = { ...DEFAULT_SANDBOX, network: 'allow' as const, denyHosts: ['gist.github.com'] }
    expect(widening({ ...DEFAULT_SANDBOX, network: 'open' }, { ...allow, allowHosts: ['x.example'], allowPresets: ['npm'], denyHosts: [] })).toEqual([])
    expect(DEFAULT_SANDBOX.network).toBe('allow')
    expect(widening(allow, { ...allow, allowHosts: ['x.example'], allowPresets: ['npm'], denyHosts: [] })).toEqual([
      'adds --allow-host x.example',
      'adds --allow-preset npm',
      'drops --deny-host gist.github.com',
    ])
    expect(widening({ ...DEFAULT_SANDBOX, network: 'none' }, { ...allow, allowHosts: ['x.example'] })).toEqual(['sets the network to allow'])
  })
  test('EMPTY_CONFIG resolves to the defaults', () => {
    expect(resolveOptions({ config: EMPTY_CONFIG, cli: {}, cliProfile: undefined, cliClaudeArgs: [], project: undefined, projectRoot: '/p' }).sandbox).toEqual(DEFAULT_SANDBOX)
  })
})

describe('resolveOptions: the lists and the narrowing rule', () => {
  const F = '/h/.claudebox/config.json'
  const config: Config = parseConfig(
    JSON.stringify({
      network: 'allow',
      allowHosts: ['git.corp.lan'],
      denyHosts: ['gist.github.com'],
      allowPresets: ['github'],
      profiles: { web: { allowHosts: ['*.example.com'], allowPresets: ['npm'] }, offline: { network: 'none' } },
    }),
    F,
  )
  const resolve = (over: Partial<Parameters<typeof resolveOptions>[0]>) =>
    resolveOptions({ config, cli: {}, cliProfile: undefined, cliClaudeArgs: [], project: undefined, projectRoot: '/h/src/shop', ...over })
  const project = (options: Partial<SandboxOptions>, profile?: string) => ({ file: '/h/src/shop/.claudebox.json', options, ...(profile ? { profile } : {}) })

  test('the command line adds its hosts and presets to the config lists', () => {
    const r = resolve({ cli: { allowHosts: ['b.example'], denyHosts: ['bad.example'], allowPresets: ['npm'] } })
    expect(r.sandbox).toMatchObject({
      network: 'allow',
      allowHosts: ['git.corp.lan', 'b.example'],
      denyHosts: ['gist.github.com', 'bad.example'],
      allowPresets: ['github', 'npm'],
    })
  })

  test("... and to the profile's, which replace the config's", () => {
    const r = resolve({ cliProfile: 'web', cli: { allowHosts: ['b.example'] } })
    expect(r.sandbox).toMatchObject({ allowHosts: ['*.example.com', 'b.example'], allowPresets: ['npm'], denyHosts: ['gist.github.com'] })
  })

  test('without command-line lists the config lists stand', () => {
    expect(resolve({}).sandbox).toMatchObject({ network: 'allow', allowHosts: ['git.corp.lan'], denyHosts: ['gist.github.com'], allowPresets: ['github'] })
  })

  test.each<[Partial<SandboxOptions>, RegExp]>([
    [{ network: 'open' }, /sets the network to open/],
    [{ allowHosts: ['git.corp.lan', 'evil.example'] }, /adds --allow-host evil\.example/],
    [{ allowPresets: ['github', 'pypi'] }, /adds --allow-preset pypi/],
    [{ denyHosts: [] }, /drops --deny-host gist\.github\.com/],
  ])('a project file that widens the network is refused: %j', (options, what) => {
    expect(() => resolve({ project: project(options) })).toThrow(what)
    expect(() => resolve({ project: project(options) })).toThrow(/a file in the repository would widen the sandbox .* may only narrow it/)
    const approved = { ...config, approvedProjects: [{ root: '/h/src/shop', sha256: DIGEST }] }
    expect(resolve({ config: approved, project: { ...project(options), sha256: DIGEST } }).applied[1]).toMatch(/approved project/)
  })

  test.each<[Partial<SandboxOptions>]>([
    [{ denyHosts: ['gist.github.com', '*.example.com'] }],
    [{ network: 'none' }],
    [{ allowHosts: [] }],
    [{ allowPresets: [] }],
  ])('a project file that narrows the network is applied: %j', options => {
    const r = resolve({ project: project(options) })
    expect(r.applied[1]).toMatch(/\.claudebox\.json, narrowing only/)
    expect(r.sandbox).toMatchObject(options)
  })

  test('the order of the modes: none < allow < open', () => {
    const open = { ...config, defaults: { ...config.defaults, network: 'open' as const } }
    const none = { ...config, defaults: { ...config.defaults, network: 'none' as const } }
    expect(resolve({ config: open, project: project({ network: 'allow' }) }).sandbox.network).toBe('allow')
    expect(() => resolve({ config: none, project: project({ network: 'allow' }) })).toThrow(/sets the network to allow/)
    expect(resolve({ project: project({}, 'offline') }).sandbox.network).toBe('none')
  })
})
