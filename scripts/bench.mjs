// Launch-speed benchmark (not a test): claudebox starting /bin/true against its floor, measured
// in one run with the runs interleaved so that machine noise hits every variant alike.
//   node -e 0                      the floor of any Node launcher
//   bwrap direct                   the exact bwrap argv claudebox uses, spawned without claudebox
//   node -e 0 + bwrap direct       what a launcher with zero overhead of its own would cost
//   claudebox --network=open       the real launcher (probe, plan, mkdirs, spawn, wait), the host's network
//   claudebox (default: allow)     the default launch: the egress proxy and the bridge inside
// then the throughput of a download through that proxy against a direct one.
import { spawn, spawnSync } from 'node:child_process'
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
// (--network=open: the allow mode's proxy lives in claudebox, so its bwrap argv cannot run alone.)
const warm = spawnSync(process.execPath, [bin, '--network=open'], { cwd: project, env: { ...env, CLAUDEBOX_DEBUG: '1' }, encoding: 'utf8' })
const line = warm.stderr.split('\n').find(l => l.includes('bwrap argv: '))
if (warm.status !== 0 || !line) throw new Error(`warm-up launch failed: ${warm.stderr}`)
const [bwrap, ...bwrapArgs] = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
const launcherFds = ['--info-fd', '--block-fd']
const withoutInfoFd = bwrapArgs.filter((arg, i) => !launcherFds.includes(arg) && !launcherFds.includes(bwrapArgs[i - 1]))
// The session's own credential store is removed when its session ends: the replay needs one (as the
// pasted --dry-run script makes it).
bwrapArgs.forEach((arg, i) => {
  if (arg === '--bind' && bwrapArgs[i + 1].includes('/session-stores/')) fs.mkdirSync(bwrapArgs[i + 1], { recursive: true, mode: 0o700 })
})
// The seccomp program claudebox wrote on the warm-up launch, for bwrap's --seccomp 4.
const seccompDir = path.join(home, '.claudebox/seccomp')
const filter = path.join(seccompDir, fs.readdirSync(seccompDir)[0])
// And the Landlock helper, which bwrap copies in from fd 5.
const landlockDir = path.join(home, '.claudebox/landlock')
const scope = path.join(landlockDir, fs.readdirSync(landlockDir)[0])

const variants = {
  'node -e 0': () => spawnSync(process.execPath, ['-e', '0'], { cwd: project, env }),
  'bwrap direct': () => spawnSync(bwrap, withoutInfoFd, { cwd: project, env: {}, stdio: ['ignore', 'pipe', 'pipe', 'ignore', fs.openSync(filter, 'r'), fs.openSync(scope, 'r')] }),
  'claudebox --network=open': () => spawnSync(process.execPath, [bin, '--network=open'], { cwd: project, env }),
  // The default launch: the proxy on the host and the bridge inside (its node starts first).
  'claudebox (default: allow)': () => spawnSync(process.execPath, [bin], { cwd: project, env }),
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
const open = m['claudebox --network=open']
const allow = m['claudebox (default: allow)']
console.log(`ratio claudebox --network=open / (node -e 0 + bwrap direct): ${(open / floor).toFixed(2)}`)
console.log(`claudebox's own overhead (open): ${(open - floor).toFixed(1)} ms`)
console.log(`ratio default (allow) / --network=open: ${(allow / open).toFixed(2)} (+${(allow - open).toFixed(1)} ms)`)
console.log(`ratio default (allow) / (node -e 0 + bwrap direct): ${(allow / floor).toFixed(2)}`)

// ---------- throughput: a large download through the proxy against a direct one ----------
// The server is a child process: spawnSync blocks this one's event loop. curl runs inside the
// sandbox both times and reports its own transfer time, so sandbox start-up is not counted.
const MB = Number(process.env.BENCH_DOWNLOAD_MB ?? 256)
const server = spawn(process.execPath, ['-e', `
  const body = Buffer.alloc(${MB} << 20, 120)
  const s = require('http').createServer((q, r) => { r.writeHead(200, { 'content-length': body.length }); r.end(body) })
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))`], { stdio: ['ignore', 'pipe', 'inherit'] })
const port = await new Promise(done => server.stdout.once('data', d => done(Number(String(d).trim()))))
const download = network => {
  const args = [bin, `--network=${network}`, ...(network === 'allow' ? ['--allow-host', `127.0.0.1:${port}`] : []), '--shell', '--', '-c',
    `curl -sS -o /dev/null -w '%{size_download} %{time_total}' http://127.0.0.1:${port}/`]
  const r = spawnSync(process.execPath, args, { cwd: project, env, encoding: 'utf8' })
  const [bytes, seconds] = r.stdout.trim().split(' ').map(Number)
  if (r.status !== 0 || bytes !== MB << 20) throw new Error(`download (${network}) failed: ${r.stdout} ${r.stderr}`)
  return bytes / (1 << 20) / seconds
}
const speeds = { open: [], allow: [] }
for (let i = 0; i < 5; i++) for (const network of ['open', 'allow']) speeds[network].push(download(network))
server.kill()
const [direct, proxied] = [median(speeds.open), median(speeds.allow)]
console.log(`\ndownload of ${MB} MB from a host server, curl inside the sandbox (median of 5)`)
console.log(`  direct (--network=open)              ${direct.toFixed(0).padStart(6)} MB/s`)
console.log(`  through the proxy (--network=allow)  ${proxied.toFixed(0).padStart(6)} MB/s`)
console.log(`  ratio proxy / direct: ${(proxied / direct).toFixed(2)}`)
fs.rmSync(root, { recursive: true, force: true })

// ---------- --list and --gc --dry-run over many instances: time must grow linearly ----------
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
    // What a session leaves behind when it ends (state/apply.ts recordUsage), so --list need not walk.
    const sessionsMtime = fs.lstatSync(path.join(inst, 'claudebox/sessions')).mtimeMs
    const usage = { size: 2048, conversations: 1, ended: Date.now(), sessionsMtime }
    fs.writeFileSync(path.join(inst, 'claudebox/usage.json'), JSON.stringify(usage))
    fs.writeFileSync(path.join(inst, 'claudebox/meta.json'), JSON.stringify({ rootDevice: fs.statSync(projects).dev, name: `p${i}` }))
    cache[id] = { root, ...usage, rootDevice: fs.statSync(projects).dev }
  }
  fs.writeFileSync(path.join(dir, 'home/.claudebox/list-cache.json'), JSON.stringify(cache))
  return dir
}

