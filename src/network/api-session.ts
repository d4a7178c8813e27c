// One session's API path, on the host: which sign-in it uses, the placeholder the sandbox gets
// instead, the gateway that swaps it for the real credential, and after the session the login
// Claude may have made inside (taken out, kept for this project only, never left inside).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { ApiCall, Credential, GatewayOptions, Usage } from './api-gateway.js'
import { listenLazily, type LazyServer } from './lazy-server.js'
import { writeFileAtomic } from '../host/atomic-write.js'
import { currentLogin, customHeaders, placeholderFor, placeholderLogin, readLogin, replaceLogin, signInKind, storeFileOf, TOKEN_URL, type OAuthLogin, type SignIn } from './credentials.js'
import { launchError, usageError } from '../errors.js'
import { lstatKind, readNoFollow } from '../host/probe.js'
import { killQuietly, processTree, removeDir } from '../host/fs.js'
import { hostProgramEnv } from '../host/host-env.js'
import { parseJson } from '../state/tier-files.js'
import { sharedPaths } from '../state/instance.js'
import type { LaunchRequest } from '../sandbox/plan.js'
import { sandboxStore } from '../sandbox/plan.js'
import { upstreamFromEnv } from './upstream-proxy.js'
import { LEGACY_PROJECT_LOGIN, projectLoginFile } from '../state/registry.js'

type Env = Readonly<Record<string, string | undefined>>

export interface ApiChoice {
  api?: NonNullable<LaunchRequest['api']>
  signIn?: SignIn
  /** The credential file the gateway reads (an OAuth login). */
  storeFile?: string
  /** The folders the sandbox writes: nothing the apiKeyHelper runs comes from them. */
  sandboxWrites?: readonly string[]
}

/**
 * The sign-in of this launch and what the sandbox gets instead; nothing when there is no login yet.
 * The gateway listens in the session's sockets directory, or with the open network (no directory)
 * on a port of the host's loopback.
 */
export function chooseApi(env: Env, claudeboxHome: string, instance: string, socketsDir: string | undefined): ApiChoice {
  const storeFile = [projectLoginFile(claudeboxHome, path.basename(instance)), path.join(instance, LEGACY_PROJECT_LOGIN)].find(f => readLogin(f) !== undefined) ?? storeFileOf(sharedPaths(claudeboxHome).secureStorage)
  const signIn = signInKind(env, storeFile, hostKeyHelper(claudeboxHome), consoleKey(claudeboxHome))
  if (signIn === undefined) return {}
  checkBaseUrl(env['ANTHROPIC_BASE_URL'])
  const placeholder = placeholderFor(signIn.kind)
  const api: NonNullable<LaunchRequest['api']> = { kind: signIn.kind, placeholder, ...(socketsDir === undefined ? { port: 0 } : { socket: path.join(socketsDir, 'api.sock') }) }
  if (signIn.storedKey !== undefined) api.storedKey = true
  if (signIn.kind === 'oauth-store') api.credentialsFile = placeholderLogin(readLogin(storeFile) ?? { accessToken: '' }, placeholder)
  return { api, signIn, storeFile }
}

/**
 * The gateway forwards Claude's calls to ANTHROPIC_BASE_URL: one it cannot forward to stops the
 * launch before anything runs (the value is not repeated: it may hold a password).
 */
function checkBaseUrl(value: string | undefined): void {
  if (!value) return
  let protocol: string | undefined
  try {
    protocol = new URL(value).protocol
  } catch {
    protocol = undefined
  }
  if (protocol === 'http:' || protocol === 'https:') return
  throw usageError("ANTHROPIC_BASE_URL is not an http:// or https:// URL, and claudebox's gateway (which keeps your login on the host) forwards Claude's API calls there; correct it or unset it")
}

export interface ApiSession {
  gateway: Gateway
  /** Loads the gateway's HTTP side after `ms` (it listens already; a connection loads it at once). */
  loadSoon(ms: number): void
  /** Closes the gateway; the line to print about the session's API use, if any. */
  finish(): Promise<string | undefined>
}

/** The gateway as the session holds it: listening at once, its HTTP side loaded later (lazy-server.ts). */
export interface Gateway extends LazyServer {
  usage: Usage
}

/** Connections at once to the gateway (each a descriptor of the launcher's). */
const MAX_CONNECTIONS = 512

