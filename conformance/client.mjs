#!/usr/bin/env node
// MCP conformance client: drives the ahp-mcp-host addon through one client
// scenario of @modelcontextprotocol/conformance (see conformance/run.mjs).
//
// The suite starts a test server, then runs this program as
//   <node> conformance/client.mjs <server URL>
// with MCP_CONFORMANCE_SCENARIO (scenario name) and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT (JSON: {name, ...scenario data}) in the
// environment. The suite's checks judge what the host sent; this program
// only does what a host user would do (connect, list, call, answer
// elicitations, sign in), plus following the authorization URL with plain
// HTTP instead of a browser.
//
// Exit code: 0 when the scenario's steps completed, 1 otherwise (no
// connection, failed call, missing OAuth support, deadline).

import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { McpHost } = require(join(ROOT, 'index.js'))

const SERVER_ID = 'server'
/** Own deadline, below the suite's per-scenario timeout (30 s by default). */
const DEADLINE_MS = Number(process.env.CONFORMANCE_CLIENT_DEADLINE_MS ?? 25_000)
/** Sign-ins allowed per run (auth/scope-retry-limit wants at most 3). */
const MAX_SIGN_INS = 3
/** Logged when the host has no OAuth sign-in. */
const NO_OAUTH_MARKER = 'host.authorize is not a function'

const log = (...args) => console.error('[client]', ...args)

class ScenarioError extends Error {}

// ─── Scenario-specific steps ────────────────────────────────────────────────

/** initialize: the handshake alone is checked (protocolVersion, clientInfo). */
async function runInitialize(host) {
  await connect(host)
  log('tools:', host.listTools().map((t) => t.toolName).join(', ') || '(none)')
}

/** tools_call: the server offers add_numbers(a, b) and checks that it is called. */
async function runToolsCall(host) {
  await connect(host)
  const result = await callTool(host, 'add_numbers', { a: 5, b: 3 })
  const text = textOf(result)
  if (!text.includes('8')) throw new ScenarioError(`add_numbers(5, 3) answered ${JSON.stringify(text)}`)
}

/**
 * elicitation-sep1034-client-defaults: calling test_client_elicitation_defaults
 * makes the server send elicitation/create with a form schema whose five
 * properties (string, integer, number, enum, boolean) all have defaults, and
 * check that the accepted content holds a value of the right type for each.
 * The handler accepts with an EMPTY form on purpose: filling omitted fields
 * from schema defaults (SEP-1034) is the host's job, and that is what the
 * scenario measures.
 */
const elicitationHandlers = {
  elicitation: async (params) => {
    log('elicitation/create:', JSON.stringify(params))
    return { action: 'accept', content: {} }
  },
}
async function runElicitationDefaults(host) {
  await connect(host)
  const result = await callTool(host, 'test_client_elicitation_defaults', {})
  log('result:', textOf(result))
}

/**
 * sse-retry (SEP-1699): the server answers tools/call test_reconnection with
 * an SSE stream that carries only a priming event (id + retry: 500) and then
 * closes; the result arrives only on a GET stream the client must open after
 * `retry` ms with Last-Event-ID.
 */
async function runSseRetry(host) {
  await connect(host)
  const result = await callTool(host, 'test_reconnection', {}, 15_000)
  log('result:', textOf(result))
}

/**
 * auth/*: connect (signing in when the server asks), then list and call the
 * server's tool (`test-tool`), signing in again on a step-up challenge
 * (auth/scope-step-up wants a 403 insufficient_scope on tools/call to lead
 * to a second authorization request with more scopes).
 */
async function runAuthScenario(host) {
  await connect(host)
  const tools = host.listTools()
  log('tools:', tools.map((t) => t.toolName).join(', ') || '(none)')
  const tool = tools.find((t) => t.customizationId === SERVER_ID)
  if (tool) await callToolWithSignIn(host, tool.toolName, {})
}

/** Options for host.authorize: a deadline below the client's own, so a stuck sign-in fails with the host's error. */
function authorizeOptions(scenario, context) {
  // Cross-app access: the app hands the enterprise ID token to the host.
  if (scenario === 'auth/cross-app-access-complete-flow' && context.idp_id_token) return { timeoutMs: 10_000, idToken: context.idp_id_token }
  return { timeoutMs: 10_000 }
}

/**
 * Extra addServer options from MCP_CONFORMANCE_CONTEXT. auth/pre-registration
 * hands a pre-registered client ({client_id, client_secret}); the
 * client-credentials scenarios hand a machine client (client secret, or a PEM
 * key for private_key_jwt), which the host uses with the client credentials
 * grant; auth/cross-app-access hands an enterprise IdP and ID token, used
 * with enterprise-managed authorization (SEP-990).
 */
