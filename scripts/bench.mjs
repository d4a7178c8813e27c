// Launch-speed benchmark (not a test): claudebox starting /bin/true against its floor, measured
// in one run with the runs interleaved so that machine noise hits every variant alike.
//   node -e 0                      the floor of any Node launcher
//   bwrap direct                   the exact bwrap argv claudebox uses, spawned without claudebox
//   node -e 0 + bwrap direct       what a launcher with zero overhead of its own would cost
//   claudebox                      the real launcher (probe, plan, mkdirs, spawn, wait)
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const runs = Number(process.env.BENCH_RUNS ?? 40)
const repo = path.resolve(import.meta.dirname, '..')
const bin = path.join(repo, 'bin/claudebox.js')
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-bench-'))
const home = path.join(root, 'home')
const project = path.join(home, 'project')
fs.mkdirSync(project, { recursive: true })
spawnSync('git', ['init', '-q', project])
const env = { PATH: process.env.PATH, HOME: home, CLAUDEBOX_HOME: path.join(home, '.claudebox'), CLAUDEBOX_CLAUDE: '/bin/true', LANG: 'C.UTF-8' }

// The bwrap argv of the same launch, taken from claudebox's debug line (one warm-up launch).
const warm = spawnSync(process.execPath, [bin], { cwd: project, env: { ...env, CLAUDEBOX_DEBUG: '1' }, encoding: 'utf8' })
const line = warm.stderr.split('\n').find(l => l.includes('bwrap argv: '))
if (warm.status !== 0 || !line) throw new Error(`warm-up launch failed: ${warm.stderr}`)
const [bwrap, ...bwrapArgs] = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
const withoutInfoFd = bwrapArgs.filter((arg, i) => arg !== '--info-fd' && bwrapArgs[i - 1] !== '--info-fd')

const variants = {
  'node -e 0': () => spawnSync(process.execPath, ['-e', '0'], { cwd: project, env }),
  'bwrap direct': () => spawnSync(bwrap, withoutInfoFd, { cwd: project, env: {} }),
  claudebox: () => spawnSync(process.execPath, [bin], { cwd: project, env }),
}
const samples = Object.fromEntries(Object.keys(variants).map(name => [name, []]))
for (let i = 0; i < runs; i++) {
  for (const [name, run] of Object.entries(variants)) {
    const start = process.hrtime.bigint()
    const result = run()
    samples[name].push(Number(process.hrtime.bigint() - start) / 1e6)
    if (result.status !== 0) throw new Error(`${name} failed: ${result.stderr}`)
  }
}
const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const m = Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, median(xs)]))
const floor = m['node -e 0'] + m['bwrap direct']
console.log(`claudebox launch benchmark: ${runs} interleaved runs each, medians (node ${process.version}, ${os.cpus().length} cores)`)
for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(28)} ${ms.toFixed(1).padStart(7)} ms`)
console.log(`  ${'node -e 0 + bwrap direct'.padEnd(28)} ${floor.toFixed(1).padStart(7)} ms`)
console.log(`ratio claudebox / (node -e 0 + bwrap direct): ${(m.claudebox / floor).toFixed(2)}`)
console.log(`claudebox's own overhead: ${(m.claudebox - floor).toFixed(1)} ms`)
fs.rmSync(root, { recursive: true, force: true })
