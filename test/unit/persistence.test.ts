// sandbox/persistence.ts: what changed in the files that run outside the sandbox, between two snapshots.
import { describe, expect, test } from 'vitest'
import { diffSnapshots } from '../../src/sandbox/persistence.js'

describe('persistence report', () => {
  test('created, changed and removed files are listed', () => {
    expect(diffSnapshots({ '/p/.envrc': '1:2:3', '/p/.mcp.json': '1:1:1' }, { '/p/.envrc': '1:2:4', '/p/.vscode/tasks.json': '9:9:9' })).toEqual([
      { path: '/p/.envrc', kind: 'changed' },
      { path: '/p/.mcp.json', kind: 'removed' },
      { path: '/p/.vscode/tasks.json', kind: 'created' },
    ])
  })
})
