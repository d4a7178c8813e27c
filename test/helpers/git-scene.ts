// The scene of the git escape tests: a world with a project, a payload the agent plants inside
// that touches a marker outside when the host's git runs it, and what the user's git does next.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { claudebox, makeRepo, makeWorld, type World } from './cli.js'

export interface Scene {
  world: World
  project: string
  marker: string
}

/**
 * A world with a project; the agent's payload would create `marker` (outside the sandbox).
 * `hardLinks`: the --hard-links opt-in, for attacks that need a second name of a file (refused by
 * default since round 134) and for checks that must hold with it too.
 */
export function scene(options: { hardLinks?: boolean } = {}): Scene {
  const world = makeWorld()
  fs.mkdirSync(world.claudeboxHome, { recursive: true })
  fs.writeFileSync(path.join(world.claudeboxHome, 'config.json'), options.hardLinks === true ? '{ "hardLinks": true }\n' : '{}\n')
  const project = makeRepo(world.home, 'src/project')
  return { world, project, marker: path.join(world.root, 'PWNED') }
}

/** A file of the user's outside the project, holding `mine\n`: what a link the session planted must not let git write to. */
export function fileOutside(s: Scene): string {
  const outside = path.join(s.world.root, 'outside.txt')
  fs.writeFileSync(outside, 'mine\n')
  return outside
}

/** A folder of the scene's home that is no repository: a project of that kind. */
export function plainFolder(s: Scene): string {
  const plain = path.join(s.world.home, 'src/plain')
  fs.mkdirSync(plain, { recursive: true })
  return plain
}

/** Shell lines (run inside) that write the payload script and a git config that runs it. */
export const payload = (s: Scene, configFile: string): string =>
  [`printf '#!/bin/sh\\ntouch ${s.marker}\\n' > .payload`, 'chmod +x .payload', `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s/.payload\\n' "$PWD" > ${configFile}`].join('; ')

/** `timeout`: the whole launch's (60 s); a test that makes 300,000 files inside needs more on a busy machine. */
export async function inside(s: Scene, script: string, cwd = s.project, timeout = 60_000): Promise<{ out: string; err: string; code: number | undefined }> {
  const r = await claudebox(s.world, ['--', '-c', script], { cwd, env: { CLAUDEBOX_CLAUDE: '/bin/sh' }, timeout })
  return { out: r.stdout.trim(), err: r.stderr, code: r.exitCode }
}

/** What the user does next on the host: every command that reads the index runs fsmonitor. */
export function hostGit(cwd: string, world: World): void {
  const env = { ...process.env, HOME: world.home, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' }
  for (const args of [['status'], ['diff'], ['add', '-A'], ['commit', '-qam', 'after'], ['status']]) {
    spawnSync('git', args, { cwd, env, stdio: 'ignore', timeout: 20_000 })
  }
}

/** The payload really runs when git reads that config: the attack is live, not a typo in the test. */
export function payloadWorks(s: Scene): void {
  const probe = path.join(s.world.root, 'probe-repo')
  execFileSync('git', ['init', '-q', probe])
  fs.writeFileSync(path.join(probe, '.payload'), `#!/bin/sh\ntouch ${s.marker}.probe\n`, { mode: 0o755 })
  execFileSync('git', ['-C', probe, 'config', 'core.fsmonitor', path.join(probe, '.payload')])
  hostGit(probe, s.world)
  expect(fs.existsSync(`${s.marker}.probe`)).toBe(true)
}

/** Every folder below `root` readable to its owner again: what a session locked (chmod 311) cannot be cleaned up otherwise as a user. */
export function readableAgain(root: string): void {
  let entries: fs.Dirent[]
  try {
    fs.chmodSync(root, fs.lstatSync(root).mode | 0o700)
    entries = fs.readdirSync(root, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) if (entry.isDirectory()) readableAgain(path.join(root, entry.name))
}
