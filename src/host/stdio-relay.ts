// The sandbox's stdin, stdout or stderr when it is not a terminal (a file, a pipe, a socket, a
// device; inherited-fds.ts sandboxStdio says why): the sandbox gets a pipe of the launcher's and
// the launcher copies between it and its own descriptor, which never enters the sandbox. Like ssh,
// the copy of stdin reads ahead: in a `while read` loop, give claudebox `< /dev/null`.
import type { ChildProcess } from 'node:child_process'
import type { StdioWay } from './inherited-fds.js'

/** Starts the copies; the function returned stops reading stdin once the sandbox has ended. */
export function relayStdio(child: ChildProcess, ways: readonly StdioWay[]): () => void {
  // Node writes its stdout and stderr synchronously when they are files or pipes: nothing is
  // pending when the launcher exits.
  for (const [way, from, to] of [[ways[1], child.stdout, process.stdout], [ways[2], child.stderr, process.stderr]] as const) {
    if (way !== 'relay' || !from) continue
    // The reader went away or the disk is full: the program gets EPIPE, as it would have had an
    // error of its own, and the launcher goes on (every error, not only the first).
    to.on('error', () => from.destroy())
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
