// Messages for the user go to stderr, prefixed `claudebox:`; stdout is only for what was asked for.
import { terminalSafe } from './terminal-safe.js'

export function warn(message: string): void {
  process.stderr.write(`claudebox: ${terminalSafe(message)}\n`)
}

export function debug(message: string): void {
  if (process.env['CLAUDEBOX_DEBUG'] === '1') process.stderr.write(`claudebox[debug]: ${terminalSafe(message)}\n`)
}
