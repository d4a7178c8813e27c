// claudebox's own questions (login import, first launch, --gc): asked on stderr, answered on stdin.
import { isatty } from 'node:tty'
import { ClaudeboxError, EXIT } from '../errors.js'

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
  // A signal someone else handles meanwhile (the limits' cgroups are left before it ends the
  // launcher, cgroups.ts) gives the terminal back first; the question then never returns.
  let signalled = false
  const giveBack = (): void => {
    signalled = true
    rl.close()
  }
  const taken = ENDING.filter(signal => process.listenerCount(signal) > 0)
  for (const signal of taken) process.prependListener(signal, giveBack)
  const answer = rl.question(`claudebox: ${question} `).catch((error: unknown) => {
    if (signalled) return new Promise<never>(() => {})
    throw (error as { code?: string }).code === 'ABORT_ERR' ? interrupted() : error
  })
  answer.catch(() => {}) // closing the interface rejects it too, after an interrupt
  try {
    return (await Promise.race([answer, stopped])).trim()
  } finally {
    for (const signal of taken) process.off(signal, giveBack)
    rl.close()
  }
}

/** The signals whose default would end claudebox while it asks. */
const ENDING = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const
