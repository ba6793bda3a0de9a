// Every public entry point of McpHost refuses arguments of the wrong type
// with a HostError `invalid_argument` whose message starts with the
// parameter and field path (`options.limits.callTimeoutMs: …`), checked in
// JS first, deeper fields natively with the same path notation; no napi or
// serde wording ("Failed to convert JavaScript value", "at line 1 column
// 12", `InvalidArg`) ever reaches users. The sweep covers every method on
// McpHost.prototype: one that is neither checked here nor listed as taking
// no argument fails the test. (`RequestOptions` and `options.credentials`
// are checked by their own suites.)

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newHost, tmpDir, HostError, McpHost } from './helpers/host.mjs'

const NAPI_OR_SERDE = /Failed to convert|rust type|at line \d+ column|InvalidArg|StringExpected|\[object Object\]|Error: /

/** Asserts that `call()` throws or rejects HostError invalid_argument with a message starting with `path`. */
async function refused(call, path, what) {
  let err
  try {
    await call()
  } catch (e) {
    err = e
  }
  assert.ok(err, `${what}: did not throw`)
  assert.ok(err instanceof HostError, `${what}: ${err?.name} ${err?.message}`)
  assert.equal(err.code, 'invalid_argument', `${what}: ${err.message}`)
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  assert.match(err.message, new RegExp(`^${escaped}(:|\\.|\\[)`), what)
  assert.doesNotMatch(err.message, NAPI_OR_SERDE, what)
  assert.equal(err.rpcCode, undefined)
  return err
}

const show = (v) => (v === undefined ? 'undefined' : typeof v === 'function' ? 'function' : JSON.stringify(v))

const OBJECT_BAD = [undefined, null, 5, 'x', [], true]
const OPTIONAL_OBJECT_BAD = [5, 'x', [], true]
const STRING_BAD = [undefined, null, 5, {}, '', ['a']]
const FUNCTION_BAD = [undefined, null, 5, 'x', {}]
const stdio = { type: 'stdio', command: 'node' }

