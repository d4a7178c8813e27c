// The marks of nested repositories a session made or changed (src/host/reported-repos.ts): by the
// identity of their `.git`, so a rename keeps them; a copy is new; the file drops only marks of gone ones.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { markReported, reportedBefore, reportedFile } from '../../src/host/reported-repos.js'
import { tempDir } from '../helpers/temp.js'

function place(): { file: string; dir: string } {
  const dir = tempDir()
  fs.mkdirSync(path.join(dir, 'nested'))
  return { file: reportedFile(path.join(dir, 'nested', 'abc.json')), dir }
}

describe('marks of nested repositories', () => {
  test('a marked .git stays marked when renamed; a copy of it and an unmarked one are not', () => {
    const { file, dir } = place()
    for (const name of ['a', 'b']) fs.mkdirSync(path.join(dir, name, '.git'), { recursive: true })
    markReported(file, [path.join(dir, 'a', '.git')])
    fs.renameSync(path.join(dir, 'a'), path.join(dir, 'renamed'))
    fs.cpSync(path.join(dir, 'renamed'), path.join(dir, 'copy'), { recursive: true })
    expect(reportedBefore(file, path.join(dir, 'renamed', '.git'))).toBe(true)
    expect(reportedBefore(file, path.join(dir, 'copy', '.git'))).toBe(false)
    expect(reportedBefore(file, path.join(dir, 'b', '.git'))).toBe(false)
    expect(reportedBefore(file, path.join(dir, 'missing', '.git'))).toBe(false)
  })

  test('marks of two sessions ending one after the other are both kept; a damaged file is made anew', () => {
    const { file, dir } = place()
    for (const name of ['a', 'b']) fs.mkdirSync(path.join(dir, name))
    fs.writeFileSync(file, 'not json')
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(true)
    markReported(file, [path.join(dir, 'a')])
    markReported(file, [path.join(dir, 'b')])
    expect(['a', 'b'].map(name => reportedBefore(file, path.join(dir, name)))).toEqual([true, true])
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['reported.json'])
  })

  test('round 127: past 20,000 marks the oldest whose .git is gone are dropped, never one whose .git is still there', () => {
    const { file, dir } = place()
    for (const name of ['live', 'new']) fs.mkdirSync(path.join(dir, name))
    const live = path.join(dir, 'live')
    const gone = Array.from({ length: 20_000 }, (_, i) => [`1:${i}`, [i + 10, `/nonexistent/${i}`]])
    const [dev, ino] = [fs.lstatSync(live).dev, fs.lstatSync(live).ino]
    fs.writeFileSync(file, JSON.stringify(Object.fromEntries([[`${dev}:${ino}`, [1, live]], ...gone])))
    markReported(file, [path.join(dir, 'new')])
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
    expect(Object.keys(kept)).toHaveLength(20_001)
    expect(kept['1:0']).toBeUndefined()
    expect(['live', 'new'].map(name => reportedBefore(file, path.join(dir, name)))).toEqual([true, true])
  })

  test('a marks file that cannot be read (past 64 MiB, damaged by hand) marks every .git; none marks none', () => {
    const { file, dir } = place()
    fs.mkdirSync(path.join(dir, 'a'))
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(false)
    fs.writeFileSync(file, '{ damaged')
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(true)
  })
})
