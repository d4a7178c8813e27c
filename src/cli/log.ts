// Messages for the user go to stderr, prefixed `claudebox:`; stdout is only for what was asked for.
import { EXIT } from '../errors.js'
import { terminalSafe, writeOut } from './terminal-safe.js'

/**
 * Written before the first warning after a session, on a terminal: what the session left set that
 * would hide it (red team, round 73: `\e[8m`, concealed text, as its last output). The cursor is
 * saved around the scroll region's reset (which moves it), then the colours and attributes the
 * restore brought back are reset, then the character set (line drawing) and the cursor's
 * visibility; then (round 75) the default colours and the palette (`\e]11;#000`: text drawn in the
 * background's colour), autowrap and no left and right margins (a warning cut at the edge, or one
 * letter a line), no reverse video, no insert mode. Each is a no-op where it is already so.
 */
const TERMINAL_RESET = '\x1b7\x1b[r\x1b8\x1b[0m\x1b(B\x0f\x1b[?25h\x1b]110\x07\x1b]111\x07\x1b]112\x07\x1b]104\x07\x1b[?7h\x1b[?69l\x1b[?5l\x1b[4l'
let resetPending = false

/** The next warning first undoes what a session did to the terminal's display (a terminal's only). */
export function resetTerminalBeforeWarnings(): void {
  resetPending = process.stderr.isTTY === true
}

export function warn(message: string): void {
  const reset = resetPending ? TERMINAL_RESET : ''
  resetPending = false
  process.stderr.write(`${reset}claudebox: ${terminalSafe(message)}\n`)
}

/**
 * Milliseconds since Node started, for the debug lines' timings. Not performance.now(): the first
 * use of the global `performance` loads perf_hooks and nine modules of its own at every launch.
 */
export const nowMs = (): number => process.uptime() * 1000

/** With CLAUDEBOX_DEBUG=1: the message, after the milliseconds since Node started (where a launch's time goes). */
export function debug(message: string): void {
  if (process.env['CLAUDEBOX_DEBUG'] === '1') process.stderr.write(`claudebox[debug] ${nowMs().toFixed(1)} ms: ${terminalSafe(message)}\n`)
}

/** What was asked for, on stdout; the status of having printed it. */
export function print(text: string): number {
  writeOut(text)
  return EXIT.ok
}
