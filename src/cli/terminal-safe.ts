// Text that reaches the user's terminal from places the agent or a cloned repository can write
// (a project-root, a transcript, a file name, a .claudebox.json value) may carry escape sequences:
// OSC 52 writes the clipboard, OSC 0 the window title, CSI clears the screen, a bare CR or a bidi
// override makes a line read differently. Everything claudebox prints goes through here, so no
// control character reaches the terminal raw; they are shown as \xHH or \uHHHH instead.

/**
 * C0 but tab and newline, DEL, C1, and what Unicode shows as nothing: format characters (\p{Cf}:
 * the bidi embeddings, overrides and isolates, zero-width spaces and joiners, the tag characters
 * U+E0000 to U+E007F, which spelt a whole hidden line in a proposal's diff: red team, round 62),
 * the other default-ignorable ones (variation selectors, which can carry any bytes, and the
 * Hangul fillers: round 63), the braille blank, private-use and unassigned code points, and the
 * line and paragraph separators.
 */
const INVISIBLE = '\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Co}\\p{Cn}\\u2028\\u2029\\u2800'
export const CONTROLS = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${INVISIBLE}]`, 'gu')
/** The same plus tab and newline: for a value inside one line (a table cell, a path). */
const CONTROLS_IN_LINE = new RegExp(`[\\x00-\\x1f\\x7f-\\x9f${INVISIBLE}]`, 'gu')

const shown = (c: string): string => {
  const code = c.codePointAt(0) ?? 0
  if (c === '\n') return '\\n'
  if (c === '\t') return '\\t'
  if (c === '\r') return '\\r'
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`
}

/** Whole output (several lines): every control character but newline and tab escaped. */
export const terminalSafe = (text: string): string => text.replace(CONTROLS, shown)

/** One value inside a line: newlines and tabs escaped too, so it cannot fake a line of its own. */
export const inlineSafe = (text: string): string => text.replace(CONTROLS_IN_LINE, shown)

/** JSON for --json: JSON.stringify escapes C0 itself; C1 and the invisible characters become \u escapes too. */
export function jsonSafe(value: unknown): string {
  const escaped = (c: string): string => [...c].flatMap(unit => unit.split('')).map(unit => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
  return JSON.stringify(value, null, 2).replace(new RegExp(`[\\x7f-\\x9f${INVISIBLE}]`, 'gu'), escaped)
}

/** Whether `text` holds a character that must not reach the terminal raw (newline and tab may). */
export const hasRawControl = (text: string): boolean => new RegExp(CONTROLS.source, 'u').test(text)

/** Writes what the user asked for to stdout, with no raw control characters. */
export function writeOut(text: string): void {
  process.stdout.write(terminalSafe(text))
}
