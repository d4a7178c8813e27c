// What git made of a config's text is taken again within one process by the text alone (a session's
// end reads each nested repository's config twice, and copies share one text), never for a text that
// differs in any byte; what git reads is still git's own reading (src/host/config-cache.ts).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { keepEntries, keptEntries } from '../../src/host/config-cache.js'
import { configReader } from '../../src/host/git-configs.js'
import { tempDir } from '../helpers/temp.js'

describe('configs read once per text', () => {
  test('a text git read at one path is known at another; a text one byte apart is not', () => {
    const text = `[core]\n\tfsmonitor = tools/a-${process.pid}\n`
    const entries: [string, string][] = [['core.fsmonitor', `tools/a-${process.pid}`]]
    expect(keptEntries('/one/config', text)).toBeUndefined()
    keepEntries('/one/config', text, entries)
    expect(keptEntries('/two/config', text)).toEqual(entries)
    expect(keptEntries('/two/config', `${text} `)).toBeUndefined()
    expect(keptEntries('/two/config', text.replace('tools/a', 'tools/b'))).toBeUndefined()
  })

  test('configs of the same text at two paths name the same programs, from each one\'s work tree; one changed in a byte names its own', () => {
    const dir = tempDir()
    const write = (name: string, program: string): string => {
      fs.mkdirSync(path.join(dir, name, '.git'), { recursive: true })
      const config = path.join(dir, name, '.git', 'config')
      fs.writeFileSync(config, `[core]\n\tfsmonitor = "sh tools/${program}"\n[include]\n\tpath = extra\n`)
      return config
    }
    const reader = configReader(dir)
    const targetsOf = (name: string, config: string): string[] => reader.targets(path.join(dir, name), [config])
    expect(targetsOf('a', write('a', 'watch'))).toEqual([`${dir}/a/tools/watch`, `${dir}/a/.git/extra`])
    expect(targetsOf('b', write('b', 'watch'))).toEqual([`${dir}/b/tools/watch`, `${dir}/b/.git/extra`])
    expect(targetsOf('c', write('c', 'watcH'))).toEqual([`${dir}/c/tools/watcH`, `${dir}/c/.git/extra`])
  })
})
