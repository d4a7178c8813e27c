// sandbox/tiers.ts: which shared entries each project gets a copy of, and what is bound read-only.
import { describe, expect, test } from 'vitest'
import { planTiers } from '../../src/sandbox/tiers.js'

describe('tiers', () => {
  test('defaults: CLAUDE.md, agents, commands, skills, settings.json composed per project; SANDBOX.md bound read-only; missing ones created', () => {
    const t = planTiers('/s', '/i', undefined, false, { agents: 'dir' })
    expect(t.entries).toEqual(['CLAUDE.md', 'agents', 'commands', 'skills', 'settings.json'])
    expect(t.binds).toEqual([['/s/SANDBOX.md', '/i/SANDBOX.md', true]])
    expect(t.mkdirs.map(m => m.path)).toEqual(['/s/commands', '/s/skills'])
    expect(t.files.map(f => [f.path, f.content])).toEqual([
      ['/s/CLAUDE.md', '@SANDBOX.md\n'],
      ['/s/settings.json', '{}\n'],
      ['/s/SANDBOX.md', expect.stringContaining('You are running inside claudebox')],
    ])
  })
  test('the user moves entries between tiers; sharedReadOnly binds the instance copies read-only', () => {
    const t = planTiers('/s', '/i', ['agents', 'plugins'], true, {})
    expect(t.entries).toEqual(['agents', 'plugins'])
    expect(t.binds).toEqual([
      ['/s/SANDBOX.md', '/i/SANDBOX.md', true],
      ['/i/agents', '/i/agents', true],
      ['/i/plugins', '/i/plugins', true],
    ])
  })
})