console.log('\n--list and --gc --dry-run over synthetic instances (median of 5 runs each)')
const rows = []
for (const count of [1000, 10000]) {
  const dir = syntheticState(count)
  const benchEnv = { PATH: process.env.PATH, HOME: path.join(dir, 'home'), LANG: 'C.UTF-8' }
  const time = args => {
    const xs = []
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint()
      const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, env: benchEnv, encoding: 'utf8', maxBuffer: 1 << 28 })
      xs.push(Number(process.hrtime.bigint() - start) / 1e6)
      if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr.slice(0, 500)}`)
    }
    return median(xs)
  }
  rows.push({ count, list: time(['--list', '--json']), gc: time(['--gc', '--dry-run']) })
  fs.rmSync(dir, { recursive: true, force: true })
}
for (const r of rows) console.log(`  ${String(r.count).padStart(6)} instances   --list ${r.list.toFixed(0).padStart(5)} ms   --gc --dry-run ${r.gc.toFixed(0).padStart(5)} ms`)
const [small, large] = rows
console.log(`  growth 1,000 -> 10,000: --list ${(large.list / small.list).toFixed(1)}x, --gc --dry-run ${(large.gc / small.gc).toFixed(1)}x (linear would be about 10x minus the fixed start-up)`)

// The cold path: instances made by an older version (no usage.json) and no list cache. The first
// --list measures every instance and remembers it; the runs after it take the fast path.
{
  const dir = syntheticState(10000)
  const home = path.join(dir, 'home/.claudebox')
  for (const id of fs.readdirSync(path.join(home, 'instances'))) fs.rmSync(path.join(home, 'instances', id, 'claudebox/usage.json'), { force: true })
  const benchEnv = { PATH: process.env.PATH, HOME: path.join(dir, 'home'), LANG: 'C.UTF-8' }
  const once = args => {
    const start = process.hrtime.bigint()
    spawnSync(process.execPath, [bin, ...args], { cwd: dir, env: benchEnv, stdio: 'ignore' })
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const cold = []
  for (let i = 0; i < 3; i++) {
    fs.rmSync(path.join(home, 'list-cache.json'), { force: true })
    cold.push(once(['--list', '--json']))
  }
  const gc = median([0, 1, 2].map(() => once(['--gc', '--dry-run'])))
  const warm = median([0, 1, 2].map(() => once(['--list', '--json'])))
  console.log(`  10,000 instances without usage records or cache: first --list ${median(cold).toFixed(0)} ms, the next ${warm.toFixed(0)} ms; --gc --dry-run ${gc.toFixed(0)} ms`)
  fs.rmSync(dir, { recursive: true, force: true })
}
