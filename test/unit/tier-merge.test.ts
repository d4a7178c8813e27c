// The three-way rules of per-project tier copies, the proposals, and the line diff that shows them.
import { describe, expect, test } from 'vitest'
import { lineDiff } from '../../src/cli/text-diff.js'
import { sha256Hex } from '../../src/sha256.js'
import { applyJsonOps, composeTree, jsonDelta, jsonNode, proposals, type TierNode, type Tree } from '../../src/sandbox/tier-merge.js'

const file = (text: string): TierNode => ({ kind: 'file', sha256: sha256Hex(text), data: Buffer.from(text) })
const json = (value: unknown): TierNode => jsonNode(value)
const tree = (entries: Record<string, TierNode>): Tree => new Map(Object.entries(entries))

describe('composeTree', () => {
  test('untouched paths follow the shared tier: added, changed and removed there', () => {
    const base = tree({ 'agents/a.md': file('a'), 'agents/gone.md': file('g') })
    const work = tree({ 'agents/a.md': file('a'), 'agents/gone.md': file('g') })
    const shared = tree({ 'agents/a.md': file('a2'), 'agents/new.md': file('n') })
    const plan = composeTree(shared, base, work)
    expect(plan.write.map(([rel]) => rel)).toEqual(['agents/a.md', 'agents/new.md'])
    expect(plan.remove).toEqual(['agents/gone.md'])
  })

  test("the project's own changes are kept: edited, added and removed files", () => {
    const base = tree({ 'CLAUDE.md': file('shared'), 'agents/x.md': file('x') })
    const work = tree({ 'CLAUDE.md': file('mine'), 'agents/mine.md': file('m') })
    const shared = tree({ 'CLAUDE.md': file('shared v2'), 'agents/x.md': file('x v2') })
    expect(composeTree(shared, base, work)).toEqual({ write: [], remove: [] })
  })

  test('JSON objects changed on both sides are merged key by key (nested objects too)', () => {
    const base = tree({ 'settings.json': json({ model: 'opus', permissions: { allow: ['a'] }, theme: 'dark' }) })
    const work = tree({ 'settings.json': json({ model: 'sonnet', permissions: { allow: ['a'] }, theme: 'dark', hooks: { Stop: [] } }) })
    const shared = tree({ 'settings.json': json({ model: 'opus', permissions: { allow: ['a'], deny: ['x'] } }) })
    const [[rel, node]] = composeTree(shared, base, work).write as [[string, TierNode & { json: unknown }]]
    expect(rel).toBe('settings.json')
    expect(node.json).toEqual({ model: 'sonnet', permissions: { allow: ['a'], deny: ['x'] }, hooks: { Stop: [] } })
  })
})

describe('proposals', () => {
  test("a project's changes are proposed until the shared tier holds them; symlinks never are", () => {
    const base = tree({ 'agents/a.md': file('a') })
    const work = tree({ 'agents/a.md': file('a!'), 'agents/link': { kind: 'symlink', target: '/etc' }, 'agents/b.md': file('b') })
    expect(proposals(base, base, work).map(p => p.rel)).toEqual(['agents/a.md', 'agents/b.md'])
    const promoted = tree({ 'agents/a.md': file('a!'), 'agents/b.md': file('b') })
    expect(proposals(promoted, base, work)).toEqual([])
  })

  test('JSON proposals carry only the changed keys, and stop once the shared copy has them', () => {
    const base = tree({ 'settings.json': json({ model: 'opus', env: { A: '1' } }) })
    const work = tree({ 'settings.json': json({ model: 'opus', env: { A: '1', B: '2' } }) })
    const [p] = proposals(base, base, work)
    expect(p?.ops).toEqual([{ path: ['env', 'B'], op: 'set', value: '2' }])
    const sharedNow = tree({ 'settings.json': json({ model: 'haiku', env: { A: '1', B: '2' } }) })
    expect(proposals(sharedNow, base, work)).toEqual([])
  })

  test('a removal is a proposal too; the digest changes with the change', () => {
    const base = tree({ 'commands/x.md': file('x') })
    const [removal] = proposals(base, base, tree({}))
    expect(removal?.to).toBeUndefined()
    const [edit] = proposals(base, base, tree({ 'commands/x.md': file('y') }))
    expect(edit?.digest).not.toBe(removal?.digest)
  })
})

describe('JSON deltas', () => {
  test('round trip: applying the delta of base->work to base gives work', () => {
    const base = { a: 1, b: { c: [1, 2], d: 'x' }, gone: true }
    const work = { a: 2, b: { c: [1, 2, 3], e: null }, added: { deep: { x: 1 } } }
    expect(applyJsonOps(base, jsonDelta(base, work))).toEqual(work)
  })

  test('"__proto__" keys are data, never a prototype', () => {
    const work = JSON.parse('{"__proto__": {"polluted": true}}') as unknown
    const result = applyJsonOps({}, jsonDelta({}, work)) as Record<string, unknown>
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(Object.hasOwn(result, '__proto__')).toBe(true)
  })

  test('a root that is not an object is replaced whole', () => {
    expect(applyJsonOps({ a: 1 }, jsonDelta({ a: 1 }, [1, 2]))).toEqual([1, 2])
  })
})

describe('lineDiff', () => {
  test('marks removed and added lines with context, and elides far context', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')
    const after = before.replace('line 10', 'line ten')
    expect(lineDiff(before, after).lines).toEqual(['  line 7', '  line 8', '  line 9', '- line 10', '+ line ten', '  line 11', '  line 12', '  line 13'])
    expect(lineDiff('a\nb\n', 'a\nb\n').lines).toEqual([])
    expect(lineDiff('', 'new\n').lines).toEqual(['+ new'])
  })
})
