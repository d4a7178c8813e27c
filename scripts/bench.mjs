// Launch-speed benchmark (not a test), every figure measured in this one run, the variants of each
// part interleaved so that machine noise hits them alike. It ends with the targets of the launch
// speed issue, each with its ratio (P1 launch floor, P2 a whole turn, P5 memory, P6 the closed
// network's cost, P7 a 30-command turn against plain claude and Claude's own sandbox).
//   BENCH_RUNS (default 30)  launches per variant for P1/P6; the Claude parts run fewer
//   BENCH_DOWNLOAD_MB (256)  the size of the throughput download
//   BENCH_ONLY               a comma-separated subset of the parts: launch, proxy, tree, memory, claude, instances
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { TESTED_CLAUDE_NEWEST, makeReplayable, median, mkWorld, replayFds, startChild, timed } from './bench/util.mjs'

const runs = Number(process.env.BENCH_RUNS ?? 30)
const repo = path.resolve(import.meta.dirname, '..')
const bin = path.join(repo, 'bin/claudebox.js')
const minimal = path.join(repo, 'scripts/bench/minimal-launcher.cjs')
const claude = process.env.CLAUDEBOX_TEST_CLAUDE ?? path.join(repo, '.cache/claude-code', TESTED_CLAUDE_NEWEST, 'node_modules/.bin/claude')
const results = {}
const only = process.env.BENCH_ONLY?.split(',')
const part = name => only === undefined || only.includes(name)

console.log(`claudebox benchmark: node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, Linux ${os.release()}, ${process.getuid?.() === 0 ? 'root' : `uid ${process.getuid?.()}`}`)

// ---------- P1 and P6: claudebox launching /bin/true against node -e 0 + the same bwrap command ----------
if (part('launch')) {
  const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/true' })
  const [bwrap, ...args] = bwrapArgv(project, env, ['--network=open'])
  // Each claudebox run removes its placeholders at its end: made again for each replay (~0.05 ms).
  const withFds = replayFds(env.CLAUDEBOX_HOME, () => makeReplayable(args))
  const variants = {
    'node -e 0': () => spawnSync(process.execPath, ['-e', '0'], { cwd: project, env }),
    'bwrap direct (open)': () => withFds(fds => spawnSync(bwrap, args, { cwd: project, env: {}, stdio: ['ignore', 'pipe', 'pipe', 'ignore', ...fds] })),
    // The least a Node launcher does: Node, child_process, spawning the same bwrap command.
    'node spawning that bwrap': () => withFds(() => spawnSync(process.execPath, [minimal, JSON.stringify({ argv: [bwrap, ...args], files: withFds.files })], { cwd: project, env })),
    'claudebox --network=open': () => spawnSync(process.execPath, [bin, '--network=open'], { cwd: project, env }),
    'claudebox (default: allow)': () => spawnSync(process.execPath, [bin], { cwd: project, env }),
  }
  const m = interleave(variants, runs)
  const floor = m['node -e 0'] + m['bwrap direct (open)']
  console.log(`\nP1/P6 launching /bin/true: medians of ${runs} interleaved runs`)
  for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(34)} ${ms.toFixed(1).padStart(7)} ms`)
  console.log(`  ${'floor: node -e 0 + bwrap direct'.padEnd(30)} ${floor.toFixed(1).padStart(7)} ms`)
  console.log(`  a Node launcher that only spawns bwrap is ${(m['node spawning that bwrap'] / floor).toFixed(2)} x the floor; claudebox adds ${(m['claudebox --network=open'] - m['node spawning that bwrap']).toFixed(1)} ms to it (open), ${(m['claudebox (default: allow)'] - m['node spawning that bwrap']).toFixed(1)} ms (default)`)
  results.p1open = { value: m['claudebox --network=open'] / floor, target: 1.25, what: 'P1 claudebox --network=open / (node -e 0 + bwrap)' }
  results.p1default = { value: m['claudebox (default: allow)'] / floor, target: 1.25, what: 'P1 claudebox (default) / (node -e 0 + bwrap)' }
  results.p6launch = { value: m['claudebox (default: allow)'] / m['claudebox --network=open'], target: 1.2, what: 'P6 default (allow) launch / --network=open launch' }
}

// ---------- P6: the proxy's time to first byte and throughput, curl inside the sandbox ----------
if (part('proxy')) {
  const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/sh' })
  const MB = Number(process.env.BENCH_DOWNLOAD_MB ?? 256)
  const server = await startChild(process.execPath, ['-e', `
    const body = Buffer.alloc(${MB} << 20, 120)
    const s = require('http').createServer((q, r) => { const b = q.url === '/big' ? body : 'x'; r.writeHead(200, { 'content-length': b.length }); r.end(b) })
    s.listen(0, '127.0.0.1', () => console.log(s.address().port))`])
  const url = `http://127.0.0.1:${server.port}`
  const inside = (network, script) => {
    const args = [bin, `--network=${network}`, ...(network === 'allow' ? ['--allow-host', `127.0.0.1:${server.port}`] : []), '--', '-c', script]
    const r = spawnSync(process.execPath, args, { cwd: project, env, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`curl (${network}) failed: ${r.stdout} ${r.stderr}`)
    return r.stdout.trim().split('\n')
  }
  // 50 small requests on one connection: the time to first byte of each, in ms. Through the proxy
  // both ways it is used: a CONNECT tunnel (curl -p; what HTTPS does) and plain HTTP forwarding.
  const ttfb = (network, tunnel = false) => median(inside(network, `curl -sS ${tunnel ? '-p ' : ''}-w '%{time_starttransfer}\\n' ${Array(50).fill(`-o /dev/null ${url}/`).join(' ')}`).map(Number)) * 1000
  const speed = (network, tunnel = false) => {
    const [bytes, seconds] = inside(network, `curl -sS ${tunnel ? '-p ' : ''}-o /dev/null -w '%{size_download} %{time_total}' ${url}/big`)[0].split(' ').map(Number)
    if (bytes !== MB << 20) throw new Error(`download (${network}) got ${bytes} bytes`)
    return (bytes * 8) / 1e9 / seconds
  }
  const t = { direct: [], tunnel: [], plain: [] }
  const s = { direct: [], tunnel: [], plain: [] }
  for (let i = 0; i < 5; i++) {
    t.direct.push(ttfb('open'))
    t.tunnel.push(ttfb('allow', true))
    t.plain.push(ttfb('allow'))
    s.direct.push(speed('open'))
    s.tunnel.push(speed('allow', true))
    s.plain.push(speed('allow'))
  }
  server.child.kill()
  const [ttfbs, speeds] = [t, s].map(x => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, median(v)])))
  console.log(`\nP6 the proxy, curl inside the sandbox against a host server (medians of 5 runs)`)
  console.log(`  time to first byte: direct (open) ${ttfbs.direct.toFixed(2)} ms; through the proxy: a tunnel ${ttfbs.tunnel.toFixed(2)} ms, plain HTTP ${ttfbs.plain.toFixed(2)} ms`)
  console.log(`  one ${MB} MB download: direct ${speeds.direct.toFixed(2)} Gbit/s; through the proxy: a tunnel ${speeds.tunnel.toFixed(2)} Gbit/s, plain HTTP ${speeds.plain.toFixed(2)} Gbit/s`)
  results.p6ttfb = { value: ttfbs.tunnel - ttfbs.direct, target: 2, unit: 'ms', what: 'P6 time to first byte the proxy adds (tunnel, HTTPS)' }
  results.p6ttfbPlain = { value: ttfbs.plain - ttfbs.direct, target: 2, unit: 'ms', what: 'P6 time to first byte the proxy adds (plain HTTP)' }
  results.p6speed = { value: speeds.tunnel, target: 1, unit: 'Gbit/s', atLeast: true, what: 'P6 throughput through the proxy, one tunnel' }
  results.p6speedPlain = { value: speeds.plain, target: 1, unit: 'Gbit/s', atLeast: true, what: 'P6 throughput through the proxy, plain HTTP' }
}

