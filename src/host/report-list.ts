// Lists of paths in warnings, bounded: a session can make any number of them.

/** Paths one warning names, at most (each up to PATH_MAX, escaped: a few MB in all). */
const REPORTED = 1024

/** At most REPORTED of `items`, joined, and how many more (round 69: a list past V8's longest string). */
export function named<T>(items: readonly T[], text: (item: T) => string = String): string {
  return items.slice(0, REPORTED).map(text).join(', ') + (items.length > REPORTED ? ` and ${items.length - REPORTED} more` : '')
}
