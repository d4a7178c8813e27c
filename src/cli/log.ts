// Messages for the user go to stderr, prefixed `claudebox:`; stdout is only for what was asked for.
import { EXIT } from '../errors.js'
import { terminalSafe, writeOut } from './terminal-safe.js'

export function warn(message: string): void {
  process.stderr.write(`claudebox: ${terminalSafe(message)}\n`)
}

/** With CLAUDEBOX_DEBUG=1: the message, after the milliseconds since Node started (where a launch's time goes). */
export function debug(message: string): void {
  if (process.env['CLAUDEBOX_DEBUG'] === '1') process.stderr.write(`claudebox[debug] ${(process.uptime() * 1000).toFixed(1)} ms: ${terminalSafe(message)}\n`)
}

/** What was asked for, on stdout; the status of having printed it. */
export function print(text: string): number {
  writeOut(text)
  return EXIT.ok
}
