// The sandbox's stdin, stdout or stderr when it is not a terminal (a file, a pipe, a socket, a
// device; inherited-fds.ts sandboxStdio says why): the sandbox gets a pipe of the launcher's and
// the launcher copies between it and its own descriptor, which never enters the sandbox. Like ssh,
// the copy of stdin reads ahead: in a `while read` loop, give claudebox `< /dev/null`.
import type { ChildProcess } from 'node:child_process'
import type { Writable } from 'node:stream'
import type { StdioWay } from './inherited-fds.js'

/** The copies under way (relayStdio). */
export interface Relay {
  /** Stops reading stdin, once the sandbox has ended. */
  stop: () => void
  /** Whether output the launcher has taken from bwrap still waits for the reader to take it. */
  pending: () => boolean
  /** Resolves once that output has been written out (or could not be). */
  written: () => Promise<void>
}

/** Starts the copies. */
export function relayStdio(child: ChildProcess, ways: readonly StdioWay[]): Relay {
  // A pipe as the launcher's stdout or stderr does not block it (libuv writes it non-blocking):
  // what the reader has not taken yet waits in the launcher's memory. bin/claudebox.js waits for
  // it before exiting; run.ts gives it up after a signal, when the reader takes nothing.
  const outputs: Writable[] = []
  for (const [way, from, to] of [[ways[1], child.stdout, process.stdout], [ways[2], child.stderr, process.stderr]] as const) {
    if (way !== 'relay' || !from) continue
    outputs.push(to)
    // The reader went away or the disk is full: the program gets EPIPE, as it would have had an
    // error of its own, and the launcher goes on (every error, not only the first).
    to.on('error', () => from.destroy())
    from.pipe(to, { end: false })
  }
  const waiting = (): Writable[] => outputs.filter(to => !to.destroyed && to.writableLength > 0)
  // An empty write's callback comes once the writes before it are done, or have failed.
  const written = async (): Promise<void> => void (await Promise.all(waiting().map(to => new Promise(resolve => to.write('', resolve)))))
  return { stop: relayInput(child, ways), pending: () => waiting().length > 0, written }
}

/** stdin's copy; the function returned stops it once the sandbox has ended. */
function relayInput(child: ChildProcess, ways: readonly StdioWay[]): () => void {
  const input = child.stdin
  if (ways[0] !== 'relay' || !input) return () => {}
  // The program need not read all of it: a pipe it closed is not an error of the launcher's.
  input.on('error', () => {})
  process.stdin.on('error', () => input.end())
  process.stdin.pipe(input)
  return () => {
    process.stdin.unpipe(input)
    process.stdin.destroy()
  }
}
