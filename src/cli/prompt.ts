// claudebox's own questions (login import, first launch, --gc): asked on stderr, answered on stdin.
import { isatty } from 'node:tty'

/**
 * Only a person at a terminal can answer: both stdin and stderr must be one. (isatty, not
 * process.stdin.isTTY, which builds stdin's stream: ~7 ms of a launch.)
 */
export const canAsk = (): boolean => isatty(0) && isatty(2)

/** Asks one question, prefixed `claudebox:`, and returns the trimmed answer. */
export async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return (await rl.question(`claudebox: ${question} `)).trim()
  } finally {
    rl.close()
  }
}