// method → [parameter path, (bad value) => call][]; each call is tried with each bad value.
function sweep(host) {
  const strings = (...make) => make.map(([path, call]) => [path, STRING_BAD, call])
  return {
    addPlugin: [
      ['options', OBJECT_BAD, (v) => host.addPlugin(v)],
      ['options.root', STRING_BAD, (v) => host.addPlugin({ root: v })],
      ['options.name', [5, '', {}], (v) => host.addPlugin({ root: '/nowhere', name: v })],
      ['options.servers', OPTIONAL_OBJECT_BAD, (v) => host.addPlugin({ root: '/nowhere', servers: v })],
      ['options.servers.s', [5, 'x', null], (v) => host.addPlugin({ root: '/nowhere', servers: { s: v } })],
      ['options.servers.s.oauth.clientId', STRING_BAD.filter((v) => v !== undefined), (v) => host.addPlugin({ root: '/nowhere', servers: { s: { oauth: { clientId: v } } } })],
      ['options.servers.s.oauth.grant', ['password'], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { oauth: { clientId: 'c', grant: v } } } })],
      ['options.servers.s.startupTimeoutMs', [-1, 'x', 1.5], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { startupTimeoutMs: v } } })],
      ['options.servers.s.excludeTools', ['x', [5], ['']], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { excludeTools: v } } })],
      ['options.servers.s.callTimeoutMs', [-1, 'x'], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { callTimeoutMs: v } } })],
      ['options.servers.s.required', [5, 'yes', {}], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { required: v } } })],
      ['options.servers.s.start', [5, 'later'], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { start: v } } })],
      ['options.servers.s.idleStopMs', [-1, 'x', NaN], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { idleStopMs: v } } })],
      ['options.servers.s.callMaxTotalMs', [NaN, Infinity], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { callMaxTotalMs: v } } })],
      ['options.servers.s.modelOutputMaxChars', [-1, 'x', 1.5], (v) => host.addPlugin({ root: '/nowhere', servers: { s: { modelOutputMaxChars: v } } })],
      ['options.rooot', [1], (v) => host.addPlugin({ root: '/nowhere', rooot: v })],
    ],
    addServer: [
      ['options', OBJECT_BAD, (v) => host.addServer(v)],
      ['options.name', STRING_BAD, (v) => host.addServer({ name: v, config: stdio })],
      ['options.id', [5, 'x'], (v) => host.addServer({ id: v, name: 'a', config: stdio })],
      ['options.config', OBJECT_BAD, (v) => host.addServer({ name: 'a', config: v })],
      // clientId is optional (no pre-registered client: CIMD, else dynamic registration).
      ['options.oauth.clientId', STRING_BAD.filter((v) => v !== undefined), (v) => host.addServer({ name: 'a', config: stdio, oauth: { clientId: v } })],
      ['options.oauth.scopes', ['x', [5]], (v) => host.addServer({ name: 'a', config: stdio, oauth: { scopes: v } })],
      ['options.oauth.authServerMetadataUrl', [5, '', 'not a url', 'http://as.example.test/m'], (v) => host.addServer({ name: 'a', config: stdio, oauth: { authServerMetadataUrl: v } })],
      ['options.oauth.callbackPort', [-1, 'x', 1.5, 70000], (v) => host.addServer({ name: 'a', config: stdio, oauth: { callbackPort: v } })],
      ['options.oauth.resource', [5, '', 'relative', 'https://r.example.test/#f'], (v) => host.addServer({ name: 'a', config: stdio, oauth: { resource: v } })],
      ['options.oauth.clientSecret', ['s3cret'], (v) => host.addServer({ name: 'a', config: stdio, oauth: { clientSecret: v } })],
      ['options.oauth.clientSecrets', ['x'], (v) => host.addServer({ name: 'a', config: stdio, oauth: { clientId: 'c', clientSecrets: v } })],
      ['options.oauth.idp.issuer', [5], (v) => host.addServer({ name: 'a', config: stdio, oauth: { clientId: 'c', idp: { issuer: v, tokenEndpoint: 'https://x', clientId: 'c' } } })],
      ['options.protocol', ['2024', 5], (v) => host.addServer({ name: 'a', config: stdio, protocol: v })],
      ['options.startupTimeoutMs', [-1, 'x'], (v) => host.addServer({ name: 'a', config: stdio, startupTimeoutMs: v })],
      ['options.includeTools', ['x', 5, [5], ['']], (v) => host.addServer({ name: 'a', config: stdio, includeTools: v })],
      ['options.excludeTools', ['x', null, [{}], ['ok', '']], (v) => host.addServer({ name: 'a', config: stdio, excludeTools: v })],
      ['options.callTimeoutMs', [-1, 'x'], (v) => host.addServer({ name: 'a', config: stdio, callTimeoutMs: v })],
      ['options.required', [5, 'yes', {}], (v) => host.addServer({ name: 'a', config: stdio, required: v })],
      ['options.start', [5, 'sometimes', {}], (v) => host.addServer({ name: 'a', config: stdio, start: v })],
      ['options.idleStopMs', [-1, 'x', 1.5, NaN, Infinity], (v) => host.addServer({ name: 'a', config: stdio, idleStopMs: v })],
      ['options.callTimeoutMs', [NaN, Infinity], (v) => host.addServer({ name: 'a', config: stdio, callTimeoutMs: v })],
      ['options.modelOutputMaxChars', [NaN, -Infinity], (v) => host.addServer({ name: 'a', config: stdio, modelOutputMaxChars: v })],
      ['options.callMaxTotalMs', [-1, 'x'], (v) => host.addServer({ name: 'a', config: stdio, callMaxTotalMs: v })],
      ['options.modelOutputMaxChars', [-1, 'x', 1.5, {}], (v) => host.addServer({ name: 'a', config: stdio, modelOutputMaxChars: v })],
    ],
    searchTools: [
      ['query', [undefined, null, 5, {}, ['a'], 'x'.repeat(2000)], (v) => host.searchTools(v)],
      ['options', OPTIONAL_OBJECT_BAD, (v) => host.searchTools('x', v)],
      ['options.limit', [0, -1, 'x', 1.5, 1001], (v) => host.searchTools('x', { limit: v })],
      ['options.serverIds', ['x', [5], 5], (v) => host.searchTools('x', { serverIds: v })],
      ['options.foo', [1], (v) => host.searchTools('x', { foo: v })],
    ],
    getToolDefinitions: [
      ['names', [undefined, null, 5, 'x', {}], (v) => host.getToolDefinitions(v)],
      ['names', [5, null, {}], (v) => host.getToolDefinitions([v])],
    ],
    setToolEnabled: [
      ['options', OBJECT_BAD, (v) => host.setToolEnabled(v)],
      ['options.serverId', STRING_BAD, (v) => host.setToolEnabled({ serverId: v, tool: 't', enabled: true })],
      ['options.tool', STRING_BAD, (v) => host.setToolEnabled({ serverId: 's', tool: v, enabled: true })],
      ['options.enabled', [undefined, null, 'yes', 1], (v) => host.setToolEnabled({ serverId: 's', tool: 't', enabled: v })],
    ],
    remove: [
      ...strings(['id', (v) => host.remove(v)]),
      ['id', [{ id: 'x' }], (v) => host.remove(v)],
    ],
    dispatch: [
      ['action', OBJECT_BAD, (v) => host.dispatch(v)],
      ['origin', [null, 5, 'x', []], (v) => host.dispatch({ type: 'session/mcpServerStopRequested', id: 'x' }, v)],
      ['origin.clientId', [5, '', {}], (v) => host.dispatch({ type: 'session/mcpServerStopRequested', id: 'x' }, { clientId: v })],
      ['origin.clientSeq', [-1, 'x', 1.5, null], (v) => host.dispatch({ type: 'session/mcpServerStopRequested', id: 'x' }, { clientSeq: v })],
    ],
    authenticate: [
      ['params', OBJECT_BAD, (v) => host.authenticate(v)],
      ['params.resource', STRING_BAD, (v) => host.authenticate({ resource: v, token: 't' })],
      ['params.token', [undefined, null, 5, {}], (v) => host.authenticate({ resource: 'https://r', token: v })],
      ['params.expiresIn', [-1, 'x'], (v) => host.authenticate({ resource: 'https://r', token: 't', expiresIn: v })],
      ['params.scopes', ['x', 5, [5]], (v) => host.authenticate({ resource: 'https://r', token: 't', scopes: v })],
      ['params.extra', [1], (v) => host.authenticate({ resource: 'https://r', token: 't', extra: v })],
    ],
    authorize: [
      ...strings(['serverId', (v) => host.authorize(v)]),
      ['options', OPTIONAL_OBJECT_BAD, (v) => host.authorize('srv', v)],
      ['options.openUrl', [5, 'x', {}], (v) => host.authorize('srv', { openUrl: v })],
      ['options.scopes', ['x', [5]], (v) => host.authorize('srv', { scopes: v })],
      ['options.idToken', [5], (v) => host.authorize('srv', { idToken: v })],
      ['options.assertion', [5], (v) => host.authorize('srv', { assertion: v })],
      ['options.scope', ['x'], (v) => host.authorize('srv', { scope: v })],
      ['options.redirectUri', [5, ''], (v) => host.authorize('srv', { redirectUri: v })],
      ['options.flow', [5, 'device', 'browser'], (v) => host.authorize('srv', { flow: v })],
    ],
    completeAuthorization: [
      ...strings(['serverId', (v) => host.completeAuthorization(v, 'x.y:/cb?code=c&state=s')], ['callbackUrl', (v) => host.completeAuthorization('srv', v)]),
      ['options', OPTIONAL_OBJECT_BAD, (v) => host.completeAuthorization('srv', 'x.y:/cb?code=c&state=s', v)],
      ['options.timeoutMs', [-1, 'x', 0], (v) => host.completeAuthorization('srv', 'x.y:/cb?code=c&state=s', { timeoutMs: v })],
    ],
    setRoots: [
      ['roots', [undefined, null, 5, 'file:///x', {}], (v) => host.setRoots(v)],
      ['roots[0]', [5, { uri: 5 }, { uri: 'relative' }], (v) => host.setRoots([v])],
    ],
    serverInfo: strings(['serverId', (v) => host.serverInfo(v)]),
    // Server policy and trust on first use (issue 32).
    setPolicy: [
      ['policy', [undefined, null, 5, 'x', []], (v) => host.setPolicy(v)],
      ['policy.deny', [5, 'x', {}], (v) => host.setPolicy({ deny: v })],
      ['policy.allow[0]', [5, null, 'x', []], (v) => host.setPolicy({ allow: [v] })],
      ['policy.deny[0]', [{}, { label: 'only a label' }], (v) => host.setPolicy({ deny: [v] })],
      ['policy.deny[0].name', [5, {}, ''], (v) => host.setPolicy({ deny: [{ name: v }] })],
      ['policy.deny[0].args', ['x', [5]], (v) => host.setPolicy({ deny: [{ args: v }] })],
      ['policy.deny[0].url', ['https://x.test/?q=*', 5], (v) => host.setPolicy({ deny: [{ url: v }] })],
      ['policy.deny[0].transport', ['tcp', 5], (v) => host.setPolicy({ deny: [{ transport: v }] })],
      ['policy.deny[0].nmae', ['a'], (v) => host.setPolicy({ deny: [{ nmae: v }] })],
    ],
    resetTrust: [['serverId', [5, '', {}, null], (v) => host.resetTrust(v)]],
    listResources: strings(['serverId', (v) => host.listResources(v)]),
    listResourceTemplates: strings(['serverId', (v) => host.listResourceTemplates(v)]),
    readResource: strings(['serverId', (v) => host.readResource(v, 'file:///r')], ['uri', (v) => host.readResource('srv', v)]),
    subscribeResource: strings(['serverId', (v) => host.subscribeResource(v, 'file:///r')], ['uri', (v) => host.subscribeResource('srv', v)]),
    unsubscribeResource: strings(['serverId', (v) => host.unsubscribeResource(v, 'file:///r')], ['uri', (v) => host.unsubscribeResource('srv', v)]),
    listPrompts: strings(['serverId', (v) => host.listPrompts(v)]),
    // Skills (SEP-2640, issue 16): the server id is optional for listSkills.
    listSkills: [['serverId', [5, '', {}, null], (v) => host.listSkills(v)]],
    loadSkill: strings(['serverId', (v) => host.loadSkill(v, 'skill://a/SKILL.md')], ['uri', (v) => host.loadSkill('srv', v)]),
    getPrompt: [
      ...strings(['serverId', (v) => host.getPrompt(v, 'p')], ['name', (v) => host.getPrompt('srv', v)]),
      ['args', [5, 'x', [], true], (v) => host.getPrompt('srv', 'p', v)],
      ['args.city', [5, null, {}], (v) => host.getPrompt('srv', 'p', { city: v })],
    ],
    // MCP "Utilities" (issue 31): completion/complete and logging/setLevel.
    complete: [
      ['params', OBJECT_BAD, (v) => host.complete(v)],
      ['params.serverId', STRING_BAD, (v) => host.complete({ serverId: v, ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } })],
      ['params.ref', OBJECT_BAD, (v) => host.complete({ serverId: 's', ref: v, argument: { name: 'a', value: '' } })],
      ['params.ref.type', [undefined, 5, 'ref/tool'], (v) => host.complete({ serverId: 's', ref: { type: v, name: 'p' }, argument: { name: 'a', value: '' } })],
      ['params.ref.name', STRING_BAD, (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: v }, argument: { name: 'a', value: '' } })],
      ['params.ref.uri', STRING_BAD, (v) => host.complete({ serverId: 's', ref: { type: 'ref/resource', uri: v }, argument: { name: 'a', value: '' } })],
      ['params.argument', OBJECT_BAD, (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: v })],
      ['params.argument.name', STRING_BAD, (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: v, value: '' } })],
      ['params.argument.value', [undefined, null, 5, {}], (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: v } })],
      ['params.context', [5, 'x', [], true], (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, context: v })],
      ['params.context.arguments', [5, 'x', [], null], (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, context: { arguments: v } })],
      ['params.context.arguments.b', [5, null, {}], (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, context: { arguments: { b: v } } })],
      ['params.extra', [1], (v) => host.complete({ serverId: 's', ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, extra: v })],
    ],
    setLogLevel: [
      ...strings(['serverId', (v) => host.setLogLevel(v, 'error')]),
      ['level', [undefined, null, 5, '', 'warn', 'ERROR', {}], (v) => host.setLogLevel('srv', v)],
    ],
    sendChannelMessage: [['message', [...OBJECT_BAD, {}, { channel: 5 }], (v) => host.sendChannelMessage(v)]],
    readAppResource: [
      ['options', OBJECT_BAD, (v) => host.readAppResource(v)],
      ['options.serverId', STRING_BAD, (v) => host.readAppResource({ serverId: v, uri: 'ui://x' })],
      ['options.uri', STRING_BAD, (v) => host.readAppResource({ serverId: 's', uri: v })],
    ],
    callTool: [
      ['options', OBJECT_BAD, (v) => host.callTool(v)],
      ['options.name', STRING_BAD, (v) => host.callTool({ name: v })],
      ['options.serverId', [5, '', {}], (v) => host.callTool({ serverId: v, name: 't' })],
      ['options.chat', [5], (v) => host.callTool({ name: 't', chat: v, turnId: 't', toolCallId: 'c' })],
      ['options.arguments', [[1], 5], (v) => host.callTool({ name: 't', arguments: v })],
      ['options.timeout', [5], (v) => host.callTool({ name: 't', timeout: v })],
      ['options.modelOutputMaxChars', [-1, 'x', 1.5, {}, NaN], (v) => host.callTool({ name: 't', modelOutputMaxChars: v })],
      ['options.timeoutMs', [NaN, Infinity, -1], (v) => host.callTool({ name: 't', timeoutMs: v })],
      ['options.maxTotalTimeoutMs', [NaN, Infinity], (v) => host.callTool({ name: 't', maxTotalTimeoutMs: v })],
    ],
    // Issue 30: other hosts' configurations.
    importConfig: [
      ['options', OBJECT_BAD, (v) => host.importConfig(v)],
      ['options.format', [undefined, 5, 'vs-code'], (v) => host.importConfig({ format: v, text: '{}' })],
      ['options.text', [5, {}], (v) => host.importConfig({ format: 'vscode', text: v })],
      ['options.path', [5, ''], (v) => host.importConfig({ format: 'vscode', path: v })],
      ['options.resolve', [5, 'x'], (v) => host.importConfig({ format: 'vscode', text: '{}', resolve: v })],
      ['options.colour', [1], (v) => host.importConfig({ format: 'vscode', text: '{}', colour: v })],
    ],
    addServers: [
      ['servers', [undefined, null, 5, 'x', {}], (v) => host.addServers(v)],
      ['servers[0]', [5, null, {}], (v) => host.addServers([v])],
    ],
    // Added by other parts of issue 14; checked when present.
    whenReady: [
      ['serverId', [null, 5, '', true], (v) => host.whenReady(v)],
      ['serverIds[0]', [5, '', null, {}], (v) => host.whenReady([v])],
      ['options.blocking', [5, 'yes', {}], (v) => host.whenReady({ blocking: v })],
      ['options.timeoutMs', [-1, 'x'], (v) => host.whenReady(['a'], { timeoutMs: v })],
    ],
    ...Object.fromEntries(['onAction', 'onLog', 'onToolsChanged', 'onListChanged', 'onResourceUpdated', 'onAuthorizationUrl', 'onChannelMessage']
      .map((m) => [m, [['listener', FUNCTION_BAD, (v) => host[m](v)]]])),
  }
}

