// claudebox's own questions (login import, first launch, --gc): asked on stderr, answered on stdin.
import { isatty } from 'node:tty'
import { ClaudeboxError, ENDING_SIGNALS, EXIT } from '../errors.js'

/**
 * Only a person at a terminal can answer: both stdin and stderr must be one. (isatty, not
 * process.stdin.isTTY, which builds stdin's stream: ~7 ms of a launch.)
 */
export const canAsk = (): boolean => isatty(0) && isatty(2)

/**
 * Asks one question, prefixed `claudebox:`, and returns the trimmed answer. Ctrl-C there (the
 * terminal is raw: readline sees it, no signal comes) or Ctrl-D (no more input) stops the command
 * with 130, as Ctrl-C would anywhere else (red team: the launch went on after either).
 */
export async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  const interrupted = (): ClaudeboxError => new ClaudeboxError('interrupted', EXIT.interrupted)
  const stopped = new Promise<never>((_, reject) => rl.once('SIGINT', () => reject(interrupted())))
  // A signal that ends claudebox meanwhile gives the terminal back first (Node does it itself only
  // for SIGINT and SIGTERM, and not once a handler has taken them). One someone else handles (the
  // limits' cgroups are left first, cgroups.ts) goes on to them; else it ends claudebox as its
  // default would. The question then never returns.
  let signalled = false
  const giveBack = (signal: NodeJS.Signals): void => {
    signalled = true
    rl.close()
    if (process.listenerCount(signal) > 1) return
    release()
    process.kill(process.pid, signal)
  }
  const release = (): void => {
    for (const signal of ENDING_SIGNALS) process.off(signal, giveBack)
  }
  for (const signal of ENDING_SIGNALS) process.prependListener(signal, giveBack)
  const answer = rl.question(`claudebox: ${question} `).catch((error: unknown) => {
    if (signalled) return new Promise<never>(() => {})
    throw (error as { code?: string }).code === 'ABORT_ERR' ? interrupted() : error
  })
  answer.catch(() => {}) // closing the interface rejects it too, after an interrupt
  try {
    return (await Promise.race([answer, stopped])).trim()
  } finally {
    release()
    rl.close()
  }
}
