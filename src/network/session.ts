// One session's proxy for --network=allow: its private socket directory, the denied-connection
// log in the instance, and the end-of-session summary. Runs in the launcher process, so the proxy
// lives exactly as long as the session (and dies with the launcher).
import fs from 'node:fs'
import path from 'node:path'
import type { EgressPolicy } from './policy.js'
import type { DeniedConnection, ProxyOptions } from './proxy.js'
import { listenLazily, type LazyServer } from './lazy-server.js'
import { launchError } from '../errors.js'
import { inlineSafe } from '../cli/terminal-safe.js'
import { OWN_DIR } from '../state/registry.js'
import type { UpstreamProxy } from './upstream-proxy.js'

export const NETWORK_LOG_DIR = 'network'

export interface EgressSession {
  /** Loads the proxy's HTTP side after `ms` (it listens already; a connection loads it at once). */
  loadSoon(ms: number): void
  /** Closes the proxy; the line to print when it refused something, else undefined. */
  finish(): Promise<string | undefined>
}

/**
 * Listens on the proxy's unix socket; node:http, node:dns and the proxy's code load only when
 * needed (lazy-server.ts), off the launch.
 */
export function startProxy(options: ProxyOptions & { key?: string }): Promise<LazyServer> {
  return listenLazily({ path: options.socketPath, ...(options.key === undefined ? {} : { key: options.key }) }, PROXY_CONNECTIONS, async () => (await import('./proxy.js')).proxyProtocol(options))
}

/**
 * Connections to the proxy at once, each a tunnel or a plain-HTTP connection with its own to the
 * host (package managers open tens): beyond, new ones are closed. Without a limit the sandbox held
 * 4,000 tunnels and 8,000 of the launcher's descriptors, and would have taken them all (red team,
 * round 59).
 */
const PROXY_CONNECTIONS = 1024

/**
 * Starts the proxy on the plan's socket, in the private directory the launcher made and removes
 * (session-servers.ts); only connections that present the plan's key are served.
 */
export async function startEgress(egress: { socket: string; key: string; policy: EgressPolicy; upstream?: UpstreamProxy }, instanceDir: string): Promise<EgressSession> {
  const { socket: socketPath, key, policy, upstream } = egress
  const logDir = path.join(instanceDir, OWN_DIR, NETWORK_LOG_DIR)
  const log = path.join(logDir, `denied-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.log`)
  let denied = 0
  let logFd: number | undefined
  const onDenied = (entry: DeniedConnection): void => {
    denied++
    logFd ??= openLog(logDir, log)
    // The host and the reason carry names the sandbox chose (a TLS server name): no control
    // character of theirs reaches the file the end-of-session line tells the user to read.
    const fields = [entry.time.toISOString(), entry.host, String(entry.port), entry.reason].map(inlineSafe)
    if (logFd !== undefined) fs.writeSync(logFd, `${fields.join('\t')}\n`)
  }
  let proxy
  try {
    proxy = await startProxy({ socketPath, key, policy, onDenied, ...(upstream === undefined ? {} : { upstream }) })
  } catch (error) {
    throw launchError(`cannot start the network proxy on ${socketPath}: ${(error as Error).message}`)
  }
  return {
    loadSoon: ms => proxy.loadSoon(ms),
    async finish() {
      await proxy.close()
      const failed = proxy.problem()
      if (logFd !== undefined) fs.closeSync(logFd)
      if (failed !== undefined) return `the network proxy could not start (${failed}): every connection through it was refused`
      return denied === 0 ? undefined : deniedSummary(denied, logFd === undefined ? undefined : log)
    },
  }
}

/**
 * The log lives in the instance's claudebox/ directory, read-only inside the sandbox; still, never
 * write through a symlink there (O_NOFOLLOW, and the directory checked with lstat).
 */
function openLog(dir: string, file: string): number | undefined {
  try {
    fs.mkdirSync(dir, { mode: 0o700, recursive: true })
    if (!fs.lstatSync(dir).isDirectory()) return undefined
    const { O_WRONLY, O_CREAT, O_APPEND, O_NOFOLLOW } = fs.constants
    return fs.openSync(file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0o600)
  } catch {
    return undefined
  }
}

/** The line printed after a session that had denied connections. */
function deniedSummary(denied: number, log: string | undefined): string {
  return `${denied} connection${denied === 1 ? '' : 's'} blocked by the network allowlist${log ? `; see ${log}` : ''} (--allow-host HOST[:PORT] admits one)`
}