/**
 * Listens where the sandbox reaches the gateway (a unix socket, or a TCP port on 127.0.0.1);
 * node:http and the gateway's code load only when needed (lazy-server.ts), not at every launch
 * (with the open network the gateway listens before bwrap starts, on the launch's path).
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const usage: Usage = { requests: 0, refused: 0, inputTokens: 0, outputTokens: 0, problems: [] }
  const server = await listenLazily(options.listen, MAX_CONNECTIONS, async () => (await import('./api-gateway.js')).gatewayProtocol(options, usage), () => warmUp(options.upstream))
  return { ...server, usage }
}

/** What the first API call would pay, paid while Claude starts: TLS's modules for an https API, and Node's HTTP code compiled. */
async function warmUp(upstream: URL): Promise<void> {
  if (upstream.protocol === 'https:') await (await import('./tunnels.js')).loadTls()
  await (await import('./http-warmup.js')).rehearseApiCall()
}

/**
 * Starts the gateway where the sandbox will reach it; with the open network the port is filled in.
 * `choice.key`: with a unix socket, the key its connections present (the bridge's, lazy-server.ts).
 */
export async function startApiSession(choice: Required<Pick<ApiChoice, 'api' | 'signIn'>> & ApiChoice & { key?: string }, env: Env, logDir?: string): Promise<ApiSession> {
  const { api, signIn } = choice
  const upstream = new URL(env['ANTHROPIC_BASE_URL'] || 'https://api.anthropic.com')
  const companyProxy = upstreamFromEnv(env)
  let gateway: Gateway
  const credential = credentialFor(signIn, env, choice.storeFile, choice.sandboxWrites ?? [])
  try {
    gateway = await startGateway({
      upstream,
      placeholder: api.placeholder,
      credential,
      extraHeaders: customHeaders(env['ANTHROPIC_CUSTOM_HEADERS']),
      listen: api.socket !== undefined ? { path: api.socket, ...(choice.key === undefined ? {} : { key: choice.key }) } : { host: '127.0.0.1', port: 0 },
      ...(logDir === undefined ? {} : { onCall: callLogger(logDir) }),
      ...(companyProxy === undefined ? {} : { companyProxy }),
    })
  } catch (error) {
    throw launchError(`cannot start the API gateway: ${(error as Error).message}`)
  }
  if (api.socket === undefined) api.port = gateway.address as number
  return {
    gateway,
    loadSoon: ms => gateway.loadSoon(ms),
    async finish() {
      await gateway.close()
      await credential.settled?.()
      const u = gateway.usage
      const failed = gateway.problem()
      const problems = [...new Set([...(failed === undefined ? [] : [`the API gateway could not start (${failed}): Claude's API calls were refused`]), ...u.problems])].join('; ')
      if (problems) return problems
      if (u.requests === 0) return undefined
      return `API: ${u.requests} request${u.requests === 1 ? '' : 's'}, ${grouped(u.inputTokens)} input and ${grouped(u.outputTokens)} output tokens (the credential stayed on the host)`
    },
  }
}

/**
 * The optional JSONL log of API calls, in the instance's claudebox/ directory (read-only inside);
 * never through a symlink there.
 */
function callLogger(dir: string): (call: ApiCall) => void {
  let fd: number | undefined
  const file = path.join(dir, `api-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.jsonl`)
  return call => {
    try {
      if (fd === undefined) {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
        if (!fs.lstatSync(dir).isDirectory()) return
        fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW, 0o600)
      }
      fs.writeSync(fd, `${JSON.stringify(call)}\n`)
    } catch {
      // a full disk loses log lines, never the session
    }
  }
}

/** A Console login keeps its API key as primaryApiKey in the account file: read on the host only. */
function consoleKey(claudeboxHome: string): string | undefined {
  const account = parseJson(readNoFollow(sharedPaths(claudeboxHome).claudeJson, 64 * 1024 * 1024) ?? '') as { primaryApiKey?: unknown } | undefined
  return typeof account?.primaryApiKey === 'string' && account.primaryApiKey !== '' ? account.primaryApiKey : undefined
}

/** The apiKeyHelper of the shared settings (the instances' copies have it removed: it runs here). */
function hostKeyHelper(claudeboxHome: string): string | undefined {
  const settings = parseJson(readNoFollow(path.join(sharedPaths(claudeboxHome).dir, 'settings.json'), 1 << 20) ?? '') as { apiKeyHelper?: unknown } | undefined
  return typeof settings?.apiKeyHelper === 'string' && settings.apiKeyHelper.trim() !== '' ? settings.apiKeyHelper : undefined
}

/** The most an apiKeyHelper may print (a key, perhaps a warning or two). */
const HELPER_OUTPUT_LIMIT = 64 << 10

/** How long a key from apiKeyHelper is used before the helper runs again (Claude Code's own default). */
const HELPER_TTL_MS = 5 * 60_000

/**
 * An apiKeyHelper run on the host (sh -c, 30 s at most), its key reused for HELPER_TTL_MS, again
 * after a 401. One run at a time, whatever the calls waiting on it: calls the sandbox made and
 * dropped at once each started their own, up to 64 helpers on the host at once (red team, round 59).
 */
