// The requests a client connection of the API gateway or the egress proxy has under way, and what
// each does when that connection closes. Node starts each request as soon as it has parsed it, so
// requests pipelined on one connection all went upstream at once (red team, rounds 58 and 59:
// 20,000 of them held every descriptor of the launcher); and an answer queued behind another never
// ends when its connection closes, so only the connection's own 'close' ends its requests. One
// listener a connection, however many requests it pipelines: the 11th made Node print a warning
// on the user's terminal, at the sandbox's will.
import type { Socket } from 'node:net'

/** Requests one connection may have under way: Claude, curl and package managers send one at a time. */
export const PIPELINED_LIMIT = 8

interface Entry {
  end: () => void
  request: boolean
}

const entriesOf = new WeakMap<Socket, Set<Entry>>()

function entriesOn(socket: Socket): Set<Entry> {
  let entries = entriesOf.get(socket)
  if (entries === undefined) {
    const these = new Set<Entry>()
    socket.once('close', () => these.forEach(entry => entry.end()))
    entriesOf.set(socket, these)
    entries = these
  }
  return entries
}

function add(socket: Socket, entry: Entry): () => void {
  const entries = entriesOn(socket)
  entries.add(entry)
  // Closed already: its 'close' has gone by.
  if (socket.closed) queueMicrotask(entry.end)
  return () => void entries.delete(entry)
}

/** Runs `end` when the connection closes, unless forgotten first (the function returned). */
export function whenConnectionCloses(socket: Socket, end: () => void): () => void {
  return add(socket, { end, request: false })
}

/**
 * A request under way on the connection, `end` run if the connection closes before it is
 * forgotten; undefined, and the connection closed, when it already has PIPELINED_LIMIT.
 */
export function requestUnderWay(socket: Socket, end: () => void): (() => void) | undefined {
  let underWay = 0
  for (const entry of entriesOn(socket)) if (entry.request) underWay++
  if (underWay >= PIPELINED_LIMIT) {
    socket.destroy()
    return undefined
  }
  return add(socket, { end, request: true })
}
