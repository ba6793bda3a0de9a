// What a Streamable HTTP connect failure says (issue 24, item 12): the HTTP
// status, the content type and what the server answered (a short preview,
// never a header value or the URL's path and query), and what to do, with
// none of rmcp's own wording. Real node:http servers on 127.0.0.1.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { newHost, waitState } from './helpers/host.mjs'

const CANARY = 'canary-5d1e-http-answer'

/** A server answering every POST with `status`, `type` and `body` (a function of the request, or text). */
async function answering(t, status, type, body) {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const text = typeof body === 'function' ? body(req) : body
      res.writeHead(status, type ? { 'content-type': type } : {})
      res.end(text)
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => server.close())
  return `http://127.0.0.1:${server.address().port}`
}

async function failure(t, url) {
  const { host } = newHost(t)
  const config = { type: 'streamable-http', url, headers: { 'X-Api-Key': CANARY } }
  const id = await host.addServer({ name: 'web', config })
  const s = await waitState(host, id, 'error')
  assert.equal(s.error.errorType, 'connect_failed', JSON.stringify(s))
  const message = s.error.message
  assert.ok(!message.includes(CANARY), message)
  assert.ok(!message.includes('secret-path') && !message.includes('q=1'), message)
  assert.doesNotMatch(message, /discover and legacy initialize|Transport|Client error|unexpected server response/i)
  return message
}

test('a 405 to POST (a legacy SSE endpoint) says so, and what the legacy HTTP+SSE GET of the same URL got', async (t) => {
  const base = await answering(t, 405, 'text/plain; charset=utf-8', 'Method Not Allowed')
  const message = await failure(t, `${base}/secret-path/sse?q=1`)
  assert.match(message, new RegExp(`^connect failed: ${base.replace(/\./g, '\\.')} answered the MCP POST with HTTP 405 Method Not Allowed \\(text/plain\\): "Method Not Allowed"; `))
  assert.match(message, /legacy HTTP\+SSE server/)
  // The fallback to legacy HTTP+SSE (a GET of the same URL) was tried and is said too.
  assert.match(message, /; and http:\/\/127\.0\.0\.1:\d+ answered the legacy HTTP\+SSE GET with HTTP 405 Method Not Allowed: it serves no event stream there$/)
})

test('a 404 says the path is wrong', async (t) => {
  const base = await answering(t, 404, 'text/plain', 'Cannot POST')
  const message = await failure(t, `${base}/secret-path?q=1`)
  assert.match(message, /HTTP 404 Not Found \(text\/plain\)/)
  assert.match(message, /check the URL's path/)
})

test('a 400 with a JSON body that is not JSON-RPC shows the body, redacted', async (t) => {
  const base = await answering(t, 400, 'application/json', (req) => JSON.stringify({ error: 'bad request', echo: req.headers['x-api-key'] }))
  const message = await failure(t, `${base}/mcp`)
  assert.match(message, /HTTP 400 Bad Request \(application\/json\): "\{\\"error\\":\\"bad request\\",\\"echo\\":\\"\[redacted\]\\"\}"/)
})

test('an HTML page at the URL is named by its title and called a web page', async (t) => {
  const page = '<!doctype html><html><head><title>Welcome to the portal</title></head><body>' + 'x'.repeat(10_000) + '</body></html>'
  const base = await answering(t, 200, 'text/html', page)
  const message = await failure(t, `${base}/mcp`)
  assert.match(message, /HTTP 200 OK \(text\/html\): "Welcome to the portal"; the URL serves a web page, not an MCP endpoint/)
})

test('a 503 keeps its status and body', async (t) => {
  const base = await answering(t, 503, 'text/plain', 'maintenance until noon')
  const message = await failure(t, `${base}/mcp`)
  assert.match(message, /HTTP 503 Service Unavailable \(text\/plain\): "maintenance until noon"; the server failed/)
})

test('a reset or a connection closed without an answer is said in the host\'s words, never the URL\'s path', async (t) => {
  const net = await import('node:net')
  const modes = {
    reset: [(s) => s.on('data', () => s.resetAndDestroy()), /^connect failed: connection reset at http:\/\/127\.0\.0\.1:\d+ during the MCP handshake$/],
    closed: [(s) => s.on('data', () => s.end()), /^connect failed: the connection closed without an answer at http:\/\/127\.0\.0\.1:\d+ during the MCP handshake$/],
  }
  for (const [name, [handler, pattern]] of Object.entries(modes)) {
    const server = net.createServer(handler)
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    t.after(() => server.close())
    const message = await failure(t, `http://127.0.0.1:${server.address().port}/secret-path?q=1`)
    assert.match(message, pattern, name)
    assert.doesNotMatch(message, /error sending request|Client error|Send message/, name)
  }
})
