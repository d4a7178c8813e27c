// Moving the bash claudebox's files: never over a file that reached the new place meanwhile.
import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { legacyFiles, moveLegacyFiles } from '../../src/state/migration.js'
import { sharedPaths } from '../../src/state/instance.js'
import { tempDir } from '../helpers/temp.js'

const tmp = (): string => tempDir('cb-migration-')

test("a login that reached the store while the question waited is kept, and so is the old one (red team, round 94: the old, expired login replaced it)", () => {
  const home = tmp()
  fs.writeFileSync(path.join(home, '.credentials.json'), 'old login')
  fs.writeFileSync(path.join(home, 'CLAUDE.md'), 'old notes')
  const files = legacyFiles(home)
  expect(files?.credentials).toBeDefined()
  const store = files?.credentials?.to ?? ''
  fs.mkdirSync(path.dirname(store), { recursive: true })
  fs.writeFileSync(store, 'new login') // claudebox --login in another terminal, meanwhile
  const left = moveLegacyFiles(home, files ?? { kept: [] }, true)
  expect(left).toEqual([path.join(home, '.credentials.json')])
  expect(fs.readFileSync(store, 'utf8')).toBe('new login')
  expect(fs.readFileSync(path.join(home, '.credentials.json'), 'utf8')).toBe('old login')
  expect(fs.readFileSync(path.join(sharedPaths(home).dir, 'CLAUDE.md'), 'utf8')).toBe('old notes') // moved: nothing was there
  expect(fs.existsSync(path.join(home, 'CLAUDE.md'))).toBe(false)
})

test('with nothing at the new place the files are moved, and an empty shared CLAUDE.md gives way', () => {
  const home = tmp()
  fs.writeFileSync(path.join(home, '.credentials.json'), 'old login')
  fs.writeFileSync(path.join(home, 'CLAUDE.md'), 'old notes')
  fs.mkdirSync(sharedPaths(home).dir, { recursive: true })
  fs.writeFileSync(path.join(sharedPaths(home).dir, 'CLAUDE.md'), '')
  const files = legacyFiles(home)
  expect(moveLegacyFiles(home, files ?? { kept: [] }, true)).toEqual([])
  expect(fs.readFileSync(files?.credentials?.to ?? '', 'utf8')).toBe('old login')
  expect(fs.readFileSync(path.join(sharedPaths(home).dir, 'CLAUDE.md'), 'utf8')).toBe('old notes')
  expect(fs.existsSync(path.join(home, '.credentials.json'))).toBe(false)
})
