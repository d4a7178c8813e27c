// A stand-in for the Messages API for the benchmark (test/helpers/messages-api.ts is the tests'
// own): `node mock-api.mjs STEPS` prints its port, then answers the agent loop with STEPS Bash
// tool calls (`echo N`), one per request, then the text "done"; any other request gets "pong".
// Runs as a child process: the benchmark's own spawnSync would block a server in its process.
import http from 'node:http'

const steps = Number(process.argv[2] ?? 0)

const server = http.createServer((req, res) => {
  let text = ''
  req.on('data', chunk => (text += chunk))
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.startsWith('/v1/messages')) return json(res, {})
    if (req.url.startsWith('/v1/messages/count_tokens')) return json(res, { input_tokens: 1 })
    const body = JSON.parse(text)
    const agentLoop = body.tools?.some(tool => tool.name === 'Bash') === true
    const done = (body.messages ?? []).flatMap(m => (Array.isArray(m.content) ? m.content : [])).filter(c => c.type === 'tool_result').length
    const answer = steps === 0 || !agentLoop ? 'pong' : 'done'
    stream(res, agentLoop && done < steps ? { tool: { name: 'Bash', input: { command: `echo ${done + 1}`, description: 'step' } } } : { text: answer })
  })
})
server.listen(0, '127.0.0.1', () => console.log(server.address().port))

function json(res, value) {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}

let n = 0
function stream(res, reply) {
  n++
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  const usage = { input_tokens: 10, output_tokens: 1 }
  send('message_start', { type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-mock', content: [], stop_reason: null, stop_sequence: null, usage } })
  if (reply.text !== undefined) {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } })
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: reply.tool.name, input: {} } })
    send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.tool.input) } })
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 })
  send('message_delta', { type: 'message_delta', delta: { stop_reason: reply.text !== undefined ? 'end_turn' : 'tool_use', stop_sequence: null }, usage })
  send('message_stop', { type: 'message_stop' })
  res.end()
}
