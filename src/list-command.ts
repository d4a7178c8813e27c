// --list: every instance with its state, last use, size and conversations.
import { EXIT } from './errors.js'
import { instancesDir } from './instance.js'
import { listRows, renderTable } from './list.js'
import { scanInstances } from './scan.js'
import type { Settings } from './settings.js'

export function runList(settings: Settings, json: boolean): number {
  const rows = listRows(scanInstances(instancesDir(settings.claudeboxHome), { details: true }))
  process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : renderTable(rows))
  return EXIT.ok
}