export function helperCredential(command: string, timeoutMs = 30_000, cwd = '/', env: Env = { ...process.env, PWD: cwd }): Credential {
  let cached: { key: string; at: number } | undefined
  let running: Promise<string> | undefined
  const run = (): Promise<string> =>
    (running ??= runOnHost(command, timeoutMs, cwd, env)
      .then(stdout => {
        cached = { key: stdout.trim(), at: Date.now() }
        return cached.key
      })
      .catch((error: Error) => {
        throw new Error(`apiKeyHelper failed on the host (${error.message.split('\n')[0] ?? ''}); fix "apiKeyHelper" in ${'$CLAUDEBOX_HOME'}/shared/settings.json`)
      })
      .finally(() => (running = undefined)))
  return {
    refreshable: true,
    header: async rejected => {
      if (rejected === undefined && cached !== undefined && Date.now() - cached.at <= HELPER_TTL_MS) return ['x-api-key', cached.key]
      return ['x-api-key', await run()]
    },
  }
}

/**
 * sh -c `command`, its stdout. After `timeoutMs`, or when the launcher exits first, it is killed
 * with what it started and still runs under it (a `sleep` it waits on, a stuck `vault`), which
 * would otherwise outlive the launcher; a helper that daemonizes itself leaves that tree. Only
 * while it runs: once Node has reaped it, its pid may be another process's (red team).
 */
function runOnHost(command: string, timeoutMs: number, cwd: string, env: Env): Promise<string> {
  const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const killTree = (): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
    for (const pid of processTree(child.pid)) killQuietly(pid, 'SIGKILL')
  }
  process.once('exit', killTree)
  let [stdout, stderr] = ['', '']
  const ended = new Promise<void>(resolve => child.stdout.once('end', resolve))
  return new Promise((resolve, reject) => {
    const stop = (why: string): void => {
      killTree()
      child.stdout.destroy()
      child.stderr.destroy()
      reject(new Error(why))
    }
    const timer = setTimeout(() => stop(`it did not finish within ${timeoutMs / 1000} s`), timeoutMs)
    // A key is a line: a helper that prints without end (`yes`) would fill the launcher's memory.
    const take = (chunk: string, into: 'out' | 'err'): void => {
      if (into === 'out') stdout += chunk
      else stderr += chunk
      if (stdout.length + stderr.length > HELPER_OUTPUT_LIMIT) stop(`it printed more than ${HELPER_OUTPUT_LIMIT >> 10} KiB`)
    }
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => take(chunk, 'out'))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => take(chunk, 'err'))
    child.on('error', error => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      process.off('exit', killTree)
      // What it wrote is read within moments; something it left running may hold the pipe open.
      let waited: NodeJS.Timeout | undefined
      void Promise.race([ended, new Promise(done => (waited = setTimeout(done, 100)))]).then(() => {
        clearTimeout(waited)
        child.stdout.destroy()
        child.stderr.destroy()
        if (code === 0) resolve(stdout)
        else reject(new Error(`exit ${code ?? signal}${stderr.trim() === '' ? '' : `: ${stderr.trim().split('\n')[0]}`}`))
      })
    })
  })
}

/**
 * Where the apiKeyHelper runs: your home, as in a new shell, never the project, which the sandbox
 * writes (red team, round 89: a helper `python3 -c "import keyring ..."` imported the session's
 * ./keyring.py and ran it on the host; node, npx, uv run, direnv take code from the folder too).
 */
function helperPlace(env: Env): string {
  const home = env['HOME']
  return home !== undefined && path.isAbsolute(home) && fs.existsSync(home) ? home : '/'
}

/** The real credential, by kind: the host's variable, the apiKeyHelper, or the stored OAuth login (refreshed here). */
function credentialFor(signIn: SignIn, env: Env, storeFile: string | undefined, writes: readonly string[]): Credential {
  if (signIn.helper !== undefined) {
    const home = helperPlace(env)
    return helperCredential(signIn.helper, undefined, home, hostProgramEnv(env, writes, home))
  }
  if (signIn.kind !== 'oauth-store') {
    const value = signIn.storedKey ?? env[signIn.variable ?? ''] ?? ''
    return { refreshable: false, header: () => Promise.resolve(signIn.header === 'x-api-key' ? ['x-api-key', value] : ['authorization', `Bearer ${value}`]) }
  }
  // Only tests point this elsewhere (a local token endpoint); the real one is Claude Code's own.
  const tokenUrl = env['CLAUDEBOX_TEST_OAUTH_TOKEN_URL'] || TOKEN_URL
  const underway = new Set<Promise<unknown>>()
  let forcedAt = -Infinity
  return {
    refreshable: true,
    header: async rejected => {
      // A 401 refreshes the login at most once in FORCED_REFRESH_GAP_MS: the sandbox gets one when
      // it likes (a call without Claude's OAuth beta header), and each refresh turns over the
      // login every project shares (red team, round 89: 20 calls, 20 refreshes).
      const forced = rejected !== undefined && Date.now() - forcedAt >= FORCED_REFRESH_GAP_MS
      if (forced) forcedAt = Date.now()
      const pending = currentLogin(storeFile ?? '', forced ? rejected : undefined, tokenUrl, upstreamFromEnv(env))
      underway.add(pending)
      // Both ways: a refresh that throws (the store's write on a full disk) is the caller's to say,
      // and a promise left rejected here would end the launcher, the session with it.
      const done = (): void => void underway.delete(pending)
      pending.then(done, done)
      const { login, problem } = await pending
      if (login === undefined) throw new Error(problem)
      return ['authorization', `Bearer ${login.accessToken}`]
    },
    // A refresh the session's end would cut short has used up the single-use refresh token at the
    // endpoint, and the new one would never be stored: the login lost for every project (round 89).
    settled: async () => void (await Promise.allSettled([...underway])),
  }
}

