// config.json and .claudebox.json as read by src/config/file.ts (parseConfig, parseProjectFile):
// what each key becomes, and every refusal naming the file and the key. Pure: no I/O.
import { describe, expect, test } from 'vitest'
import { parseConfig, parseProjectFile } from '../../src/config/file.js'
import type { SandboxOptions } from '../../src/config/sandbox-options.js'

const F = '/h/.claudebox/config.json'

describe('config.json validation', () => {
  test('a full, valid file', () => {
    const config = parseConfig(
      JSON.stringify({
        network: true,
        env: ['EDITOR'],
        allowHosts: ['git.corp.lan', '*.example.com:8443'],
        denyHosts: ['evil.example.com'],
        allowPresets: ['npm'],
        sharedEntries: ['CLAUDE.md', 'agents', 'plugins'],
        sharedReadOnly: true,
        approvedProjects: ['/h/src/old', { root: '/h/src/shop', sha256: 'b'.repeat(64) }],
        profiles: { offline: { network: false }, filtered: { network: 'allow' }, opus: { model: 'claude-opus-4-8', claudeArgs: ['--verbose'] } },
      }),
      F,
    )
    expect(config).toMatchObject({
      file: F,
      // booleans (the first config format) still read: true is open, false is none
      defaults: { network: 'open', env: ['EDITOR'], allowHosts: ['git.corp.lan', '*.example.com:8443'], denyHosts: ['evil.example.com'], allowPresets: ['npm'] },
      sharedEntries: ['CLAUDE.md', 'agents', 'plugins'],
      sharedReadOnly: true,
      approvedProjects: [{ root: '/h/src/old' }, { root: '/h/src/shop', sha256: 'b'.repeat(64) }],
      profiles: { offline: { options: { network: 'none' } }, filtered: { options: { network: 'allow' } }, opus: { options: {}, model: 'claude-opus-4-8', claudeArgs: ['--verbose'] } },
    })
  })

  test('valid keys map to sandbox options', () => {
    expect(parseConfig('{"network": false, "roBind": ["/data"], "env": ["FOO=1"], "sshAgent": true}', 'c.json').defaults).toEqual({
      network: 'none',
      roBinds: ['/data'],
      env: ['FOO=1'],
      sshAgent: true,
    })
  })

  test.each([
    ['{"netwrok": false}', `${F}: unknown key "netwrok"; did you mean "network"?`],
    ['{"zzz": 1}', `${F}: unknown key "zzz" (allowed: network, allowHosts, denyHosts, allowPresets, sshAgent, connectors, secretless, apiLog, roBind, bind, env, writableGitConfig, ioUring, hardLinks, pidsLimit, memoryLimit, cpuLimit, confirmFirstLaunch, sharedEntries, sharedReadOnly, profiles, approvedProjects)`],
    ['{"network": "no"}', `${F}: "network" must be one of "open", "none", "allow"`],
    ['{"bind": "/x"}', `${F}: "bind" must be a list of strings`],
    ['{"sharedEntries": ["../x"]}', `${F}: "sharedEntries": "../x" must be a plain file or directory name`],
    ['{"sharedEntries": [".claude.json"]}', `${F}: "sharedEntries": ".claude.json" is managed by claudebox itself and cannot be listed`],
    ['{"profiles": []}', `${F}: "profiles" must be an object of named profiles, like {"offline": {"network": "none"}}`],
    ['{"profiles": {"a b": {}}}', `${F}: profile name "a b" may hold only letters, digits, '.', '_' and '-'`],
    ['{"profiles": {"x": 1}}', `${F}: "profiles.x" must be an object`],
    ['{"profiles": {"x": {"modle": "opus"}}}', `${F}: unknown key "profiles.x.modle"; did you mean "profiles.x.model"?`],
    ['{"profiles": {"x": {"model": 4}}}', `${F}: "profiles.x.model" must be a string`],
    ['[1]', `${F}: must hold a JSON object, like {"network": "allow"}`],
    ['{"pidsLimit": -1}', `${F}: "pidsLimit" must be a whole number of processes up to 4194304, like 4096 (0: no limit)`],
    ['{"pidsLimit": 4194305}', `${F}: "pidsLimit" must be a whole number of processes up to 4194304, like 4096 (0: no limit)`],
    ['{"pidsLimit": "4096"}', `${F}: "pidsLimit" must be a whole number of processes up to 4194304, like 4096 (0: no limit)`],
    ['{"memoryLimit": "4GB"}', `${F}: "memoryLimit" must be a size like "4G" or "512M"`],
    ['{"profiles": {"x": {"cpuLimit": 0}}}', `${F}: "profiles.x.cpuLimit" must be a number of CPUs, like 2 or 0.5`],
  ])('%s', (text, message) => {
    expect(() => parseConfig(text, F)).toThrow(message)
  })

  test('bad JSON names the file and the parser error', () => {
    expect(() => parseConfig('{oops', F)).toThrow(/^\/h\/.claudebox\/config.json: not valid JSON \(.*\); fix it or move it away$/)
  })

  test('a project file may hold only a profile name and option keys', () => {
    expect(parseProjectFile('{"profile": "offline", "network": false}', '/p/.claudebox.json')).toEqual({ file: '/p/.claudebox.json', profile: 'offline', options: { network: 'none' } })
    expect(() => parseProjectFile('{"approvedProjects": ["/p"]}', '/p/.claudebox.json')).toThrow(/unknown key "approvedProjects"/)
  })
})

describe('config.json: the network keys', () => {
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
