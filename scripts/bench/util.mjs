// Small helpers shared by the parts of the benchmark.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** The newest tested Claude Code release (src/config/tested-claude.ts), which `npm test` installs. */
export const TESTED_CLAUDE_NEWEST = /newest: '([^']+)'/.exec(fs.readFileSync(new URL('../../src/config/tested-claude.ts', import.meta.url), 'utf8'))?.[1] ?? ''

export const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** A temporary HOME with a git project in it, and the environment of a launch there. */
const worlds = []
process.on('exit', () => worlds.forEach(root => fs.rmSync(root, { recursive: true, force: true })))

export function mkWorld(extra = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-bench-'))
  worlds.push(root)
  const home = path.join(root, 'home')
  const project = path.join(home, 'project')
  fs.mkdirSync(project, { recursive: true })
  spawnSync('git', ['init', '-q', project])
  const env = { PATH: process.env.PATH, HOME: home, CLAUDEBOX_HOME: path.join(home, '.claudebox'), LANG: 'C.UTF-8', ...extra }
  return { root, home, project, env }
}

/** A server in a child process (spawnSync would block one in this process); it prints its port. */
export async function startChild(cmd, args, env = process.env) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env })
  process.on('exit', () => child.kill())
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', d => resolve(Number(String(d).trim())))
    child.once('exit', code => reject(new Error(`${cmd} exited with ${code}`)))
  })
  return { child, port }
}

/** Runs `run` and times it in milliseconds. */
export function timed(run) {
  const start = process.hrtime.bigint()
  const result = run()
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result }
}

/**
 * What a launch's bwrap command reads besides stdio, for replaying it: the seccomp program (fd 4)
 * and the Landlock helper (fd 5) that launch wrote, and the launcher's go for the sandbox's gate
 * (fd 7). `withFds(run)` opens them anew for one run (as stdio entries 4 and up) and closes them,
 * after `prepare` (makeReplayable).
 */
export function replayFds(claudeboxHome, prepare = () => {}) {
  const one = dir => path.join(claudeboxHome, dir, fs.readdirSync(path.join(claudeboxHome, dir))[0])
  const go = path.join(claudeboxHome, 'bench-go')
  fs.writeFileSync(go, 'go\n')
  const files = [one('seccomp'), one('landlock')]
  const withFds = run => {
    prepare()
    const fds = [...files, go].map(file => fs.openSync(file, 'r'))
    try {
      return run([fds[0], fds[1], 'ignore', fds[2]])
    } finally {
      for (const fd of fds) fs.closeSync(fd)
    }
  }
  return Object.assign(withFds, { files: [...files, go] })
}

/**
 * What a replayed bwrap argv needs that its launch removed at its end: the session's own credential
 * store, and the placeholders bound read-only (a commondir holding ./, an empty HEAD folder).
 */
export function makeReplayable(argv) {
  argv.forEach((arg, i) => {
    if (argv[i - 1] === '--bind' && arg.includes('/session-stores/')) fs.mkdirSync(arg, { recursive: true, mode: 0o700 })
    if (argv[i - 1] !== '--ro-bind' || argv[i + 1] !== arg || fs.existsSync(arg)) return
    if (path.basename(arg) === 'commondir') fs.writeFileSync(arg, './\n')
    if (path.basename(arg) === 'HEAD') fs.mkdirSync(arg)
  })
}
