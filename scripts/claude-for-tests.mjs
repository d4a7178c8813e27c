#!/usr/bin/env node
// Installs a Claude Code release for the end-to-end tests into .cache/claude-code/VERSION (once),
// and prints the path of its `claude`. Not a dependency of the package: a user's setup never
// downloads it (it is ~370 MB). Usage: node scripts/claude-for-tests.mjs [VERSION]
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { $ } from 'zx'

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

/** The releases src/config/tested-claude.ts names (one source of truth for the tests and --check). */
export function testedReleases() {
  const source = fs.readFileSync(path.join(repo, 'src/config/tested-claude.ts'), 'utf8')
  const found = /newest: '([^']+)', older: '([^']+)'/.exec(source)
  if (!found) throw new Error('src/config/tested-claude.ts: TESTED_CLAUDE not found')
  return { newest: found[1], older: found[2] }
}

export async function installClaude(version) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`not a Claude Code release number: ${version} (like 2.1.331)`)
  const prefix = path.join(repo, '.cache/claude-code', version)
  const claude = path.join(prefix, 'node_modules/.bin/claude')
  const installed = path.join(prefix, 'node_modules/@anthropic-ai/claude-code/package.json')
  if (fs.existsSync(claude) && JSON.parse(fs.readFileSync(installed, 'utf8')).version === version) return claude
  fs.mkdirSync(prefix, { recursive: true })
  // Claude Code declares node >= 22 but runs as a native program: npm only warns on Node 20.
  await $({ stdio: ['ignore', 'inherit', 'inherit'] })`npm install --prefix ${prefix} --no-save --no-package-lock --no-audit --no-fund --loglevel=error ${`@anthropic-ai/claude-code@${version}`}`
  if (!fs.existsSync(claude)) throw new Error(`npm installed Claude Code ${version} but ${claude} is missing`)
  return claude
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const version = process.argv[2] ?? testedReleases().newest
  console.log(await installClaude(version))
}
