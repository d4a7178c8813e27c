// A local stand-in for the Anthropic Messages API, so that the real Claude Code completes whole
// turns offline (ANTHROPIC_BASE_URL). It answers with text, or with a tool_use block that makes
// Claude run a tool (Bash, Read, Write) inside the sandbox and send back the tool_result.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: unknown
}

export type Reply = { text: string } | { tool: { name: string; input: Record<string, unknown> } }

export interface MockApi {
  url: string
  requests: RecordedRequest[]
  /** The POST /v1/messages requests only. */
  messages: () => RecordedRequest[]
  close: () => Promise<void>
}

/** `respond` picks the reply to the n-th messages request (0-based); default: the text "pong". */
export async function startMockApi(
  respond: (request: RecordedRequest, index: number) => Reply = () => ({ text: 'pong' }),
  /** Answers 401 to a messages request this returns true for (an expired or wrong credential). */
  unauthorized: (request: RecordedRequest) => boolean = () => false,
): Promise<MockApi> {
  const requests: RecordedRequest[] = []
  let count = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown
      try {
        body = text === '' ? undefined : JSON.parse(text)
      } catch {
        body = text
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      requests.push(recorded)
      if (recorded.path.startsWith('/v1/messages') && unauthorized(recorded)) {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }))
        return
      }
      if (req.method === 'POST' && recorded.path.startsWith('/v1/messages/count_tokens')) return json(res, { input_tokens: 1 })
      if (req.method === 'POST' && recorded.path.startsWith('/v1/messages')) return stream(res, respond(recorded, count++), count)
      return json(res, {})
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messages: () => requests.filter(r => r.method === 'POST' && r.path.startsWith('/v1/messages') && !r.path.includes('count_tokens')),
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A test file's mock API (useMockApi): start() brings one up; the rest reads the one started last. */
export interface MockApiSlot extends MockApi {
  /** Starts a mock API (startMockApi's arguments) and makes it the one this slot reads. */
  start: (...args: Parameters<typeof startMockApi>) => Promise<MockApi>
}

/**
 * The mock API of the tests of a file (call it at the top level): each test starts the mock it needs,
 * and every mock started is closed after its test. Reading it before a start in the same test throws.
 */
export function useMockApi(): MockApiSlot {
  let current: MockApi | undefined
  const started: MockApi[] = []
  afterEach(async () => {
    current = undefined
    await Promise.all(started.splice(0).map(api => api.close()))
  })
  const now = (): MockApi => {
    if (current === undefined) throw new Error('no mock API started in this test: call start() first')
    return current
  }
  return {
    async start(...args) {
      const api = await startMockApi(...args)
      started.push(api)
      current = api
      return api
    },
    get url() {
      return now().url
    },
    get requests() {
      return now().requests
    },
    messages: () => now().messages(),
    /** Closes the one started last, if any (a test may end a mock before starting the next). */
    close: () => current?.close() ?? Promise.resolve(),
  }
}

function json(res: http.ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}

/** One streamed message: message_start, one content block, message_delta, message_stop. */
function stream(res: http.ServerResponse, reply: Reply, n: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const send = (event: string, data: unknown): void => void res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  const usage = { input_tokens: 10, output_tokens: 1 }
  send('message_start', {
    type: 'message_start',
    message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-mock', content: [], stop_reason: null, stop_sequence: null, usage },
  })
  if ('text' in reply) {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } })
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: reply.tool.name, input: {} } })
    send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.tool.input) } })
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 })
  send('message_delta', { type: 'message_delta', delta: { stop_reason: 'text' in reply ? 'end_turn' : 'tool_use', stop_sequence: null }, usage })
  send('message_stop', { type: 'message_stop' })
  res.end()
}

/**
 * The tool results this request sends back: those of its last user message that has any (Claude
 * may append a system note after them).
 */
export function toolResults(request: RecordedRequest): { content: string; isError: boolean }[] {
  const messages = (request.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? []
  const hasResults = (m: { role: string; content: unknown }): boolean =>
    m.role === 'user' && Array.isArray(m.content) && (m.content as { type?: string }[]).some(c => c.type === 'tool_result')
  const last = [...messages].reverse().find(hasResults)
  if (last === undefined || !Array.isArray(last.content)) return []
  return (last.content as { type?: string; content?: unknown; is_error?: boolean }[])
    .filter(block => block.type === 'tool_result')
    .map(block => ({ content: flatten(block.content), isError: block.is_error === true }))
}

function flatten(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map(part => (typeof part === 'object' && part !== null && 'text' in part ? String((part as { text: unknown }).text) : '')).join('')
  return ''
}
