#!/usr/bin/env node
// npm run compat -- VERSION: the end-to-end tests against another Claude Code release, installed
// into .cache/claude-code/VERSION. Exit status: vitest's.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { $ } from 'zx'
import { installClaude } from './claude-for-tests.mjs'

const version = process.argv[2]
if (version === undefined) {
  console.error('usage: npm run compat -- VERSION   (a Claude Code release, like 2.1.330; npm view @anthropic-ai/claude-code versions lists them)')
  process.exit(2)
}
const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const claude = await installClaude(version)
console.log(`== end-to-end tests against Claude Code ${version} (${claude})`)
const result = await $({ cwd: repo, stdio: 'inherit', nothrow: true, env: { ...process.env, CLAUDEBOX_TEST_CLAUDE: claude } })`npx vitest run test/e2e`
process.exit(result.exitCode ?? 1)
