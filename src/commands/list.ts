// --list: every instance with its state, last use, size and conversations.
import { jsonSafe, writeOut } from '../cli/terminal-safe.js'
import { EXIT } from '../errors.js'
import { warn } from '../cli/log.js'
import { instancesDir } from '../state/instance.js'
import { listRows, renderTable } from '../state/list.js'
import { scanWithDetails } from '../state/scan.js'
import type { Settings } from '../config/settings.js'

export function runList(settings: Settings, json: boolean): number {
  const rows = listRows(scanWithDetails(instancesDir(settings.claudeboxHome)))
  writeOut(json ? `${jsonSafe(rows)}\n` : renderTable(rows))
  const unmeasured = rows.filter(row => row.size === null).length
  if (unmeasured > 0) warn(`${unmeasured} instance(s) not measured yet (no record of their last session): size and conversations show as unknown; each --list measures more of them`)
  return EXIT.ok
}
