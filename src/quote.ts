// POSIX shell quoting for --dry-run output; the launch itself never goes through a shell.

const SAFE = /^[A-Za-z0-9_/.,:=@%+-]+$/

/** Quotes one word so that any POSIX sh reads it back unchanged. */
export function shq(word: string): string {
  return word !== '' && SAFE.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
