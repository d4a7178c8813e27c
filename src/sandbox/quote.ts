// POSIX shell quoting for --dry-run output; the launch itself never goes through a shell.
import { CONTROLS, hasRawControl } from '../cli/terminal-safe.js'

const SAFE = /^[A-Za-z0-9_/.,:=@%+-]+$/

/**
 * Quotes one word so that any POSIX sh reads it back unchanged. A control character is written as
 * "$(printf '\ooo')" (dash has no $'...'), so the output shows no raw escape sequence and pastes.
 */
export function shq(word: string): string {
  if (word !== '' && SAFE.test(word)) return word
  const quoted = `'${word.replaceAll("'", `'\\''`)}'`
  if (!hasRawControl(word)) return quoted
  return quoted.replace(CONTROLS, c => `'"$(printf '${octalUtf8(c)}')"'`)
}

/** printf's octal escapes for the UTF-8 bytes of one character. */
const octalUtf8 = (c: string): string => Array.from(Buffer.from(c, 'utf8'), b => `\\${b.toString(8).padStart(3, '0')}`).join('')
