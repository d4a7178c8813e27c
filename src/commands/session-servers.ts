// The host-side servers of one session (the API gateway, the egress proxy). A server whose address
// is part of the plan (the gateway's port with the open network) starts before bwrap; the others
// start once bwrap runs, while it builds the sandbox, in the directory made for their sockets
// before it; the program runs only once they listen (the go). What speaks their protocol loads
// after the go, or at their first connection (network/lazy-server.ts). All close after the session.
import fs from 'node:fs'
import path from 'node:path'
import { launchError } from '../errors.js'
import { SESSION_SOCKETS_NAME } from '../sandbox/policy.js'
import { leftByGoneLaunchers } from '../host/fs.js'

interface Server {
  /** Loads what speaks the protocol after `ms`, unless a connection comes first. */
  loadSoon(ms: number): void
  /** Closes the server; one line to print about it, if any. */
  finish(): Promise<string | undefined>
}

/**
 * How long after the go the servers' protocol code loads (~3 ms of work): Claude needs far longer
 * before its first request, and a program that ends sooner (a one-shot command) never pays it.
 */
const LOAD_AFTER_MS = 50

export class SessionServers {
  private readonly running: Server[] = []
  private readonly pending: (() => Promise<Server>)[] = []
  private socketsDir: { path: string; id: string } | undefined

  add(server: Server): void {
    this.running.push(server)
  }

  /** A server to start once bwrap runs. */
  later(start: () => Promise<Server>): void {
    this.pending.push(start)
  }

  /** The directory the sandbox binds: made now (private, and new: nobody else's), removed at the end. */
  makeSocketsDir(dir: string): void {
    try {
      fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 }) // claudebox's own run/ may be new
      fs.mkdirSync(dir, { mode: 0o700 }) // exclusive: EEXIST if anyone made it first
      this.socketsDir = { path: dir, id: identity(fs.lstatSync(dir)) }
    } catch (error) {
      throw launchError(`cannot create the directory of the session's sockets ${dir}: ${(error as Error).message}; check that its parent is writable`)
    }
    removeLeftSocketsDirs(path.dirname(dir), SESSION_SOCKETS_NAME.exec(path.basename(dir))?.[1])
  }

  /** The servers to start once bwrap runs; then every server loads its protocol soon after the go. */
  async startPending(): Promise<void> {
    for (const start of this.pending.splice(0)) this.running.push(await start())
    for (const server of this.running) server.loadSoon(LOAD_AFTER_MS)
  }

  /** Closes every server, the last started first; the lines they report. */
  async finish(): Promise<string[]> {
    const lines: string[] = []
    for (const server of this.running.splice(0).reverse()) {
      const line = await server.finish()
      if (line !== undefined) lines.push(line)
    }
    if (this.socketsDir !== undefined) removeSocketsDir(this.socketsDir.path, this.socketsDir.id)
    this.socketsDir = undefined // finished once: a second call (the launch's own, after a failure) has nothing left
    return lines
  }
}

const identity = (st: fs.Stats): string => `${st.dev}:${st.ino}`

/**
 * The directory made for the sockets, and only it: never recursively, never through a symlink, and
 * only while it is the one made (should anything have swapped it, what took its place stays).
 */
function removeSocketsDir(dir: string, id: string): void {
  try {
    const st = fs.lstatSync(dir)
    if (!st.isDirectory() || identity(st) !== id) return
    for (const name of SOCKET_NAMES) fs.rmSync(path.join(dir, name), { force: true })
    fs.rmdirSync(dir)
  } catch {
    // gone already, or something left in it: left as it is
  }
}

/**
 * The directories a launcher killed with SIGKILL left beside ours: removed once that launcher is
 * gone, the same way, never recursively; only those of our boot and pid namespace (`scope`), where
 * /proc says whether their pid lives (red team: a launch in another pid namespace removed a live
 * session's sockets). claudebox's own run/ is not emptied by a reboot as /tmp is.
 */
function removeLeftSocketsDirs(parent: string, scope: string | undefined): void {
  if (scope === undefined || scope === 'unknown') return
  const ofOurScope = (name: string): string | undefined => {
    const [, theirs, pid] = SESSION_SOCKETS_NAME.exec(name) ?? []
    return theirs === scope ? pid : undefined
  }
  for (const name of leftByGoneLaunchers(parent, ofOurScope)) {
    try {
      const dir = path.join(parent, name)
      removeSocketsDir(dir, identity(fs.lstatSync(dir)))
    } catch {
      // gone meanwhile
    }
  }
}

/** What the session's servers create in the directory (the servers unlink their own on close). */
const SOCKET_NAMES = ['proxy.sock', 'api.sock']
