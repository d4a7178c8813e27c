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
 * terminal is raw: readline sees it, no signal comes) stops the command with 130, as it would
 * anywhere else (red team: the question was taken as unanswered and the launch went on).
 */
export async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  const interrupted = new Promise<never>((_, reject) => rl.once('SIGINT', () => reject(new ClaudeboxError('interrupted', EXIT.interrupted))))
  const answer = rl.question(`claudebox: ${question} `)
  answer.catch(() => {}) // closing the interface rejects it too, after an interrupt
  try {
    return (await Promise.race([answer, interrupted])).trim()
  } finally {
    rl.close()
  }
}
