// claudebox's own questions (login import, first launch, --gc): asked on stderr, answered on stdin.

/** Only a person at a terminal can answer: both stdin and stderr must be one. */
export const canAsk = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

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
