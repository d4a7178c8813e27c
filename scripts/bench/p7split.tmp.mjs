import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { median, mkWorld, replayFds, startChild, timed, TESTED_CLAUDE_NEWEST } from './util.mjs'
const repo = path.resolve(import.meta.dirname, '../..')
const bin = path.join(repo, 'bin/claudebox.js')
const claude = path.join(repo, '.cache/claude-code', TESTED_CLAUDE_NEWEST, 'node_modules/.bin/claude')
const KEY = 'sk-ant-bench-key'
const steps = Number(process.env.STEPS ?? 30)
const bash = await startChild(process.execPath, [path.join(import.meta.dirname, 'mock-api.mjs'), String(steps)])
const url = `http://127.0.0.1:${bash.port}`
const apiEnv = { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', IS_SANDBOX: '1' }
const { project, env } = mkWorld({ CLAUDEBOX_CLAUDE: claude, ...apiEnv })
const go = ['-p', 'go', '--dangerously-skip-permissions']
const launch = (args, extra = {}) => spawnSync(process.execPath, [bin, ...args], { cwd: project, env: { ...env, ...extra }, encoding: 'utf8' })
const debug = launch(['--network=open', ...go], { CLAUDEBOX_DEBUG: '1' })
const line = debug.stderr.split('\n').find(l => l.includes('bwrap argv: '))
const [bwrap, ...argv] = JSON.parse(line.slice(line.indexOf('bwrap argv: ') + 12))
const own = ['--info-fd']
const args = argv.filter((arg, i) => !own.includes(arg) && !own.includes(argv[i - 1]))
args.forEach((arg, i) => args[i - 1] === '--bind' && arg.includes('/session-stores/') && spawnSync('mkdir', ['-p', arg]))
const noSeccomp = args.filter((arg, i) => arg !== '--seccomp' && args[i - 1] !== '--seccomp')
const inside = launch(['--network=open'], { CLAUDEBOX_CLAUDE: '/usr/bin/env' })
const sandboxEnv = Object.fromEntries(inside.stdout.trim().split('\n').map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
Object.assign(sandboxEnv, apiEnv)
const withFds = replayFds(env.CLAUDEBOX_HOME)
import fs from 'node:fs'
fs.mkdirSync(env.CLAUDEBOX_HOME + '-nosecret', { recursive: true })
fs.writeFileSync(env.CLAUDEBOX_HOME + '-nosecret/config.json', JSON.stringify({ secretless: false }))
fs.mkdirSync(env.CLAUDEBOX_HOME + '-nocg', { recursive: true })
fs.writeFileSync(env.CLAUDEBOX_HOME + '-nocg/config.json', JSON.stringify({ pidsLimit: 0 }))
const nogit = path.join(path.dirname(project), 'nogit')
fs.mkdirSync(nogit)
const variants = {
  'plain claude on the host': () => spawnSync(claude, go, { cwd: project, env, encoding: 'utf8' }),
  'bwrap direct (open argv)': () => withFds(fds => spawnSync(bwrap, args, { cwd: project, env: sandboxEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'ignore', ...fds] })),
  'bwrap direct, no seccomp': () => withFds(fds => spawnSync(bwrap, noSeccomp, { cwd: project, env: sandboxEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'ignore', ...fds] })),
  'claudebox --network=open': () => launch(['--network=open', ...go]),
  'claudebox open, secretless false': () => launch(['--network=open', ...go], { CLAUDEBOX_HOME: env.CLAUDEBOX_HOME + '-nosecret' }),
  'claudebox open, no git': () => spawnSync(process.execPath, [bin, '--network=open', ...go], { cwd: nogit, env, encoding: 'utf8' }),
  'claudebox open, pidsLimit 0': () => launch(['--network=open', ...go], { CLAUDEBOX_HOME: env.CLAUDEBOX_HOME + '-nocg' }),
  'claudebox default': () => launch(go),
}
delete variants['bwrap direct, no seccomp']; delete variants['claudebox open, no git']; delete variants['claudebox default']
const n = Number(process.env.N ?? 5)
const samples = Object.fromEntries(Object.keys(variants).map(k => [k, []]))
for (let i = 0; i < n; i++) for (const [name, run] of Object.entries(variants)) {
  const { ms, result } = timed(run)
  if (result.status !== 0 || result.stdout.trim() !== 'done') throw new Error(`${name}: ${result.status} ${result.stdout} ${result.stderr}`.slice(0, 1500))
  samples[name].push(ms)
}
for (const [name, xs] of Object.entries(samples)) console.log(name.padEnd(34), median(xs).toFixed(0).padStart(6), 'ms', xs.map(x => x.toFixed(0)).join(' '))
bash.child.kill()
process.exit(0)
