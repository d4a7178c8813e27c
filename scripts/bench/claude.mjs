// The real Claude Code against a local Messages API (mock-api.mjs), offline:
//   P2  `claudebox -p hello` (default network) against the same bwrap command running `claude -p hello`
//   P7  a turn in which the model runs 30 Bash commands: claudebox against plain `claude` on the host,
//       and against Claude Code's own per-command sandbox (sandbox.enabled: bwrap + socat per command)
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { makeReplayable, median, mkWorld, replayFds, startChild, timed } from './util.mjs'

const KEY = 'sk-ant-bench-key'
const mock = path.join(import.meta.dirname, 'mock-api.mjs')

export async function benchClaude({ bin, claude, results }) {
  const text = await startChild(process.execPath, [mock, '0'])
  const bash = await startChild(process.execPath, [mock, '30'])
  try {
    p2(bin, claude, `http://127.0.0.1:${text.port}`, results)
    p7(bin, claude, `http://127.0.0.1:${bash.port}`, results)
  } finally {
    text.child.kill()
    bash.child.kill()
  }
}

const apiEnv = url => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' })

/**
 * The bwrap command claudebox runs for `claudeArgs` (the open network's argv: the default's needs
 * the launcher's proxy), replayed with the environment claudebox gives the sandbox (read by running
 * `env` in it), pointed straight at the API instead of claudebox's gateway.
 */
function directCommand(bin, project, env, url, claudeArgs) {
  const launch = (args, extra = {}) => spawnSync(process.execPath, [bin, ...args], { cwd: project, env: { ...env, ...extra }, encoding: 'utf8' })
  const debug = launch(['--network=open', ...claudeArgs], { CLAUDEBOX_DEBUG: '1' })
  const line = debug.stderr.split('\n').find(l => l.includes('bwrap argv: '))
  if (debug.status !== 0 || !line) throw new Error(`claudebox ${claudeArgs.join(' ')} failed: ${debug.stderr}`)
  const [bwrap, ...argv] = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
  const own = ['--info-fd']
  const args = argv.filter((arg, i) => !own.includes(arg) && !own.includes(argv[i - 1]))
  const inside = launch(['--network=open'], { CLAUDEBOX_CLAUDE: '/usr/bin/env' })
  const sandboxEnv = Object.fromEntries(inside.stdout.trim().split('\n').map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  Object.assign(sandboxEnv, apiEnv(url), env.IS_SANDBOX ? { IS_SANDBOX: env.IS_SANDBOX } : {})
  const withFds = replayFds(env.CLAUDEBOX_HOME, () => makeReplayable(args))
  return () => withFds(fds => spawnSync(bwrap, args, { cwd: project, env: sandboxEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'ignore', ...fds] }))
}

function p2(bin, claude, url, results) {
  const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: claude, ...apiEnv(url) })
  const variants = {
    'bwrap direct: claude -p hello': directCommand(bin, project, env, url, ['-p', 'hello']),
    'claudebox -p hello (default)': () => spawnSync(process.execPath, [bin, '-p', 'hello'], { cwd: project, env, encoding: 'utf8' }),
    'claude -p hello on the host': () => spawnSync(claude, ['-p', 'hello'], { cwd: project, env, encoding: 'utf8' }),
  }
  const m = interleaveChecked(variants, 10, r => r.stdout.trim() === 'pong')
  console.log('\nP2 one offline turn, the real Claude Code (medians of 10 interleaved runs)')
  for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms`)
  results.p2 = { value: m['claudebox -p hello (default)'] / m['bwrap direct: claude -p hello'], target: 1.15, what: 'P2 claudebox -p hello / the same bwrap command' }
}

function p7(bin, claude, url, results) {
  const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: claude, ...apiEnv(url), ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}) })
  const go = ['-p', 'go', '--dangerously-skip-permissions']
  const variants = {
    'plain claude on the host': () => spawnSync(claude, go, { cwd: project, env, encoding: 'utf8' }),
    "claude with its own sandbox": () => spawnSync(claude, [...go, '--settings', JSON.stringify({ sandbox: { enabled: true, failIfUnavailable: true } })], { cwd: project, env, encoding: 'utf8' }),
    'claudebox (default network)': () => spawnSync(process.execPath, [bin, ...go], { cwd: project, env, encoding: 'utf8' }),
    'claudebox --network=open': () => spawnSync(process.execPath, [bin, '--network=open', ...go], { cwd: project, env, encoding: 'utf8' }),
    // Where the difference to plain claude goes: the sandbox itself, or the launcher and its gateway.
    'the same bwrap command, direct': directCommand(bin, project, env, url, go),
  }
  // 9 runs: a whole turn varies by ±200 ms here from one run to the next, 5 left the median to chance.
  const m = interleaveChecked(variants, 9, r => r.stdout.trim() === 'done')
  console.log('\nP7 one turn with 30 Bash commands (medians of 9 interleaved runs)')
  for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms`)
  const box = m['claudebox (default network)']
  results.p7 = { value: box / m['plain claude on the host'], target: 1.05, what: 'P7 30-command turn: claudebox / plain claude' }
  results.p7sandbox = { value: box / m["claude with its own sandbox"], target: 1, what: "P7 30-command turn: claudebox / Claude's own sandbox" }
}

function interleaveChecked(variants, n, ok) {
  const samples = Object.fromEntries(Object.keys(variants).map(name => [name, []]))
  for (let i = 0; i < n; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const { ms, result } = timed(run)
      if (result.status !== 0 || !ok(result)) throw new Error(`${name} did not complete its turn (status ${result.status}): ${result.stdout} ${result.stderr}`.slice(0, 2000))
      samples[name].push(ms)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, median(xs)]))
}