function serverOptionsFor(scenario, context) {
  if (scenario === 'auth/pre-registration' && context.client_id) {
    return { oauth: { clientId: context.client_id, ...(context.client_secret && { clientSecret: context.client_secret }) } }
  }
  if (scenario === 'auth/cross-app-access-complete-flow' && context.client_id) {
    return {
      oauth: {
        clientId: context.client_id,
        clientSecret: context.client_secret,
        grant: 'enterpriseManaged',
        idp: { issuer: context.idp_issuer, tokenEndpoint: context.idp_token_endpoint, clientId: context.idp_client_id },
      },
    }
  }
  if (scenario.startsWith('auth/client-credentials') && context.client_id) {
    return {
      oauth: {
        clientId: context.client_id,
        grant: 'clientCredentials',
        ...(context.client_secret && { clientSecret: context.client_secret }),
        ...(context.private_key_pem && { privateKeyPem: context.private_key_pem, signingAlgorithm: context.signing_algorithm }),
      },
    }
  }
  return {}
}

/**
 * Host options. For auth scenarios the client has a Client ID Metadata
 * Document URL, as a real app would; the host must use it only where the
 * authorization server advertises CIMD support (auth/basic-cimd expects
 * exactly this URL as client_id) and register dynamically elsewhere.
 */
function hostOptionsFor(scenario) {
  const options = { handlers: handlersFor(scenario) }
  if (scenario.startsWith('auth/')) options.clientMetadataUrl = 'https://conformance-test.local/client-metadata.json'
  return options
}

/** Request handlers the host declares as client capabilities, per scenario. */
function handlersFor(scenario) {
  return scenario.startsWith('elicitation') ? elicitationHandlers : {}
}

function stepsFor(scenario) {
  if (scenario === 'initialize') return runInitialize
  if (scenario === 'tools_call') return runToolsCall
  if (scenario === 'elicitation-sep1034-client-defaults') return runElicitationDefaults
  if (scenario === 'sse-retry') return runSseRetry
  if (scenario.startsWith('auth/')) return runAuthScenario
  // Unknown (newer) scenario: connect and list tools, like `initialize`.
  return runInitialize
}

// ─── Generic host driving ───────────────────────────────────────────────────

let serverUrl
let scenario
let context
let signIns = 0
/** Count of session/mcpServerStateChanged actions for the server so far. */
let stateChanges = 0

function serverState(host) {
  const c = host.getState().customizations?.find((x) => x.id === SERVER_ID)
  return c?.state
}

/** Resolves once `test()` holds (checked on every action). */
function waitFor(host, test, what, timeoutMs = DEADLINE_MS) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (test()) {
        cleanup()
        resolve()
      }
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new ScenarioError(`timed out waiting for ${what}`))
    }, timeoutMs)
    const cleanup = () => {
      clearTimeout(timer)
      host.off('action', check)
    }
    host.on('action', check)
    check()
  })
}

/** Resolves with the server state once it is one of `kinds`. */
async function waitForState(host, kinds, timeoutMs = DEADLINE_MS) {
  await waitFor(host, () => kinds.includes(serverState(host)?.kind), `state ${kinds.join('/')} (now ${JSON.stringify(serverState(host))})`, timeoutMs)
  return serverState(host)
}

/** Adds the server and waits for `ready`, signing in whenever it is `authRequired`. */
async function connect(host) {
  await host.addServer({ name: SERVER_ID, config: { type: 'streamable-http', url: serverUrl }, ...serverOptionsFor(scenario, context) })
  await settle(host)
}

async function settle(host) {
  for (;;) {
    const state = await waitForState(host, ['ready', 'error', 'authRequired', 'stopped'])
    if (state.kind === 'ready') return
    if (state.kind === 'authRequired') {
      const before = stateChanges
      await signIn(host, state)
      // The host may still report the old authRequired right after authorize() resolves.
      await waitFor(host, () => stateChanges > before, 'a state change after sign-in')
      continue
    }
    throw new ScenarioError(`server went to ${state.kind}: ${JSON.stringify(state.error ?? state)}`)
  }
}

/** Runs host.authorize and follows the authorization URL the host hands out. */
async function signIn(host, state) {
  if (typeof host.authorize !== 'function') {
    log(`${NO_OAUTH_MARKER}: the host has no OAuth sign-in yet (state ${JSON.stringify(state)})`)
    throw new ScenarioError('cannot sign in')
  }
  if (signIns >= MAX_SIGN_INS) throw new ScenarioError(`giving up after ${signIns} sign-ins (last state ${JSON.stringify(state)})`)
  signIns++
  log(`sign-in ${signIns} (${state.reason ?? 'required'}, scopes ${JSON.stringify(state.requiredScopes ?? [])})`)
  const followed = []
  const onUrl = ({ serverId, url }) => {
    if (serverId !== SERVER_ID) return
    // Caught at once (the host waits for the redirect meanwhile); rethrown below.
    followed.push(followAuthorizationUrl(url).then(() => null, (err) => (log(`following the authorization URL failed: ${err.message}`), err)))
  }
  host.on('authorizationUrl', onUrl)
  try {
    try {
      await host.authorize(SERVER_ID, authorizeOptions(scenario, context))
    } catch (err) {
      throw new ScenarioError(`host.authorize failed: ${err.code ?? ''} ${err.message}`)
    }
    const failed = (await Promise.all(followed)).find((e) => e)
    if (failed) throw failed
  } finally {
    host.off('authorizationUrl', onUrl)
  }
}

