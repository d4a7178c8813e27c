// --list: every instance with its state, last use, size and conversations.
import { jsonSafe, writeOut } from './terminal-safe.js'
import { EXIT } from './errors.js'
import { warn } from './log.js'
import { instancesDir } from './instance.js'
import { listRows, renderTable } from './list.js'
import { scanWithDetails } from './scan.js'
import type { Settings } from './settings.js'

export function runList(settings: Settings, json: boolean): number {
  const rows = listRows(scanWithDetails(instancesDir(settings.claudeboxHome)))
  writeOut(json ? `${jsonSafe(rows)}\n` : renderTable(rows))
  const unmeasured = rows.filter(row => row.size === null).length
  if (unmeasured > 0) warn(`${unmeasured} instance(s) not measured yet (no record of their last session): size and conversations show as unknown; each --list measures more of them`)
  return EXIT.ok
}
