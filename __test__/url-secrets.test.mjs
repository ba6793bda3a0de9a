// A Streamable HTTP server's URL may carry a secret in its query string,
// userinfo-free path or fragment (hosted servers take `?api_key=…`): no
// action, log record, error or getState() shows more of it than the
// origin in texts, and the customization `uri` drops query and fragment
// (issue 24, item 7). Real HTTP servers on 127.0.0.1 that refuse, answer
// 404 with an HTML page, answer 500, reset the connection, or answer 401
// (the authRequired state's resource). And servers that echo what they
// were sent (the request's path and query, its header values) in a
// JSON-RPC error of the handshake or of a tool call, and in a log message:
// the host takes the values it holds out of every text, whoever wrote it.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { newHost, freePort, findCustomization, startHttpFixture } from './helpers/host.mjs'

const CANARY = 'CANARYQ7X9'

/** An HTTP server on 127.0.0.1 answering every request with `handler`; closed after the test. */
async function serveWith(t, handler) {
  const server = http.createServer(handler)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve) }))
  return `http://127.0.0.1:${server.address().port}`
}

const CASES = {
  refused: async () => `http://127.0.0.1:${await freePort()}`,
  'not found (HTML)': (t) => serveWith(t, (req, res) => { res.writeHead(404, { 'content-type': 'text/html' }); res.end(`<html>no ${req.url}</html>`) }),
  'server error': (t) => serveWith(t, (req, res) => { res.writeHead(500, { 'content-type': 'text/plain' }); res.end(`failed at ${req.url}`) }),
  reset: (t) => serveWith(t, (req) => req.socket.destroy()),
  // A bare 401: the host makes the protected resource metadata of the
  // authRequired state from the server URL (found by the red team).
  unauthorized: (t) => serveWith(t, (req, res) => { res.writeHead(401, { 'www-authenticate': 'Bearer' }); res.end() }),
}

for (const [name, base] of Object.entries(CASES)) {
  test(`a server URL's query and fragment never leave the host: ${name}`, { timeout: 60_000 }, async (t) => {
    const { host, actions, logs } = newHost(t)
    const url = `${await base(t)}/mcp-path/mcp?api_key=${CANARY}&x=1#${CANARY}frag`
    const id = await host.addServer({ name: 'q', config: { type: 'streamable-http', url } })
    const failure = await host.whenReady(id, { timeoutMs: 30_000 }).then(() => undefined, (e) => e)
    assert.ok(failure, 'the server never became ready')
    const call = await host.callTool({ serverId: id, name: 'x' }).then(() => undefined, (e) => e)
    const seen = JSON.stringify({
      failure: { message: failure.message, data: failure.data },
      call: call && { message: call.message, data: call.data },
      actions,
      logs,
      state: host.getState(),
    })
    assert.ok(!seen.includes(CANARY), `the canary leaked: ${seen.slice(Math.max(0, seen.indexOf(CANARY) - 300), seen.indexOf(CANARY) + 50)}`)
    assert.ok(!seen.includes('api_key'), 'the query leaked')
    const entry = findCustomization(host.getState(), id)
    assert.equal(new URL(entry.uri).search, '')
    assert.equal(new URL(entry.uri).pathname, '/mcp-path/mcp')
    assert.ok(failure.message.includes('127.0.0.1'), `the error names the origin: ${failure.message}`)
  })
}

/** Where `canaries` first show in `seen` (a JSON text), for the failure message; `''` when none. */
function leaked(seen, canaries) {
  const found = canaries.find((c) => seen.includes(c))
  if (!found) return ''
  const at = seen.indexOf(found)
  return `${found} leaked: ${seen.slice(Math.max(0, at - 200), at + 60)}`
}

for (const mode of ['init', 'call', 'cut']) {
  test(`a server echoing its URL's query and header values shows none of them: ${mode}`, { timeout: 60_000 }, async (t) => {
    const { url } = await startHttpFixture(t, 'echo-secrets-server.mjs', {}, [mode])
    const { host, actions, logs } = newHost(t)
    const canaries = [`${CANARY}query`, `${CANARY}header`, `${CANARY}bearer`, `${CANARY}quo"ted\\x`]
    const config = {
      type: 'streamable-http',
      url: `${url}?api_key=${canaries[0]}`,
      headers: { 'X-Api-Key': canaries[1], Authorization: `Bearer ${canaries[2]}`, 'X-Quoted': canaries[3] },
    }
    const id = await host.addServer({ name: 'echo', config })
    const ready = await host.whenReady(id, { timeoutMs: 30_000 }).then(() => undefined, (e) => e)
    const call = await host.callTool({ serverId: id, name: 'echo', arguments: {} }).then(() => undefined, (e) => e)
    if (mode === 'cut') {
      assert.ok(ready, 'the handshake failed')
      assert.match(ready.message, /HTTP 500/, `the answer is described: ${ready.message}`)
    } else if (mode === 'init') {
      assert.ok(ready, 'the handshake failed')
      assert.match(ready.message, /refused: POST \/mcp\?\[redacted\]/, 'the server\'s own text is kept, the secrets taken out')
    } else {
      assert.equal(ready, undefined, `the server became ready: ${ready?.message}`)
      assert.ok(call, 'the call failed')
      assert.match(call.message, /refused: POST \/mcp\?\[redacted\] x-api-key: \[redacted\] authorization: \[redacted\]/)
      assert.equal(call.data.data.echo, call.message.split('refused: ')[1].split(' (JSON-RPC')[0], 'the error data is shown as the message is')
      const serverLogs = logs.filter((l) => l.target === 'server.log')
      assert.ok(serverLogs.some((l) => l.message.includes('saw POST')), `the server's log message arrived: ${JSON.stringify(logs)}`)
      assert.ok(serverLogs.some((l) => l.message.includes('quoted')), `the log message with a JSON object arrived: ${JSON.stringify(serverLogs)}`)
    }
    const seen = JSON.stringify({
      ready: ready && { message: ready.message, data: ready.data },
      call: call && { message: call.message, data: call.data },
      actions,
      logs,
      state: host.getState(),
    })
    // No canary, whole, cut short or JSON-escaped: none holds the shared prefix.
    assert.equal(leaked(seen, [CANARY]), '')
  })
}