/**
 * What a browser would do: GET the authorization URL, follow each Location
 * by hand up to the loopback redirect_uri, and GET that too, so the host's
 * redirect listener receives the code.
 */
export async function followAuthorizationUrl(url) {
  const redirectUri = new URL(url).searchParams.get('redirect_uri')
  log('authorization URL:', url)
  let next = url
  for (let hop = 0; hop < 10; hop++) {
    const atRedirectUri = redirectUri !== null && sameEndpoint(next, redirectUri)
    const res = await fetch(next, { redirect: 'manual' })
    const location = res.headers.get('location')
    const body = await res.text().catch(() => '')
    log(`GET ${atRedirectUri ? '(redirect_uri) ' : ''}${new URL(next).origin}${new URL(next).pathname} → ${res.status}`)
    if (res.status >= 300 && res.status < 400 && location) {
      next = new URL(location, next).href
      continue
    }
    if (!atRedirectUri && res.status >= 400) throw new ScenarioError(`authorization step answered ${res.status}: ${body.slice(0, 300)}`)
    return
  }
  throw new ScenarioError('too many redirects while following the authorization URL')
}

function sameEndpoint(a, b) {
  const x = new URL(a)
  const y = new URL(b)
  return x.origin === y.origin && x.pathname === y.pathname
}

async function callTool(host, name, args, timeoutMs = 10_000) {
  log(`tools/call ${name} ${JSON.stringify(args)}`)
  try {
    const result = await host.callTool({ serverId: SERVER_ID, name, arguments: args, timeoutMs })
    log(`→ ${JSON.stringify(result)}`)
    if (result.isError) throw new ScenarioError(`${name} returned isError: ${textOf(result)}`)
    return result
  } catch (err) {
    if (err instanceof ScenarioError) throw err
    const failure = new ScenarioError(`tools/call ${name} failed: ${err.code ?? ''} ${err.message}`)
    failure.hostCode = err.code
    throw failure
  }
}

/**
 * Calls a tool. When the host rejects it with `auth_required` (a 401 after a
 * failed refresh, or a 403 insufficient_scope step-up), signs in again — the
 * host asks for the union of granted and required scopes — and retries the
 * call once per challenge (auth/scope-retry-limit: never loop).
 */
async function callToolWithSignIn(host, name, args) {
  try {
    return await callTool(host, name, args)
  } catch (err) {
    if (err.hostCode !== 'auth_required') throw err
    log(`call refused (${err.message}); signing in again`)
    await signIn(host, { reason: 'insufficientScope' })
    await settle(host)
    return await callTool(host, name, args)
  }
}

function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n')
}

// ─── Main ───────────────────────────────────────────────────────────────────

async function main() {
  serverUrl = process.argv[2]
  scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
  try {
    context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}')
  } catch {
    context = {}
  }
  if (!serverUrl) {
    log('usage: client.mjs <server URL> (with MCP_CONFORMANCE_SCENARIO set)')
    return 2
  }
  log(`scenario ${JSON.stringify(scenario)} against ${serverUrl}`)

  const host = new McpHost(hostOptionsFor(scenario))
  host.on('action', ({ serverSeq, action }) => {
    if (action.type !== 'session/mcpServerStateChanged' || action.id !== SERVER_ID) return
    stateChanges++
    log(`#${serverSeq} ${action.id}: ${JSON.stringify(action.state)}`)
  })
  host.on('log', ({ level, target, message }) => log(`${level} ${target}: ${message}`))

  const deadline = setTimeout(() => {
    log(`deadline of ${DEADLINE_MS} ms reached; state ${JSON.stringify(serverState(host))}`)
    host.disposeSync()
    process.exit(1)
  }, DEADLINE_MS)
  deadline.unref()

  let code = 0
  try {
    await stepsFor(scenario)(host)
    log('scenario steps completed')
  } catch (err) {
    log(err instanceof ScenarioError ? err.message : err?.stack ?? String(err))
    code = 1
  } finally {
    await host.dispose()
    clearTimeout(deadline)
  }
  return code
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      log(err?.stack ?? String(err))
      process.exit(1)
    },
  )
}
