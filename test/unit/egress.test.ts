// --network=allow: how the options reach it (cli, config.json, profiles).
import { describe, expect, test } from 'vitest'
import { parseConfig, parseProjectFile, type Config } from '../../src/config/file.js'
import { resolveOptions } from '../../src/config/profiles.js'
import type { SandboxOptions } from '../../src/config/sandbox-options.js'

const DIGEST = 'a'.repeat(64)

// ---------------------------------------------------------------- how the options get there

describe('config.json', () => {
  const F = '/h/.claudebox/config.json'
  test.each<[unknown, SandboxOptions['network']]>([
    ['allow', 'allow'],
    ['open', 'open'],
    ['none', 'none'],
    [true, 'open'],
    [false, 'none'],
  ])('"network": %j -> %s', (value, mode) => {
    expect(parseConfig(JSON.stringify({ network: value }), F).defaults.network).toBe(mode)
    expect(parseConfig(JSON.stringify({ profiles: { p: { network: value } } }), F).profiles['p']?.options.network).toBe(mode)
    expect(parseProjectFile(JSON.stringify({ network: value }), '/p/.claudebox.json').options.network).toBe(mode)
  })

  test.each<[object, string]>([
    [{ network: 'bogus' }, `${F}: "network" must be one of "open", "none", "allow"`],
    [{ network: 1 }, `${F}: "network" must be one of "open", "none", "allow"`],
    [{ network: 'Allow' }, `${F}: "network" must be one of "open", "none", "allow"`],
    [{ profiles: { p: { network: 'bogus' } } }, `${F}: "profiles.p.network" must be one of "open", "none", "allow"`],
    [{ allowHosts: ['ok.example', 'a*b'] }, `${F}: "allowHosts": "a*b": a wildcard may only be a leading "*." (like *.example.com)`],
    [{ denyHosts: ['x:70000'] }, `${F}: "denyHosts": "x:70000": the port must be 1-65535 or *`],
    [{ profiles: { p: { allowHosts: ['a b'] } } }, `${F}: "profiles.p.allowHosts": "a b" is not a host name, an IP address or a *.domain pattern`],
    [{ allowHosts: 'a.example' }, `${F}: "allowHosts" must be a list of strings`],
    [{ allowHosts: [1] }, `${F}: "allowHosts" must be a list of strings`],
    [{ allowPresets: ['npm', 'nope'] }, `${F}: "allowPresets": unknown preset "nope" (presets: npm, pypi, crates, go, github)`],
    [{ allowPreset: ['npm'] }, `${F}: unknown key "allowPreset"; did you mean "allowPresets"?`],
  ])('%j -> %s', (data, message) => {
    expect(() => parseConfig(JSON.stringify(data), F)).toThrow(message)
  })

  test('the lists are read as written', () => {
    const config = parseConfig(JSON.stringify({ network: 'allow', allowHosts: ['*.corp.lan', 'localhost:8080'], denyHosts: ['x.corp.lan'], allowPresets: ['npm', 'pypi'] }), F)
    expect(config.defaults).toEqual({ network: 'allow', allowHosts: ['*.corp.lan', 'localhost:8080'], denyHosts: ['x.corp.lan'], allowPresets: ['npm', 'pypi'] })
  })

  test('a project file with a bad host names the file and the key', () => {
    expect(() => parseProjectFile('{"denyHosts": ["*.*.x"]}', '/p/.claudebox.json')).toThrow('/p/.claudebox.json: "denyHosts": "*.*.x": a wildcard may only be a leading')
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
