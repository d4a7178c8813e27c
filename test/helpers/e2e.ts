// Runs claudebox with the real Claude Code (pinned in package-lock.json) pointed at the local
// Messages API mock: the common start of every end-to-end test.
import { claudebox, REAL_CLAUDE, type CliResult, type World } from './cli.js'

export function runClaude(world: World, cwd: string, args: readonly string[], apiUrl: string | undefined, env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return claudebox(world, args, {
    cwd,
    timeout: 90_000,
    env: {
      CLAUDEBOX_CLAUDE: REAL_CLAUDE,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      // Without it Claude also sends HEAD /api/hello; the run works either way.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ...env,
    },
  })
}
