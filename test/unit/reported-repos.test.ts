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

  test('marks of two sessions ending one after the other are both kept; a damaged file marks every .git, and is left as it is', () => {
    const { file, dir } = place()
    for (const name of ['a', 'b', 'c']) fs.mkdirSync(path.join(dir, name))
    markReported(file, [path.join(dir, 'a')])
    markReported(file, [path.join(dir, 'b')])
    expect(['a', 'b', 'c'].map(name => reportedBefore(file, path.join(dir, name)))).toEqual([true, true, false])
    fs.writeFileSync(file, 'not json')
    expect(reportedBefore(file, path.join(dir, 'c'))).toBe(true)
    markReported(file, [path.join(dir, 'c')])
    expect(fs.readFileSync(file, 'utf8')).toBe('not json')
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['reported.json'])
  })

  test('round 128: no mark is ever dropped, not even past 20,000 of a repository renamed since (its path then names nothing); a file of 20,000 marks marks every .git, and is left as it is', () => {
    const { file, dir } = place()
    for (const name of ['sub', 'new', 'other']) fs.mkdirSync(path.join(dir, name))
    markReported(file, [path.join(dir, 'sub')])
    fs.renameSync(path.join(dir, 'sub'), path.join(dir, 'sub2'))
    const many = Object.fromEntries(Array.from({ length: 19_998 }, (_, i) => [`1:${i}`, [i + 10, `/nonexistent/${i}`]]))
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
    fs.writeFileSync(file, JSON.stringify({ ...kept, ...many }))
    expect(markReported(file, [path.join(dir, 'new')])).toBeUndefined()
    const after = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
    expect(Object.keys(after)).toHaveLength(20_000)
    expect(['sub2', 'new'].map(name => reportedBefore(file, path.join(dir, name)))).toEqual([true, true])
    // Full: every .git counts as marked, and nothing more is written (it would only grow).
    expect(reportedBefore(file, path.join(dir, 'other'))).toBe(true)
    const text = fs.readFileSync(file, 'utf8')
    expect(markReported(file, [path.join(dir, 'other')])).toMatch(/are full or cannot be read[^\n]*remove that file/)
    expect(fs.readFileSync(file, 'utf8')).toBe(text)
  })

  test('round 128: a marks file past what is read (a session made 18,000 marks of 3,900-byte paths) is never replaced by the new marks alone; the paths kept are cut to 512 bytes', () => {
    const { file, dir } = place()
    for (const name of ['a', 'b']) fs.mkdirSync(path.join(dir, name))
    const big = `{"1:1":[1,"${'x'.repeat(17 << 20)}"]}`
    fs.writeFileSync(file, big)
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(true)
    expect(markReported(file, [path.join(dir, 'b')])).toMatch(/are full or cannot be read/)
    expect(fs.statSync(file).size).toBe(big.length)
    fs.rmSync(file)
    const deep = path.join(dir, 'd'.repeat(200), 'e'.repeat(200), 'f'.repeat(200))
    fs.mkdirSync(deep, { recursive: true })
    markReported(file, [deep])
    const [[, mark]] = Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, [number, string]>) as [[string, [number, string]]]
    expect(mark[1]).toHaveLength(512)
    expect(reportedBefore(file, deep)).toBe(true)
  })

  test('a marks file that cannot be read (past 16 MiB, damaged by hand) marks every .git; none marks none', () => {
    const { file, dir } = place()
    fs.mkdirSync(path.join(dir, 'a'))
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(false)
    fs.writeFileSync(file, '{ damaged')
    expect(reportedBefore(file, path.join(dir, 'a'))).toBe(true)
  })
})
