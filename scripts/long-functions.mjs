#!/usr/bin/env node
// Lists the functions in src/ longer than a screen (LIMIT lines), longest first; exits 1 if any.
// A rough brace count, good enough for this code base's style (one function per `function`).
import fs from 'node:fs'
import path from 'node:path'

const LIMIT = 60
const walk = dir => fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []))
const long = []
for (const file of walk('src')) {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  lines.forEach((line, i) => {
    const name = /^(?:export )?(?:async )?function (\w+)/.exec(line)?.[1]
    if (name === undefined) return
    let depth = 0
    let end = i
    for (let started = false; end < lines.length; end++) {
      for (const c of lines[end]) depth += c === '{' ? 1 : c === '}' ? -1 : 0
      started ||= lines[end].includes('{')
      if (started && depth === 0) break
    }
    if (end - i + 1 > LIMIT) long.push([end - i + 1, `${file}:${i + 1} ${name}`])
  })
}
for (const [n, where] of long.sort((a, b) => b[0] - a[0])) console.log(`${n} lines: ${where}`)
process.exit(long.length > 0 ? 1 : 0)
