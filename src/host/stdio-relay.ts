// The sandbox's stdin, stdout or stderr where it has a name on the host (a file, a named FIFO, a
// device; inherited-fds.ts sandboxStdio): the sandbox gets a pipe and the launcher copies between
// that pipe and its own descriptor, which never enters the sandbox.
import type { ChildProcess } from 'node:child_process'
import type { StdioWay } from './inherited-fds.js'

/** Starts the copies; the function returned stops reading stdin once the sandbox has ended. */
export function relayStdio(child: ChildProcess, ways: readonly StdioWay[]): () => void {
  // Node writes its stdout and stderr synchronously when they are files or pipes: nothing is
  // pending when the launcher exits.
  for (const [way, from, to] of [[ways[1], child.stdout, process.stdout], [ways[2], child.stderr, process.stderr]] as const) {
    if (way !== 'relay' || !from) continue
    // The reader went away (a named FIFO closed): the program gets EPIPE, as it would have.
    to.once('error', () => from.destroy())
    from.pipe(to, { end: false })
  }
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
