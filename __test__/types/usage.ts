// Type-checked by `npm test` (tsc --noEmit): the usage of the README and the guides, compiled
// against index.d.ts. A wrong or missing type here fails the test run.
import { McpHost, HostError, type ActionEnvelope, type HostTool, type McpServerState, type CallToolResult, type ServerInfo, type RootInput, type Root, type McpChannelMessage, type ReadResourceResult, type RequestOptions, type ProgressInfo, type ToolSummary, type ToolSearchResult, type SearchToolsOptions, type LegacySseServerConfig, type ServerPolicyInfo, type ServerPolicy, type TrustCallback, type TrustRequest, type ServerPolicyDecision, type TrustDecision, type PolicyVerdict, type PolicyRule, type TrustAnswer, type TrustedConfig, type DeviceCodePrompt } from '../../index.js'

async function main(): Promise<void> {
  const host = new McpHost({
    session: 'ahp-session:/3f2c',
    clientInfo: { name: 'my-extension', version: '1.2.0' },
    dataDir: '/tmp/plugin-data',
    limits: { callTimeoutMs: 60_000, maxRestarts: 2, maxConcurrentLaunches: 8, modelOutputMaxChars: 100_000 },
    env: 'inherit',
    proxy: { url: 'http://proxy.corp:3128', noProxy: 'intranet.corp,10.0.0.0/8' },
    caCertificates: ['-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n'],
    handlers: {
      elicitation: async ({ message }, { serverId }) => {
        console.log(serverId, message)
        return { action: 'accept', content: { name: 'Ada' } }
      },
      roots: async () => ({ roots: [{ uri: 'file:///workspace', name: 'workspace' }] }),
    },
  })
  host.on('action', (envelope: ActionEnvelope) => {
    const a = envelope.action
    if (a.type === 'session/mcpServerStateChanged') {
      const state: McpServerState = a.state
      if (state.kind === 'error') console.log(a.id, state.error.errorType, state.error.message)
    }
    if (envelope.rejectionReason !== undefined) console.log('refused', envelope.origin?.clientSeq)
  })
  host.on('log', (record) => {
    if (record.target === 'server.stderr') console.log(record.serverId, record.message)
    const sent: string | undefined = record.serverLevel
    if (record.target === 'server.log') console.log(record.level, sent ?? record.level)
  })
  // Roots: set (percent-encoded for servers) and notify the servers.
  const folders: RootInput[] = [{ uri: '/home/me/My Project', name: 'project' }, { uri: 'file:///srv/data' }]
  const done: void = await host.setRoots(folders)
  console.log(done)
  try {
    await host.setRoots([{ uri: 'https://example.com/repo' }])
    // @ts-expect-error a root needs its uri
    await host.setRoots([{ name: 'no uri' }])
  } catch (err) {
    if (err instanceof HostError && err.code === 'invalid_argument') console.log(err.message)
  }
  const sent: Root = { uri: 'file:///home/me/My%20Project', name: 'project' }
  const withRoots = new McpHost({ roots: [sent, { uri: '/srv/data', _meta: { source: 'workspace' } }] })
  await withRoots.dispose()
  const plugin = await host.addPlugin({ root: '/plugins/docs', servers: { search: { startupTimeoutMs: 10_000 } } })
  if (plugin.load.kind === 'degraded') console.log(plugin.load.message)
  const id: string = await host.addServer({ name: 'remote', config: { type: 'streamable-http', url: 'https://example.test/mcp' }, protocol: 'auto' })
  await host.addPlugin({ root: '/plugins/old', servers: { legacy: { protocol: 'legacy' } } })
  const info: ServerInfo | ServerPolicyInfo | null = host.serverInfo(id)
  if (info?.policy?.rules?.allowed === false) console.log(info.policy.rules.rule, info.policy.rules.message)
  if (info?.protocolVersion !== undefined) {
    const era: 'discover' | 'initialize' = info.handshake
    console.log(era, info.protocolVersion, info.instructions ?? '', info.icons.map((i) => i.src), info.capabilities?.tools)
  }
  const echo = host.dispatch({ type: 'session/mcpServerStopRequested', id }, { clientId: 'ui', clientSeq: 1 })
  console.log(echo.serverSeq)
  host.dispatch({ type: 'session/customizationToggled', id: plugin.id, enablement: [{ kind: 'session', enabled: false }] })
  const tools: HostTool[] = host.listTools()
  const first = tools[0]
  if (first) {
    try {
      const result: CallToolResult = await host.callTool({
        serverId: first.customizationId,
        name: first.toolName,
        arguments: { message: 'hi' },
        signal: AbortSignal.timeout(5_000),
      })
      for (const block of result.content) if (block.type === 'text') console.log(block.text)
    } catch (err) {
      if (err instanceof HostError && err.code === 'server_exited') console.log(err.message)
    }
  }
  // The model catalogue: call by model-safe name as an AHP tool call.
  for (const tool of host.listTools()) {
    const name: string = tool.name
    try {
      await host.callTool({ name, arguments: {}, digest: tool.digest, chat: 'ahp-chat:/c1', turnId: 't1', toolCallId: 'tc1', timeoutMs: 30_000, maxTotalTimeoutMs: 300_000, modelOutputMaxChars: 20_000 })
    } catch (err) {
      if (err instanceof HostError && (err.code === 'stale_tool' || err.code === 'timeout' || err.code === 'cancelled')) console.log(err.code)
    }
  }
  for (const d of host.toolDiagnostics()) console.log(d.serverId, d.tool, d.action, d.reason)
  // Tool filters and per-server call limits (addServer, a plugin's server overrides), switched at run time.
  const filtered = await host.addServer({
    name: 'fs',
    config: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
    includeTools: ['read_*', 'list_directory'],
    excludeTools: ['read_media_file'],
    callTimeoutMs: 120_000,
    callMaxTotalMs: 600_000,
    modelOutputMaxChars: 40_000,
  })
  await host.addPlugin({ root: '/plugins/p', servers: { search: { excludeTools: ['admin_*'], callTimeoutMs: 5_000, modelOutputMaxChars: 8_000 } } })
  const changed: boolean = host.setToolEnabled({ serverId: filtered, tool: 'read_media_file', enabled: true })
  console.log(changed, host.toolDiagnostics().filter((d) => d.action === 'filtered').map((d) => d.reason))
  try {
    await host.callTool({ serverId: filtered, name: 'write_file' })
  } catch (err) {
    if (err instanceof HostError && err.code === 'tool_disabled') console.log(err.data)
  }
  host.on('toolsChanged', ({ reason }) => console.log(reason === 'filter'))
  // @ts-expect-error includeTools is a list of names and globs
  await host.addServer({ name: 'x', config: { type: 'stdio', command: 'x' }, includeTools: 'read_*' })
  // @ts-expect-error enabled is a boolean
  host.setToolEnabled({ serverId: filtered, tool: 'read_file', enabled: 'yes' })
  // Deferred tool loading: search (or summaries), fetch definitions, call.
  const found: ToolSearchResult[] = host.searchTools('read file', { limit: 5, serverIds: [filtered] })
  const summaries: ToolSummary[] = host.listToolSummaries()
  const budget: number = summaries.reduce((n, s) => n + s.estimatedTokens, 0)
  const searchOptions: SearchToolsOptions = { limit: 3 }
  console.log(budget, host.searchTools('echo', searchOptions).map((r) => [r.name, r.score, r.description ?? '']))
  const picked: HostTool[] = host.getToolDefinitions(found.map((r) => r.name))
  for (const tool of picked) await host.callTool({ name: tool.name, arguments: {}, digest: tool.digest })
  // @ts-expect-error a summary has no schema
  console.log(summaries[0]?.inputSchema)
  // @ts-expect-error names are a list
  host.getToolDefinitions('mcp__fs__read_file')
  host.on('toolsChanged', ({ serverId, reason, tools }) => console.log(serverId, reason, tools))
  host.on('listChanged', ({ list }) => console.log(list === 'resources' || list === 'prompts'))
  host.on('action', ({ action, channel }) => {
    if (action.type === 'chat/toolCallContentChanged') console.log(channel, action.content.length)
    if (action.type === 'chat/toolCallComplete' && !action.result.success) console.log(action.result.error?.code)
    if (action.type === 'session/inputNeededSet' && action.request.kind === 'toolAuthentication') console.log(action.request.toolCall.auth.resource.resource)
    // A form elicitation of a chat tool call, answered by an AHP client.
    if (action.type === 'session/inputNeededSet' && action.request.kind === 'chatInput') {
      const { request } = action.request
      for (const q of request.questions ?? []) if (q.kind === 'single-select') console.log(q.options.map((o) => o.id))
      host.dispatch({ type: 'chat/inputAnswerChanged', requestId: request.id, questionId: 'name', answer: { state: 'draft', value: { kind: 'text', value: 'Ad' } } })
      host.dispatch({ type: 'chat/inputCompleted', requestId: request.id, response: 'accept', answers: { name: { state: 'submitted', value: { kind: 'text', value: 'Ada' } } } })
    }
    if (action.type === 'chat/inputCompleted') console.log(action.requestId, action.response)
  })
  // The elicitation handler learns when its request is withdrawn or also shown to AHP clients.
  const chatHost = new McpHost({
    chatElicitation: true,
    handlers: {
      elicitation: (params, { signal, chatInput }) => new Promise((resolve, reject) => {
        if (chatInput === undefined) return resolve({ action: 'decline' })
        console.log(chatInput.chat, chatInput.toolCallId, chatInput.requestId)
        signal.addEventListener('abort', () => reject(signal.reason))
      }),
    },
  })
  // @ts-expect-error chatElicitation is a boolean
  new McpHost({ chatElicitation: 'yes' })
  await chatHost.dispose()
  host.dispatch({ type: 'chat/toolCallComplete', turnId: 't1', toolCallId: 'tc1', result: { success: false, pastTenseMessage: 'Cancelled', error: { code: 'cancelled', message: 'user declined' } } })
  const resources = await host.listResources(id)
  for (const r of resources) console.log(r.uri, r.mimeType)
  const read = await host.readResource(id, 'file:///x')
  host.on('resourceUpdated', ({ serverId, uri }) => console.log(serverId, uri.length))
  const subscribed: void = await host.subscribeResource(id, 'file:///x')
  console.log(subscribed)
  await host.unsubscribeResource(id, 'file:///x')
  for (const c of read.contents) console.log('text' in c ? c.text : c.blob)
  const templates = await host.listResourceTemplates(id)
  console.log(templates[0]?.uriTemplate)
  const prompts = await host.listPrompts(id)
  const prompt = await host.getPrompt(id, prompts[0]?.name ?? 'p', { topic: 'x' })
  const stop = new AbortController()
  const requestOptions: RequestOptions = { signal: stop.signal }
  await host.readResource(id, 'file:///x', requestOptions)
  await host.getPrompt(id, 'p', undefined, { signal: stop.signal })
  // @ts-expect-error signal is an AbortSignal
  await host.readResource(id, 'file:///x', { signal: 'stop' })
  // RequestOptions on every request method; onProgress on callTool.
  const bounded: RequestOptions = { signal: stop.signal, timeoutMs: 5_000 }
  await host.listResources(id, bounded)
  await host.listResourceTemplates(id, bounded)
  await host.listPrompts(id, { timeoutMs: 1_000 })
  await host.subscribeResource(id, 'file:///x', bounded)
  await host.unsubscribeResource(id, 'file:///x', bounded)
  await host.readAppResource({ serverId: id, uri: 'ui://x' }, bounded)
  await host.setRoots([], bounded)
  const again: string = await host.addServer({ name: 'again', config: { type: 'stdio', command: 'node' } }, bounded)
  await host.remove(again, { signal: AbortSignal.timeout(1_000) })
  await host.addPlugin({ root: '/tmp/p' }, bounded)
  await host.authenticate({ resource: 'https://x', token: 't' }, bounded)
  await host.authorize(id, { signal: stop.signal, timeoutMs: 60_000 })
  await host.callTool({
    serverId: id,
    name: 'slow',
    signal: stop.signal,
    onProgress: (p: ProgressInfo) => console.log(p.progress, p.total?.toFixed(0), p.message?.length),
  })
  // @ts-expect-error timeoutMs is a number of ms
  await host.listPrompts(id, { timeoutMs: '5s' })
  console.log(prompt.messages.length)
  // @ts-expect-error a catalogue call needs no serverId, but a serverId call needs a name
  await host.callTool({ serverId: id })
  const state = host.getState()
  for (const c of state.customizations ?? []) {
    if (c.type === 'plugin') for (const child of c.children ?? []) if (child.type === 'mcpServer') console.log(child.id, child.state.kind, child.range?.start.line)
  }
  // Host-only actions are not dispatchable by clients.
  // @ts-expect-error session/mcpServerStateChanged is host-only
  host.dispatch({ type: 'session/mcpServerStateChanged', id, state: { kind: 'ready' } })
  const imported = await host.importConfig({ format: 'vscode', text: '{}', resolve: (v) => (v.secret ? null : v.default) })
  const kept: string[] | undefined = imported.servers[0]?.secrets
  await host.addServer({ name: 'imported', config: { type: 'stdio', command: 'node' }, literal: true, secrets: kept ?? [] })
  const patient = new McpHost({ limits: { importResolveTimeoutMs: 60_000 } })
  await patient.dispose()
  await host.addServer({ name: 'legacy', config: { type: 'sse', url: 'https://example.test/sse', headers: { 'X-Key': 'k' } } })
  const legacy: LegacySseServerConfig = { type: 'sse', url: 'https://example.test/sse' }
  void legacy
  // @ts-expect-error an `sse` entry has no `command`
  await host.addServer({ name: 'legacy2', config: { type: 'sse', url: 'https://example.test/sse', command: 'x' } })
  const transport: ServerInfo['transport'] | undefined = host.serverInfo('legacy')?.transport
  void transport
  // Server policy and trust on first use (issue 32).
  const policy: ServerPolicy = { allow: [{ plugin: 'company-*' }, { url: 'https://*.example.com' }], deny: [{ command: 'npx', args: ['-y', 'evil-*'], label: 'no evil' }] }
  const trust: TrustCallback = async (request: TrustRequest) => {
    if (request.config.type === 'stdio') console.log(request.config.command, request.config.env.join(','))
    request.signal.addEventListener('abort', () => {})
    return request.reason === 'changed' ? { trust: false, remember: false } : true
  }
  const guarded = new McpHost({ policy, trust, limits: { trustTimeoutMs: 60_000 } })
  guarded.setPolicy({ deny: [{ transport: 'stdio' }] })
  const forgotten: number = await guarded.resetTrust('docs')
  const decision: ServerPolicyDecision | undefined = guarded.serverInfo('docs')?.policy
  const trustState: TrustDecision["state"] | undefined = decision?.trust?.state
  const verdict: PolicyVerdict | undefined = decision?.rules
  const rule: PolicyRule = { name: 'p/*', transport: 'sse' }
  const answer: TrustAnswer = { trust: true }
  const shown: TrustedConfig = { type: 'sse', url: 'https://x.test/sse', headers: [] }
  console.log(forgotten, trustState, verdict, rule, answer, shown)
  // @ts-expect-error a rule's transport is one of the three
  guarded.setPolicy({ deny: [{ transport: 'carrier-pigeon' }] })
  await guarded.dispose()
  // @ts-expect-error unknown error codes do not type-check
  const bad: HostError['code'] = 'no_such_code'
  void bad
  // @ts-expect-error err.code is never a number (the AHP JSON-RPC number is rpcCode)
  const numeric: HostError['code'] = -32007
  void numeric
  try {
    await host.authenticate({ resource: 'https://example.test/mcp', token: 't' })
  } catch (err) {
    if (err instanceof HostError && err.code === 'auth_required') {
      const rpc: number | undefined = err.rpcCode
      console.log(rpc === -32007)
    }
  }
  const made = new HostError('invalid_params', 'unknown resource', { resources: [] }, -32602)
  void made
  // Workload identity federation: the JWT-bearer grant with the workload JWT given to authorize().
  const workload = await host.addServer({ name: 'ci', config: { type: 'streamable-http', url: 'https://example.test/mcp' }, oauth: { clientId: 'ci-agent', grant: 'jwtBearer' } })
  await host.authorize(workload, { assertion: 'eyJ...' })
  // @ts-expect-error unknown grants do not type-check
  await host.addServer({ name: 'x', config: { type: 'streamable-http', url: 'https://example.test/mcp' }, oauth: { clientId: 'c', grant: 'dpop' } })
  // Remote and headless hosts: overrides without a client id, an app redirect URI and a pasted callback, the device grant.
  const remote = await host.addServer({
    name: 'remote',
    config: { type: 'streamable-http', url: 'https://example.test/mcp' },
    oauth: { scopes: ['read'], authServerMetadataUrl: 'https://as.example.test/.well-known/oauth-authorization-server', callbackPort: 33418, resource: 'https://example.test/' },
  })
  const signingIn = host.authorize(remote, { redirectUri: 'vscode://publisher.ext/callback', flow: 'auto', openUrl: (url: string, device?: DeviceCodePrompt) => console.log(url, device?.userCode, device?.expiresInMs.toFixed(0)) })
  host.onAuthorizationUrl(({ url, deviceCode }) => console.log(url, deviceCode?.verificationUriComplete ?? deviceCode?.verificationUri))
  await host.completeAuthorization(remote, 'vscode://publisher.ext/callback?code=c&state=s', { timeoutMs: 60_000 })
  await signingIn
  // @ts-expect-error the device grant is 'deviceCode'
  await host.authorize(remote, { flow: 'device' })
  // MCP Apps: the mcp:// channel of a ready server, its answers and forwarded notifications.
  const apps = new McpHost({ mcpApps: true, limits: { maxChannelMessageBytes: 65_536, maxChannelRequests: 8, channelRequestTimeoutMs: 30_000, maxUiResourceBytes: 4 * 1024 * 1024 } })
  const appServer = await apps.addServer({ name: 'app', config: { type: 'stdio', command: 'node', args: ['server.js', '--stdio'] } })
  const channel = apps.getState().customizations?.find((c) => c.id === appServer && c.type === 'mcpServer')
  const uri = channel?.type === 'mcpServer' ? channel.channel : undefined
  if (uri !== undefined) {
    apps.sendChannelMessage({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-time', arguments: {} }, channel: uri })
    apps.sendChannelMessage({ jsonrpc: '2.0', id: 'r', method: 'resources/read', params: { uri: 'ui://get-time/mcp-app.html' }, channel: uri })
    apps.sendChannelMessage({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 }, channel: uri })
    // @ts-expect-error every channel message names its channel
    apps.sendChannelMessage({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
  }
  apps.on('channelMessage', (message: McpChannelMessage) => {
    if ('result' in message) console.log(message.id, message.channel, Object.keys(message.result))
    else if ('error' in message) console.log(message.id, message.error.code, message.error.message)
    else console.log(message.method === 'notifications/tools/list_changed', message.channel)
  })
  const view: ReadResourceResult = await apps.readAppResource({ serverId: appServer, uri: 'ui://get-time/mcp-app.html' })
  for (const c of view.contents) console.log(c.mimeType, c._meta)
  // @ts-expect-error readAppResource takes {serverId, uri}
  await apps.readAppResource(appServer, 'ui://get-time/mcp-app.html')
  await apps.dispose()
  await host.dispose()
}

void main

// Reducers and the state mirror (issue 12).
import { reduceSession, reduceChat, AhpStateMirror, type ReduceResult, type ReduceOutcome, type SessionState, type ChatState, type MirrorSnapshot } from '../../index.js'
import { AhpStateMirror as BrowserMirror } from '../../lib/mirror.js'
import type { McpTaskHandle, HostErrorCode } from '../../index.js'

function mirrorUsage(host: McpHost): void {
  const r: ReduceResult<SessionState> = reduceSession(host.getState(), { type: 'session/titleChanged', title: 'T' })
  const outcome: ReduceOutcome = r.outcome
  if (r.error !== undefined) console.log(outcome, r.error)
  const chat: ChatState = { resource: 'ahp-chat:/c', title: '', status: 1, modifiedAt: '', turns: [] }
  const c: ReduceResult<ChatState> = reduceChat(chat, { type: 'chat/titleChanged', title: 'C' })
  const snapshot: MirrorSnapshot = { serverSeq: 0, session: r.state, chats: { 'ahp-chat:/c': c.state } }
  const mirror = new AhpStateMirror({ session: 'ahp-session:/3f2c', snapshot })
  host.on('action', (envelope) => mirror.receive(envelope))
  mirror.on('gap', ({ expected, got }) => { console.log(expected, got); mirror.seed({ serverSeq: 0, session: host.getState() }) })
  mirror.on('rejected', ({ clientSeq, reason }) => console.log(clientSeq, reason))
  const sent = mirror.dispatch('ahp-session:/3f2c', { type: 'session/mcpServerStartRequested', id: 'everything' })
  host.dispatch({ type: 'session/mcpServerStartRequested', id: 'everything' }, { clientId: mirror.clientId, clientSeq: sent.clientSeq })
  const s: SessionState = mirror.session
  const maybe: ChatState | undefined = mirror.chat('ahp-chat:/c')
  console.log(s.title, maybe?.turns.length, mirror.pending)
  const browser = new BrowserMirror({ session: 'ahp-session:/3f2c', reducers: { reduceSession, reduceChat } })
  browser.receive({ channel: 'ahp-session:/3f2c', serverSeq: 1, action: { type: 'session/titleChanged', title: 'T' } })
}
void mirrorUsage

// Task-based tools (SEP-2663): the task handle option.
async function taskUsage(host: McpHost): Promise<void> {
  const answer: CallToolResult | McpTaskHandle = await host.callTool({ serverId: 's', name: 'work', taskHandle: true })
  if ('taskId' in answer) {
    const id: string = answer.taskId
    const ttl: number | null = answer.ttlMs
    console.log(id, ttl, answer.status, answer.pollIntervalMs)
  }
  const result: CallToolResult = await host.callTool({ serverId: 's', name: 'work' })
  console.log(result.content.length)
  // @ts-expect-error taskHandle is a boolean
  await host.callTool({ serverId: 's', name: 'work', taskHandle: 'yes' })
  const code: HostErrorCode = 'task_expired'
  console.log(code)
}
void taskUsage

// A typed sampling handler (MCP CreateMessageRequest / CreateMessageResult)
// and HostError.data narrowed by shape.
import type { CreateMessageParams, CreateMessageResult, HostErrorData } from '../../index.js'
function samplingUsage(): McpHost {
  return new McpHost({
    handlers: {
      sampling: async (params, { serverId }): Promise<CreateMessageResult> => {
        const first = params.messages[0]
        const text = first && !Array.isArray(first.content) && first.content.type === 'text' ? first.content.text : ''
        const budget: number = params.maxTokens
        console.log(serverId, budget, params.systemPrompt?.length, params.includeContext)
        return { role: 'assistant', content: { type: 'text', text: `echo ${text}` }, model: 'test-model', stopReason: 'endTurn' }
      },
    },
  })
}
void samplingUsage
function wrongSampling(): McpHost {
  return new McpHost({
    handlers: {
      // @ts-expect-error a CreateMessageResult needs `model` and `content`
      sampling: async (_params: CreateMessageParams) => ({ role: 'assistant' }),
    },
  })
}
void wrongSampling
function errorData(err: HostError): void {
  const data: HostErrorData | undefined = err.data
  if (data && 'kind' in data && data.kind === 'total') console.log(data.ms)
  if (data && 'requiredScopes' in data) console.log(data.requiredScopes.join(' '), data.insufficientScope)
  if (data && 'state' in data) console.log(data.serverId, data.state.kind)
}
void errorData

// Issue 29, item 6: required servers and whenReady over many.
import type { ReadyOutcome, ServerStartOptions } from '../../index.js'
async function blockingStart(host: McpHost): Promise<void> {
  const start: ServerStartOptions = { required: true }
  await host.addServer({ name: 'db', config: { type: 'stdio', command: 'node' }, ...start })
  await host.addPlugin({ root: '/p', servers: { s: { required: true, excludeTools: ['x'] } } })
  const held: ReadyOutcome[] = await host.whenReady({ blocking: true, timeoutMs: 5_000 })
  for (const o of held) {
    if (o.status === 'ready') console.log(o.info.name)
    else if (o.status === 'failed') console.log(o.error.code)
    else console.log(o.serverId, 'backgrounded')
  }
  const listed: ReadyOutcome[] = await host.whenReady(['a', 'p/s'])
  const one: ServerInfo = await host.whenReady('a')
  void listed
  void one
  // @ts-expect-error `required` is a boolean
  await host.addServer({ name: 'x', config: { type: 'stdio', command: 'node' }, required: 'yes' })
}
void blockingStart

// Issue 31, item 2: URL-mode elicitation (SEP-1036).
import type { ElicitationRegistration, UrlElicitationRequiredData } from '../../index.js'
function urlElicitation(): McpHost {
  const elicitation: ElicitationRegistration = {
    url: true,
    handler: async (params, context) => {
      if (params.mode === 'url') {
        const shown: string = `${params.message} (${context.origin ?? ''}) ${params.url}`
        void shown
        return { action: 'accept' }
      }
      return { action: 'decline' }
    },
  }
  // @ts-expect-error `url` is a boolean
  const wrong: ElicitationRegistration = { handler: elicitation.handler, url: 'yes' }
  void wrong
  const code: HostErrorCode = 'url_elicitation_required'
  const data: UrlElicitationRequiredData = { reason: 'requiredAgain', elicitations: [{ elicitationId: 'e', message: 'm', origin: 'https://a.example' }] }
  void code
  void data
  return new McpHost({ handlers: { elicitation }, chatElicitation: true })
}
void urlElicitation
