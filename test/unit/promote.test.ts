// --promote and --dismiss with real files and processes: projects' key changes to the shared
// settings.json, promoted by several claudebox processes at once, each land (none writes over
// another's), and a dismissal survives a launch of the project composing its copies meanwhile.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { describe, expect, test } from 'vitest'
import { composeShared, HOST_ONLY_SETTINGS, pendingProposals, readSharedTree } from '../../src/state/tier-sync.js'
import { tempDir } from '../helpers/temp.js'

const ENTRIES = ['CLAUDE.md', 'agents', 'commands', 'skills', 'settings.json']

/** A claudebox home with `count` projects whose copies of the shared tier are composed. */
function world(count: number): { home: string; shared: string; instances: string[] } {
  const home = tempDir()
  const shared = path.join(home, 'shared')
  fs.mkdirSync(shared, { recursive: true })
  fs.writeFileSync(path.join(shared, 'settings.json'), '{"kept": 1}\n')
  fs.writeFileSync(path.join(shared, 'CLAUDE.md'), 'shared\n')
  const instances = Array.from({ length: count }, (_, i) => {
    const instance = path.join(home, 'instances', `${i}`.padStart(16, 'a'))
    fs.mkdirSync(path.join(instance, 'claudebox'), { recursive: true })
    fs.writeFileSync(path.join(instance, 'project-root'), `/projects/p${i}\n`)
    composeShared(instance, shared, ENTRIES, 0, HOST_ONLY_SETTINGS)
    return instance
  })
  return { home, shared, instances }
}

async function bundle(dir: string, source = 'src/commands/proposals.ts'): Promise<string> {
  const file = path.join(dir, `${path.basename(source, '.ts')}.cjs`)
  await build({ entryPoints: [path.resolve(source)], bundle: true, platform: 'node', format: 'cjs', outfile: file, logLevel: 'error' })
  return file
}

// Each process is one `claudebox --promote ID --yes`, started at the same moment as the others.
const promoter = `const { runProposals } = require(process.argv[1]); const start = Number(process.argv[4])
while (Date.now() < start);
runProposals({ claudeboxHome: process.argv[2], debug: false }, { json: false, dryRun: false, yes: true, [process.argv[5] ?? 'promote']: process.argv[3] }).then(code => process.exit(code), error => { console.error(error.message); process.exit(2) })`

const promote = (file: string, home: string, id: string, start: number, what = 'promote') =>
  promisify(execFile)(process.execPath, ['-e', promoter, file, home, id, String(start), what]).then(
    () => 0,
    (error: { code?: number }) => error.code ?? 1,
  )

describe('promotions at once', () => {
  test('four projects, fifteen rounds: every promoted key lands in the shared settings.json', async () => {
    const { home, shared, instances } = world(4)
    const file = await bundle(home)
    const lost: string[] = []
    for (let round = 0; round < 15; round++) {
      for (const [i, instance] of instances.entries()) {
        const settings = JSON.parse(fs.readFileSync(path.join(instance, 'settings.json'), 'utf8')) as Record<string, unknown>
        fs.writeFileSync(path.join(instance, 'settings.json'), JSON.stringify({ ...settings, [`p${i}r${round}`]: true }))
      }
      const start = Date.now() + 400
      const codes = await Promise.all(instances.map(instance => promote(file, home, `${path.basename(instance)}:settings.json`, start)))
      const now = JSON.parse(fs.readFileSync(path.join(shared, 'settings.json'), 'utf8')) as Record<string, unknown>
      const keys = ['kept', ...instances.map((_, i) => `p${i}r${round}`)]
      lost.push(...keys.filter(key => now[key] === undefined).map(key => `round ${round}: ${key}`))
      lost.push(...codes.flatMap((code, i) => (code === 0 ? [] : [`round ${round}: p${i} exited ${code}`])))
    }
    expect(lost).toEqual([])
    expect(fs.readdirSync(home).filter(name => name.includes('lock'))).toEqual([])
  }, 120_000)
})

describe('a dismissal while a launch of the project composes its copies', () => {
  // The launch of the project: its copies brought up to date with a shared tier that changed.
  const composer = `const { composeShared, HOST_ONLY_SETTINGS } = require(process.argv[1]); const start = Number(process.argv[3])
while (Date.now() < start);
composeShared(process.argv[2], process.argv[4], ${JSON.stringify(ENTRIES)}, 0, HOST_ONLY_SETTINGS)`

  test('fifteen rounds: the dismissal is kept (the composition record is locked)', async () => {
    const { home, shared, instances } = world(1)
    const instance = instances[0] as string
    const [proposals, tierSync] = [await bundle(home), await bundle(home, 'src/state/tier-sync.ts')]
    const lost: number[] = []
    for (let round = 0; round < 15; round++) {
      fs.writeFileSync(path.join(shared, 'CLAUDE.md'), `shared ${round}\n`)
      const settings = JSON.parse(fs.readFileSync(path.join(instance, 'settings.json'), 'utf8')) as Record<string, unknown>
      fs.writeFileSync(path.join(instance, 'settings.json'), JSON.stringify({ ...settings, [`r${round}`]: true }))
      const start = Date.now() + 400
      await Promise.all([
        promote(proposals, home, `${path.basename(instance)}:settings.json`, start, 'dismiss'),
        promisify(execFile)(process.execPath, ['-e', composer, tierSync, instance, String(start), shared]),
      ])
      const open = pendingProposals(instance, readSharedTree(shared, ENTRIES, HOST_ONLY_SETTINGS, []), ENTRIES, HOST_ONLY_SETTINGS, []).list
      if (open.some(p => p.rel === 'settings.json')) lost.push(round)
    }
    expect(lost).toEqual([])
    expect(fs.readdirSync(home).filter(name => name.includes('lock'))).toEqual([])
  }, 120_000)
})
