import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string }

export default defineConfig({
  define: { __CLAUDEBOX_VERSION__: JSON.stringify(version) },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real sandboxes and real Claude Code, and mostly wait on them: with two
    // workers the suite kept 40% of this machine's two cores busy. Three, not four: with four, the
    // tests that bound how long a hostile session's end takes (25 s for 3,000 repositories) came
    // near their bounds on a busy machine.
    maxWorkers: 3,
  },
})
