// --list and --gc --dry-run over many synthetic instances: under 1 s at 10,000, growing linearly;
// and the cold path (no list cache: every instance is measured, 200 ms' worth per --list).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { median, timed } from './util.mjs'

function syntheticState(count) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-bench-list-'))
  const instances = path.join(dir, 'home/.claudebox/instances')
  const cache = {}
  const projects = path.join(dir, 'projects')
  fs.mkdirSync(projects, { recursive: true })
  for (let i = 0; i < count; i++) {
    const id = i.toString(16).padStart(16, '0')
    const inst = path.join(instances, id)
    // 60 % of the projects exist, 40 % are gone: enough for GC work, under its mass-removal guard.
    const root = path.join(projects, `p${i}`)
    if (i % 5 > 1) fs.mkdirSync(root)
    fs.mkdirSync(path.join(inst, 'claudebox/sessions'), { recursive: true })
    fs.mkdirSync(path.join(inst, 'projects', `-p${i}`), { recursive: true })
    fs.writeFileSync(path.join(inst, 'project-root'), `${root}\n`)
    fs.writeFileSync(path.join(inst, 'projects', `-p${i}`, '0f8fad5b-d9cb-469f-a165-70867728950e.jsonl'), '{"type":"user"}\n')
    fs.writeFileSync(path.join(inst, 'claudebox/meta.json'), JSON.stringify({ rootDevice: fs.statSync(projects).dev, name: `p${i}` }))
    // What an earlier --list remembered of each (state/scan.ts), so this one need not walk them.
    const sessionsMtime = fs.lstatSync(path.join(inst, 'claudebox/sessions')).mtimeMs
    cache[id] = { root, size: 2048, conversations: 1, ended: Date.now(), sessionsMtime, rootDevice: fs.statSync(projects).dev }
  }
  fs.writeFileSync(path.join(dir, 'home/.claudebox/list-cache.json'), JSON.stringify(cache))
  return dir
}

function run(bin, dir, args) {
  const env = { PATH: process.env.PATH, HOME: path.join(dir, 'home'), LANG: 'C.UTF-8' }
  const { ms, result } = timed(() => spawnSync(process.execPath, [bin, ...args], { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 28 }))
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr.slice(0, 500)}`)
  return ms
}

export function benchInstances({ bin, results }) {
  console.log('\n--list and --gc --dry-run over synthetic instances (median of 5 runs each)')
  const rows = []
  for (const count of [1000, 10000]) {
    const dir = syntheticState(count)
    const time = args => median([0, 1, 2, 3, 4].map(() => run(bin, dir, args)))
    rows.push({ count, list: time(['--list', '--json']), gc: time(['--gc', '--dry-run']) })
    fs.rmSync(dir, { recursive: true, force: true })
  }
  for (const r of rows) console.log(`  ${String(r.count).padStart(6)} instances   --list ${r.list.toFixed(0).padStart(5)} ms   --gc --dry-run ${r.gc.toFixed(0).padStart(5)} ms`)
  const [small, large] = rows
  console.log(`  growth 1,000 -> 10,000: --list ${(large.list / small.list).toFixed(1)}x, --gc --dry-run ${(large.gc / small.gc).toFixed(1)}x (linear would be about 10x minus the fixed start-up)`)
  results.list = { value: large.list / 1000, target: 1, unit: 's', what: '--list over 10,000 instances' }
  results.gc = { value: large.gc / 1000, target: 1, unit: 's', what: '--gc --dry-run over 10,000 instances' }

  // The cold path: the first --list measures every instance and remembers it; the next take the fast path.
  const dir = syntheticState(10000)
  const home = path.join(dir, 'home/.claudebox')
  const cold = [0, 1, 2].map(() => {
    fs.rmSync(path.join(home, 'list-cache.json'), { force: true })
    return run(bin, dir, ['--list', '--json'])
  })
  const gc = median([0, 1, 2].map(() => run(bin, dir, ['--gc', '--dry-run'])))
  const warm = median([0, 1, 2].map(() => run(bin, dir, ['--list', '--json'])))
  console.log(`  10,000 instances without the list cache: first --list ${median(cold).toFixed(0)} ms, the next ${warm.toFixed(0)} ms; --gc --dry-run ${gc.toFixed(0)} ms`)
  fs.rmSync(dir, { recursive: true, force: true })
}
