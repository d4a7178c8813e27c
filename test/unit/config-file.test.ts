// config.json and .claudebox.json as read by src/config/file.ts (parseConfig, parseProjectFile):
// what each key becomes, and every refusal naming the file and the key. Pure: no I/O.
import { describe, expect, test } from 'vitest'
import { parseConfig, parseProjectFile } from '../../src/config/file.js'
import type { SandboxOptions } from '../../src/config/sandbox-options.js'

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
