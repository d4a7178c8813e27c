// Runs claudebox with the real Claude Code (pinned in package-lock.json) pointed at the local
// Messages API mock: the common start of every end-to-end test.
import { claudebox, REAL_CLAUDE, type CliResult, type World } from './cli.js'
import type { RecordedRequest, Reply } from './messages-api.js'

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

/** True for the requests of the agent loop (they offer the Bash tool), not Claude's side requests. */
export function isAgentTurn(request: RecordedRequest): boolean {
  const body = request.body as { tools?: { name?: string }[] } | undefined
  return body?.tools?.some(t => t.name === 'Bash') === true
}

/**
 * Answers the agent loop with steps[n] (a tool call) when n tool results have come back so far,
 * then with text. Requests of Claude's own (titles, summaries, sub-tasks) get plain text.
 */
export function scripted(steps: readonly { name: string; input: Record<string, unknown> }[]): (request: RecordedRequest) => Reply {
  return request => {
    if (!isAgentTurn(request)) return { text: 'ok' }
    const messages = (request.body as { messages?: { role: string; content: unknown }[] }).messages ?? []
    const done = messages.flatMap(m => (Array.isArray(m.content) ? (m.content as { type?: string }[]) : [])).filter(c => c.type === 'tool_result').length
    const step = steps[done]
    return step ? { tool: step } : { text: 'done' }
  }
}

