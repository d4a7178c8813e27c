// The account keys between the shared account file and a project's .claude.json, and the
// pre-approval of the per-session API-key placeholder (real files in a temp dir).
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { describe, expect, test } from 'vitest'
import { approvePlaceholderKey, carryAccountIn, carryAccountOut, rememberPlaceholderApproval } from '../../src/state/account-state.js'
import { tempDir } from '../helpers/temp.js'

function setup(shared: object, own?: object): { sharedFile: string; instance: string; own: () => Record<string, unknown> } {
  const dir = tempDir()
  const instance = path.join(dir, 'inst')
  fs.mkdirSync(path.join(instance, 'claudebox'), { recursive: true })
  const sharedFile = path.join(dir, 'shared.json')
  fs.writeFileSync(sharedFile, JSON.stringify(shared))
  if (own) fs.writeFileSync(path.join(instance, '.claude.json'), JSON.stringify(own))
  return { sharedFile, instance, own: () => JSON.parse(fs.readFileSync(path.join(instance, '.claude.json'), 'utf8')) as Record<string, unknown> }
}

describe('account keys', () => {
  test('in: the allowlisted keys only, over the project file; an empty mount-point file becomes a real one', () => {
    const s = setup({ userID: 'u', theme: 'dark', mcpServers: { x: {} }, projects: { '/p': {} } }, { numStartups: 3, theme: 'light' })
    carryAccountIn(s.sharedFile, s.instance)
    expect(s.own()).toEqual({ numStartups: 3, theme: 'dark', userID: 'u' })
    fs.writeFileSync(path.join(s.instance, '.claude.json'), '')
    carryAccountIn(s.sharedFile, s.instance)
    expect(s.own()).toEqual({ userID: 'u', theme: 'dark' })
  })

  test('in: the record of what was carried is written when it changes, not at every launch', () => {
    const s = setup({ userID: 'u', theme: 'dark' }, { theme: 'light' })
    const record = path.join(s.instance, 'claudebox/account-in.json')
    carryAccountIn(s.sharedFile, s.instance)
    const first = fs.statSync(record).ino
    carryAccountIn(s.sharedFile, s.instance)
    expect(fs.statSync(record).ino).toBe(first)
    fs.writeFileSync(s.sharedFile, JSON.stringify({ userID: 'u', theme: 'light' }))
    carryAccountIn(s.sharedFile, s.instance)
    expect(fs.statSync(record).ino).not.toBe(first)
    expect(JSON.parse(fs.readFileSync(record, 'utf8'))).toEqual({ userID: 'u', theme: 'light' })
  })

  test("in, with the login on the host: never a Console login's key nor the approvals naming real keys; ones an earlier version left are removed", () => {
    const s = setup({ userID: 'u', primaryApiKey: 'sk-ant-api03-REAL', customApiKeyResponses: { approved: ['REALKEYTAIL000000000'] } }, { primaryApiKey: 'sk-ant-api03-REAL', customApiKeyResponses: { approved: ['REALKEYTAIL000000000'] }, numStartups: 1 })
    carryAccountIn(s.sharedFile, s.instance)
    expect(s.own()).toEqual({ numStartups: 1, userID: 'u' })
    expect(JSON.stringify(s.own())).not.toContain('REAL')
    // The opt-out ("secretless": false) carries them, as the login is inside then.
    carryAccountIn(s.sharedFile, s.instance, false)
    expect(s.own()['primaryApiKey']).toBe('sk-ant-api03-REAL')
  })

  test('in: a project file too large to read (or not a file) is left alone, never replaced', () => {
    const s = setup({ userID: 'u' }, {})
    const file = path.join(s.instance, '.claude.json')
    fs.writeFileSync(file, `{"big": "${'x'.repeat(65 << 20)}"}`)
    carryAccountIn(s.sharedFile, s.instance)
    expect(fs.statSync(file).size).toBeGreaterThan(64 << 20)
  })

  test('out: only keys the session changed, never the API key; a corrupt project file carries nothing', () => {
    const s = setup({ theme: 'dark', primaryApiKey: 'sk-user' }, {})
    carryAccountIn(s.sharedFile, s.instance)
    fs.writeFileSync(path.join(s.instance, '.claude.json'), JSON.stringify({ ...s.own(), theme: 'light', primaryApiKey: 'sk-evil', mcpServers: { x: {} } }))
    expect(carryAccountOut(s.sharedFile, s.instance)).toEqual(['theme'])
    // A huge value does not travel: one session must not grow every project's file.
    fs.writeFileSync(path.join(s.instance, '.claude.json'), JSON.stringify({ theme: 'dark', oauthAccount: { x: 'y'.repeat(100_000) } }))
    expect(carryAccountOut(s.sharedFile, s.instance)).toEqual([])
    expect(JSON.parse(fs.readFileSync(s.sharedFile, 'utf8'))).toEqual({ theme: 'light', primaryApiKey: 'sk-user' })
    fs.writeFileSync(path.join(s.instance, '.claude.json'), '{"theme": ')
    expect(carryAccountOut(s.sharedFile, s.instance)).toEqual([])
  })
})

