// state/tier-files.ts readTree: what a copy of the shared entries holds, read within its bounds.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { readTree, TIER_FILES_LIMIT } from '../../src/state/tier-files.js'
import { tempDir } from '../helpers/temp.js'

describe('readTree', () => {
  test('files, links and modes: a link is kept as a link, never followed; no file is read writable for group or others', () => {
    const root = tempDir()
    fs.mkdirSync(path.join(root, 'agents/sub'), { recursive: true })
    fs.writeFileSync(path.join(root, 'agents/sub/a.md'), 'a\n', { mode: 0o666 })
    fs.chmodSync(path.join(root, 'agents/sub/a.md'), 0o777)
    fs.symlinkSync('/etc', path.join(root, 'agents/out'))
    const warnings: string[] = []
    const tree = readTree(root, ['agents'], false, warnings)
    expect([...(tree?.keys() ?? [])].sort()).toEqual(['agents/out', 'agents/sub/a.md'])
    expect(tree?.get('agents/out')).toEqual({ kind: 'symlink', target: '/etc' })
    expect(tree?.get('agents/sub/a.md')?.mode).toBe(0o755)
    expect(warnings).toEqual([])
  })

  test('round 90: folders count toward the limit (millions of empty ones held every --proposals): past it, nothing is read and a warning says so', () => {
    const root = tempDir()
    for (let i = 0; i <= TIER_FILES_LIMIT; i++) fs.mkdirSync(path.join(root, 'agents', String(i)), { recursive: true })
    const warnings: string[] = []
    expect(readTree(root, ['agents'], false, warnings)).toBeUndefined()
    expect(warnings.join('\n')).toContain(`more than ${TIER_FILES_LIMIT} files`)
  })
})
