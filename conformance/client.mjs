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
// connection, failed call or sign-in, deadline).

import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { skillSteps } from './skills.mjs'

const require = createRequire(import.meta.url)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { McpHost } = require(join(ROOT, 'index.js'))

const SERVER_ID = 'server'
/** Own deadline, below the suite's per-scenario timeout (30 s by default). */
const DEADLINE_MS = Number(process.env.CONFORMANCE_CLIENT_DEADLINE_MS ?? 25_000)
/** Sign-ins allowed per run (auth/scope-retry-limit wants at most 3). */
const MAX_SIGN_INS = 3

/** Logs to stderr with the time since start (the suite keeps the client's stderr). */
const T0 = Date.now()
const log = (...args) => console.error(`[client ${((Date.now() - T0) / 1000).toFixed(3)}s]`, ...args)

class ScenarioError extends Error {}

// ─── Scenario-specific steps ────────────────────────────────────────────────
// Each reads what the scenario asks of a client in the suite's description
// (node_modules/@modelcontextprotocol/conformance/dist/index.js) and does it
// through the public API only. Steps with several calls make them all, even
// after one fails (each call feeds its own checks), then fail at the end.

/** initialize, request-metadata, json-schema-ref-no-deref: connecting (discovery or handshake, then tools/list) is what is checked. */
async function runInitialize(host) {
  await connect(host)
  log('tools:', serverTools(host).map((t) => t.toolName).join(', ') || '(none)')
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
const elicitationDefaultsHandlers = {
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
 * request-metadata (SEP-2575): every request must carry the protocol version,
 * client info and client capabilities in `_meta` (and the version header);
 * the server refuses the first request with -32022 and the client must retry
 * with a supported version. The app gives all three request handlers so the
 * host declares roots, sampling and elicitation, whose shape is checked too.
 */
const requestMetadataHandlers = {
  elicitation: async () => ({ action: 'decline' }),
  sampling: async () => {
    throw new Error('this app does not sample')
  },
  roots: async () => ({ roots: [] }),
}

/**
 * sep-2322-client-request-state (MRTR): test_mrtr_echo_state and
 * test_mrtr_no_state answer `input_required` with one elicitation; the host
 * answers it through the app's elicitation handler and retries with the
 * request state echoed (or none). test_mrtr_unrelated is called between the
 * rounds of the echo flow (from inside the handler, before it answers) and
 * must carry none of that flow's state; test_mrtr_no_result_type answers
 * without resultType, which means complete.
 */
let mrtrHost = null
/** The test_mrtr_unrelated call (started once, from the first elicitation), settled to its error or null. */
let unrelatedCall = null
const mrtrHandlers = {
  elicitation: async (params) => {
    log('elicitation:', JSON.stringify(params))
    if (!unrelatedCall && mrtrHost) unrelatedCall = settleStep(callTool(mrtrHost, 'test_mrtr_unrelated', {}))
    if (unrelatedCall) await unrelatedCall
    return { action: 'accept', content: { confirmed: true } }
  },
}
async function runRequestState(host) {
  mrtrHost = host
  await connect(host)
  const errors = []
  for (const name of ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_no_result_type']) {
    errors.push(await settleStep(callTool(host, name, {})))
  }
  // When the host never asked (no MRTR round reached the handler), the unrelated call still happens.
  errors.push(await (unrelatedCall ?? settleStep(callTool(host, 'test_mrtr_unrelated', {}))))
  throwIfAny(errors)
}

/**
 * http-standard-headers (SEP-2243): Mcp-Method on every POST, Mcp-Name on
 * tools/call, resources/read and prompts/get. The client exercises each
 * method: both tools, the resource list and a read, the prompt list and a get.
 */
async function runStandardHeaders(host) {
  await connect(host)
  const errors = []
  for (const tool of serverTools(host)) errors.push(await settleStep(callTool(host, tool.toolName, {})))
  errors.push(
    await settleStep(
      (async () => {
        const resources = await host.listResources(SERVER_ID)
        log('resources:', resources.map((r) => r.uri).join(', '))
        if (resources[0]) await host.readResource(SERVER_ID, resources[0].uri)
      })(),
    ),
  )
  errors.push(
    await settleStep(
      (async () => {
        const prompts = await host.listPrompts(SERVER_ID)
        log('prompts:', prompts.map((p) => p.name).join(', '))
        if (prompts[0]) await host.getPrompt(SERVER_ID, prompts[0].name)
      })(),
    ),
  )
  throwIfAny(errors)
}

/**
 * http-custom-headers (SEP-2243): the scenario's context names the tool
 * calls to make (`toolCalls: [{name, arguments}]`); the host must mirror
 * each `x-mcp-header` parameter into an encoded Mcp-Param-* header.
 */
async function runCustomHeaders(host) {
  await connect(host)
  const calls = context.toolCalls ?? []
  if (calls.length === 0) throw new ScenarioError('MCP_CONFORMANCE_CONTEXT names no toolCalls')
  const errors = []
  for (const { name, arguments: args } of calls) errors.push(await settleStep(callTool(host, name, args ?? {})))
  throwIfAny(errors)
}

/**
 * http-invalid-tool-headers (SEP-2243): the server lists valid_tool and
 * eleven tools with malformed `x-mcp-header` declarations. The app calls
 * every tool the host's catalogue offers for the server (arguments built
 * from each schema); the host must leave the malformed ones out and keep
 * valid_tool.
 */
async function runInvalidToolHeaders(host) {
  await connect(host)
  const tools = serverTools(host)
  log('catalogue:', tools.map((t) => t.toolName).join(', ') || '(none)')
  log('diagnostics:', JSON.stringify(host.toolDiagnostics()))
  if (tools.length === 0) throw new ScenarioError('the host offers no tool of the server')
  const errors = []
  for (const tool of tools) errors.push(await settleStep(callTool(host, tool.toolName, sampleArguments(tool.inputSchema))))
  throwIfAny(errors)
}

/**
 * json-schema-2020-12-preservation (SEP-1613, SEP-2106): list the tools,
 * then pass json_schema_2020_12_tool's inputSchema, as the host offers it,
 * verbatim as the `schema` argument of json_schema_echo.
 */
async function runSchemaPreservation(host) {
  await connect(host)
  const focal = serverTools(host).find((t) => t.toolName === 'json_schema_2020_12_tool')
  if (!focal) throw new ScenarioError(`json_schema_2020_12_tool is not in the catalogue (diagnostics ${JSON.stringify(host.toolDiagnostics())})`)
  log('inputSchema as the host offers it:', JSON.stringify(focal.inputSchema))
  await callTool(host, 'json_schema_echo', { schema: focal.inputSchema })
}

/**
 * auth/*: connect (signing in when the server asks), then list and call the
 * server's tool (`test-tool`), signing in again when a call is refused
 * (auth/scope-step-up: a 403 insufficient_scope must lead to a second
 * authorization request with more scopes; auth/authorization-server-migration:
 * a 401 after the protected resource metadata moved to a new authorization
 * server must lead to a sign-in there).
 */
async function runAuthScenario(host) {
  await connect(host)
  const tools = serverTools(host)
  log('tools:', tools.map((t) => t.toolName).join(', ') || '(none)')
  if (tools[0]) await callToolWithSignIn(host, tools[0].toolName, {})
}

/** Options for host.authorize: a deadline below the client's own, so a stuck sign-in fails with the host's error. */
function authorizeOptions(scenario, context) {
  // Enterprise-managed authorization: the app hands the enterprise ID token to the host.
  if (scenario === 'auth/enterprise-managed-authorization' && context.idp_id_token) return { timeoutMs: 10_000, idToken: context.idp_id_token }
  // Workload identity federation: the app hands the workload JWT its platform issued to the host.
  if (scenario === 'auth/wif-jwt-bearer' && context.valid_jwt) return { timeoutMs: 10_000, assertion: context.valid_jwt }
  return { timeoutMs: 10_000 }
}

/**
 * Extra addServer options from MCP_CONFORMANCE_CONTEXT. auth/pre-registration
 * hands a pre-registered client ({client_id, client_secret}); the
 * client-credentials scenarios hand a machine client (client secret, or a PEM
 * key for private_key_jwt), which the host uses with the client credentials
 * grant; auth/enterprise-managed-authorization hands an enterprise IdP and
 * ID token (SEP-990); auth/wif-jwt-bearer hands a workload client id and
 * JWT (`valid_jwt`, SEP-1933), which the host redeems with the RFC 7523
 * JWT-bearer grant (`grant: 'jwtBearer'`, the JWT given to authorize()).
 */
function serverOptionsFor(scenario, context) {
  if (scenario === 'auth/pre-registration' && context.client_id) {
    return { oauth: { clientId: context.client_id, ...(context.client_secret && { clientSecret: context.client_secret }) } }
  }
  if (scenario === 'auth/enterprise-managed-authorization' && context.client_id) {
    return {
      oauth: {
        clientId: context.client_id,
        clientSecret: context.client_secret,
        grant: 'enterpriseManaged',
        idp: { issuer: context.idp_issuer, tokenEndpoint: context.idp_token_endpoint, clientId: context.idp_client_id },
      },
    }
  }
  if (scenario === 'auth/wif-jwt-bearer' && context.client_id) {
    return { oauth: { clientId: context.client_id, grant: 'jwtBearer' } }
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
  // Its own dataDir, removed at exit: with the user's default, the era
  // memory (protocol-eras.json) of one run's server at a port would send a
  // later run's server that got the same port straight to `initialize`.
  const dataDir = mkdtempSync(join(tmpdir(), 'ahp-conformance-data-'))
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }))
  const options = { handlers: handlersFor(scenario), dataDir }
  if (scenario.startsWith('auth/')) options.clientMetadataUrl = 'https://conformance-test.local/client-metadata.json'
  return options
}