describe('account keys carried back have the shape Claude writes', () => {
  test('round 35: a theme, onboarding flag or version of another shape stays in its project (it crossed to every project: 192 KB of any data)', () => {
    const s = setup({ theme: 'dark' }, {})
    carryAccountIn(s.sharedFile, s.instance)
    fs.writeFileSync(path.join(s.instance, '.claude.json'), JSON.stringify({ ...s.own(), theme: { msg: 'x'.repeat(60_000) }, lastOnboardingVersion: 'x$(id)', hasCompletedOnboarding: 'yes' }))
    expect(carryAccountOut(s.sharedFile, s.instance)).toEqual([])
    fs.writeFileSync(path.join(s.instance, '.claude.json'), JSON.stringify({ ...s.own(), theme: 'light-daltonized', lastOnboardingVersion: '2.1.330', hasCompletedOnboarding: true }))
    expect(carryAccountOut(s.sharedFile, s.instance).sort()).toEqual(['hasCompletedOnboarding', 'lastOnboardingVersion', 'theme'])
    expect(JSON.parse(fs.readFileSync(s.sharedFile, 'utf8'))).toEqual({ theme: 'light-daltonized', lastOnboardingVersion: '2.1.330', hasCompletedOnboarding: true })
  })
})

describe('account keys from sessions that end together', () => {
  // Each process is one launcher after its session: it carries the key its project changed back.
  const VALUES: Record<string, unknown> = { oauthAccount: { emailAddress: 'a@example.com' }, userID: 'u1', hasCompletedOnboarding: true, lastOnboardingVersion: '2.1.0', theme: 'light' }
  const KEYS = Object.keys(VALUES)
  const launcher = `const { carryAccountOut } = require(process.argv[1]); const start = Number(process.argv[4])
while (Date.now() < start);
carryAccountOut(process.argv[2], process.argv[3], true)`

  test('five projects, twelve rounds: no change is written over by another (the shared file is locked)', async () => {
    const dir = tempDir()
    const bundle = path.join(dir, 'account-state.cjs')
    await build({ entryPoints: [path.resolve('src/state/account-state.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'error' })
    const sharedFile = path.join(dir, 'shared.json')
    const instances = KEYS.map(key => {
      const instance = path.join(dir, key)
      fs.mkdirSync(path.join(instance, 'claudebox'), { recursive: true })
      fs.writeFileSync(path.join(instance, '.claude.json'), JSON.stringify({ [key]: VALUES[key] }))
      return instance
    })
    const lost: string[] = []
    for (let round = 0; round < 12; round++) {
      fs.writeFileSync(sharedFile, '{"kept": 1}')
      const start = Date.now() + 300
      await Promise.all(instances.map(instance => promisify(execFile)(process.execPath, ['-e', launcher, bundle, sharedFile, instance, String(start)])))
      const shared = JSON.parse(fs.readFileSync(sharedFile, 'utf8')) as Record<string, unknown>
      lost.push(...['kept', ...KEYS].filter(key => shared[key] === undefined).map(key => `round ${round}: ${key}`))
    }
    expect(lost).toEqual([])
    expect(fs.readdirSync(dir).filter(name => name.includes('lock'))).toEqual([])
  }, 60_000)
})

describe('the API-key placeholder', () => {
  const real = 'sk-ant-api03-the-real-key-0123456789abcdef'
  test('pre-approved when the user approved the real key; then every later placeholder, replacing the last', () => {
    const s = setup({ customApiKeyResponses: { approved: [real.slice(-20)] } }, {})
    approvePlaceholderKey(s.sharedFile, s.instance, real, 'sk-ant-api03-claudebox-first-aaaaaaaaaaaaaaaaaaaa')
    expect((s.own()['customApiKeyResponses'] as { approved: string[] }).approved).toEqual(['aaaaaaaaaaaaaaaaaaaa'])
    fs.writeFileSync(s.sharedFile, '{}')
    approvePlaceholderKey(s.sharedFile, s.instance, real, 'sk-ant-api03-claudebox-second-bbbbbbbbbbbbbbbbbbbb')
    expect((s.own()['customApiKeyResponses'] as { approved: string[] }).approved).toEqual(['bbbbbbbbbbbbbbbbbbbb'])
  })

  test('not pre-approved when the user never approved a key; approving the placeholder inside counts for later sessions', () => {
    const s = setup({}, {})
    approvePlaceholderKey(s.sharedFile, s.instance, real, 'sk-ant-api03-claudebox-first-aaaaaaaaaaaaaaaaaaaa')
    expect(s.own()['customApiKeyResponses']).toBeUndefined()
    fs.writeFileSync(path.join(s.instance, '.claude.json'), JSON.stringify({ customApiKeyResponses: { approved: ['aaaaaaaaaaaaaaaaaaaa'] } }))
    rememberPlaceholderApproval(s.instance, 'sk-ant-api03-claudebox-first-aaaaaaaaaaaaaaaaaaaa')
    approvePlaceholderKey(s.sharedFile, s.instance, real, 'sk-ant-api03-claudebox-second-bbbbbbbbbbbbbbbbbbbb')
    expect((s.own()['customApiKeyResponses'] as { approved: string[] }).approved).toEqual(['bbbbbbbbbbbbbbbbbbbb'])
  })
})