// ---------- A large project: what its size adds to a launch (the nested-repository search at the session's end) ----------
if (part('tree')) {
  const small = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/true' })
  const large = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/true' })
  // 5,000 folders of 8 files, shaped as node_modules: 50 packages of 100 folders, 5 levels deep.
  for (let pkg = 0; pkg < 50; pkg++) {
    for (let dir = 0; dir < 100; dir++) {
      const folder = path.join(large.project, 'node_modules', `pkg${pkg}`, `d${dir % 5}`, `e${dir % 10}`, `f${dir}`)
      fs.mkdirSync(folder, { recursive: true })
      for (let f = 0; f < 8; f++) fs.writeFileSync(path.join(folder, `file${f}.js`), '')
    }
  }
  const launch = world => () => spawnSync(process.execPath, [bin, '--network=open'], { cwd: world.project, env: world.env })
  // A project used for months: its instance holds 10,000 files of Claude's (file history, todos, transcripts).
  const used = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/true' })
  launch(used)()
  const instance = path.join(used.env.CLAUDEBOX_HOME, 'instances', fs.readdirSync(path.join(used.env.CLAUDEBOX_HOME, 'instances'))[0])
  fs.mkdirSync(path.join(instance, 'projects'), { recursive: true })
  for (let session = 0; session < 200; session++) {
    fs.mkdirSync(path.join(instance, 'file-history', `s${session}`), { recursive: true })
    for (let f = 0; f < 48; f++) fs.writeFileSync(path.join(instance, 'file-history', `s${session}`, `f${f}@v1`), 'x')
    fs.mkdirSync(path.join(instance, 'todos'), { recursive: true })
    fs.writeFileSync(path.join(instance, 'todos', `s${session}.json`), '[]')
    fs.writeFileSync(path.join(instance, 'projects', `s${session}.jsonl`), '{}\n')
  }
  // A repository worked in for weeks: 3,000 loose objects (git gc packs them past 6,700), which the
  // checks at the session's end look through for FIFOs and modes.
  const objects = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/true' })
  const blobs = Array.from({ length: 3000 }, (_, i) => `blob${i}`)
  blobs.forEach(name => fs.writeFileSync(path.join(objects.root, name), `${name}\n`))
  spawnSync('git', ['hash-object', '-w', '--stdin-paths'], { cwd: objects.project, input: blobs.map(name => path.join(objects.root, name)).join('\n') })
  for (const world of [large, used, objects]) launch(world)() // the first session's search lists every folder; later ones only what changed
  await sleep(1100)
  const m = interleave({ 'small project': launch(small), 'project of 45,000 entries': launch(large), 'instance of 10,000 files': launch(used), 'repository of 3,000 loose objects': launch(objects) }, Math.min(runs, 15))
  console.log(`
A large project, a much-used instance and repository (medians of ${Math.min(runs, 15)} interleaved runs, launching /bin/true with --network=open)`)
  for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(34)} ${ms.toFixed(1).padStart(7)} ms`)
  console.log(`  the project's size adds ${(m['project of 45,000 entries'] - m['small project']).toFixed(1)} ms (the search for nested repositories at the session's end, from its folder cache); the instance's ${(m['instance of 10,000 files'] - m['small project']).toFixed(1)} ms; the loose objects' ${(m['repository of 3,000 loose objects'] - m['small project']).toFixed(1)} ms`)
}

// ---------- P5: the launcher's resident memory while a session runs (default network: proxy included) ----------
if (part('memory')) {
  const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: '/bin/sh' })
  const rss = (cmd, args) => {
    const child = spawn(cmd, args, { cwd: project, env, stdio: 'ignore' })
    return sleep(1500)
      .then(() => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024)
      .finally(() => child.kill('SIGKILL'))
  }
  const idle = []
  const session = []
  for (let i = 0; i < 3; i++) {
    idle.push(await rss(process.execPath, ['-e', 'setTimeout(() => {}, 3000)']))
    session.push(await rss(process.execPath, [bin, '--', '-c', 'sleep 3']))
  }
  console.log(`\nP5 resident memory after 1.5 s (median of 3): idle node ${median(idle).toFixed(1)} MB, the launcher during a session ${median(session).toFixed(1)} MB`)
  results.p5 = { value: median(session) / median(idle), target: 1.2, what: 'P5 launcher RSS in a session / idle node' }
}

// ---------- P2 and P7: the real Claude Code against a local Messages API ----------
if (part('claude')) {
  if (fs.existsSync(claude)) await import('./bench/claude.mjs').then(({ benchClaude }) => benchClaude({ bin, claude, results }))
  else console.log(`\nP2/P7 skipped: no Claude Code at ${claude} (npm test installs it; or set CLAUDEBOX_TEST_CLAUDE)`)
}

// ---------- --list and --gc --dry-run over 10,000 instances ----------
if (part('instances')) await import('./bench/instances.mjs').then(({ benchInstances }) => benchInstances({ bin, results }))

console.log('\ntargets (ratios and figures from this run)')
for (const r of Object.values(results)) {
  const met = r.atLeast ? r.value >= r.target : r.value <= r.target
  const shown = r.unit ? `${r.value.toFixed(2)} ${r.unit}` : `${r.value.toFixed(2)}x`
  const target = r.unit ? `${r.atLeast ? '>=' : '<='} ${r.target} ${r.unit}` : `<= ${r.target}x`
  console.log(`  ${met ? 'met ' : 'MISS'}  ${r.what.padEnd(58)} ${shown.padStart(12)}  (target ${target})`)
}

/** The bwrap argv claudebox runs for these arguments, from its debug line (one launch). */
function bwrapArgv(project, env, args) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: project, env: { ...env, CLAUDEBOX_DEBUG: '1' }, encoding: 'utf8' })
  const line = r.stderr.split('\n').find(l => l.includes('bwrap argv: '))
  if (r.status !== 0 || !line) throw new Error(`launch failed: ${r.stderr}`)
  const argv = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
  // Nothing reads --info-fd in a replay.
  const own = ['--info-fd']
  const kept = argv.filter((arg, i) => !own.includes(arg) && !own.includes(argv[i - 1]))
  return kept
}

/** Runs every variant `n` times, round-robin; the median milliseconds of each. */
function interleave(variants, n) {
  const samples = Object.fromEntries(Object.keys(variants).map(name => [name, []]))
  for (let i = 0; i < n; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const { ms, result } = timed(run)
      if (result.status !== 0) throw new Error(`${name} failed: ${result.stderr}`)
      samples[name].push(ms)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, median(xs)]))
}