/** Request handlers the host declares as client capabilities, per scenario. */
function handlersFor(scenario) {
  if (scenario.startsWith('elicitation')) return elicitationDefaultsHandlers
  if (scenario === 'sep-2322-client-request-state') return mrtrHandlers
  if (scenario === 'request-metadata') return requestMetadataHandlers
  return {}
}

const STEPS = {
  initialize: runInitialize,
  tools_call: runToolsCall,
  'elicitation-sep1034-client-defaults': runElicitationDefaults,
  'sse-retry': runSseRetry,
  'request-metadata': runInitialize,
  'sep-2322-client-request-state': runRequestState,
  'http-standard-headers': runStandardHeaders,
  'http-custom-headers': runCustomHeaders,
  'http-invalid-tool-headers': runInvalidToolHeaders,
  'json-schema-ref-no-deref': runInitialize,
  'json-schema-2020-12-preservation': runSchemaPreservation,
  ...skillSteps({ connect, serverId: SERVER_ID, log, fail: (message) => new ScenarioError(message) }),
}

function stepsFor(scenario) {
  if (STEPS[scenario]) return STEPS[scenario]
  if (scenario.startsWith('auth/')) return runAuthScenario
  // Unknown (newer) scenario: connect and list tools, like `initialize`.
  log(`no steps for ${scenario}; connecting and listing tools`)
  return runInitialize
}

