#!/usr/bin/env node
// Part of `npm run lint`: the layering ARCHITECTURE.md describes, checked rather than remembered.
// Fails on an import cycle among src/ modules (static and type imports; `await import()` is how
// main.ts loads a mode lazily and is not counted) and names the cycle.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const src = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'src')
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm

function modules(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => (e.isDirectory() ? modules(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []))
}

const graph = new Map()
for (const file of modules(src)) {
  const text = fs.readFileSync(file, 'utf8')
  const targets = [...text.matchAll(IMPORT)].map(m => path.resolve(path.dirname(file), m[1].replace(/\.js$/, '.ts')))
  graph.set(file, [...new Set(targets)])
}

const cycles = []
const state = new Map() // 1: on the current path, 2: done
function visit(file, trail) {
  state.set(file, 1)
  for (const next of graph.get(file) ?? []) {
    if (!graph.has(next)) continue
    if (state.get(next) === 1) cycles.push([...trail.slice(trail.indexOf(next)), next])
    else if (!state.has(next)) visit(next, [...trail, next])
  }
  state.set(file, 2)
}
for (const file of graph.keys()) if (!state.has(file)) visit(file, [file])

for (const cycle of cycles) console.error(`import cycle: ${cycle.map(f => path.relative(src, f)).join(' -> ')}`)
if (cycles.length > 0) process.exit(1)