/** Methods that take no argument (or only EventEmitter's). */
// removeAllListeners: EventEmitter's own (Node's argument rules), overridden only to keep the host's listener hooks.
const NO_ARGUMENTS = new Set(['constructor', 'getState', 'listTools', 'listToolSummaries', 'toolDiagnostics', 'dispose', 'disposeSync', 'ref', 'unref', 'processCount', 'removeAllListeners'])

test('every public method refuses bad argument types with invalid_argument naming the parameter and field', async (t) => {
  const { host } = newHost(t)
  const table = sweep(host)
  const methods = Object.getOwnPropertyNames(McpHost.prototype).filter((m) => !NO_ARGUMENTS.has(m))
  const unchecked = methods.filter((m) => !(m in table))
  assert.deepEqual(unchecked, [], 'methods the sweep does not check')
  let checked = 0
  for (const method of methods) {
    for (const [path, values, call] of table[method]) {
      for (const value of values) {
        await refused(() => call(value), path, `${method} ${path} = ${show(value)}`)
        checked++
      }
    }
  }
  assert.ok(checked > 150, `${checked} cases`)
  // Nothing was started or published by a refused call.
  assert.equal(host.processCount, 0)
  assert.deepEqual(host.getState().customizations ?? [], [])
})

test('new McpHost refuses options that are not an object, and names each bad field', (t) => {
  const dataDir = tmpDir(t)
  const cases = [
    ['options', [42, 'x', null, [], true]],
    ['options.dataDir', [{ dataDir: 5 }, { dataDir: '' }, { dataDir: {} }]],
    ['options.session', [{ session: 5 }, { session: '' }]],
    ['options.limits', [{ limits: 'x' }, { limits: [] }]],
    ['options.limits.callTimeoutMs', [{ limits: { callTimeoutMs: 'x' } }, { limits: { callTimeoutMs: -1 } }, { limits: { callTimeoutMs: 1.5 } }]],
    ['options.limits.modelOutputMaxChars', [{ limits: { modelOutputMaxChars: 'x' } }, { limits: { modelOutputMaxChars: -1 } }, { limits: { modelOutputMaxChars: 2.5 } }]],
    ['options.limits.nope', [{ limits: { nope: 1 } }]],
    ['options.clientInfo', [{ clientInfo: 'me' }]],
    ['options.clientInfo.name', [{ clientInfo: { name: 5, version: '1' } }, { clientInfo: { version: '1' } }]],
    ['options.clientInfo.extra', [{ clientInfo: { name: 'a', version: '1', extra: true } }]],
    ['options.env', [{ env: 'all' }, { env: 5 }]],
    ['options.publishServerTools', [{ publishServerTools: 'yes' }]],
    ['options.chatElicitation', [{ chatElicitation: 1 }]],
    ['options.mcpApps', [{ mcpApps: 'true' }]],
    ['options.start', [{ start: 'sometimes' }, { start: 1 }]],
    ['options.clientMetadataUrl', [{ clientMetadataUrl: 5 }]],
    ['options.oauthRedirectPort', [{ oauthRedirectPort: -1 }, { oauthRedirectPort: 'x' }, { oauthRedirectPort: 70000 }]],
    ['options.handlers', [{ handlers: 5 }]],
    ['options.handlers.elicitation', [{ handlers: { elicitation: 5 } }, { handlers: { elicitation: 'f' } }]],
    ['options.handlers.elicitation.handler', [{ handlers: { elicitation: { url: true } } }, { handlers: { elicitation: { handler: 5 } } }]],
    ['options.handlers.elicitation.url', [{ handlers: { elicitation: { handler: () => ({}), url: 'yes' } } }]],
    ['options.handlers.elicitation.tools', [{ handlers: { elicitation: { handler: () => ({}), tools: true } } }]],
    ['options.handlers.sampler', [{ handlers: { sampler: () => ({}) } }]],
    ['options.handlers.sampling', [{ handlers: { sampling: 5 } }, { handlers: { sampling: 'f' } }]],
    ['options.handlers.sampling.handler', [{ handlers: { sampling: { tools: true } } }, { handlers: { sampling: { handler: 5 } } }]],
    ['options.handlers.sampling.tools', [{ handlers: { sampling: { handler: () => ({}), tools: 1 } } }]],
    ['options.handlers.sampling.model', [{ handlers: { sampling: { handler: () => ({}), model: 'x' } } }]],
    ['options.roots', [{ roots: 'file:///x' }]],
    ['options.roots[0]', [{ roots: [{ uri: 'ftp://x/y' }] }]],
    ['options.proxy', [{ proxy: 5 }, { proxy: 'ftp://x' }]],
    ['options.caCertificates', [{ caCertificates: 'pem' }]],
    ['options.caCertificates[0]', [{ caCertificates: [5] }, { caCertificates: ['not a certificate'] }]],
    ['options.policy', [{ policy: 5 }, { policy: [] }, { policy: { allow: 'x' } }]],
    ['options.policy.deny[0]', [{ policy: { deny: [{}] } }, { policy: { deny: ['x'] } }]],
    ['options.policy.allow[1].command', [{ policy: { allow: [{ name: 'a' }, { command: '' }] } }]],
    ['options.trust', [{ trust: 5 }, { trust: true }, { trust: {} }]],
    ['options.unknownOption', [{ unknownOption: 1 }]],
  ]
  for (const [path, values] of cases) {
    for (const value of values) {
      const options = typeof value === 'object' && value !== null && !Array.isArray(value) ? { dataDir, ...value } : value
      const what = `new McpHost(${show(value)})`
      assert.throws(() => new McpHost(options), (err) => {
        assert.ok(err instanceof HostError, `${what}: ${err?.name} ${err?.message}`)
        assert.equal(err.code, 'invalid_argument', `${what}: ${err.message}`)
        const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        assert.match(err.message, new RegExp(`^${escaped}(:|\\.|\\[)`), what)
        assert.doesNotMatch(err.message, NAPI_OR_SERDE, what)
        return true
      }, what)
    }
  }
  // No argument at all is fine.
  new McpHost({ dataDir }).disposeSync()
})

test('the review\'s cases: addServer() names options; remove({id}) names id; a constructor error names the field', async (t) => {
  const { host } = newHost(t)
  const none = await refused(() => host.addServer(), 'options', 'addServer()')
  assert.match(none.message, /^options: must be an object/)
  const wrapped = await refused(() => host.remove({ id: 'x' }), 'id', 'remove({id})')
  assert.equal(wrapped.message, 'id: must be a non-empty string')
  const numbered = await refused(() => host.addServer({ id: 5, name: 'a', config: stdio }), 'options.id', 'addServer({id: 5})')
  assert.match(numbered.message, /unknown field `id`/)
  assert.throws(() => new McpHost({ dataDir: 5 }), (e) => e instanceof HostError && e.code === 'invalid_argument' && /^options\.dataDir: /.test(e.message))
  assert.throws(() => new McpHost(42), (e) => e instanceof HostError && /^options: must be an object/.test(e.message))
  assert.throws(() => new McpHost('x'), (e) => e instanceof HostError && /^options: must be an object/.test(e.message))
})