/** A value of each required property's type, so that a schema-checking server accepts the call. */
function sampleArguments(schema) {
  const samples = { string: 'us-west1', integer: 1, number: 1.5, boolean: true, object: {}, array: [], null: null }
  const args = {}
  for (const name of schema?.required ?? []) {
    const type = schema.properties?.[name]?.type
    args[name] = samples[Array.isArray(type) ? type[0] : type] ?? 'x'
  }
  return args
}

/** Awaits one step; resolves with its error (logged) or null. */
async function settleStep(promise) {
  try {
    await promise
    return null
  } catch (err) {
    log(`step failed: ${err.message}`)
    return err
  }
}

function throwIfAny(errors) {
  const failed = errors.filter(Boolean)
  if (failed.length > 0) throw new ScenarioError(`${failed.length} step(s) failed: ${failed.map((e) => e.message).join(' | ')}`)
}

// ─── Generic host driving ───────────────────────────────────────────────────

let serverUrl
let scenario
let context
let signIns = 0
/** Count of session/mcpServerStateChanged actions for the server so far. */
let stateChanges = 0

/** The catalogue entries of the scenario's server. */
function serverTools(host) {
  return host.listTools().filter((t) => t.customizationId === SERVER_ID)
}

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

/**
 * Waits for `ready`, signing in whenever the server is `authRequired`. A
 * sign-in whose new token the server refused at once (authorize() rejects
 * `auth_required`, the server is `authRequired` again: e.g. its protected
 * resource metadata now names another authorization server,
 * auth/authorization-server-migration) is followed by another sign-in, as an
 * app would ask its user again, within MAX_SIGN_INS.
 */
async function settle(host) {
  for (;;) {
    const state = await waitForState(host, ['ready', 'error', 'authRequired', 'stopped'])
    if (state.kind === 'ready') return
    if (state.kind === 'authRequired') {
      const before = stateChanges
      try {
        await signIn(host, state)
      } catch (err) {
        if (err.hostCode !== 'auth_required' || serverState(host)?.kind !== 'authRequired') throw err
        log(`${err.message}; the server is authRequired again`)
        continue
      }
      // The host may still report the old authRequired right after authorize() resolves.
      await waitFor(host, () => stateChanges > before, 'a state change after sign-in')
      continue
    }
    throw new ScenarioError(`server went to ${state.kind}: ${JSON.stringify(state.error ?? state)}`)
  }
}

/** Runs host.authorize and follows the authorization URL the host hands out. */
async function signIn(host, state) {
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
      const failure = new ScenarioError(`host.authorize failed: ${err.code ?? ''} ${err.message}`)
      failure.hostCode = err.code
      throw failure
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
  log(`scenario ${JSON.stringify(scenario)} at wire version ${process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '(not given)'} against ${serverUrl}`)

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
