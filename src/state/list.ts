// --list: the instances as a table for people or JSON for scripts. Pure.
import { inlineSafe } from '../cli/terminal-safe.js'
import { instanceStatus, type ScannedEntry } from './gc.js'

export interface ListRow {
  id: string
  root: string | null
  state: string
  liveSessions: number
  lastUsed: string | null
  /** null: not measured yet (an instance of an older version, past this --list's budget). */
  size: number | null
  conversations: number | null
}

export function listRows(entries: readonly ScannedEntry[]): ListRow[] {
  return entries
    .filter(e => !e.name.startsWith('.trash-') && instanceStatus(e) !== 'not an instance')
    .map(e => {
      const status = instanceStatus(e)
      return {
        id: e.name,
        root: e.recordedRoot ?? null,
        state: status === 'live' ? `live (${e.liveSessions} session${e.liveSessions === 1 ? '' : 's'})` : status,
        liveSessions: e.liveSessions,
        lastUsed: e.lastUsed === undefined ? null : new Date(e.lastUsed).toISOString(),
        size: e.size ?? null,
        conversations: e.conversations ?? null,
      }
    })
    .sort((a, b) => byNewest(a.lastUsed ?? '', b.lastUsed ?? ''))
}

export function renderTable(rows: readonly ListRow[]): string {
  const header = ['ID', 'STATE', 'LAST USED', 'SIZE', 'CONVERSATIONS', 'PROJECT ROOT']
  const cells = rows.map(r => [r.id, r.state, r.lastUsed?.slice(0, 16).replace('T', ' ') ?? '-', r.size === null ? '?' : humanSize(r.size), r.conversations === null ? '?' : String(r.conversations), r.root ?? '(none)'].map(inlineSafe))
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map(c => (c[i] ?? '').length)))
  const line = (c: readonly string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('  ')
  return [line(header), ...cells.map(line)].join('\n') + '\n'
}

export function humanSize(bytes: number): string {
  const units = ['B', 'K', 'M', 'G', 'T']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(1)}${units[unit]}`
}

/** ISO times, newest first: they sort as plain strings (localeCompare would load ICU's collation). */
function byNewest(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0
}
