// A line diff for showing proposals ("-" shared now, "+" the project's version), with three lines
// of context. Longest common subsequence on lines: the files shown are small (settings, agents).
// Pure.

const CONTEXT = 3
/** Beyond this many line pairs the table would be too large: the diff says so instead. */
const MAX_CELLS = 4_000_000

/** The diff's lines; `whole` is false when the files were too large and only their sizes are said. */
export function lineDiff(before: string, after: string): { lines: string[]; whole: boolean } {
  const a = splitLines(before)
  const b = splitLines(after)
  if (a.length * b.length > MAX_CELLS) return { lines: [`(too large to show line by line: ${a.length} lines -> ${b.length} lines)`], whole: false }
  const marked = markLines(a, b)
  const keep = new Set<number>()
  marked.forEach(([mark], i) => {
    if (mark !== ' ') for (let j = Math.max(0, i - CONTEXT); j <= Math.min(marked.length - 1, i + CONTEXT); j++) keep.add(j)
  })
  const out: string[] = []
  let last = -1
  for (const i of [...keep].sort((x, y) => x - y)) {
    if (last !== -1 && i > last + 1) out.push('...')
    const [mark, line] = marked[i] as [string, string]
    out.push(`${mark} ${line}`)
    last = i
  }
  return { lines: out, whole: true }
}

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** Every line of both sides, marked ' ' (both), '-' (before only) or '+' (after only), in order. */
function markLines(a: readonly string[], b: readonly string[]): [string, string][] {
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = common[i] as Uint32Array
      row[j] = a[i] === b[j] ? (common[i + 1] as Uint32Array)[j + 1]! + 1 : Math.max((common[i + 1] as Uint32Array)[j]!, row[j + 1]!)
    }
  }
  const out: [string, string][] = []
  let [i, j] = [0, 0]
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push([' ', a[i++] as string])
      j++
    } else if (i < a.length && (j === b.length || (common[i + 1] as Uint32Array)[j]! >= (common[i] as Uint32Array)[j + 1]!)) out.push(['-', a[i++] as string])
    else out.push(['+', b[j++] as string])
  }
  return out
}