/** The least time between two refreshes a 401 brings about, in one session. */
const FORCED_REFRESH_GAP_MS = 5 * 60_000

/**
 * The login in a session's own store, and the removal of that store. Its directories sit where the
 * sandbox could write: they are looked at without following a symlink (one planted there could
 * otherwise lead to the host's own store, to be read, moved or removed).
 */
function sessionStore(instance: string, session: string): { login: OAuthLogin | undefined; remove: () => void } {
  const dir = sandboxStore(instance, session)
  const real = [path.dirname(dir), dir].every(d => lstatKind(d) === 'dir')
  return {
    login: real ? readLogin(path.join(dir, '.credentials.json')) : undefined,
    remove: () => {
      if (real) removeDir(dir)
    },
  }
}

/** After `claudebox --login`: the new login, out of the sandbox into the host's store for every project. */
export function storeNewLogin(instance: string, session: string, claudeboxHome: string): string {
  const { login, remove } = sessionStore(instance, session)
  if (login === undefined) {
    remove()
    return 'no login was made (claude auth login did not finish); nothing changed'
  }
  const store = storeFileOf(sharedPaths(claudeboxHome).secureStorage)
  fs.mkdirSync(path.dirname(store), { recursive: true, mode: 0o700 })
  // Another project's session may be refreshing the old login right now (--login has no gateway).
  replaceLogin(store, login)
  // Only once the login is stored: a failure above leaves it where it was made.
  remove()
  return `signed in: the login is kept on the host (${store}) and every project uses it through claudebox's gateway`
}

/**
 * After a session: a login Claude made inside (its /login wrote a token that is not this session's
 * placeholder) is taken out of the sandbox to this project's host-side login, and the sandbox's
 * store is emptied. It is never left inside and never used by another project.
 */
export function takeInsideLogin(instance: string, session: string, placeholder: string | undefined, claudeboxHome: string): string | undefined {
  const { login, remove } = sessionStore(instance, session)
  remove()
  if (login === undefined || login.accessToken === placeholder) return undefined
  const file = projectLoginPlace(instance, claudeboxHome)
  writeFileAtomic(file, `${JSON.stringify({ claudeAiOauth: login })}\n`)
  return `a sign-in made inside this session was moved out of the sandbox and is used for this project only (${file}); to sign in for every project, copy it to ${'$CLAUDEBOX_HOME'}/shared/credentials/.credentials.json`
}

/** Where this project's sign-in is kept (registry.ts projectLoginFile), its folder made if missing. */
function projectLoginPlace(instance: string, claudeboxHome: string): string {
  const file = projectLoginFile(claudeboxHome, path.basename(instance))
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  return file
}

/**
 * A login an older claudebox kept in the instance, which every session of the project could read,
 * moved out of its reach (registry.ts projectLoginFile); one already there is newer and stays.
 * Said once: the sessions since could have read it, and a new sign-in replaces it.
 */
export function moveLegacyLogin(instance: string, claudeboxHome: string): string | undefined {
  const legacy = path.join(instance, LEGACY_PROJECT_LOGIN)
  if (lstatKind(legacy) !== 'file') return undefined
  const file = projectLoginPlace(instance, claudeboxHome)
  if (lstatKind(file) === 'missing') fs.renameSync(legacy, file)
  else fs.rmSync(legacy)
  return `this project's sign-in (made inside a session) was kept where its sessions could read it, and is now in ${file}, out of their reach; if a session may have been hostile, sign in again inside (/login) to replace it`
}

/**
 * 1234567 as 1,234,567. Not toLocaleString: its first call loads ICU's number formats, 17 ms at
 * the end of every session (profiled), for a comma.
 */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
