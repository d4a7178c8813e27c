// The closed network is the default (--network=allow with Claude's own hosts). The first launch
// that uses that default says so once: on a terminal it offers the presets and saves the answer in
// config.json; without one it says in one line how to widen it. Users upgrading from a version
// whose default was the host's network get the same one-time notice.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { PRESETS } from '../network/policy.js'
import { readConfigText } from '../host/probe.js'
import { warn } from '../cli/log.js'
import { ask, canAsk } from '../cli/prompt.js'

/** Marks that the notice was given (or the question asked), in $CLAUDEBOX_HOME. */
export const NOTICE_FILE = 'network-default-notice'

const WIDEN = 'widen it with --allow-preset NAME (npm, pypi, crates, go, github), --allow-host HOST, or "allowPresets"/"allowHosts" in config.json; --network=open gives the host\'s network'

/** Returns the presets the user chose to save (empty when none, or when not asked). */
export async function offerNetworkDefault(claudeboxHome: string, upgrading: boolean): Promise<string[]> {
  const marker = path.join(claudeboxHome, NOTICE_FILE)
  if (fs.existsSync(marker)) return []
  fs.mkdirSync(claudeboxHome, { recursive: true, mode: 0o700 })
  const given = (): void => writeFileAtomic(marker, `${new Date().toISOString()}\n`)
  const what = upgrading ? 'changed: the sandbox no longer shares the host\'s network; by default it reaches' : 'the sandbox reaches'
  if (!canAsk()) {
    given()
    warn(`network: ${what} only Claude's API (through claudebox's proxy); ${WIDEN}`)
    return []
  }
  warn(`network: ${what} only Claude's API (through claudebox's proxy). Coding sessions often also need:`)
  for (const [name, hosts] of Object.entries(PRESETS)) warn(`  ${name.padEnd(7)} ${hosts.join(', ')}`)
  // Given once answered: a Ctrl-C at the question asks it again next time.
  const answer = await ask('allow which of these in every project? (names separated by spaces; Enter for none)')
  given()
  const names = answer.split(/[\s,]+/).filter(Boolean)
  const unknown = names.filter(name => !(name in PRESETS))
  if (unknown.length > 0) warn(`not presets, ignored: ${unknown.join(', ')}`)
  const chosen = [...new Set(names.filter(name => name in PRESETS))]
  if (chosen.length > 0) {
    savePresets(path.join(claudeboxHome, 'config.json'), chosen)
    warn(`saved "allowPresets": ${JSON.stringify(chosen)} in ${path.join(claudeboxHome, 'config.json')}`)
  } else {
    warn(`only Claude's API then; ${WIDEN}`)
  }
  return chosen
}

/** Adds presets to config.json's allowPresets, keeping every other key as it was. */
function savePresets(configFile: string, presets: readonly string[]): void {
  const text = readConfigText(configFile)
  const data = (text === undefined ? {} : JSON.parse(text)) as Record<string, unknown>
  const previous = Array.isArray(data['allowPresets']) ? (data['allowPresets'] as unknown[]).filter((p): p is string => typeof p === 'string') : []
  data['allowPresets'] = [...new Set([...previous, ...presets])]
  writeFileAtomic(configFile, `${JSON.stringify(data, null, 2)}\n`)
}
