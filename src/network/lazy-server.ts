// A server that listens at once and loads what speaks its protocol later. The session's proxy and
// gateway must listen before the sandbox's program runs (the launcher's go), but node:http and
// their own code cost every launch 3-4 ms as uid 1001, 1-5 ms as root (A/B, 60 interleaved runs):
// they load once the program has started, or at the first connection, which waits for them unread.
import type { Server as HttpServer } from 'node:http'
import net from 'node:net'

/** What takes the connections once loaded: an http.Server that never listens itself. */
export interface Protocol {
  accept(socket: net.Socket): void
  close(): Promise<void>
}

/**
 * An http.Server as a Protocol: handed its connections, it never listens itself. Node starts
 * enforcing headersTimeout and requestTimeout (and tracking the connections closeAllConnections
 * ends) when a server starts listening: that event is emitted here (red team: without it a
 * half-sent request was held for ever). `closing` runs first at the end (the sockets the server
 * does not track: a proxy's tunnels).
 */
export function httpProtocol(server: HttpServer, closing: () => void = () => {}): Protocol {
  server.emit('listening')
  return {
    accept: socket => void server.emit('connection', socket),
    close: () =>
      new Promise<void>(done => {
        closing()
        // Never listening, it closes at once (its callback is told so: ERR_SERVER_NOT_RUNNING).
        server.close(() => done())
        server.closeAllConnections()
      }),
  }
}

export interface LazyServer {
  /** The TCP port on loopback, or the unix socket's path. */
  address: string | number
  /** Loads the protocol after `ms`, unless a connection (or the end) comes first. */
  loadSoon(ms: number): void
  /** Why the protocol could not be loaded (its connections were closed), if it could not. */
  problem(): string | undefined
  close(): Promise<void>
}

/**
 * A unix socket's `key`: the line each connection must send first (the in-sandbox bridge sends its
 * session's), else it is closed unread. Another sandbox that can reach the socket (a directory
 * bound into it that holds this one) cannot use this session's proxy or gateway.
 */
/** Where a lazy server's protocol is: loading, loaded (or why not), or the server closed. */
interface LoadState {
  protocol?: Protocol
  loading?: Promise<void>
  problem?: string
  closed: boolean
  timer?: NodeJS.Timeout
}

/**
 * `warm`: run after a load that no connection asked for (loadSoon's), while the program starts:
 * what the protocol's first use would otherwise pay (api-session.ts).
 */
export async function listenLazily(where: { path: string; key?: string } | { host: string; port: number }, maxConnections: number, load: () => Promise<Protocol>, warm?: () => Promise<void>): Promise<LazyServer> {
  const waiting = new Set<net.Socket>()
  const checking = new Set<net.Socket>()
  const state: LoadState = { closed: false }
  const key = 'key' in where && where.key !== undefined ? Buffer.from(`${where.key}\n`) : undefined
  const admit = (socket: net.Socket): void => {
    if (state.protocol !== undefined) return handOver(state.protocol, socket)
    waiting.add(socket)
    void startLoading()
  }
  // Paused: nothing is read before the key has come and the protocol takes the connection.
  // Half-open, as an http.Server's own are: a tunnel's client may end its side and still be
  // answered (red team: the answer never came). Without Nagle's algorithm, as an http.Server's
  // own are too (it sets that only on connections it accepts itself): with the open network
  // the gateway is on TCP, and each streamed answer's small writes waited for Claude's delayed
  // ACK, ~10 ms a request (a 30-command turn took 2,704 against 2,425 ms without the gateway).
  const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, key === undefined ? admit : requiring(key, checking, admit))
  if (maxConnections > 0) server.maxConnections = maxConnections
  const handOver = (protocol: Protocol, socket: net.Socket): void => {
    protocol.accept(socket)
    socket.resume()
  }
  const startLoading = (): Promise<void> =>
    (state.loading ??= load().then(
      async protocol => {
        if (state.closed) return protocol.close()
        state.protocol = protocol
        for (const socket of waiting) handOver(protocol, socket)
        waiting.clear()
      },
      (error: unknown) => {
        // Nothing can be served: the connections are closed (the sandbox gets no way around it).
        state.problem = (error as Error).message
        for (const socket of waiting) socket.destroy()
        waiting.clear()
        server.close()
      },
    ))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(where, () => resolve())
  })
  const address = server.address()
  return {
    address: typeof address === 'string' ? address : (address?.port ?? 0),
    loadSoon: ms => loadLater(state, ms, startLoading, warm),
    problem: () => state.problem,
    close: async () => {
      state.closed = true
      clearTimeout(state.timer)
      server.close()
      for (const socket of [...waiting, ...checking]) socket.destroy()
      waiting.clear()
      await state.loading
      await state.protocol?.close()
    },
  }
}

/**
 * loadSoon: the load after `ms`, then the warm-up, unless a connection loaded it first (and paid
 * the first use itself) or the server closed. A warm-up that failed costs only speed.
 */
function loadLater(state: LoadState, ms: number, startLoading: () => Promise<void>, warm: (() => Promise<void>) | undefined): void {
  const unasked = (): boolean => state.loading === undefined && !state.closed
  const loadThenWarm = async (): Promise<void> => {
    await startLoading()
    if (state.protocol !== undefined && !state.closed) await warm?.()
  }
  if (unasked()) state.timer ??= setTimeout(() => void (unasked() && loadThenWarm().catch(() => {})), ms).unref()
}

/** A connection listener that hands on only the connections whose first bytes are `key`. */
function requiring(key: Buffer, checking: Set<net.Socket>, admit: (socket: net.Socket) => void): (socket: net.Socket) => void {
  return socket => {
    checking.add(socket)
    void presents(socket, key).then(ok => {
      checking.delete(socket)
      // Destroyed meanwhile: the server closed.
      if (ok && !socket.destroyed) admit(socket)
      else socket.destroy()
    })
  }
}

/** How long a connection may take to send its key. */
const KEY_TIMEOUT_MS = 10_000

/**
 * Whether `socket`'s first bytes are `key` (consumed then; what follows stays for the protocol).
 * Compared in full whatever the first difference (no timing to learn it from).
 */
function presents(socket: net.Socket, key: Buffer): Promise<boolean> {
  return new Promise(resolve => {
    const done = (ok: boolean): void => {
      clearTimeout(timer)
      socket.off('readable', attempt)
      socket.off('end', fail)
      socket.off('error', fail)
      socket.off('close', fail)
      resolve(ok)
    }
    const fail = (): void => done(false)
    const attempt = (): void => {
      const first = socket.read(key.length) as Buffer | null
      if (first === null) return
      let difference = 0
      for (let i = 0; i < key.length; i++) difference |= (first[i] ?? 0) ^ (key[i] ?? 0)
      done(difference === 0)
    }
    const timer = setTimeout(fail, KEY_TIMEOUT_MS)
    socket.on('readable', attempt).once('end', fail).once('error', fail).once('close', fail)
    attempt()
  })
}
