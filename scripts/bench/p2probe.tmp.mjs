import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { median, mkWorld, replayFds, startChild, timed } from './util.mjs'
const repo = path.resolve(import.meta.dirname, '../..')
const bin = path.join(repo, 'bin/claudebox.js')
const claude = path.join(repo, '.cache/claude-code/2.1.331/node_modules/.bin/claude')
const KEY = 'sk-ant-bench-key'
const text = await startChild(process.execPath, [path.join(import.meta.dirname, 'mock-api.mjs'), '0'])
const url = `http://127.0.0.1:${text.port}`
const apiEnv = { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' }
const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: claude, ...apiEnv })
const launch = (args, extra = {}) => spawnSync(process.execPath, [bin, ...args], { cwd: project, env: { ...env, ...extra }, encoding: 'utf8' })
const debug = launch(['--network=open', '-p', 'hello'], { CLAUDEBOX_DEBUG: '1' })
const line = debug.stderr.split('\n').find(l => l.includes('bwrap argv: '))
const [bwrap, ...argv] = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
const args = argv.filter((arg, i) => arg !== '--info-fd' && argv[i - 1] !== '--info-fd')
args.forEach((arg, i) => args[i - 1] === '--bind' && arg.includes('/session-stores/') && spawnSync('mkdir', ['-p', arg]))
const inside = launch(['--network=open'], { CLAUDEBOX_CLAUDE: '/usr/bin/env' })
const sandboxEnv = Object.fromEntries(inside.stdout.trim().split('\n').map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
Object.assign(sandboxEnv, apiEnv)
const withFds = replayFds(env.CLAUDEBOX_HOME)
const V = {
  direct: () => withFds(fds => spawnSync(bwrap, args, { cwd: project, env: sandboxEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'ignore', ...fds] })),
  open: () => launch(['--network=open', '-p', 'hello']),
  allow: () => launch(['-p', 'hello']),
  ...(process.env.EXTRA ? { extra: () => launch(JSON.parse(process.env.EXTRA)) } : {}),
}
const s = Object.fromEntries(Object.keys(V).map(k => [k, []]))
for (let i = 0; i < Number(process.env.N ?? 10); i++) for (const [k, run] of Object.entries(V)) {
  const { ms, result } = timed(run)
  if (result.status !== 0 || result.stdout.trim() !== 'pong') throw new Error(`${k}: ${result.status} ${result.stdout} ${result.stderr}`)
  s[k].push(ms)
}
for (const [k, v] of Object.entries(s)) console.log(k.padEnd(8), median(v).toFixed(0), 'min', Math.min(...v).toFixed(0))
text.child.kill()
