// Public types of ahp-mcp-host.
//
// AHP shapes follow the `ahp-types` 1.0.0 wire format (Agent Host Protocol
// 1.0.0, session channel). Only the parts an MCP host produces or accepts are
// declared here; unknown fields from newer protocol versions may appear.

import { EventEmitter } from 'node:events'

// ─── The host: McpHost, its options and its events ──────────────────────────

/**
 * The MCP host of one AHP session. Servers run in Rust; state changes arrive
 * as `'action'` events in `serverSeq` order. While alive the host keeps the
 * Node process running (see {@link McpHost.unref}); call {@link McpHost.dispose}.
 *
 * Events are delivered in batches. Each listener of an event the host
 * emits is called on its own: one that throws neither stops the other
 * listeners nor the rest of the batch, and its exception is then reported
 * as an uncaught one (`process.on('uncaughtException')` sees it; without
 * a handler Node ends the process, as for any uncaught exception). The
 * answers in a batch settle their requests before any listener runs.
 * While a request, a {@link McpHost.whenReady} or a server request on a
 * handler is pending, the host is held: an app that only awaits it
 * (`return await host.callTool(…)`) never loses it to garbage collection.
 */
export declare class McpHost extends EventEmitter<McpHostEvents> {
  /**
   * Throws a {@link HostError} for refused options: `invalid_argument` (e.g.
   * `options` not an object, an unknown option, a field of the wrong type,
   * or a `roots` entry that is not a `file:` URI or absolute path),
   * `limit_exceeded` (more than 1 000 roots). Like every method's argument
   * errors, the message starts with the parameter and field path, e.g.
   * `options.limits.callTimeoutMs: must be a non-negative integer, got "x"`
   * or `options.clientInfo.extra: unknown field …`.
   */
  constructor(options?: McpHostOptions)
  /**
   * Sets the host's roots (MCP 2025-11-25 "Client Features › Roots") and
   * tells the servers. Each entry's `uri` (a `file:` URI or an absolute
   * path) is sent as a percent-encoded `file://` URI, dot segments resolved
   * (see {@link Root}). From now on `roots/list` answers these roots; a
   * `roots` handler is no longer called.
   *
   * When the list differs from the current one, every 2025-era server that
   * is `ready` or has read roots gets `notifications/roots/list_changed`
   * (and then asks `roots/list` again); resolves once each notification was
   * written (each bounded by `limits.callTimeoutMs`). The same list again
   * sends nothing. MCP 2026-07-28 removed that notification: servers of that
   * era ask for roots inside each request that needs them (an
   * `input_required` result with a `roots/list` input request) and get the
   * current roots then.
   *
   * Errors: `invalid_argument` (not an array; an entry that is not
   * `{uri, name?, _meta?}`; a `uri` that is not a `file:` URI or absolute
   * path, e.g. `https://…`, or has a query or fragment: the message names
   * the entry and quotes the value, `roots[1].uri: "https://example.com/repo"
   * is not a file:// URI (MCP roots must be file:// URIs)`; or a host with
   * neither the `roots` option nor a `roots` handler, which declared no
   * roots capability), `limit_exceeded` (more than 1 000 roots), `disposed`.
   * Nothing changes when it rejects, except after an abort or `options.timeoutMs`
   * while it ran (`cancelled` / `timeout`: the roots are set all the same; see {@link RequestOptions}).
   */
  setRoots(roots: RootInput[], options?: RequestOptions): Promise<void>
  /**
   * Reads `<root>/mcp.json`, publishes a `PluginCustomization` and starts its valid servers.
   * An unusable `mcp.json` is not a rejection: the plugin is added with `load.kind: 'error'` and a
   * message naming the file and why (invalid JSON or rules with line:column; missing; not a regular
   * file, e.g. a named pipe, a device such as `/dev/zero`, a directory; larger than
   * `limits.maxConfigFileBytes`; not read within `limits.configReadTimeoutMs`).
   * The id is held once: while it is being added, is live or is being removed, another add of it
   * rejects `already_exists`. A `remove` of the id before this settles stops it (nothing further is
   * published, no server starts) and it rejects `cancelled`.
   * Errors: `invalid_argument`, `already_exists`, `cancelled`, `disposed`;
   * `cancelled` / `timeout` from `requestOptions` (the plugin is removed again, see {@link RequestOptions}).
   */
  addPlugin(options: AddPluginOptions, requestOptions?: RequestOptions): Promise<PluginAdded>
  /**
   * Publishes a top-level `McpServerCustomization` and starts it; resolves to its id.
   * The id is held once, as for {@link McpHost.addPlugin}.
   * Errors: `invalid_entry`, `invalid_argument` (e.g. a wrong {@link ServerToolOptions} pattern), `already_exists`,
   * `cancelled` (a `remove` of the id came first), `disposed`;
   * `cancelled` / `timeout` from `requestOptions` (the server is removed again, see {@link RequestOptions}).
   */
  addServer(options: AddServerOptions, requestOptions?: RequestOptions): Promise<string>
  /**
   * Reads another host's MCP configuration (VS Code `mcp.json`, Claude Code
   * `.mcp.json`, Claude Desktop `claude_desktop_config.json`, Cursor
   * `mcp.json`, Codex `config.toml`, MCP Registry `server.json`) into this
   * host's entries, for {@link McpHost.addServers}. Starts nothing. Every
   * field the format defines is mapped or named in a diagnostic
   * (docs/guide/import.md has a table per format); a file that does not
   * parse is one `invalid_config` diagnostic with its line and column.
   *
   * Variables (`${env:X}`, `${input:id}`, `${VAR:-default}`,
   * `${workspaceFolder}`, a registry input) are resolved only through
   * `options.resolve`, never from this process's environment: without it,
   * servers that use variables come back with `resolved: false` and their
   * placeholders. A server whose variable gets no value (and has no
   * default) leaves `servers` for an `invalid_entry` diagnostic; its
   * siblings stay. Values are never put in a diagnostic or an error, and
   * a resolved value is never scanned again (it is literal text).
   * A resolved server lists the values of its secret variables in
   * `secrets`, kept secret wherever they were put. Resolved, a server is
   * left out (an `invalid_entry` diagnostic naming the field or bound,
   * never a value) when a secret variable is in its URL's scheme, host or
   * port; when the resolved servers of the import would hold more than
   * `limits.maxConfigFileBytes` of text together; or when a registry
   * `docker` entry's resolved options give the container part of the host.
   *
   * Errors: `invalid_argument` (options), `invalid_config` (`path` cannot
   * be read: missing, not a regular file, over `limits.maxConfigFileBytes`,
   * not read within `limits.configReadTimeoutMs`), `limit_exceeded` (a
   * `text` over `limits.maxConfigFileBytes`), `disposed` (also while the
   * file is being read, which runs off the host's async worker).
   */
  importConfig(options: ImportConfigOptions): Promise<ImportResult>
  /**
   * Adds each server of an {@link McpHost.importConfig} result through
   * {@link McpHost.addServer} (with `literal: true` and the server's
   * `secrets`), in order; one that fails never stops the
   * others. Resolves one {@link AddServersResult} per server: its id, its
   * `HostError` (e.g. `invalid_entry` for `resolved: false`,
   * `already_exists`), or `skipped: 'disabled'` (`enabled: false` in the
   * source). Errors: `invalid_argument` (not an array of ImportedServer),
   * `disposed`.
   */
  addServers(servers: readonly ImportedServer[]): Promise<AddServersResult[]>
  /**
   * Waits for MCP server `serverId` (a top-level server, or a plugin's
   * `<plugin>/<server>`: {@link PluginAdded.servers}) to be `ready`, and
   * resolves with its {@link ServerInfo}: at once when it already is. Call
   * it after {@link McpHost.addServer} / {@link McpHost.addPlugin} resolved
   * and before `listTools()` / `callTool()` (a server is `starting` when
   * they resolve, and has no tools yet).
   *
   * Rejects with a {@link HostError} as soon as the server cannot become
   * ready without something else happening, at once when that is already
   * so: its `error` state's code (`error.errorType`: `command_not_found`,
   * `spawn_failed`, `server_exited`, `startup_timeout`, `protocol_error`,
   * `connect_failed`, …; `data: {serverId, state}`); `auth_required` in
   * `authRequired` (`data: {serverId, state}`: `state.resource` names what
   * to sign in to, see {@link McpHost.authorize}); `server_stopped`
   * (stopped: a stop request, or it was not running); `server_disabled`
   * (it or its plugin toggled off); `server_removed` ({@link McpHost.remove}
   * of it or its plugin); `disposed`; `not_found` (no such server, e.g. a
   * plugin id); `timeout` and `cancelled` (see {@link WhenReadyOptions});
   * `invalid_argument`. A server that crashed and whose automatic restart
   * is scheduled (its `error` state carries
   * `error._meta["ahp-mcp-host/restart"]`: {@link RestartScheduled}) is on
   * its way back: the wait goes on through the backoff and settles with
   * the restarted server's outcome; `server_exited` rejects only once no
   * restart is coming (the restart limit). A server that restarts (crash,
   * start request) is judged by the state it is in when the host next
   * looks: the host looks at the session state ({@link McpHost.getState})
   * when called and after each action about the server, so a wait never
   * misses the outcome. It settles only once the `action` envelopes that
   * led to that state have been delivered to the `action` listeners, so a
   * state mirror fed by them ({@link AhpStateMirror}) already shows it; a
   * `ready` server's tools are published right after its `ready` state,
   * and the wait settles once they are in the state too
   * (`getState().serverTools`, the mirror), as they are in
   * {@link McpHost.listTools}.
   * Waiting costs no listener of the caller's: one observer per host
   * serves every wait. While a wait (or any request) is pending the host is
   * held, so it is not garbage-collected under an awaiting caller.
   */
  whenReady(serverId: string, options?: WhenReadyOptions): Promise<ServerInfo>
  /**
   * Waits for the starts of many servers: those named in `serverIds`, or,
   * without it, every MCP server in the session state when called (top-level
   * servers, then plugin children, in state order); with `options.blocking`,
   * only the servers whose `starting` state has `blocking: true` then (the
   * `required` ones, {@link ServerStartOptions}), for as long as they block.
   * This is how an agent harness holds its next turn:
   * `await host.whenReady({blocking: true})`.
   *
   * Resolves once every start is decided, with one {@link ReadyOutcome} per
   * server in order: `ready` (with its {@link ServerInfo}), `failed` (with
   * the {@link HostError} the one-server form rejects with: `server_exited`,
   * `not_found`, …) or, with `blocking`, `background` (a client's
   * `session/mcpServerBackgroundRequested` unblocked it; it goes on
   * starting). A server's failure never rejects the promise; it rejects
   * only with `invalid_argument` (naming `serverIds[i]` or
   * `options.<field>`), `timeout` (`data: {kind: 'ready', ms, serverIds}`,
   * the servers still undecided), `cancelled` (`data.serverIds` likewise)
   * and `disposed`. No servers: resolves `[]` at once.
   */
  whenReady(serverIds: readonly string[], options?: WhenReadyOptions & { blocking?: boolean }): Promise<ReadyOutcome[]>
  whenReady(options?: WhenReadyOptions & { blocking?: boolean }): Promise<ReadyOutcome[]>
  /**
   * Stops and removes a plugin (with its servers) or a top-level server; resolves once
   * `session/customizationRemoved` is emitted, and no action about the id follows. Commands on one id
   * apply in call order: an add of the id still in flight is stopped (it rejects `cancelled`) and
   * waited for; the id stays taken until the removal has finished.
   * Errors: `not_found` (no such id, a plugin's child, or a removal of it already under way), `disposed`;
   * `cancelled` / `timeout` from `options` (before it started: nothing removed; while it ran: the
   * removal goes on, see {@link RequestOptions}).
   */
  remove(id: string, options?: RequestOptions): Promise<null>
  /**
   * Node's `EventEmitter.on`: adds `listener` and returns **the host** (for
   * chaining), not a subscription. `host.on('log', f).dispose()` therefore
   * disposes the whole host. To remove one listener later, use the
   * `onX` method of the event ({@link McpHost.onLog}, {@link McpHost.onAction}, …),
   * which returns a {@link Disposable}, or `host.off(event, listener)`.
   */
  on<K extends keyof McpHostEvents>(eventName: K, listener: (...args: McpHostEvents[K]) => void): this
  /**
   * Subscribes to `action` ({@link ActionEnvelope}s in `serverSeq` order);
   * `dispose()` removes only this listener. Like every `onX` method: the
   * listener is called with the host as `this`, exactly as with `on`, and
   * one that is not a function throws a {@link HostError} `invalid_argument`.
   */
  onAction(listener: (...args: McpHostEvents['action']) => void): Disposable
  /** Subscribes to `log` ({@link LogRecord}s); `dispose()` removes only this listener. */
  onLog(listener: (...args: McpHostEvents['log']) => void): Disposable
  /** Subscribes to `authorizationUrl` (see {@link McpHostEvents}); `dispose()` removes only this listener. */
  onAuthorizationUrl(listener: (...args: McpHostEvents['authorizationUrl']) => void): Disposable
  /** Subscribes to `toolsChanged` (see {@link McpHostEvents}); `dispose()` removes only this listener. */
  onToolsChanged(listener: (...args: McpHostEvents['toolsChanged']) => void): Disposable
  /** Subscribes to `listChanged` (see {@link McpHostEvents}); `dispose()` removes only this listener. */
  onListChanged(listener: (...args: McpHostEvents['listChanged']) => void): Disposable
  /** Subscribes to `resourceUpdated` (see {@link McpHostEvents}); `dispose()` removes only this listener. */
  onResourceUpdated(listener: (...args: McpHostEvents['resourceUpdated']) => void): Disposable
  /** Subscribes to `channelMessage` (MCP Apps, see {@link McpHostEvents}); `dispose()` removes only this listener. */
  onChannelMessage(listener: (...args: McpHostEvents['channelMessage']) => void): Disposable
  /**
   * AHP `dispatchAction`: returns the echoed envelope (with `rejectionReason`
   * when refused). A failed `chat/toolCallComplete` for a call waiting in
   * `auth-required` cancels it (echoed on its chat channel); a successful one
   * is refused. `chat/inputAnswerChanged` and `chat/inputCompleted` answer an
   * open chat input request of this host (see {@link ChatInputCompletedAction});
   * echoed on its chat channel (on the session channel when no such request is open).
   * `origin` defaults to `{clientId: 'local', clientSeq: 0}`.
   * Throws a {@link HostError} `invalid_argument` for an action that is not an AHP action,
   * a `clientId` that is not a non-empty string or a `clientSeq` that is not a
   * non-negative safe integer (see {@link ActionOrigin.clientSeq}); `disposed`.
   */
  dispatch(
    action: ClientSessionAction | ChatToolCallCompleteAction | ChatInputAnswerChangedAction | ChatInputCompletedAction,
    origin?: Partial<ActionOrigin>,
  ): ActionEnvelope
  /**
   * AHP `authenticate`: pushes a bearer token for a protected resource this
   * host advertised in a live `authRequired` state (`state.resource.resource`).
   * Resolves `{}` once the server is `ready` with it. An empty token revokes.
   * Rejects with a {@link HostError}: `code: 'invalid_params'`, `rpcCode:
   * -32602` (InvalidParams; unknown resource; `data.resources` lists the
   * advertised ones) or `code: 'auth_required'`, `rpcCode: -32007`
   * (AuthRequired; the server refused the token, or `scopes` do not cover
   * `requiredScopes`; `data.resources`). `cancelled` / `timeout` from `options`
   * (see {@link RequestOptions}).
   */
  authenticate(params: AuthenticateParams, options?: RequestOptions): Promise<Record<string, never>>
  /**
   * Host-run OAuth sign-in (authorization code + PKCE S256, RFC 8707
   * `resource`, RFC 9207 `iss` check), all in Rust. The authorization URL
   * arrives as an `authorizationUrl` event (and through `openUrl`); the app
   * opens it, the browser is redirected to a one-shot listener on 127.0.0.1.
   * When the browser runs on another machine (VS Code Remote-SSH / WSL, a
   * container), the app hands the URL the browser landed on back with
   * {@link McpHost.completeAuthorization}; with
   * {@link AuthorizeOptions.redirectUri} no listener is opened and that is
   * the only way back. With {@link AuthorizeOptions.flow} `'deviceCode'` (or
   * `'auto'`) it runs the device authorization grant (RFC 8628) instead: the
   * event carries a {@link DeviceCodePrompt} (the user code to show) and the
   * host polls until the user approved. Rejects `not_supported` for
   * `'deviceCode'` when the authorization server advertises no
   * `device_authorization_endpoint`.
   * Resolves once the server is `ready`; tokens are refreshed automatically.
   * A denied consent, wrong `state` or timeout (default 5 min) rejects
   * (`auth_denied`, `auth_failed`, `timeout`) and leaves the server
   * `authRequired` with the reason as `description`. Never opens a browser itself.
   * A credential store that cannot be used ({@link McpHostOptions.credentials})
   * rejects `credential_store_failed`: read before the authorization URL is
   * given out, so an unreachable OS keychain fails before the user is sent
   * anywhere.
   * With the server's `oauth.grant` it runs that grant instead (client
   * credentials, enterprise-managed with `idToken`, JWT bearer with
   * `assertion`: see {@link OAuthClientOption}); DPoP is used whenever the
   * authorization server supports it. Rejects `auth_required` when the
   * server refuses the new token at once (it is `authRequired` again, e.g.
   * because its protected resource metadata now names another authorization
   * server: the next `authorize` signs in there, registering anew, SEP-2352).
   * `options.signal` ends the sign-in (`cancelled`, see {@link AuthorizeOptions.signal}).
   */
  authorize(serverId: string, options?: AuthorizeOptions): Promise<void>
  /**
   * Finishes the host-run sign-in ({@link McpHost.authorize}) of server
   * `serverId` with `callbackUrl`, the full URL the browser was redirected
   * to (`<redirect URI>?code=…&state=…&iss=…`, or `?error=…`): a URL the
   * user pasted because the browser could not reach the host's loopback
   * listener (the browser runs on another machine), or one the app's own
   * redirect URI received ({@link AuthorizeOptions.redirectUri}: a URI
   * handler, a web page of the app). The URL is checked exactly as a
   * redirect to the listener is (the `state` the sign-in sent, the RFC 9207
   * `iss` of the authorization server, then the code exchange with the PKCE
   * verifier), and it is the sign-in's one callback: the listener closes,
   * and whichever of the two came first wins. Resolves once the server is
   * `ready` (when `authorize` resolves), or rejects with the error
   * `authorize` rejects with.
   *
   * Rejects with a {@link HostError}:
   * - `not_found`: no such server, or no sign-in of it is waiting for a
   *   callback (none started, its authorization URL not handed out yet, a
   *   device grant, or its callback already came: a URL is taken once);
   * - `invalid_argument`: `callbackUrl` is not a string of at most 16 KiB,
   *   not an absolute URL, not a redirect to the sign-in's redirect URI
   *   (same scheme, host, port and path), or has neither `code` and `state`
   *   nor `error`; the sign-in goes on waiting;
   * - the sign-in's own outcome: `auth_failed` (a `state` this sign-in did
   *   not send, a wrong or missing required `iss`, a refused code
   *   exchange), `auth_denied` (an `error` callback such as
   *   `access_denied`, named in the message), `timeout`, `cancelled`,
   *   `auth_required`, `disposed`. These end the sign-in: the server stays
   *   `authRequired` with the reason as `description`, and the code is
   *   never redeemed after a wrong `state` or `iss`.
   *
   * No error carries the URL's query (the code). `options.signal` /
   * `timeoutMs` stop this wait only (`cancelled` / `timeout`): the sign-in
   * goes on (see {@link RequestOptions}).
   */
  completeAuthorization(serverId: string, callbackUrl: string, options?: RequestOptions): Promise<void>
  /** The session state, exactly as the AHP reducer made it from the emitted actions. */
  getState(): SessionState
  /**
   * The model tool catalogue: tools of every `ready` server (app-only tools and
   * tools its {@link ServerToolOptions} filter leaves out excluded). Records the
   * digests the caller has read (see {@link CallToolOptions}).
   */
  listTools(): HostTool[]
  /** What the catalogue normalized, cut or left out (also `filtered`), per listed server. */
  toolDiagnostics(): ToolDiagnostic[]
  /**
   * Switches one tool of a server on or off, like VS Code's per-tool toggle.
   * `tool` is the server's original name ({@link HostTool.toolName}), exact (no
   * glob). The switch wins over the server's `includeTools` / `excludeTools`
   * ({@link ServerToolOptions}), may name a tool the server does not list (yet),
   * and lasts while the server is configured: across reconnects, restarts and
   * MCP `notifications/tools/list_changed`, until {@link McpHost.remove}.
   * A tool switched off is out of {@link McpHost.listTools} and
   * `session/serverToolsChanged`, has a `filtered` {@link ToolDiagnostic} and is
   * refused by {@link McpHost.callTool} with `tool_disabled`.
   *
   * Returns whether the model catalogue changed; when it did (the server is
   * `ready` and lists the tool), the host has already emitted
   * `session/serverToolsChanged` (with `publishServerTools`) and `toolsChanged`
   * with `reason: 'filter'`. Throws a {@link HostError}: `not_found` (no such
   * server), `invalid_argument` (`serverId` or `tool` not a non-empty string, a
   * `tool` over 1 KiB, `enabled` not a boolean), `limit_exceeded` (50 000
   * tools of one server switched already), `disposed`.
   */
  setToolEnabled(options: SetToolEnabledOptions): boolean
  /**
   * Searches the model catalogue (deferred tool loading: search, then
   * {@link McpHost.getToolDefinitions}, then {@link McpHost.callTool}; see
   * the tools-and-calls guide). Each white-space separated word of `query`
   * (the first 16) is matched against every tool's original name (fuzzy,
   * weight 3), display title (fuzzy, weight 2) and description (substring,
   * weight 1), case-insensitively; a tool's score is the sum of its words'
   * best matches, and tools no word matches are left out. Best first; ties
   * keep {@link McpHost.listTools} order. An empty `query` lists the
   * catalogue in order (score 0). Only catalogue tools are found: never
   * app-only, task-required or filtered ones ({@link ServerToolOptions},
   * {@link McpHost.setToolEnabled}). Does not record a read (see
   * {@link CallToolOptions.digest}). Throws a {@link HostError}
   * `invalid_argument` (`query` not a string or over 1 KiB, `limit` not an
   * integer from 1 to 1000, more than 1000 `serverIds`), `disposed`.
   */
  searchTools(query: string, options?: SearchToolsOptions): ToolSearchResult[]
  /**
   * Every catalogue tool as a {@link ToolSummary} (no schemas), in
   * {@link McpHost.listTools} order: what a harness shows the model when it
   * loads definitions on demand. Does not record a read.
   */
  listToolSummaries(): ToolSummary[]
  /**
   * The {@link McpHost.listTools} entries of the tools named `names`
   * (model-safe names, {@link HostTool.name}), in the order of `names`.
   * A name not in the catalogue now (unknown, removed, filtered) is left
   * out, not an error: compare the result's names with yours. A repeated
   * name is given once. Records the catalogue as read, as
   * {@link McpHost.listTools} does, so later calls are checked against
   * these definitions. Throws a {@link HostError} `invalid_argument`
   * (`names` not an array of strings, more than 1000 names), `disposed`.
   */
  getToolDefinitions(names: string[]): HostTool[]
  /**
   * What server `serverId` said about itself at its last connection (name,
   * title, version, icons, `instructions`, declared capabilities, negotiated
   * protocol version); `null` before its first connection. Replaced on every
   * reconnect; kept while the server is stopped. With a
   * {@link McpHostOptions.policy} or {@link McpHostOptions.trust}, the
   * decision about the server is its `policy`
   * ({@link ServerPolicyDecision}); a server that never connected (denied,
   * refused, or waiting for the app's answer) gives `{policy}` alone
   * ({@link ServerPolicyInfo}). Throws `HostError` with
   * `not_found` (no such server), `invalid_argument`, `disposed`.
   */
  serverInfo(serverId: string): ServerInfo | ServerPolicyInfo | null
  /**
   * Replaces the server policy ({@link McpHostOptions.policy}) and applies
   * it at once: a server it now denies is stopped (its process gone, its
   * connection closed) and shown in `error` with `policy_denied`; a server
   * it denied before and now allows is started again (or `stopped` when it
   * is toggled off); the others keep running. Every later start is checked
   * against it. Each server's decision is published again when it changed
   * (`_meta["ahp-mcp-host/policy"]`, {@link ServerPolicyDecision}) with a
   * `host.policy` log record. A rule that cannot be compiled throws
   * {@link HostError} `invalid_argument` naming the field
   * (`policy.deny[2].url: …`) and changes nothing; also `disposed`.
   */
  setPolicy(policy: ServerPolicy): void
  /**
   * Forgets the remembered trust decisions ({@link McpHostOptions.trust})
   * about server `serverId`, or about every server when omitted, in
   * `dataDir` and in this host, like VS Code's "MCP: Reset Trust": the
   * server's next start asks the callback again. A running server keeps
   * running. Resolves the number of decisions forgotten. Rejects
   * `invalid_argument` (an empty id), `disposed`.
   */
  resetTrust(serverId?: string): Promise<number>
  /**
   * Calls a tool (MCP `tools/call`) with a unique progress token. Resolves
   * the `CallToolResult` (also when `isError`). Errors: `invalid_argument`,
   * `not_found`, `tool_disabled` (the server's tool filter leaves the tool out,
   * {@link ServerToolOptions}; `data: {serverId, toolName, reason}`; nothing is
   * sent), `stale_tool` (`data.reason: 'changed' | 'removed'`),
   * `server_not_ready`, `server_exited` (the connection closed), `timeout`
   * (`data.kind`), `cancelled`, `protocol_error` (`data: {code, data}` for a
   * JSON-RPC error; also a stdio response the host cannot decode, failed at
   * once wherever its `id` is in the line, a Streamable HTTP JSON body the
   * host cannot decode, and a Streamable HTTP response stream that closed
   * before the response while the server stays `ready`; a lone UTF-16
   * surrogate escape such as `"ab\ud83d"`, which a JS server writes when it
   * cuts a string mid-emoji, is read as U+FFFD over stdio and in SSE events
   * and fails only a JSON body), `auth_required`, `limit_exceeded`
   * (`maxResultBytes`, `maxJsonDepth`, `maxJsonProperties`, a stdio
   * message over 16 MiB, or a Streamable HTTP answer over the 16 MiB HTTP
   * response limit: a JSON body or one SSE event), `disposed`,
   * `url_elicitation_required` (below). Progress: {@link CallToolCommon.onProgress}.
   *
   * A call the server answers `-32042` "URL elicitation required" (SEP-1036)
   * shows the error's URL elicitations (an AHP tool call: chat input
   * requests with `url`; the URL handler, {@link ElicitationRegistration}),
   * waits until the server sends `notifications/elicitation/complete` for
   * each (within `maxTotalTimeoutMs`; `signal` ends the wait) and is sent
   * again once. It fails `url_elicitation_required`
   * ({@link UrlElicitationRequiredData}) when nobody can show them, the user
   * declines or cancels one, or the retry gets `-32042` again; a malformed
   * error (not `http(s)` URLs, more than 8) is `protocol_error`.
   *
   * Task-based tools (Tasks extension `io.modelcontextprotocol/tasks`,
   * SEP-2663; declared in the per-request capabilities of `tools/call` and
   * `tasks/*` to a 2026-07-28 server; the 2025-11-25 era has no SEP-2663,
   * nothing is declared there): when the server answers with a task,
   * the host polls `tasks/get` (at the server's `pollIntervalMs`, clamped to
   * 50 ms … 30 s; 1 s without a hint; each request bounded by `timeoutMs`,
   * the task by 24 h) and resolves the task's final `CallToolResult`. Each
   * new status or `statusMessage` reaches `onProgress` as `{progress: n,
   * message}` (`n` counts the updates, `message` is the `statusMessage`,
   * else the status) and, for an AHP tool call, `chat/toolCallContentChanged`.
   * The task's `inputRequests` are answered like MRTR input requests (the
   * `elicitation` / `sampling` / `roots` handlers; a form elicitation of an
   * AHP tool call also as a chat input request) and sent with
   * `tasks/update`. Aborting (`signal`, `timeoutMs` of the call itself)
   * sends `tasks/cancel` once and rejects `cancelled`; so does an AHP
   * client's failed `chat/toolCallComplete` for the running AHP tool call
   * (its echo is then the call's completion). The task of an AHP tool call
   * is recorded under `dataDir` (`.tasks/<host instance>.json`, mode 0600; ids, tool name,
   * `ttlMs`; never arguments, results or tokens) while it runs; a host
   * disposed mid-task leaves it recorded and the AHP tool call running, and
   * a host created later on the same `dataDir` (once the one that recorded
   * it no longer runs) follows it again once a
   * server with the same id is added and ready, then completes the AHP tool
   * call (or fails it `task_expired`; see docs/guide/tools-and-calls.md, "Tasks"). Errors of
   * a task: `task_failed` (`data: {code, data}`), `task_cancelled`,
   * `task_expired`. With `taskHandle: true` it resolves the
   * {@link McpTaskHandle} instead.
   */
  callTool(options: CallToolOptions & { taskHandle: true }): Promise<CallToolResult | McpTaskHandle>
  callTool(options: CallToolOptions): Promise<CallToolResult>
  /**
   * MCP `resources/list`, every page; `[]` without a request when the server
   * did not declare the `resources` capability. Caching (SEP-2549, all list
   * methods and `readResource`): a page or read result carrying `ttlMs` is
   * reused without a request for that many milliseconds (at most 24 h), until
   * a change notification of its kind (either era) drops it; private
   * (`cacheScope` not `"public"`) results are also dropped when the
   * connection's token is replaced. Errors: `not_found`,
   * `server_not_ready` (also from the moment a stop or crash starts closing
   * the connection), `server_exited` (the connection closed while the
   * request was in flight), `protocol_error`, `timeout`, `limit_exceeded`,
   * `auth_required`, `disposed`; `cancelled` / `timeout` from `options`
   * (see {@link RequestOptions}: the page in flight is cancelled upstream).
   */
  listResources(serverId: string, options?: RequestOptions): Promise<Resource[]>
  /** MCP `resources/templates/list`, every page; `[]` without `resources`. Errors as {@link McpHost.listResources}. */
  listResourceTemplates(serverId: string, options?: RequestOptions): Promise<ResourceTemplate[]>
  /**
   * MCP `resources/read`. Errors as {@link McpHost.listResources}, plus
   * `not_supported` (not sent) when the server did not declare `resources`;
   * an unknown resource is `not_found`, the server's answer in `data`
   * (`{code: -32602, data: {uri}}`, SEP-2164, MCP 2026-07-28; or the
   * 2025-era -32002).
   * An `input_required` answer (MRTR) goes through the request handlers,
   * as for `prompts/get` and tool calls.
   * `options.signal` aborts it as {@link CallToolCommon.signal} does a tool call
   * (code `cancelled`, `cause`: `signal.reason`); `options.timeoutMs` bounds it
   * (`timeout`, see {@link RequestOptions}).
   */
  readResource(serverId: string, uri: string, options?: RequestOptions): Promise<ReadResourceResult>
  /**
   * The skill entries (Skills extension, SEP-2640) of `serverId`, or of
   * every server when absent, as each listed them with `skills/list` (every
   * page, bounded) when it connected; nothing is sent, and no skill file is
   * ever read before {@link McpHost.loadSkill}. A server that did not declare
   * `io.modelcontextprotocol/skills` has none. Entries are kept per server:
   * two servers may serve the same URI. A broken entry is listed with its
   * `problem` and never hides the others. Throws {@link HostError}
   * `not_found` (no such server) or `disposed`.
   */
  listSkills(serverId?: string): SkillEntry[]
  /**
   * Loads skill `uri` of `serverId` (SEP-2640 "Integrity and Verification"):
   * its entry is the listed one (else `skills/get`); `SKILL.md` is read first
   * (`resources/read`), its size and `sha256:` digest checked against the
   * entry, its YAML frontmatter parsed (bounded) and compared field by field
   * with the entry's `frontmatter`; then every other listed file is read and
   * checked the same way. Any mismatch rejects `skill_verification_failed`
   * naming the file (`data: {serverId, uri, file, reason: 'size' | 'digest' |
   * 'frontmatter'}`) and no further file is read. Also `not_found` (no such
   * server, or it serves no skill at `uri`), `server_not_ready`,
   * `not_supported` (the server did not declare the extension; a skill
   * whose `resources` is `"dynamic"`: this host loads only skills with a
   * file manifest), `invalid_entry` (the entry breaks the spec's rules or
   * limits: 512 files, 16 MiB), and the errors of
   * {@link McpHost.readResource} for a file read. `options` as for
   * {@link McpHost.readResource}.
   */
  loadSkill(serverId: string, uri: string, options?: RequestOptions): Promise<LoadedSkill>
  /**
   * Follows updates of resource `uri` on `serverId`: each change arrives as
   * a `resourceUpdated` event. 2025 era: MCP `resources/subscribe` (MCP
   * 2025-11-25 "Resources › Subscriptions"); 2026-07-28: a
   * `subscriptions/listen` stream with `resourceSubscriptions: [uri]`,
   * reopened (bounded backoff) if it ends while the server is ready. The
   * subscription is kept across reconnects of the server (each new
   * connection subscribes again) until {@link McpHost.unsubscribeResource}
   * or the server is removed. Resolves once the server accepted
   * (acknowledged) it; subscribing again is a no-op.
   *
   * Errors: `invalid_argument` (empty `uri`, or longer than 8 KiB),
   * `not_found`, `server_not_ready`, `not_supported` (the server did not
   * declare `resources.subscribe`: nothing sent; or a 2026-07-28 server did
   * not acknowledge `uri`), `limit_exceeded` (more than 256 subscriptions on
   * one server), `protocol_error`, `timeout` (`limits.callTimeoutMs`),
   * `auth_required`, `disposed`; `cancelled` / `timeout` from `options` (the
   * subscription is given up: see {@link RequestOptions}).
   */
  subscribeResource(serverId: string, uri: string, options?: RequestOptions): Promise<void>
  /**
   * Stops following resource `uri` on `serverId`: no `resourceUpdated` for
   * it once this resolves. On a ready server, MCP `resources/unsubscribe`
   * (2025 era) or the stream is cancelled (2026-07-28); a `uri` not
   * subscribed is a no-op. Errors: `invalid_argument`, `not_found`,
   * `disposed`; 2025 era: those of `resources/unsubscribe` (`protocol_error`,
   * `timeout`), the subscription being dropped all the same; `cancelled` /
   * `timeout` from `options` (the request in flight is cancelled upstream).
   */
  unsubscribeResource(serverId: string, uri: string, options?: RequestOptions): Promise<void>
  /**
   * MCP Apps (option `mcpApps`): sends one MCP JSON-RPC request or
   * notification on an `mcp://` channel (`message.channel`: the
   * `McpServerCustomization.channel` of a ready server; AHP "MCP Servers ›
   * MCP Apps"). Returns at once; a request's response arrives as a
   * `channelMessage` event with the client's own `id` — exactly one per
   * request (none once the client cancelled it with
   * `notifications/cancelled`). A notification is never answered; a
   * refused one is logged (`warn`, target `host.mcpApp`, the server's id).
   *
   * Served: the union of the channel's `mcpApp.capabilities` —
   * `serverTools`: `tools/list`, `tools/call` (app-only tools included; not
   * an AHP chat tool call); `serverResources`: `resources/list`,
   * `resources/templates/list`, `resources/read`; `logging`:
   * `logging/setLevel` (forwarded) and the App's `notifications/message` (a
   * `log` event, target `host.mcpApp`, not sent to the server); `sampling`:
   * `sampling/createMessage` (answered by the `sampling` handler). With any
   * capability: `resources/read` of a `ui://` URI (the gate of
   * {@link McpHost.readAppResource}) and `notifications/cancelled` of the
   * channel's own requests (cancelled upstream). An `input_required` answer
   * (MRTR, 2026-07-28) goes through the request handlers.
   *
   * Error responses (`error.data.code`):
   * - `-32601` `not_supported`: a method outside that union, `initialize`,
   *   `notifications/initialized`, `server/discover`, methods whose state AHP
   *   mirrors (`tasks/*`, `notifications/tasks/*`, `notifications/progress`,
   *   `notifications/roots/list_changed`); everything on the channel of a
   *   server that hosts no Apps. The message names the method and the
   *   served methods.
   * - `-32000` `server_not_ready`: an unknown channel, a stale one (the
   *   server restarted: read `channel` again), a server that is not ready;
   *   nothing reaches any server.
   * - `-32600` `limit_exceeded`: the message is over `limits.maxChannelMessageBytes`
   *   (default 1 MiB of JSON), or `limits.maxChannelRequests` (default 16)
   *   requests are in flight on the channel.
   * - `-32600` `invalid_argument`: not JSON-RPC 2.0 (`jsonrpc` not `'2.0'`,
   *   no string `method`, an `id` that is not a string or number — then
   *   answered with `id: null` —, `params` not an object), or an id already
   *   in flight on the channel.
   * - `-32602` `invalid_argument`: `tools/call` of a tool whose
   *   `_meta.ui.visibility` lacks `'app'`.
   * - `-32602` `not_found` (`data.uri`): a `ui://` resource no tool of the
   *   server links from `_meta.ui.resourceUri` (not sent).
   * - `-32603` `protocol_error`: a `ui://` content item without the MIME type
   *   `text/html;profile=mcp-app` (the message names the type found), or a
   *   transport failure; `-32603` `limit_exceeded`: a result over
   *   `limits.maxResultBytes` (default 10 000 000 bytes), `maxJsonDepth`,
   *   `maxJsonProperties`, or a `ui://` resource over
   *   `limits.maxUiResourceBytes` (default 4 MiB); `-32603` `internal`: the
   *   `sampling` handler failed; `-32603` `server_exited`: the server's
   *   connection closed while the request was in flight (stop, exit, crash).
   * - `-32001` `timeout`: over `limits.channelRequestTimeoutMs` (default
   *   60 000 ms; the request is cancelled upstream).
   * - the server's own JSON-RPC errors pass through unchanged.
   *
   * Throws a {@link HostError}: `invalid_argument` only when `message` is
   * not an object or has no string `channel` (or cannot be serialized);
   * `disposed` after dispose.
   */
  sendChannelMessage(message: McpChannelMessage): void
  /**
   * MCP Apps (option `mcpApps`): the UI resource `uri` (`ui://…`) of server
   * `serverId` — MCP `resources/read` through the same gate as a `ui://`
   * read on the server's `mcp://` channel. Resolves the `ReadResourceResult`
   * untouched (each content item's `_meta.ui` — `csp`, `permissions`,
   * `domain`, `prefersBorder` — is the client's to enforce) only when a tool
   * of the server (app-only tools included) links `uri` from
   * `_meta.ui.resourceUri`, every content item has the MIME type
   * `text/html;profile=mcp-app`, and the contents' `text` / `blob` add up to
   * at most `limits.maxUiResourceBytes` (default 4 MiB).
   *
   * Errors: `not_supported` (the host was made without `mcpApps`; or the
   * server did not declare `resources`), `invalid_argument` (`serverId` or
   * `uri` not a non-empty string, or `uri` not a `ui://` URI), `not_found`
   * (no such server; no tool links `uri`, nothing sent; the server has no
   * such resource), `server_not_ready`, `protocol_error` (another MIME type,
   * named in the message; a JSON-RPC error), `limit_exceeded`
   * (`maxUiResourceBytes`, `maxResultBytes`), `timeout`
   * (`limits.callTimeoutMs`), `auth_required`, `disposed`; `cancelled` /
   * `timeout` from `requestOptions` (see {@link RequestOptions}).
   */
  readAppResource(options: { serverId: string; uri: string }, requestOptions?: RequestOptions): Promise<ReadResourceResult>
  /** MCP `prompts/list`, every page; `[]` without a request when the server did not declare `prompts`. Errors as {@link McpHost.listResources}. */
  listPrompts(serverId: string, options?: RequestOptions): Promise<Prompt[]>
  /**
   * MCP `prompts/get`. Errors as {@link McpHost.readResource} (`not_supported` without `prompts`);
   * `options.signal` aborts it the same way (code `cancelled`).
   */
  getPrompt(serverId: string, name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult>
  /**
   * MCP `completion/complete` (MCP 2025-06-18+ "Utilities › Completion"):
   * suggestions for one argument of a prompt (`ref: {type: 'ref/prompt',
   * name}`) or of a resource template's URI (`ref: {type: 'ref/resource',
   * uri}`), given what is typed so far (`argument.value`) and the arguments
   * already chosen (`context.arguments`). Resolves the server's
   * {@link CompleteResult} (at most 100 values).
   *
   * Errors: `invalid_argument` naming the field (`params.ref.type`, …);
   * `not_supported` (nothing sent) when the server did not declare the
   * `completions` capability; otherwise as {@link McpHost.readResource}
   * (`not_found`, `server_not_ready`, `protocol_error` also for a result that is
   * not a `CompleteResult` or has over 100 values, `timeout`, …);
   * `options.signal` aborts it (code `cancelled`).
   */
  complete(params: CompleteParams, options?: RequestOptions): Promise<CompleteResult>
  /**
   * Sets the level of the log messages server `serverId` sends (MCP
   * "Utilities › Logging", RFC 5424 levels); they arrive as `log` events
   * with `target: 'server.log'` and the server's own `serverLevel`.
   *
   * In the 2025 era this is MCP `logging/setLevel`. The level is remembered
   * for the server and set again on each new connection (reconnect,
   * restart, crash recovery) before its first `tools/list`; a failure then
   * is a `warn` log (target `host.logging`), never a failed start. MCP
   * 2026-07-28 has no `logging/setLevel` (SEP-2575): there nothing is sent
   * now, and every later request the app makes of that server (`callTool`,
   * lists, reads, `getPrompt`, `complete`) carries the level in
   * `_meta["io.modelcontextprotocol/logLevel"]`, the only way a 2026-07-28
   * server sends log messages.
   *
   * Errors: `invalid_argument` (`level` not one of the eight);
   * `not_supported` (nothing sent, nothing remembered) when the server did
   * not declare the `logging` capability; otherwise as
   * {@link McpHost.readResource}; a failed request leaves the level unset.
   */
  setLogLevel(serverId: string, level: LoggingLevel, options?: RequestOptions): Promise<void>
  /**
   * Stops every server (stdin close → SIGTERM → SIGKILL of each process
   * group; its stdout is read until it exits, so a server still writing
   * never gets `EPIPE`) and releases the host. Idempotent: every call
   * returns the same promise, which resolves once every server process is
   * gone ({@link McpHost.processCount} 0). Requests in flight reject with
   * {@link HostError} `disposed` at once; so does every later call. Actions
   * and log records the stop itself causes (a paused chat call's
   * completion, a server's last stderr lines) are still emitted.
   */
  dispose(): Promise<void>
  /**
   * Kills every server process group immediately. Synchronous, idempotent.
   * What was already queued for JS is delivered first (answers settle
   * their requests, actions and logs reach their listeners); every request
   * still in flight then rejects with {@link HostError} `disposed`, as does
   * every later call. Actions the disposal itself causes (a paused chat
   * call's completion) are still emitted.
   */
  disposeSync(): void
  /** Keep the process alive while the host lives (default). */
  ref(): this
  /** Let the process exit even though the host is alive. */
  unref(): this
  /** Number of live server process groups. */
  readonly processCount: number
  [Symbol.asyncDispose](): Promise<void>
  [Symbol.dispose](): void
}

/** Events of {@link McpHost}. */
export interface McpHostEvents {
  /**
   * One AHP action the host published, in its {@link ActionEnvelope}
   * (`serverSeq` increasing by one; `origin` on the echo of a client's
   * dispatch): apply it with the AHP reducers (`ahp-mcp-host/mirror`) to
   * keep a copy of the state. Envelopes arrive in `serverSeq` order; a
   * listener that throws does not stop the others.
   */
  action: [envelope: ActionEnvelope]
  /**
   * One {@link LogRecord} (`level`, `target` such as `server.stderr`,
   * `server.log` or `host.stdio`, `message`, `serverId`): a server's stderr
   * lines, its MCP `notifications/message`, and the host's own records.
   * Secrets are redacted before a record is made; records past
   * `MAX_OUTBOX_LOG_RECORDS` (10,000) while JS is behind are counted in one
   * `warn` record (target `host.events`) instead.
   */
  log: [record: LogRecord]
  /**
   * A host-run sign-in ({@link McpHost.authorize}) needs this URL opened in
   * a browser: the authorization URL, or for a device authorization grant
   * (RFC 8628) the verification URL (with the user code filled in when the
   * authorization server gives one), with `deviceCode`: what the user is
   * shown. Emitted once per sign-in.
   */
  authorizationUrl: [event: { serverId: string; url: string; deviceCode?: DeviceCodePrompt }]
  /** The model tool catalogue changed because of `serverId`; `tools` is the catalogue's size now. */
  toolsChanged: [event: { serverId: string; reason: 'ready' | 'listChanged' | 'stopped' | 'filter' | 'cached'; tools: number }]
  /**
   * A server's resource or prompt list changed: `notifications/resources/list_changed`
   * or `notifications/prompts/list_changed`, sent free-standing by a 2025-era
   * server, or on the host's `subscriptions/listen` stream by a 2026-07-28
   * server that declared `listChanged` (MCP 2026-07-28 "Subscriptions").
   * Cached list results of that kind are dropped first.
   */
  listChanged: [event: { serverId: string; list: 'resources' | 'prompts' }]
  /**
   * A resource subscribed with {@link McpHost.subscribeResource} changed
   * (`notifications/resources/updated`, either era); read it again with
   * {@link McpHost.readResource} (its cached read was dropped). `uri` is as
   * the server sent it.
   */
  resourceUpdated: [event: { serverId: string; uri: string }]
  /**
   * A message for an AHP client on an MCP Apps `mcp://` channel (option
   * `mcpApps`): the response to a request sent with
   * {@link McpHost.sendChannelMessage} (exactly one per request, none once
   * the client cancelled it), or a forwarded server notification —
   * `notifications/tools/list_changed` / `notifications/resources/list_changed`
   * (free-standing in the 2025 era, from the host's `subscriptions/listen`
   * stream in 2026-07-28) when the channel's `mcpApp.capabilities.serverTools`
   * / `.serverResources` has `listChanged: true`.
   */
  channelMessage: [message: McpChannelMessage]
}

export interface McpHostOptions {
  /** Session channel URI stamped on every envelope. Default `ahp-session:/mcp-host`. */
  session?: URI
  /** `clientInfo` sent in MCP `initialize`. Default `{name: 'ahp-mcp-host', version}`. */
  clientInfo?: { name: string; version: string; title?: string }
  /**
   * Parent of the per-plugin `PLUGIN_DATA` directories (created with mode
   * `0700` on Unix, never emptied). Default, per user: Linux
   * `$XDG_DATA_HOME/ahp-mcp-host`, else `~/.local/share/ahp-mcp-host`; macOS
   * `~/Library/Application Support/ahp-mcp-host`; Windows
   * `%LOCALAPPDATA%\ahp-mcp-host`. Only when no home directory is known:
   * `<os temp dir>/ahp-mcp-host-data`, with a `warn` log record (target
   * `host.config`). A VS Code extension passes `context.globalStorageUri.fsPath`.
   * The host's own files live in dot-named directories no plugin data
   * directory takes (and the files `protocol-eras.json` and
   * `mcp-trust.json`, the remembered {@link McpHostOptions.trust}
   * decisions: ids and digests, never a value, mode `0600`, used only
   * when the user's own and private): `.tasks/` (task records), `.tool-results/` (whole
   * results cut to {@link HostLimits.modelOutputMaxChars}, bounded) and
   * `.tool-cache/` (the last tool lists of lazy servers,
   * {@link ServerStartOptions.start}, bounded). On Unix those two folders
   * are used only when the user owns them: a looser mode (a folder made
   * `0777`) is set back to `0700`; another user's folder is not used (a
   * `warn` log, target `host.config`: the tool cache is then missing, a
   * spill file is not written); a cache file another user owns, or one
   * with group or other permission bits, is a missing cache.
   */
  dataDir?: string
  limits?: HostLimits
  /**
   * Base environment of stdio servers: `'inherit'` (default) passes the host's
   * environment; `'allowList'` passes only PATH, HOME, USER, LOGNAME, SHELL, TMPDIR/TMP/TEMP, LANG/LC_*, TZ, TERM
   * (and Windows basics). Configured `env` overlays it; PLUGIN_ROOT/PLUGIN_DATA are set last.
   */
  env?: 'inherit' | 'allowList'
  /**
   * Emit `session/serverToolsChanged` with the whole model catalogue (as AHP
   * `ToolDefinition`s with model-safe names; `_meta['ahp-mcp-host/source']`
   * is `{customizationId, toolName}`) whenever it changes. Default `true`.
   * A harness that merges MCP tools with its own tools publishes the merged
   * list itself and sets this to `false`.
   */
  publishServerTools?: boolean
  /**
   * Where OAuth tokens and client registrations persist: `'os'` (the OS
   * keychain), the app's {@link CredentialStore} (for example VS Code
   * `SecretStorage`), or memory (default; `undefined` or `null`). Key
   * format: `ahp-mcp-host/oauth/v1 <issuer> <resource>`; the value is JSON
   * with `client_id`, the token response (access/refresh token, expiry,
   * scopes), `granted_scopes`, `token_received_at` and `issuer`. With stored
   * tokens a new host connects without a browser. DPoP-bound tokens
   * (`token_type: "DPoP"`, RFC 9449) are bound to a key that lives only in
   * this host's memory: a new host's servers refuse them and it signs in
   * again. In a VS Code extension pass `context.secrets` as is.
   *
   * `'os'`: the OS keychain, used from Rust (tokens never pass through
   * JS): on Linux and the BSDs the Secret Service on the D-Bus session bus
   * (GNOME Keyring, KWallet, KeePassXC; the default collection), on macOS
   * the login keychain, on Windows the Credential Manager (generic
   * credentials). One entry per key: service `ahp-mcp-host`, account the
   * key (the Windows target name `<key>.ahp-mcp-host`), the JSON as UTF-8.
   * A value longer than one Windows credential takes (2560 bytes) is split
   * into entries `<key> #1` … `<key> #n` that the entry `<key>` names; a
   * value over 64 KiB is refused. The keychain is opened at its first use
   * (a sign-in, or a server asking for OAuth), never when the host is made.
   *
   * A store that cannot be used (no Secret Service on the session bus, a
   * locked or refusing keychain, no answer within 30 s; a method of the
   * app's store that throws) fails the step that needed it with
   * `credential_store_failed` naming the store (`credential store: OS
   * keychain (Secret Service) is not reachable: …`): `authorize()` rejects
   * before any authorization URL is given out, and a server whose stored
   * tokens cannot be read goes to `error` (`errorType`
   * `credential_store_failed`). Nothing falls back to memory or a file.
   */
  credentials?: CredentialStore | 'os'
  /** HTTPS URL of the app's OAuth Client ID Metadata Document (used when the AS supports CIMD). */
  clientMetadataUrl?: string
  /**
   * Fixed port for the loopback OAuth redirect listener; default random. A
   * server's {@link OAuthClientOption.callbackPort} wins.
   */
  oauthRedirectPort?: number
  /**
   * Answers to requests servers send to the client (MCP 2025-11-25 "Client
   * Features"). A capability is declared in `initialize` only when its handler
   * is given. Without one: elicitation is declined, sampling gets `-32601`,
   * `roots/list` returns no roots. A handler that throws answers `-32603`.
   * While a handler has not answered, the inactivity timeout (`timeoutMs`)
   * of that server's tool calls stands still and restarts when the answer is
   * sent; `maxTotalTimeoutMs` still holds. A request the server cancels
   * stops counting, and its handler's `context.signal` aborts.
   * An elicitation of an AHP tool call (form or URL mode) is also published
   * to AHP clients (see {@link ServerRequestContext.chatInput}).
   */
  handlers?: RequestHandlers
  /**
   * Declare the MCP elicitation capability, form and URL mode (`elicitation:
   * {form: {}, url: {}}`), even without an `elicitation` handler, so that
   * servers may ask and AHP clients answer the elicitations of AHP tool
   * calls (`chat/inputCompleted` through {@link McpHost.dispatch}); any other
   * elicitation is declined. A URL-mode one (SEP-1036) is an AHP
   * `ChatInputRequest` with `url` and no questions, its `message` the
   * server's followed by a blank line and `Site: <origin>`; answered
   * `accept` / `decline` / `cancel` alone. Default `false`. (Servers do not
   * send an elicitation the client did not declare, in either era.)
   */
  chatElicitation?: boolean
  /**
   * The AHP client declared `capabilities.mcpApps` in its `initialize`
   * (AHP "MCP Servers › MCP Apps"; MCP Apps is SEP-1865, the
   * `io.modelcontextprotocol/ui` extension). With `true` the host declares
   * the extension to every server (`mimeTypes: ['text/html;profile=mcp-app']`,
   * in `initialize` and on 2026-07-28 requests), publishes `mcpApp` and the
   * `mcp://` `channel` on server customizations, and carries `_meta.ui` on
   * the tool-call actions of App tools. Default `false`: no `mcpApp`, no
   * `channel`, App tool calls are ordinary tool calls.
   */
  mcpApps?: boolean
  /**
   * The host's roots from the start (MCP 2025-11-25 "Client Features ›
   * Roots"); see {@link McpHost.setRoots} for the rules. Giving it (even
   * `[]`) declares the `roots` capability with `listChanged: true`, also
   * without a `roots` handler, and `roots/list` answers these roots (the
   * `roots` handler is not called). Invalid roots make the constructor throw
   * a {@link HostError} (`invalid_argument`, `limit_exceeded`).
   */
  roots?: RootInput[]
  /**
   * The app's own proxy setting (like VS Code's `http.proxy`) for every HTTP
   * request of the host (Streamable HTTP servers, OAuth and metadata
   * fetches). A proxy URL (`'http://proxy.corp:3128'`; `'proxy.corp:3128'`
   * means `http://`; credentials as `http://user:pass@…`), or
   * `{url, noProxy}` with `noProxy` in `NO_PROXY` syntax. Given, it wins
   * over the environment: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and
   * `NO_PROXY` (either case) are then not read. Without it those variables
   * are honoured as curl reads them (lower case first; `ALL_PROXY` for both
   * schemes). `NO_PROXY` entries, comma-separated: `*` (no proxy at all), an
   * IP address or CIDR block (`10.0.0.0/8`), a domain matching itself and
   * its subdomains (`example.com` = `.example.com`), each optionally with
   * `:port` (then only that port). Loopback (`localhost`, `*.localhost`,
   * `127.0.0.0/8`, `::1`) is never proxied. `https` URLs go through a
   * `CONNECT` tunnel. The message of an error on a proxied request names the
   * proxy's origin (`… at https://mcp.example.com through proxy
   * http://proxy.corp:3128`), never its credentials. Not an `http(s)` URL
   * with a host, or another shape: the constructor throws {@link HostError}
   * `invalid_argument` (`options: proxy: …`).
   */
  proxy?: string | { url: string; noProxy?: string }
  /**
   * PEM text of extra trusted CA certificates (each entry one or more
   * `-----BEGIN CERTIFICATE-----` blocks), for servers, authorization
   * servers and proxies behind a private CA. Trusted besides the operating
   * system's trust store and the PEM file named by `NODE_EXTRA_CA_CERTS`
   * (read once, when the host is created; unreadable: a `warn` log record
   * and ignored, as Node does). Host names are always checked. A
   * certificate that fails makes the error say why: `unknown issuer`,
   * `expired`, `not valid yet`, `name mismatch`, with the server's origin.
   * An entry without a certificate, or with a block that is not a valid
   * X.509 `CERTIFICATE` (a key, a cut block): the constructor throws {@link HostError}
   * `invalid_argument` (`caCertificates[i]: no PEM certificate`,
   * `… block k of n is not a valid X.509 certificate (…)`, `… block k of
   * n is a PrivateKey, not a CERTIFICATE`, `… block k has no END line`;
   * `k` counts from 1). A `NODE_EXTRA_CA_CERTS` file with such a block, or
   * that is no regular file (a named pipe is never waited on), is a `warn`
   * log record and ignored.
   */
  caCertificates?: string[]
  /**
   * Dynamic headers for Streamable HTTP servers, like Claude Code's
   * `headersHelper` and Codex's `env_http_headers`: called at each connect
   * of such a server (`reason: 'connect'`), and once more when the server
   * answers that connect with 401 (`reason: 'unauthorized'`, e.g. to
   * rotate a token); a 401 on a ready connection reconnects the server
   * (so it is asked again) instead of waiting in `authRequired`, and an
   * AHP tool call paused on that 401 ends `server_restarted`. It answers the headers for that connection (laid
   * over the configured ones, a name replacing the configured one
   * whatever its case) or `undefined` / `null` for none. Bounded: an
   * answer later than 10 s fails the connect with `connect_failed`
   * (`src/limits.rs` `HEADER_PROVIDER_TIMEOUT_MS`), as do a throw (its
   * error is not shown), a value that is not an object of strings, or a
   * header the host refuses (named; same rules as configured headers).
   * The values are secrets: never in actions, logs, errors or `dataDir`.
   * `url` is the server's URL without userinfo, query and fragment. A
   * returned promise that nothing holds and that never settles can be
   * garbage-collected: the connect then fails at once (a provider waiting
   * on real I/O or a held resolver is kept).
   */
  headers?: (request: HeadersRequest) => Record<string, string> | undefined | null | Promise<Record<string, string> | undefined | null>
  /**
   * When a server that does not say ({@link ServerStartOptions.start}) starts:
   * `'eager'` (default: at once) or `'lazy'` (on its first call, its tools
   * published from the tool cache meanwhile). With many servers, `'lazy'` keeps
   * the host's start-up cost and resident memory to the servers in use.
   */
  start?: 'eager' | 'lazy'
  /**
   * The app's allow and deny rules for servers, as VS Code's
   * `chat.mcp.allowedServers` and Claude Code's `managed-mcp.json`
   * (`allowedMcpServers` / `deniedMcpServers`) have them: see
   * {@link ServerPolicy}. A server it denies is published in `error` with
   * `policy_denied` (the message naming the rule) and never spawns or
   * connects; each start (a start request, a restart, a lazy server's first
   * call) is checked again. Replace it with {@link McpHost.setPolicy}.
   * Default: no rule, every server may start. A rule that cannot be
   * compiled: the constructor throws `invalid_argument` naming the field
   * (`options.policy.deny[1].url: …`).
   */
  policy?: ServerPolicy
  /**
   * Trust on first use, as VS Code asks before a server's first start: see
   * {@link TrustCallback}. Called before the start of a server whose
   * configuration the app has not decided about (and again once that
   * configuration changes); its answer is remembered under `dataDir`
   * (`mcp-trust.json`) unless it says `remember: false`. Default: none,
   * every server is trusted (no question, nothing written).
   */
  trust?: TrustCallback
  /**
   * The default sandbox of every stdio server (issue 32; see
   * {@link SandboxOptions} for what it allows and what each platform
   * enforces): `false` (default: servers run with the user's rights unless
   * one asks, {@link ServerSandboxOptions.sandbox}), `true` (the built-in
   * profile: read the system folders, the plugin root and the runtime,
   * write `PLUGIN_DATA` and its temp folder, no network) or a
   * {@link SandboxOptions} profile. A server's own `sandbox` lays its fields
   * over this one; `sandbox: false` on a server opts it out. Remote servers
   * are never sandboxed (they do not run here). A malformed profile throws
   * `invalid_argument` naming the field (`options.sandbox.network: …`).
   */
  sandbox?: boolean | SandboxOptions
}

/**
 * Timeouts (ms), restart policy and size bounds; clamped to hard caps
 * (timeouts 1 ms … 24 h, ≤ 100 restarts, hard caps named per field).
 * Exceeding a size bound fails with `limit_exceeded`, naming the server and
 * the bound; a failed re-listing keeps the previous catalogue.
 */
export interface HostLimits {
  /** Spawn/connect + `initialize` budget per server. Default 30 000 ms. */
  startupTimeoutMs?: number
  /** Default inactivity timeout of `tools/call` (reset by progress); also each resources/prompts request and list page. Default 60 000 ms. */
  callTimeoutMs?: number
  /** Default absolute cap of one `tools/call`, from the call to its answer (the wait for a lazy server's start included); progress never extends it. Default 600 000 ms. */
  callMaxTotalMs?: number
  /** Pages of one list walk. Default 100 (hard cap 1 000). */
  maxListPages?: number
  /** Longest pagination cursor. Default 4 096 bytes (hard cap 16 KiB). */
  maxCursorBytes?: number
  /** Tools per server; more fails the listing. Default 5 000 (hard cap 50 000). */
  maxToolsPerServer?: number
  /** Items of one resources/prompts list walk. Default 10 000 (hard cap 100 000). */
  maxListItems?: number
  /** Longest tool name; longer tools are left out. Default 256 bytes (hard cap 1 KiB). */
  maxToolNameBytes?: number
  /** Longest description; longer ones are cut. Default 16 KiB (hard cap 64 KiB). */
  maxToolDescriptionBytes?: number
  /** Input + output schema of one tool; larger tools are left out. Default 256 KiB (hard cap 1 MiB). */
  maxToolSchemaBytes?: number
  /** All schemas of one server's listing; more fails the listing. Default 16 MiB (hard cap 64 MiB). */
  maxTotalSchemaBytes?: number
  /** One tool result, resource read, prompt or list, serialized. Default 10 000 000 bytes (hard cap 16 MiB). */
  maxResultBytes?: number
  /** Nesting depth of schemas and results. Default 64 (hard cap 128). */
  maxJsonDepth?: number
  /** Object members + array elements of one schema or result. Default 100 000 (hard cap 1 000 000). */
  maxJsonProperties?: number
  /**
   * Largest `_meta.ui` of an App tool carried on its AHP tool-call actions
   * (bytes of JSON, `mcpApps` only); a larger one is left off with a `warn`
   * log (target `host.apps`) naming the server and the tool. Default 16 KiB
   * (hard cap 256 KiB).
   */
  maxAppUiMetaBytes?: number
  /** Automatic restarts after crashes before staying in `error`. Default 3. */
  maxRestarts?: number
  /** First restart delay; doubles per consecutive crash. Default 1 000 ms. */
  restartBackoffMs?: number
  /** Restart delay cap. Default 30 000 ms. */
  restartBackoffMaxMs?: number
  /** Uptime after which the crash counter resets. Default 60 000 ms. */
  restartResetAfterMs?: number
  /** One message given to {@link McpHost.sendChannelMessage}, as JSON text (`channel` included). Default 1 MiB (hard cap 16 MiB). */
  maxChannelMessageBytes?: number
  /** Requests in flight on one `mcp://` channel; one more is refused. Default 16 (hard cap 1 024). */
  maxChannelRequests?: number
  /** Time one `mcp://` channel request may take, every `input_required` round included; then it is cancelled upstream. Default 60 000 ms. */
  channelRequestTimeoutMs?: number
  /** A `ui://` resource (`readAppResource`, `resources/read` on a channel): `text` / `blob` of all its contents, as sent. Default 4 MiB (hard cap 16 MiB). */
  maxUiResourceBytes?: number
  /**
   * Stdio servers starting at once, host-wide, from spawn until `ready` (or
   * the start failed). The others show `starting` and wait their turn in
   * the order they asked (first start, restart, start request); servers
   * already `ready` are usable meanwhile, and `stop` / `remove` / `dispose`
   * end a wait at once. Streamable HTTP servers do not wait. The wait does
   * not count toward `startupTimeoutMs`. Default 8 (hard cap 256).
   */
  maxConcurrentLaunches?: number
  /**
   * Largest plugin `mcp.json` read by {@link McpHost.addPlugin}; a larger file gives the plugin
   * load state `error` naming the file and this limit. Default 8 MiB (hard cap 64 MiB). Also the
   * most an import may read ({@link McpHost.importConfig}), the longest answer of its `resolve`
   * (a longer one gives that variable no value), and the most text its resolved servers may hold
   * together (a server past it is left out with an `invalid_entry` diagnostic naming this limit).
   */
  maxConfigFileBytes?: number
  /** Time reading a plugin's `mcp.json` may take; then its load state is `error` naming the file. Default 10 000 ms. */
  configReadTimeoutMs?: number
  /**
   * Time all the answers of {@link ImportConfigOptions.resolve} for one import may take together
   * (the variables are asked one after another); a variable not answered by then has no value (the
   * entries that need it are left out with an `invalid_entry` diagnostic saying so), and one asked
   * after it gets only an answer given at once. Default 300 000 ms.
   */
  importResolveTimeoutMs?: number
  /**
   * The model-facing output budget of an AHP chat tool call, in characters
   * (Unicode code points; about 4 make one model token; an emoji outside the
   * BMP is 1 here, 2 in a JS string's `length`): at most this much of a
   * result goes into `chat/toolCallComplete`, which AHP clients hand to the
   * model. Text past it is cut at a character boundary and followed by a
   * marker text block `[… <n> of <total> characters left out (<what>); the
   * whole result is in <file URI>]` and an AHP `resource` block linking that
   * file (`contentType: 'application/json'`, `sizeHint` in bytes). Binary
   * content (`image`, `audio`, embedded resources) is never cut or inlined
   * past the budget: a block that does not fit whole is left out, as is a
   * `structuredContent` whose JSON does not fit; an `isError` result's
   * `error.message` is cut to the budget too. An empty text block counts as 1. Every block of a result shares
   * one budget, in order; the marker and link come on top of it.
   *
   * The whole result (the MCP `CallToolResult` JSON, with every value the host
   * keeps secret `[redacted]`, as in the chat state) is kept in a private file
   * in `<dataDir>/.tool-results/` (directory `0700`, file `0600`, named after
   * the `toolCallId` plus 16 random hex digits), at most 20 MiB (a larger
   * result is not kept, and the marker says so); each write removes the files
   * older than 7 days and, oldest first, those past 1 000 files or 256 MiB in
   * all. A file that cannot be written never fails the call: the marker says
   * `the whole result was not kept: <why>` and a `warn` log (target
   * `host.tools`) says so. The {@link McpHost.callTool} result, and a call
   * without `chat`, are never cut.
   *
   * Per server: {@link ServerToolOptions.modelOutputMaxChars}; per call:
   * {@link CallToolCommon.modelOutputMaxChars}; the call's own wins, then the
   * server's, then this. Default 100 000 (Claude Code's default MCP output
   * limit of 25 000 tokens), clamped to 1 … 16 Mi (hard cap 16 777 216).
   */
  modelOutputMaxChars?: number
  /**
   * Idle time after which a lazy server ({@link ServerStartOptions.start}) is
   * stopped: no request in flight and none begun for this long. Its tools stay
   * published and the next call starts it again. `0`: never. A server's own
   * {@link ServerStartOptions.idleStopMs} wins. Default 600 000 ms (10 minutes).
   */
  idleStopMs?: number
  /**
   * Time the {@link McpHostOptions.trust} callback may take to answer; then
   * the start is refused with `trust_failed` (the server `stopped`, nothing
   * remembered) and the question withdrawn (its `signal` aborts). Default
   * 300 000 ms (5 minutes).
   */
  trustTimeoutMs?: number
}

// ─── AHP common ──────────────────────────────────────────────────────────────

/** A URI string (`file:///…`, `https://…`, `ahp-session:/…`). */
export type URI = string

/** Zero-based position; `character` counts UTF-16 code units (as LSP). */
export interface TextPosition {
  line: number
  character: number
}

/** A span inside a text document, e.g. a server entry inside `mcp.json`. */
export interface TextRange {
  start: TextPosition
  end: TextPosition
}

/** AHP `ErrorInfo`. `errorType` is one of this host's {@link HostErrorCode}s. */
export interface ErrorInfo {
  errorType: string
  message: string
  stack?: string
  _meta?: Record<string, unknown>
}

/** AHP 1.0 customization enablement decision (most specific first). */
export type CustomizationEnablement =
  | { kind: 'session'; enabled: boolean }
  | { kind: 'workspace'; uri: URI; enabled: boolean }
  | { kind: 'global'; enabled: boolean }

// ─── MCP server state (AHP `McpServerState`) ─────────────────────────────────

export interface McpServerStartingState {
  kind: 'starting'
  /**
   * True while the server's start holds back new messages (a `required`
   * server, {@link ServerStartOptions}); `false` once a client backgrounded it.
   */
  blocking?: boolean
}
export interface McpServerReadyState {
  kind: 'ready'
}
/** RFC 9728 protected resource metadata (subset). */
export interface ProtectedResourceMetadata {
  resource: URI
  authorization_servers?: URI[]
  scopes_supported?: string[]
  [key: string]: unknown
}
export interface McpServerAuthRequiredState {
  kind: 'authRequired'
  reason: 'required' | 'expired' | 'insufficientScope'
  resource: ProtectedResourceMetadata
  requiredScopes?: string[]
  description?: string
  oauthClient?: { clientId: string; [key: string]: unknown }
}
export interface McpServerErrorState {
  kind: 'error'
  error: ErrorInfo
}
export interface McpServerStoppedState {
  kind: 'stopped'
}
/** Runtime status of an MCP server (AHP 1.0 `McpServerState`). */
export type McpServerState =
  | McpServerStartingState
  | McpServerReadyState
  | McpServerAuthRequiredState
  | McpServerErrorState
  | McpServerStoppedState

// ─── Customizations ──────────────────────────────────────────────────────────

/** AHP `McpServerCustomization`. Ids: `<plugin>/<server>` for plugin children, `<name>` top-level. */
export interface McpServerCustomization {
  type: 'mcpServer'
  id: string
  /** Declaration source: the `mcp.json` file URI (plugin child), or the URL / root URI (top-level). */
  uri: URI
  name: string
  /** Span of the entry inside `uri` (plugin children). */
  range?: TextRange
  enablement?: CustomizationEnablement[]
  state: McpServerState
  /**
   * The server's `mcp://` side channel (AHP "MCP Apps › mcp:// channel";
   * host option `mcpApps` only). Present exactly while `state` is
   * `ready`: published with that `session/mcpServerStateChanged`, and
   * cleared by every other state (stop, crash, error, restart, toggle off,
   * `authRequired`, removal), whose action omits it. Opaque
   * (`mcp:/<session>/<server id>/<n>`), stable while one connection lives,
   * new after every restart; traffic for an earlier URI never reaches a
   * later connection. Every ready server has one; a server without
   * {@link McpServerCustomization.mcpApp} serves nothing on it.
   */
  channel?: URI
  icons?: unknown[]
  /**
   * MCP Apps support (host option `mcpApps` only): present when the server
   * can host Apps (it declares the `io.modelcontextprotocol/ui` extension,
   * or one of its tools links a `ui://` resource from `_meta.ui.resourceUri`),
   * published with `session/customizationUpdated` when it becomes `ready`
   * (before the state that carries {@link McpServerCustomization.channel}),
   * re-published when a tools `list_changed` re-list or a restart changes
   * it, and kept while the server is not ready.
   */
  mcpApp?: McpServerCustomizationApps
  _meta?: Record<string, unknown>
}

/** AHP `McpServerCustomizationApps`: what a client needs to render the MCP Apps of one server. */
export interface McpServerCustomizationApps {
  /** Passed through into the `hostCapabilities` of the View's `ui/initialize` response. */
  capabilities: AhpMcpUiHostCapabilities
}

/**
 * AHP `AhpMcpUiHostCapabilities`: the server-derived subset of the MCP Apps
 * `HostCapabilities` (SEP-1865) this host serves on the server's
 * {@link McpServerCustomization.channel}. A member is present only when the
 * host really serves it; `openLinks`, `downloadFile`, `sandbox` and
 * `experimental` are the rendering client's to decide.
 */
export interface AhpMcpUiHostCapabilities {
  /**
   * `tools/list` and `tools/call` are proxied to the server (it declares
   * `tools`); `listChanged: true` when it declares `tools.listChanged`, and
   * then `notifications/tools/list_changed` is forwarded.
   */
  serverTools?: {
    /** The server's `notifications/tools/list_changed` is forwarded on the channel. */
    listChanged?: boolean
  }
  /**
   * `resources/list`, `resources/templates/list` and `resources/read` are
   * proxied (the server declares `resources`); `listChanged` as for tools.
   */
  serverResources?: {
    /** The server's `notifications/resources/list_changed` is forwarded on the channel. */
    listChanged?: boolean
  }
  /** The server declares `logging`: `logging/setLevel` is proxied and the App's `notifications/message` accepted. */
  logging?: Record<string, never>
  /** The app registered a `sampling` handler ({@link RequestHandlers.sampling}): `sampling/createMessage` is served by it. */
  sampling?: {
    /** SEP-1577 `tools` / `toolChoice` / `tool_use` content is accepted (never advertised to Apps by this host). */
    tools?: Record<string, never>
  }
}

/** Load state of a container (AHP `CustomizationLoadState`). */
export type CustomizationLoadState =
  | { kind: 'loading' }
  | { kind: 'loaded' }
  /** Some `mcp.json` entries were invalid and skipped; `message` names each server and field. */
  | { kind: 'degraded'; message: string }
  /** `mcp.json` failed top-level validation; `message` names the file, `line:column` and the rule. */
  | { kind: 'error'; message: string }

/**
 * AHP `SkillCustomization`: a skill an MCP server serves (Skills extension,
 * SEP-2640), published from the server's `skills/list` after it connects
 * (see {@link McpHost.listSkills}). Where it sits: a child of the
 * {@link PluginCustomization} that declared the server (after its server
 * children), or of the server's {@link DirectoryCustomization} skills
 * container when the server is top-level. Only loadable entries are
 * published (valid, with a file manifest; not `"dynamic"` ones). Clients
 * cannot toggle it (`session/customizationToggled` is rejected).
 */
export interface SkillCustomization {
  type: 'skill'
  /** `<server id>/skill:<SKILL.md uri>`: the skill's identity is the server id AND the URI. */
  id: string
  /** The skill's `SKILL.md` URI (e.g. `skill://pdf-processing/SKILL.md`). */
  uri: URI
  /** The frontmatter `name`; the skill path (`acme/billing/refunds`) when two skills of the server share a name. */
  name: string
  /** The frontmatter `description`. */
  description?: string
  /** `true` when the frontmatter says `disable-model-invocation: true`. */
  disableModelInvocation?: boolean
  /** `true` when the frontmatter says `user-invocable: false`. */
  disableUserInvocation?: boolean
  /** Absent: enabled (this host never sets it). */
  enabled?: boolean
  icons?: unknown[]
  range?: TextRange
  /** `"ahp-mcp-host/skill"`: the server id and the `SKILL.md` URI. */
  _meta?: { 'ahp-mcp-host/skill'?: { serverId: string; uri: string }; [key: string]: unknown }
}

/**
 * AHP `DirectoryCustomization`: the skills container of a top-level MCP
 * server (an `McpServerCustomization` has no children). Id `<server
 * id>/skills`, the server's `uri`, `contents: 'skill'`, `writable: false`,
 * `_meta["ahp-mcp-host/skillsOf"]` the server id. Published when the server
 * first lists a loadable skill, removed when it lists none and with the server.
 */
export interface DirectoryCustomization {
  type: 'directory'
  id: string
  uri: URI
  name: string
  enabled: boolean
  contents: 'skill'
  writable: boolean
  load?: CustomizationLoadState
  children?: SkillCustomization[]
  clientId?: string
  icons?: unknown[]
  range?: TextRange
  _meta?: { 'ahp-mcp-host/skillsOf'?: string; [key: string]: unknown }
}

/** AHP `PluginCustomization` published for each `addPlugin`. */
export interface PluginCustomization {
  type: 'plugin'
  id: string
  uri: URI
  name: string
  load?: CustomizationLoadState
  /** Its MCP servers, then the skills those servers serve ({@link SkillCustomization}). */
  children?: Array<McpServerCustomization | SkillCustomization>
  enablement?: CustomizationEnablement[]
  version?: string
  clientId?: string
  icons?: unknown[]
  range?: TextRange
  _meta?: Record<string, unknown>
}

/** Top-level customizations this host publishes. */
export type Customization = PluginCustomization | McpServerCustomization | DirectoryCustomization

/** AHP 1.0 `SessionState` (the fields this host maintains are typed). */
export interface SessionState {
  provider: string
  title: string
  /** `SessionStatus` bit flags (1 idle, 2 error, 8 in progress, 24 input needed). */
  status: number
  lifecycle: 'creating' | 'ready' | 'failed'
  activeClients: unknown[]
  chats: unknown[]
  customizations?: Customization[]
  serverTools?: ToolDefinition[]
  inputNeeded?: unknown[]
  [key: string]: unknown
}

// ─── Actions and envelopes ───────────────────────────────────────────────────

/** `session/customizationUpdated` (host): upsert a top-level customization, children included. */
export interface SessionCustomizationUpdatedAction {
  type: 'session/customizationUpdated'
  customization: Customization
}
/** `session/customizationRemoved` (host). */
export interface SessionCustomizationRemovedAction {
  type: 'session/customizationRemoved'
  id: string
}
/** `session/mcpServerStateChanged` (host): authoritative runtime state; omitted `channel` clears it. */
export interface SessionMcpServerStateChangedAction {
  type: 'session/mcpServerStateChanged'
  id: string
  state: McpServerState
  /** With `mcpApps`: the server's new `mcp://` channel, on every `ready` state and only there (see {@link McpServerCustomization.channel}). */
  channel?: URI
}
/** `session/customizationToggled` (client): replaces `enablement`; the host stops/starts servers. */
export interface SessionCustomizationToggledAction {
  type: 'session/customizationToggled'
  id: string
  enablement: CustomizationEnablement[]
}
/** `session/mcpServerStartRequested` (client): start or restart. */
export interface SessionMcpServerStartRequestedAction {
  type: 'session/mcpServerStartRequested'
  id: string
}
/** `session/mcpServerStopRequested` (client). */
export interface SessionMcpServerStopRequestedAction {
  type: 'session/mcpServerStopRequested'
  id: string
}
/** `session/mcpServerBackgroundRequested` (client): stop blocking on a starting server. */
export interface SessionMcpServerBackgroundRequestedAction {
  type: 'session/mcpServerBackgroundRequested'
  id: string
}

/** `session/serverToolsChanged` (host; option `publishServerTools`): the whole model catalogue (full replacement). */
export interface SessionServerToolsChangedAction {
  type: 'session/serverToolsChanged'
  tools: ToolDefinition[]
}

/** AHP `McpAuthRequirement`: the OAuth challenge of a step-up (no token). */
export interface McpAuthRequirement {
  reason: 'required' | 'expired' | 'insufficientScope'
  resource: ProtectedResourceMetadata
  requiredScopes?: string[]
  description?: string
  oauthClient?: Record<string, unknown>
}

/**
 * `session/inputNeededSet` (host): a chat tool call waits for a token (kind
 * `toolAuthentication`; resolve with {@link McpHost.authenticate}), or for
 * the answer to a form elicitation of the server (kind `chatInput`; answer
 * with `chat/inputCompleted` through {@link McpHost.dispatch}).
 */
export interface SessionInputNeededSetAction {
  type: 'session/inputNeededSet'
  request:
    | {
      kind: 'toolAuthentication'
      /** `toolAuthentication:<chat>:<turnId>:<toolCallId>`. */
      id: string
      chat: URI
      turnId: string
      toolCall: Record<string, unknown> & { status: 'auth-required'; toolCallId: string; auth: McpAuthRequirement }
    }
    | {
      kind: 'chatInput'
      /** `chatInput:<chat>:<request.id>`. */
      id: string
      /** Where the answer goes (`chat/inputCompleted`). */
      chat: URI
      request: ChatInputRequest
    }
}
/** `session/inputNeededRemoved` (host). */
export interface SessionInputNeededRemovedAction {
  type: 'session/inputNeededRemoved'
  id: string
}

/** AHP `ToolResultContent` blocks the host produces from MCP content. */
export type ToolResultContent =
  | { type: 'text'; text: string }
  | { type: 'embeddedResource'; data: string; contentType: string }
  | { type: 'resource'; uri: URI; contentType?: string; sizeHint?: number }
  | ({ type: string } & Record<string, unknown>)

/**
 * AHP `ToolCallResult`. From an MCP result: text → `text`; image, audio and
 * embedded resources → `embeddedResource` (text resources base64-encoded);
 * `resource_link` → `resource`; `structuredContent` carried over; `isError`
 * → `success: false`, `error: {code: 'tool_error', message}`. Host errors
 * (protocol error, timeout, cancellation…) → `success: false`, `error:
 * {code: HostErrorCode, message, data?}` (a JSON-RPC error's `{code, data}` in `data`).
 */
export interface ToolCallResult {
  success: boolean
  pastTenseMessage: string
  content?: ToolResultContent[]
  structuredContent?: Record<string, unknown>
  error?: { code: string; message: string; data?: unknown }
}

/** `chat/toolCallContentChanged` (host, chat channel): progress as one text block; raw numbers in `_meta.progress`. */
export interface ChatToolCallContentChangedAction {
  type: 'chat/toolCallContentChanged'
  turnId: string
  toolCallId: string
  content: ToolResultContent[]
  /** `ui`: an App tool call's `_meta.ui` (with `mcpApps`; see {@link CallToolCommon.chat}). */
  _meta?: { progress: { progress: number; total?: number | null; message?: string | null }; ui?: Record<string, unknown> }
}
/** `chat/toolCallAuthRequired` (host, chat channel). */
export interface ChatToolCallAuthRequiredAction {
  type: 'chat/toolCallAuthRequired'
  turnId: string
  toolCallId: string
  auth: McpAuthRequirement
  /** An App tool call's `{ui}` (with `mcpApps`; see {@link CallToolCommon.chat}). */
  _meta?: { ui: Record<string, unknown> }
}
/** `chat/toolCallAuthResolved` (host, chat channel): the call resumes (the MCP request is retried once). */
export interface ChatToolCallAuthResolvedAction {
  type: 'chat/toolCallAuthResolved'
  turnId: string
  toolCallId: string
  /** An App tool call's `{ui}` (with `mcpApps`; see {@link CallToolCommon.chat}). */
  _meta?: { ui: Record<string, unknown> }
}
/**
 * `chat/toolCallComplete`: emitted by the host when a chat call ends; a
 * client may dispatch it (failed) to cancel a call waiting in `auth-required`.
 */
export interface ChatToolCallCompleteAction {
  type: 'chat/toolCallComplete'
  turnId: string
  toolCallId: string
  result: ToolCallResult
  requiresResultConfirmation?: boolean
  /** From the host: an App tool call's `{ui}` (with `mcpApps`; see {@link CallToolCommon.chat}). */
  _meta?: Record<string, unknown>
}

// ─── Chat input requests (form elicitations of AHP tool calls) ──────────────

/** A choice of a select question: `id` is the MCP enum value. */
export interface ChatInputOption {
  id: string
  label: string
  description?: string
  /** Set on the option that is the schema's `default`. */
  recommended?: boolean
}

/**
 * One question of a chat input request: one per property of the
 * elicitation's `requestedSchema`, in the order the server sent them; `id`
 * is the property name, `message` its `description` (else `title`, else
 * name), `required` whether `required` lists it.
 */
export type ChatInputQuestion =
  | { kind: 'text'; id: string; title?: string; message: string; required?: boolean; format?: string; min?: number; max?: number; defaultValue?: string }
  | { kind: 'number' | 'integer'; id: string; title?: string; message: string; required?: boolean; min?: number; max?: number; defaultValue?: number }
  | { kind: 'boolean'; id: string; title?: string; message: string; required?: boolean; defaultValue?: boolean }
  | { kind: 'single-select'; id: string; title?: string; message: string; required?: boolean; options: ChatInputOption[]; allowFreeformInput?: boolean }
  | { kind: 'multi-select'; id: string; title?: string; message: string; required?: boolean; options: ChatInputOption[]; allowFreeformInput?: boolean; min?: number; max?: number }

/** The value of one answer: its `kind` must fit the question (text, number/integer, boolean, single-select → `selected`, multi-select → `selected-many`). */
export type ChatInputAnswerValue =
  | { kind: 'text'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'selected'; value: string; freeformValues?: string[] }
  | { kind: 'selected-many'; value: string[]; freeformValues?: string[] }

/** An answer: `draft` and `submitted` answers both count at completion; `skipped` leaves the field out. */
export type ChatInputAnswer =
  | { state: 'draft' | 'submitted'; value: ChatInputAnswerValue }
  | { state: 'skipped'; freeformValues?: string[] }

/** AHP `ChatInputRequest` for an MCP form elicitation: `id` is `<toolCallId>/elicitation/<n>`, `message` the elicitation's. */
export interface ChatInputRequest {
  id: string
  message?: string
  questions?: ChatInputQuestion[]
  answers?: Record<string, ChatInputAnswer>
}

/** `chat/inputRequested` (host, chat channel): the input request part appears in the chat's active turn. */
export interface ChatInputRequestedAction {
  type: 'chat/inputRequested'
  request: ChatInputRequest
}

/**
 * `chat/inputAnswerChanged`: a client syncs one answer draft (`answer`
 * absent: removes it) of an open input request; echoed on its chat. Refused
 * for a request that is not open or a question the form does not have.
 */
export interface ChatInputAnswerChangedAction {
  type: 'chat/inputAnswerChanged'
  requestId: string
  questionId: string
  answer?: ChatInputAnswer
}

/**
 * `chat/inputCompleted`. Dispatched by a client: answers an open input
 * request (`accept` with the synced drafts replaced by `answers`; `decline`;
 * `cancel`), echoed on its chat, then `session/inputNeededRemoved`; the
 * server gets the MCP `ElicitResult` and the app's `elicitation` handler, if
 * still running, is withdrawn. Refused (`rejectionReason`, the request stays
 * open) when the request is not open, or accepted answers do not fit the
 * schema: a value of the wrong kind, an option that is not in the enum, an
 * unknown question, a missing required field (after the schema's defaults,
 * SEP-1034). Emitted by the host (no `origin`): the app's handler answered
 * first (its action; its content as `submitted` answers), or the request was
 * withdrawn (`cancel`: the call ended or the server cancelled the request).
 */
export interface ChatInputCompletedAction {
  type: 'chat/inputCompleted'
  requestId: string
  response: 'accept' | 'decline' | 'cancel'
  answers?: Record<string, ChatInputAnswer>
}

/** Actions a client may pass to {@link McpHost.dispatch}. */
export type ClientSessionAction =
  | SessionCustomizationToggledAction
  | SessionMcpServerStartRequestedAction
  | SessionMcpServerStopRequestedAction
  | SessionMcpServerBackgroundRequestedAction

/** Every action this host emits: its own (session and chat channels), and echoes of client dispatches. */
export type HostAction =
  | SessionCustomizationUpdatedAction
  | SessionCustomizationRemovedAction
  | SessionMcpServerStateChangedAction
  | SessionServerToolsChangedAction
  | SessionInputNeededSetAction
  | SessionInputNeededRemovedAction
  | ChatToolCallContentChangedAction
  | ChatToolCallAuthRequiredAction
  | ChatToolCallAuthResolvedAction
  | ChatToolCallCompleteAction
  | ChatInputRequestedAction
  | ChatInputAnswerChangedAction
  | ChatInputCompletedAction
  | ClientSessionAction

/** Who dispatched an echoed action. */
export interface ActionOrigin {
  clientId: string
  /**
   * The client's sequence number, echoed exactly: a non-negative safe integer
   * (0 to 2^53 − 1, `Number.isSafeInteger`). `dispatch` refuses anything else
   * (NaN, ±Infinity, fractions, negatives, larger numbers, non-numbers) with
   * `invalid_argument` naming `origin.clientSeq`; it is never rounded or clamped.
   */
  clientSeq: number
}

/** AHP 1.0 `ActionEnvelope`. `serverSeq` starts at 1 and has no gaps. */
export interface ActionEnvelope<A = HostAction> {
  channel: URI
  serverSeq: number
  action: A
  /** Present on echoes of client dispatches. */
  origin?: ActionOrigin
  /** Present when the host refused a client dispatch (the change was not applied). */
  rejectionReason?: string
}

// ─── Tools ───────────────────────────────────────────────────────────────────

/** AHP `ToolDefinition`. */
export interface ToolDefinition {
  name: string
  title?: string
  description?: string
  inputSchema?: { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown }
  outputSchema?: { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown }
  annotations?: {
    title?: string
    readOnlyHint?: boolean
    destructiveHint?: boolean
    idempotentHint?: boolean
    openWorldHint?: boolean
  }
  /**
   * MCP 2025-11-25 "Tools › Tool" `execution`, as the server sent it.
   * `taskSupport` (default `'forbidden'`): whether the tool may or must be
   * called as a task-augmented `tools/call`. The host does not send task
   * augmentation (`params.task`), so a `'required'` tool is not in
   * {@link McpHost.listTools} (an `omitted` {@link ToolDiagnostic} says
   * why); `'optional'` tools are listed and called as ordinary requests.
   */
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required'; [key: string]: unknown }
  _meta?: Record<string, unknown>
}

/**
 * A catalogue entry of {@link McpHost.listTools}.
 *
 * `name` is model-safe: `mcp__<serverId>__<toolName>` with every character
 * outside `[A-Za-z0-9_-]` replaced by `_`; when that is longer than 64
 * characters or equals another entry's name, it is cut to 53 characters and
 * `_<10 hex>` (SHA-256 of `serverId \0 toolName`) is appended. Names are
 * deterministic across restarts. `inputSchema` is always an object schema
 * (normalized; see {@link ToolDiagnostic}).
 */
export interface HostTool extends ToolDefinition {
  inputSchema: { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown }
  /** The owning `McpServerCustomization` id (AHP `ToolCallContributor.customizationId`). */
  customizationId: string
  /** The tool's name exactly as the server listed it (byte for byte). */
  toolName: string
  /** 16 hex characters; changes whenever the definition does (see {@link CallToolOptions.digest}). */
  digest: string
}

/** Options of {@link McpHost.searchTools}. */
export interface SearchToolsOptions {
  /** Most results, 1 to 1000; default 20. */
  limit?: number
  /** Only tools of these servers (customization ids; an id of no server matches nothing). */
  serverIds?: string[]
}

/**
 * A catalogue tool without its schemas ({@link McpHost.listToolSummaries},
 * {@link McpHost.searchTools}).
 */
export interface ToolSummary {
  /** Model-safe name: the {@link HostTool.name} to pass to {@link McpHost.getToolDefinitions} and {@link McpHost.callTool}. */
  name: string
  /** Display title: `title`, else `annotations.title`. */
  title?: string
  /** The description's first non-blank line, trimmed, at most 200 characters (a cut one ends with `…`). */
  description?: string
  /** The owning `McpServerCustomization` id. */
  customizationId: string
  /** The tool's name exactly as the server listed it. */
  toolName: string
  /** The {@link HostTool.digest} of the full definition. */
  digest: string
  /**
   * Estimated size of the full definition ({@link HostTool}) in model
   * tokens: the bytes of its JSON text divided by 4, rounded up. A rule of
   * thumb for budgeting, not a tokenizer's count.
   */
  estimatedTokens: number
}

/** A {@link McpHost.searchTools} result. */
export interface ToolSearchResult extends ToolSummary {
  /** Higher is better; comparable only within one search (0 for an empty query). */
  score: number
}

/**
 * What the host changed or left out when it built the catalogue of one
 * server's `tools/list` ({@link McpHost.toolDiagnostics}; each is also a
 * `warn` log record, target `host.catalogue`).
 *
 * Schema rules: a missing `inputSchema` becomes `{type:'object',properties:{}}`;
 * a missing `type` becomes `'object'`; a top-level `anyOf`/`oneOf` of object
 * schemas is merged (properties united, `required` = names every branch
 * requires); `required` found inside `properties` moves up; any other
 * non-object input schema leaves the tool out; a bad `outputSchema` costs
 * only the output schema. Tools with `_meta.ui.visibility: ['app']` are not
 * in the catalogue (MCP Apps only) and get no diagnostic. A tool with
 * `execution.taskSupport: 'required'` (MCP 2025-11-25 tasks) is not in the
 * catalogue either, with an `omitted` diagnostic: the host does not call
 * tools as tasks. Its definition keeps `execution`.
 */
export interface ToolDiagnostic {
  serverId: string
  /** The tool's name as sent (`''` when it had none, or for a failed listing). */
  tool: string
  /**
   * `filtered`: the server's tool filter leaves the tool out ({@link ServerToolOptions},
   * {@link McpHost.setToolEnabled}); `reason` says which part (`matches excludeTools
   * pattern "read_*"`, `matches no includeTools pattern`, `switched off by setToolEnabled`).
   */
  action: 'normalized' | 'omitted' | 'outputSchemaDropped' | 'truncated' | 'duplicate' | 'filtered'
  /** What was wrong, naming the field or the bound (e.g. `maxToolSchemaBytes (262144)`). */
  reason: string
}

/** MCP `Resource` (MCP 2025-11-25 "Server Features › Resources"). */
export interface Resource {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: Record<string, unknown>
  _meta?: Record<string, unknown>
}

/** MCP `ResourceTemplate` (RFC 6570 `uriTemplate`). */
export interface ResourceTemplate {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  _meta?: Record<string, unknown>
}

/**
 * MCP `ReadResourceResult`: text or base64 `blob` contents. An MCP Apps UI
 * resource carries its `McpUiResourceMeta` in each content item's
 * `_meta.ui` (`csp`, `permissions`, `domain`, `prefersBorder`).
 */
export interface ReadResourceResult {
  contents: (
    | { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
    | { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> }
  )[]
  _meta?: Record<string, unknown>
}

/** MCP `Prompt`. */
export interface Prompt {
  name: string
  title?: string
  description?: string
  arguments?: { name: string; title?: string; description?: string; required?: boolean }[]
  _meta?: Record<string, unknown>
}

/** MCP `GetPromptResult`. */
/** MCP log levels (RFC 5424 severities, least severe first), as {@link McpHost.setLogLevel} takes them. */
export type LoggingLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

/** What {@link McpHost.complete} completes (MCP `CompleteRequest` params plus the server). */
export interface CompleteParams {
  /** Customization id of the server. */
  serverId: string
  /** The prompt (`ref/prompt`, by name) or resource template (`ref/resource`, by its URI template) whose argument is completed. */
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }
  /** The argument being completed and the text typed so far (may be `''`). */
  argument: { name: string; value: string }
  /** The values of arguments already chosen (MCP 2025-06-18+). */
  context?: { arguments?: Record<string, string> }
}

/** What {@link McpHost.complete} resolves (MCP `CompleteResult`). */
export interface CompleteResult {
  completion: {
    /** At most 100 suggestions, best first. */
    values: string[]
    /** How many suggestions there are in all, when the server knows. */
    total?: number
    /** Whether there are more than `values` holds. */
    hasMore?: boolean
  }
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

export interface GetPromptResult {
  description?: string
  messages: { role: 'user' | 'assistant'; content: ContentBlock }[]
  _meta?: Record<string, unknown>
}

/** An MCP content block (MCP 2025-11-25 `ContentBlock`). */
export type ContentBlock =
  | { type: 'text'; text: string; _meta?: Record<string, unknown>; annotations?: unknown }
  | { type: 'image'; data: string; mimeType: string; _meta?: Record<string, unknown>; annotations?: unknown }
  | { type: 'audio'; data: string; mimeType: string; _meta?: Record<string, unknown>; annotations?: unknown }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string }; _meta?: Record<string, unknown> }
  | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }

/** MCP `CallToolResult`. `isError: true` is a tool-level failure, not a protocol error. */
export interface CallToolResult {
  content: ContentBlock[]
  structuredContent?: Record<string, unknown>
  isError?: boolean
  _meta?: Record<string, unknown>
}

// ─── Host API ────────────────────────────────────────────────────────────────

/**
 * A root the app gives (`roots` option, {@link McpHost.setRoots}). `uri` is a
 * `file:` URI (`file:///home/me/My Project`; `%XX` already encoded is kept)
 * or an absolute path (`/home/me/My Project`); servers get it as a
 * percent-encoded `file://` URI (see {@link Root}). At most 8 KiB; `name` at
 * most 1 KiB.
 */
export interface RootInput {
  uri: string
  /** Display name. */
  name?: string
  _meta?: Record<string, unknown>
}

/**
 * A root as servers receive it in `roots/list`: `uri` is a percent-encoded
 * `file://` URI (`file:///home/me/My%20Project/%C3%BC`), dot segments
 * resolved.
 */
export interface Root {
  uri: URI
  name?: string
  _meta?: Record<string, unknown>
}

/** Context of a server-initiated request. */
export interface ServerRequestContext {
  /** Customization id of the server that sent it. */
  serverId: string
  /**
   * Aborts when the request is withdrawn: the server cancelled it (e.g. its
   * tool call ended or timed out), or an AHP client answered the
   * elicitation first (see `chatInput`). `reason` is a {@link HostError}
   * with code `cancelled`. An answer given after that is ignored. Until
   * then the host holds the handler's returned promise itself, so a pending
   * answer waits however long it takes even when nothing else references
   * the promise (it is never lost to garbage collection).
   */
  signal: AbortSignal
  /**
   * Present when this elicitation (form or URL mode) belongs to an AHP tool call
   * (`callTool` with `chat`, `turnId`, `toolCallId`) and was published to
   * AHP clients too, as chat input request `requestId` (`chat/inputRequested`,
   * `session/inputNeededSet` of kind `chatInput`). The first answer wins:
   * this handler's (the AHP side is completed with it) or an AHP client's
   * `chat/inputCompleted` (then `signal` aborts).
   */
  chatInput?: { chat: URI; turnId: string; toolCallId: string; requestId: string }
  /**
   * URL-mode elicitation only (SEP-1036): the origin of `params.url`,
   * `scheme://host[:port]` with the host in ASCII (an internationalized
   * name shows as Punycode, `xn--…`), from a URL parser. Show it beside the
   * URL, highlighted ("clearly display the target domain"), and open the URL
   * only after the user's consent: the host never opens or fetches it.
   */
  origin?: string
}

/**
 * One content block of a sampling message (MCP 2025-11-25 `SamplingMessage`
 * content: text, image, audio; with sampling tools, SEP-1577, `tool_use` and
 * `tool_result`). `data` is base64.
 */
export type SamplingContent =
  | { type: 'text'; text: string; _meta?: Record<string, unknown> }
  | { type: 'image'; data: string; mimeType: string; _meta?: Record<string, unknown> }
  | { type: 'audio'; data: string; mimeType: string; _meta?: Record<string, unknown> }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; _meta?: Record<string, unknown> }
  | {
      type: 'tool_result'
      toolUseId: string
      content: Array<Record<string, unknown>>
      structuredContent?: Record<string, unknown>
      isError?: boolean
      _meta?: Record<string, unknown>
    }

/** One message of a sampling conversation (MCP `SamplingMessage`). */
export interface SamplingMessage {
  role: 'user' | 'assistant'
  content: SamplingContent | SamplingContent[]
  _meta?: Record<string, unknown>
}

/**
 * The params of `sampling/createMessage` as the server sent them (MCP
 * 2025-11-25 `CreateMessageRequestParams`); members a later revision adds
 * are passed on too.
 */
export interface CreateMessageParams {
  messages: SamplingMessage[]
  /** Most tokens to sample (tokens). */
  maxTokens: number
  modelPreferences?: {
    hints?: Array<{ name?: string }>
    /** 0 to 1. */
    costPriority?: number
    /** 0 to 1. */
    speedPriority?: number
    /** 0 to 1. */
    intelligencePriority?: number
  }
  systemPrompt?: string
  includeContext?: 'none' | 'thisServer' | 'allServers'
  temperature?: number
  stopSequences?: string[]
  metadata?: Record<string, unknown>
  /** Tools the model may call (SEP-1577; only when the client declared `sampling.tools`). */
  tools?: Array<{ name: string; description?: string; inputSchema: Record<string, unknown>; [key: string]: unknown }>
  toolChoice?: { mode?: 'auto' | 'required' | 'none' }
  _meta?: Record<string, unknown>
  [key: string]: unknown
}

/** What a `sampling` handler resolves (MCP 2025-11-25 `CreateMessageResult`). */
export interface CreateMessageResult {
  role: 'user' | 'assistant'
  content: SamplingContent | SamplingContent[]
  /** The model that sampled, e.g. `"claude-sonnet-4"`. */
  model: string
  stopReason?: 'endTurn' | 'stopSequence' | 'maxTokens' | 'toolUse' | (string & {})
  _meta?: Record<string, unknown>
}

/** The app's answer to `sampling/createMessage` ({@link RequestHandlers.sampling}). */
export type SamplingHandler = (params: CreateMessageParams, context: ServerRequestContext) => Promise<CreateMessageResult>

/**
 * A `sampling` handler with what it supports (SEP-1577, MCP 2025-11-25
 * "Client Features › Sampling › Tools in Sampling").
 *
 * With `tools: true` the host declares `sampling: {tools: {}}` and the
 * handler receives `tools`, `toolChoice` and `tool_use` / `tool_result`
 * content as the server sent them; it may answer with `tool_use` blocks
 * (`stopReason: 'toolUse'`, content an array) for the server to run.
 *
 * What the host checks (JSON-RPC errors to the server, the handler not
 * called): a request with `tools`, `toolChoice` or tool content to a host
 * that did not declare `sampling.tools`; a `tool_use` in a user message or a
 * `tool_result` in an assistant one; a message mixing `tool_result` with
 * other content; a `tool_result` answering no `tool_use`, or a `tool_use`
 * left without its `tool_result`: each `-32602` (Invalid params). The
 * handler's answer is refused (`-32603` to the server) when its role is not
 * `assistant`, it holds `tool_result` content, or a `tool_use` the request
 * did not allow (no `tools`, `toolChoice: {mode: 'none'}`, a tool it did not
 * offer, an empty or repeated id).
 */
export interface SamplingRegistration {
  /** Answers each `sampling/createMessage`. */
  handler: SamplingHandler
  /** The handler supports SEP-1577 tools: declare `sampling.tools`. Default `false`. */
  tools?: boolean
}

/** The params of a form-mode `elicitation/create` (MCP 2025-11-25 `ElicitRequestFormParams`). */
export interface FormElicitationParams {
  mode?: 'form'
  message: string
  requestedSchema: Record<string, unknown>
  _meta?: Record<string, unknown>
}

/**
 * The params of a URL-mode `elicitation/create` (SEP-1036, MCP 2025-11-25
 * `ElicitRequestURLParams`), also given for each elicitation of a `tools/call`
 * answered `-32042`. `url` is an `http:` or `https:` URL without userinfo, at
 * most 8 KiB (anything else is refused `-32602` before the handler);
 * `elicitationId` is absent at 2026-07-28.
 */
export interface UrlElicitationParams {
  mode: 'url'
  message: string
  url: string
  elicitationId?: string
  _meta?: Record<string, unknown>
}

/**
 * The app's answer to `elicitation/create`: `{action: 'accept', content}`,
 * `{action: 'decline'}` or `{action: 'cancel'}`. Form mode: on accept, schema
 * defaults are filled in for fields `content` omits (SEP-1034). URL mode:
 * `accept` means the user consented to open the URL (the app opens it, in
 * the user's browser); `content` is left out.
 */
export type ElicitationHandler = (
  params: FormElicitationParams | UrlElicitationParams,
  context: ServerRequestContext,
) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }>

/**
 * An `elicitation` handler with what it supports (SEP-1036, MCP 2025-11-25
 * "Client Features › Elicitation", URL mode).
 *
 * With `url: true` the host declares `elicitation: {form: {}, url: {}}` and
 * the handler also receives URL-mode requests ({@link UrlElicitationParams},
 * `context.origin`), including the elicitations of a `tools/call` answered
 * `-32042`: the call waits until the server says each one is complete
 * (`notifications/elicitation/complete`) and is then sent again once (see
 * {@link UrlElicitationRequiredData} for when it fails instead). A
 * completion that arrives before the handler answered withdraws it
 * (`context.signal` aborts) and counts as `accept`. The host never opens or
 * fetches the URL.
 */
export interface ElicitationRegistration {
  /** Answers each `elicitation/create`, form and URL mode. */
  handler: ElicitationHandler
  /** The handler takes URL mode: declare `elicitation.url`. Default `false`. */
  url?: boolean
}

/** App handlers for server-initiated requests; each resolves the MCP result object. */
export interface RequestHandlers {
  /**
   * `elicitation/create` (MCP 2025-11-25 "Client Features › Elicitation"):
   * a function (form mode only), or {@link ElicitationRegistration}
   * `{handler, url: true}` when it takes URL mode too (SEP-1036). A URL-mode
   * request to a host that did not declare it is answered `-32602`.
   */
  elicitation?: ElicitationHandler | ElicitationRegistration
  /**
   * `sampling/createMessage` (MCP 2025-11-25 "Client Features › Sampling"):
   * resolve an MCP `CreateMessageResult`. A function, or
   * {@link SamplingRegistration} `{handler, tools: true}` when the handler
   * supports tools (SEP-1577): only then does the host declare `sampling:
   * {tools: {}}`, and pass `tools`, `toolChoice` and `tool_use` /
   * `tool_result` content through.
   */
  sampling?: SamplingHandler | SamplingRegistration
  /**
   * `roots/list`: resolve `{roots: [{uri, name?}]}`; each `uri` a `file:`
   * URI or an absolute path, sent percent-encoded. A root that is not a
   * `file://` URI is left out with a `warn` log (target `host.roots`). Not
   * called once the host's own roots are set (`roots` option,
   * {@link McpHost.setRoots}).
   */
  roots?: (params: Record<string, unknown>, context: ServerRequestContext) => Promise<{ roots: RootInput[] }>
}

export interface AddPluginOptions {
  /** Plugin root; `<root>/mcp.json` is read. */
  root: string
  /** Customization URI. Default: the root's `file://` URI. */
  uri?: URI
  /** Name and customization id. Default: the root folder's name. Must not contain `/`. */
  name?: string
  /** Startup timeout (ms) for every server of the plugin. */
  startupTimeoutMs?: number
  /**
   * Per-server overrides keyed by the name in `mcpServers` (host-side settings: the
   * plugin's `mcp.json` stays Agent Plugins 1.0). A wrong tool filter rejects
   * `invalid_argument` naming `options.servers.<name>.<field>`.
   */
  servers?: Record<string, { startupTimeoutMs?: number; oauth?: OAuthClientOption; protocol?: ProtocolSetting } & ServerToolOptions & ServerStartOptions & ServerSandboxOptions>
}

/**
 * How a server's start is shown and waited for ({@link AddServerOptions},
 * {@link AddPluginOptions.servers}).
 *
 * **Required.** A `required` server's start holds back new messages (an
 * agent's next turn) until it is decided: its AHP `starting` state is
 * published with `blocking: true` (AHP 1.0 `McpServerStartingState.blocking`).
 * A client that dispatches `session/mcpServerBackgroundRequested` for it
 * (a "continue without it" button) backgrounds that start: the host accepts
 * it, the reducer shows `blocking: false`, the server goes on starting, and
 * a restart of the same start (a start request while starting) stays
 * non-blocking; the next start after it was decided (`ready`, `error`,
 * `stopped`) blocks again. Hold the next turn with
 * `await host.whenReady({blocking: true})` (see {@link McpHost.whenReady}).
 */
export interface ServerStartOptions {
  /** The start blocks new messages until decided or backgrounded. Default `false`. */
  required?: boolean
  /**
   * When the server starts: `'eager'` (at once, the default unless
   * {@link McpHostOptions.start} says otherwise) or `'lazy'` (on its first call).
   *
   * **Lazy start.** A lazy server whose last `tools/list` is in the tool cache
   * (`<dataDir>/.tool-cache/`, see below) is not started: its tools are published
   * from the cache at once (`toolsChanged` reason `'cached'`; `listTools`, AHP
   * `serverTools`) and its AHP state is `stopped`. Its first
   * {@link McpHost.callTool} starts it, waits for `ready` (the start is bounded by
   * `startupTimeoutMs`; a failed start fails the call with the start's code,
   * e.g. `server_exited` or `startup_timeout`), then calls. Concurrent first
   * calls share one start: when it fails, each of them fails with its code and
   * none starts it again (a later call does). A call also waits at most its
   * own time limits ({@link CallToolCommon.timeoutMs} and
   * {@link CallToolCommon.maxTotalTimeoutMs}, else the server's
   * `callTimeoutMs` / `callMaxTotalMs`, else the host's): then it fails
   * `timeout` (`data.kind`) while the start goes on for later calls. Give a
   * server that takes longer to start than `limits.callTimeoutMs` (60 s) a
   * longer `callTimeoutMs`. A tool whose definition changed or vanished
   * between the cached list and the server's fresh one fails the call closed with
   * `stale_tool` (`data.reason: 'changed' | 'removed'`) and the fresh list is
   * published: read it again and retry. A lazy server without a usable cache
   * starts at once (to list its tools, which are then cached). After
   * {@link ServerStartOptions.idleStopMs} without a request it is stopped again,
   * its tools still published. A stop request keeps its tools too (a call starts
   * it again); toggling it off removes them.
   *
   * **Tool cache.** One private file per server configuration (mode `0600`, the
   * folder `0700`), keyed by a SHA-256 digest of the server's id, command,
   * arguments, working directory, plugin root, environment variable *names*,
   * URL without its query, header *names*, `protocol` and the client
   * capabilities this host declares: never a value of `env` or `headers`, and
   * every secret the host keeps (env and header values, tokens, a URL's query)
   * is `[redacted]` inside the cached tool definitions. A cache written under one
   * digest is never used under another; one older than 30 days is ignored; at
   * most 512 files and 64 MiB are kept (the least recently written go first).
   */
  start?: 'eager' | 'lazy'
  /**
   * A lazy server's idle time (ms) before it is stopped: no request in flight
   * (tool calls, resource and prompt requests, list walks), none begun for
   * this long, and no resource subscription. `0`: never. Default `limits.idleStopMs`
   * (10 minutes). Clamped to 24 h.
   */
  idleStopMs?: number
}

/**
 * A server's tool settings ({@link AddServerOptions}, {@link AddPluginOptions.servers}).
 *
 * **Filter.** `includeTools` and `excludeTools` match the server's original tool
 * names ({@link HostTool.toolName}, never the model-safe `name`): an exact name, or
 * a glob where `*` matches any run of characters (also none) and `?` exactly one
 * (`read_*`, `get-?ime`), case-sensitive. A tool is left out when it matches an
 * `excludeTools` pattern, or when `includeTools` is given and it matches none of
 * its patterns (an empty `includeTools` leaves every tool out);
 * {@link McpHost.setToolEnabled} wins over both. A tool left out is absent from
 * {@link McpHost.listTools}, from AHP `session/serverToolsChanged` and
 * `state.serverTools`, has a `filtered` {@link ToolDiagnostic}, and
 * {@link McpHost.callTool} refuses it (by `name` or by `serverId` and original
 * name) with `tool_disabled` before anything is sent. The filter holds across
 * reconnects, restarts and MCP `notifications/tools/list_changed`. At most 1 000
 * patterns per list, each a non-empty string of at most 1 KiB, else
 * `invalid_argument` naming the field (`options.excludeTools[2]: must not be empty`).
 *
 * **Call limits.** `callTimeoutMs` and `callMaxTotalMs` apply to each call of the
 * server's tools that does not give its own {@link CallToolCommon.timeoutMs} /
 * {@link CallToolCommon.maxTotalTimeoutMs}; without them the host's
 * `limits.callTimeoutMs` / `limits.callMaxTotalMs` apply. Precedence per call:
 * the call's own, then the server's, then the host's. Clamped to 1 ms … 24 h.
 * Both bound the wait for a lazy server's start too
 * ({@link ServerStartOptions.start}); `callMaxTotalMs` counts it.
 * `modelOutputMaxChars` works the same way for the model-facing output budget
 * ({@link HostLimits.modelOutputMaxChars}, {@link CallToolCommon.modelOutputMaxChars}).
 */
export interface ServerToolOptions {
  /** Offer only the tools matching one of these patterns. Default: every tool. */
  includeTools?: string[]
  /** Leave out the tools matching one of these patterns. Default: none. */
  excludeTools?: string[]
  /** Inactivity limit (ms) of a call of this server's tools, reset by each progress notification; expiry: `timeout`, `data.kind: 'inactivity'`. */
  callTimeoutMs?: number
  /** Absolute limit (ms) of a call of this server's tools, never extended by progress; expiry: `timeout`, `data.kind: 'total'`. */
  callMaxTotalMs?: number
  /**
   * Model-facing output budget (characters, clamped to 1 … 16 Mi) of an AHP
   * chat tool call of this server's tools that gives no
   * {@link CallToolCommon.modelOutputMaxChars}; default
   * {@link HostLimits.modelOutputMaxChars}. Not a non-negative integer:
   * `invalid_argument` naming the field.
   */
  modelOutputMaxChars?: number
}

/** Options of {@link McpHost.setToolEnabled}. */
export interface SetToolEnabledOptions {
  /** Customization id of the server (a top-level server, or `<plugin>/<server>`). */
  serverId: string
  /** The tool's original name ({@link HostTool.toolName}), exact. */
  tool: string
  /** `true`: offered and callable whatever the filter lists say; `false`: left out. */
  enabled: boolean
}

/**
 * Which MCP revision the host speaks to a server (MCP 2026-07-28 "Lifecycle"
 * and its backward-compatibility rules):
 * - `'auto'` (default): `server/discover` offering 2026-07-28 first; when the
 *   server answers it with a JSON-RPC error (every 2025-era server does), the
 *   `initialize` handshake offering 2025-11-25 on the same connection. A
 *   server that does not answer the probe at all is retried with `initialize`
 *   after 10 s (within `startupTimeoutMs`); give such a server `'legacy'`.
 *   A configuration that ended on the 2025 era is remembered in `dataDir`
 *   (`protocol-eras.json`, 7 days), so its next start sends `initialize`
 *   without the probe.
 * - `'2026-07-28'`: `server/discover` only (stateless: every request carries
 *   its protocol version, client info and capabilities in `_meta`); a
 *   2025-era server fails to start with `protocol_error`.
 * - `'legacy'`: the `initialize` handshake only.
 *
 * A server that settles on a revision the host never offered (e.g. an
 * `initialize` result naming `1999-01-01`) goes to `error` with
 * `protocol_error` naming the version. The negotiated revision is in
 * {@link McpHost.serverInfo} and in a `host.connect` log record.
 */
export type ProtocolSetting = 'auto' | '2026-07-28' | 'legacy'

/** One icon a server declared (`serverInfo.icons`, MCP `Icon`), as sent. */
export interface ServerIcon {
  /** An `https:` URL or a `data:` URI (at most 16 KiB; longer icons are dropped). */
  src: string
  mimeType?: string
  /** `"48x48"`, `"any"`, … */
  sizes?: string[]
  theme?: 'light' | 'dark'
}

/**
 * What a server said about itself at its last connection: its `initialize`
 * result (2025-era) or `server/discover` result (2026-07-28), with the
 * negotiated protocol version. Also published on the server's
 * `McpServerCustomization` as `_meta["ahp-mcp-host/serverInfo"]` (and its
 * `icons` as the customization's `icons`). Text fields are cut to 1 KiB,
 * `instructions` to 16 KiB, at character boundaries.
 */
export interface ServerInfo {
  /** The negotiated MCP revision, e.g. `"2026-07-28"` or `"2025-11-25"`. */
  protocolVersion: string
  /** `'discover'` (2026-07-28, stateless) or `'initialize'` (2025-era). */
  handshake: 'discover' | 'initialize'
  /**
   * The transport of the connection: `'stdio'`, `'streamable-http'`, or
   * `'sse'` (legacy HTTP+SSE: a `type: 'sse'` entry, or a `streamable-http`
   * one that fell back to it, see {@link LegacySseServerConfig}).
   */
  transport: 'stdio' | 'streamable-http' | 'sse'
  /** `serverInfo.name` (`""` when the server sent none). */
  name: string
  title?: string
  version?: string
  description?: string
  websiteUrl?: string
  /** At most 8. */
  icons: ServerIcon[]
  /** Guidance for the model about using this server (put it in the system prompt). */
  instructions?: string
  /** Whether `instructions` was cut to 16 KiB. */
  instructionsTruncated: boolean
  /** The declared server capabilities (`tools`, `resources`, `prompts`, `logging`, `completions`, `extensions`, …) as sent; `null` when larger than 16 KiB. */
  capabilities: Record<string, unknown> | null
  /** Whether `capabilities` was left out for its size. */
  capabilitiesOmitted: boolean
  /** The policy and trust decision about the server, with a {@link McpHostOptions.policy} or {@link McpHostOptions.trust}. */
  policy?: ServerPolicyDecision
  /**
   * The sandbox this start of a stdio server ran in ({@link SandboxReport});
   * absent for an unsandboxed or remote server.
   */
  sandbox?: SandboxReport
}

/**
 * {@link McpHost.serverInfo} of a server that never connected but has a
 * policy or trust decision: denied by the {@link ServerPolicy}, refused by
 * the {@link TrustCallback}, or waiting for its answer. Only `policy`; the
 * other {@link ServerInfo} members are absent (`info?.name` reads
 * `undefined`), so `info.protocolVersion !== undefined` tells the two apart.
 */
export type ServerPolicyInfo = { policy: ServerPolicyDecision } & {
  [K in Exclude<keyof ServerInfo, 'policy'>]?: never
}

/**
 * The app's allow and deny rules for servers ({@link McpHostOptions.policy},
 * {@link McpHost.setPolicy}). A `deny` rule that matches wins over
 * everything; then, when `allow` is given, a server that no `allow` rule
 * matches is denied (`allow: []` denies every server); else the server may
 * start. The rule that decided is named `deny[<i>]` / `allow[<i>]` in the
 * decision, the `error` state's message and the log record. At most 1 000
 * rules per list; a rule that cannot be compiled refuses the whole policy
 * (a security policy is never applied in part).
 */
export interface ServerPolicy {
  /** Only servers one of these matches may start; absent: every server not denied. */
  allow?: PolicyRule[]
  /** Servers one of these matches never start. */
  deny?: PolicyRule[]
}

/**
 * One rule: every matcher it has must match, and it needs at least one.
 * Patterns are globs (`*` any run of characters, `/` included; `?` one
 * character, except in `url`), case-sensitive except the scheme and host of
 * `url`; at most 2 KiB each. A server's configuration is matched as given
 * (its `mcp.json` entry or `addServer` config), never its secrets: the
 * program a bare command resolves to through `PATH` is not consulted.
 */
export interface PolicyRule {
  /** Shown in decisions and messages: `deny[0] ("no shell servers")`. */
  label?: string
  /** The server's name (its `mcpServers` key, a top-level server's name); with a `/`, its id `<plugin>/<server>`. */
  name?: string
  /** The name of the plugin that declares the server (a top-level server never matches). */
  plugin?: string
  /** A stdio server's `command`; without a `/` also its last path segment (`node` matches `/usr/bin/node`). */
  command?: string
  /**
   * A stdio server's `args`, one pattern each and the same count (Claude
   * Code's exact `serverCommand` is `{command: 'npx', args: ['-y', 'pkg']}`);
   * at most 256.
   */
  args?: string[]
  /**
   * A remote server's URL without user info, query and fragment, as
   * `scheme://host[:port][/path]` (`https://*.example.com/v1/*`): scheme,
   * host and port are each matched on their own (a `*` of the host never
   * reaches into the path; scheme and host any case; no port is the
   * scheme's default port, `:*` any port), and a pattern without a path
   * matches every path of its origin (`https://mcp.example.com`). Both
   * sides are normalised alike (default port, host forms, escapes of
   * unreserved characters, `//`, a trailing `/`); a `deny` rule's path
   * ignores case, an `allow` rule's does not. `?`, `#`, user info and a
   * pattern of another form are refused: a query is never matched (it can
   * hold secrets).
   */
  url?: string
  /** The transport. */
  transport?: 'stdio' | 'streamable-http' | 'sse'
}

/**
 * Trust on first use ({@link McpHostOptions.trust}): asked before the start
 * of a server whose configuration has no remembered decision, or whose
 * configuration changed since (`reason: 'changed'`); a lazy server is asked
 * at its first call, before it spawns. Answer `true` / `false`, or
 * `{trust, remember?}`: `remember` (default `true`) keeps the answer under
 * `dataDir` for later hosts; `remember: false` trusts for this host only,
 * and a refusal with it is not kept at all (the next start asks again).
 * While it is asked the server is `starting` (its decision's `state` is
 * `'pending'`). A refused server is `stopped` with `trust_refused` in its
 * decision ({@link McpHost.whenReady} rejects `trust_refused`); a throw,
 * another answer, or no answer within `limits.trustTimeoutMs` is
 * `trust_failed`, never remembered (a `warn` log, target `host.policy`,
 * says what was thrown). `request.signal` aborts when the question is
 * withdrawn: the start ended (stop, restart, remove, dispose) or timed out.
 * A configuration is known by a digest (SHA-256) of what decides what runs:
 * id, transport, command, args, cwd, plugin root, env names with a hash of
 * each value, the sandbox profile ({@link SandboxOptions}) when it has one;
 * URL and header names with hashes of the URL and each value.
 */
export type TrustCallback = (request: TrustRequest) => TrustAnswer | PromiseLike<TrustAnswer>

/** The app's answer to a {@link TrustRequest}. */
export type TrustAnswer = boolean | { trust: boolean; remember?: boolean }

/** What the {@link TrustCallback} is asked about: the server and what would run, secrets withheld. */
export interface TrustRequest {
  serverId: string
  /** The server's name (its `mcpServers` key, or a top-level server's name). */
  name: string
  /** The plugin that declares it. */
  plugin?: string
  /** `'new'`: nothing about this server is remembered; `'changed'`: its configuration changed since a decision. */
  reason: 'new' | 'changed'
  /** What would run: env and header names only, the URL without user info, query and fragment. */
  config: TrustedConfig
  /** Aborts when the question is withdrawn (see {@link TrustCallback}). */
  signal: AbortSignal
}

/** A server's configuration as a {@link TrustRequest} shows it (every value the host keeps secret replaced). */
export type TrustedConfig =
  | { type: 'stdio'; command: string; args: string[]; cwd?: string; env: string[] }
  | { type: 'streamable-http' | 'sse'; url: string; headers: string[] }

/**
 * Everything decided about one server: on its customization as
 * `_meta["ahp-mcp-host/policy"]` (published when it changes, removed when
 * nothing is decided any more) and in {@link McpHost.serverInfo}; each
 * decision is also a log record (target `host.policy`: `warn` when denied
 * or failed). Without a {@link McpHostOptions.policy} and a
 * {@link McpHostOptions.trust} there is none.
 */
export interface ServerPolicyDecision {
  /** What the {@link ServerPolicy} says (with rules). */
  rules?: PolicyVerdict
  /** What the {@link TrustCallback} said (once a start got that far). */
  trust?: TrustDecision
}

/** The {@link ServerPolicy}'s verdict on a server. */
export interface PolicyVerdict {
  allowed: boolean
  /** The rule that decided, `deny[<i>]` or `allow[<i>]`; absent when none matched. */
  rule?: string
  /** That rule's label. */
  label?: string
  /** Why, in words (also the `policy_denied` error's message). */
  message: string
}

/** The {@link TrustCallback}'s decision about a server's configuration. */
export interface TrustDecision {
  /** `'pending'`: being asked (the server is `starting`); `'refused'`: `trust_refused`; `'failed'`: `trust_failed`. */
  state: 'pending' | 'trusted' | 'refused' | 'failed'
  /** Taken from the remembered decisions: the callback was not asked. */
  remembered: boolean
  /** Asked because the configuration changed since an earlier decision. */
  changed: boolean
  /** Why, in words. */
  message: string
}

/**
 * A server's own sandbox setting ({@link AddServerOptions},
 * {@link AddPluginOptions.servers}): stdio servers only; ignored for a
 * remote server.
 */
export interface ServerSandboxOptions {
  /**
   * Absent: the host's default ({@link McpHostOptions.sandbox}). `false`:
   * never sandboxed. `true`: sandboxed with the host's profile, or the
   * built-in one when the host has none. A {@link SandboxOptions} object:
   * each field it gives replaces the host's (`filesystem.read` and
   * `filesystem.write` as whole lists), the others are the host's, then the
   * built-in defaults. Applied at each start; the profile as configured is
   * on the server's customization as `_meta["ahp-mcp-host/sandbox"]`
   * (`{filesystem: {read, write}, network, enforce}`, path entries as
   * given), and what was in effect in {@link ServerInfo.sandbox}.
   */
  sandbox?: boolean | SandboxOptions
}

/**
 * What a sandboxed stdio server may read, write and reach (issue 32). The
 * sandbox is applied to the server's process before its program runs and
 * is inherited by every process it starts (grandchildren included).
 *
 * **Always readable** (read and execute, never write): the system folders
 * (Linux: `/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/proc`, `/sys`,
 * `/run/systemd/resolve`, `/nix/store`, `/dev/urandom`, `/dev/random`; those
 * that exist), the plugin root (`addServer`'s `root`), the install prefix of
 * the program and of the interpreter its `#!` line names, links resolved (the
 * folder above `bin/`: `~/.nvm/versions/node/v22` for an nvm `node`, but only
 * the `bin` folder when that would be the home folder or a folder right in it,
 * such as `~/.local`, and only the program file itself when that folder is
 * `/`, the home folder or a folder right in it too (`~/server.sh`, `~/bin/x`);
 * `#!/usr/bin/env node` looks `node` up on the server's `PATH` as `execvp`
 * does, executable files only), and for `npx` / `npm` the
 * npm cache `~/.npm`, for `uvx` / `uv` uv's caches, read-only: a sandboxed
 * `npx -y pkg` cannot download or unpack a package, so install it ahead (in
 * the plugin root's `node_modules`, which `npx` finds without the network).
 * **Always writable:** `PLUGIN_DATA` and the server's temp folder
 * `PLUGIN_DATA/.tmp` (given as `TMPDIR`, `TMP`, `TEMP`), `/dev/null`,
 * `/dev/zero`, `/dev/full`. **Nothing else**, under the home folder or
 * anywhere, unless listed: not even a configured `cwd` outside the plugin root
 * (the server starts there but cannot read it). A listed path that does not
 * exist is left out (shown in {@link SandboxReport.missing}), and so is one
 * whose resolution passes through a link inside a writable folder (a `warn`
 * log, `host.sandbox`); `PLUGIN_DATA/.tmp` is made a real folder (mode
 * `0700`) again at every start.
 *
 * **Path entries**: an absolute path, `~` or `~/…` (the user's home),
 * `${PLUGIN_ROOT}` or `${PLUGIN_DATA}` optionally followed by `/…`; a folder
 * covers everything below it. At most 64 entries per list, 4096 bytes each.
 * Anything else (a relative path, `~user`, another variable) is
 * `invalid_argument` naming the entry (`sandbox.filesystem.read[2]: …`).
 *
 * **Per platform.**
 * - Linux: Landlock, set in the child before `exec` (`no_new_privs` set, as
 *   Landlock requires). Filesystem rules need Landlock ABI 1 (Linux 5.13;
 *   truncation ABI 3, device `ioctl` ABI 5), TCP rules ABI 4 (Linux 6.7),
 *   the scoping of abstract Unix sockets and signals (the server cannot
 *   signal or reach an abstract socket of a process outside its sandbox) ABI
 *   6 (Linux 6.12). The ABI of the running kernel is negotiated: what it
 *   cannot enforce is left out and named in {@link SandboxReport.unenforced}.
 *   Not filtered by Landlock at any ABI this host uses: UDP (so DNS queries
 *   and any other UDP traffic still go out), connections to pathname Unix
 *   sockets (e.g. `/var/run/docker.sock`, subject to their file permissions;
 *   Landlock ABI 9 adds that), reading file metadata (`stat`), and
 *   `/proc` entries that are world-readable (other processes' command
 *   lines; their environment and memory are refused by Landlock's ptrace
 *   rules). TCP rules name ports, not addresses: the server may connect to
 *   the proxy's port number on any host.
 * - macOS: a Seatbelt profile run through `/usr/bin/sandbox-exec` (deny by
 *   default; the same read and write lists; outbound TCP only to the proxy
 *   on `localhost`; UDP and Unix sockets denied; file metadata readable
 *   everywhere). Generated from the same profile; not tested in this
 *   project's CI, which has no macOS.
 * - Windows: nothing is enforced. With `enforce: 'best-effort'` the server
 *   runs unsandboxed, {@link SandboxReport.enforced} `'none'` and a `warn`
 *   log say so; with `'required'` it fails `sandbox_unavailable`.
 */
export interface SandboxOptions {
  /** More paths the server may read (`read`) or read and write (`write`). */
  filesystem?: { read?: string[]; write?: string[] }
  /** Where the server may connect; default `'none'`. */
  network?: SandboxNetwork
  /**
   * `'best-effort'` (default): what this platform or kernel cannot enforce is
   * left out, listed in {@link SandboxReport.unenforced} and a `warn` log
   * (`host.sandbox`), and the server runs. `'required'`: the start fails
   * `sandbox_unavailable` (the message lists what is missing) instead of
   * running with less than the whole profile.
   */
  enforce?: 'best-effort' | 'required'
}

/**
 * A sandboxed server's network:
 * - `'none'`: no TCP connection and no listening TCP socket (Linux: Landlock
 *   ABI 4; UDP is not closed, see {@link SandboxOptions}).
 * - `'loopback'`: TCP to this machine only (`localhost`, `127.0.0.0/8`,
 *   `[::1]`), through the host's proxy (below).
 * - `{allowHosts}`: TCP to these hosts only, through the host's proxy. An
 *   entry is a host name (`api.example.com`: that name only), `*.example.com`
 *   (its subdomains, not the name itself), an IPv4 literal or a bracketed
 *   IPv6 literal (`[::1]`), each optionally with `:port` (any port without);
 *   matched case-insensitively against the name the client asks for (an IP
 *   literal is not a name: `127.0.0.1` does not match `localhost`). At most
 *   256 entries. A malformed entry (a URL, a path, a bad label or port) is
 *   `invalid_argument` naming it.
 *
 * **The proxy.** For `'loopback'` and `{allowHosts}` the host runs an HTTP
 * `CONNECT` proxy on `127.0.0.1` for each start of the server, gives it as
 * `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (and lower case; `NO_PROXY`
 * emptied, `NODE_USE_ENV_PROXY=1` for Node 22.21+ / 24.5+) and lets the
 * server connect to that port only. The proxy resolves and connects a
 * host the profile allows (a name other than a loopback one that resolves
 * to a loopback or unspecified address, IPv4-mapped ones included, is
 * refused; in `'loopback'` mode only loopback addresses are connected,
 * whatever a `*.localhost` name resolves to) and relays the bytes; anything else is
 * answered `403` (the first 16 refusals are `warn` logs, `host.sandbox`,
 * naming the host), another method `405` (plain `http://` requests are not
 * forwarded: clients tunnel with `CONNECT`, as they do for `https`). A
 * client that ignores the proxy variables cannot reach the network. At
 * most 64 connections at once; 10 s for a request head (at most 8 KiB) and
 * for the connect.
 */
export type SandboxNetwork = 'none' | 'loopback' | { allowHosts: string[] }

/**
 * The sandbox in effect for one start of a stdio server
 * ({@link ServerInfo.sandbox}, also under the customization's
 * `_meta["ahp-mcp-host/serverInfo"].sandbox`), and a log record
 * (`host.sandbox`, `info` when fully enforced, else `warn`) at each start.
 */
export interface SandboxReport {
  /** `'landlock'` (Linux), `'seatbelt'` (macOS) or `'none'` (Windows; Linux without Landlock). */
  mechanism: 'landlock' | 'seatbelt' | 'none'
  /** The Landlock ABI of the running kernel (Linux only; `0`: none). */
  abi?: number
  /** `'full'`, `'partial'` (see `unenforced`) or `'none'`. */
  enforced: 'full' | 'partial' | 'none'
  /** What this platform or kernel does not enforce, each naming what is missing (`"network (TCP connect and bind): Landlock ABI 4 (Linux 6.7)"`). */
  unenforced: string[]
  /** The paths it may read, and those it may also write: the defaults and the profile's, expanded. */
  filesystem: { read: string[]; write: string[] }
  /** The network policy. */
  network: SandboxNetwork
  /** `http://127.0.0.1:<port>`: the host's proxy given to the server, when its network is not `'none'`. */
  proxy?: string
  /** The profile's `enforce`. */
  enforce: 'best-effort' | 'required'
  /** Listed paths left out of the rules: they do not exist, or pass through a link inside a writable folder. */
  missing?: string[]
}

export interface PluginAdded {
  /** The plugin customization id. */
  id: string
  /** Ids of the servers being started (`<plugin>/<server>`), valid entries only. */
  servers: string[]
  load: CustomizationLoadState
}

/**
 * One `mcp.json` server entry (Agent Plugins 1.0.0). On Windows a bare
 * stdio `command` resolves through `PATH` and `PATHEXT` (`npx` → `npx.cmd`),
 * and a `.cmd` / `.bat` file runs through `cmd.exe` with each of `args`
 * quoted to arrive unchanged; an argument that cannot (a line break) puts
 * the server in `error` with `invalid_argument` naming it (`args[1]`).
 */
export type McpServerConfig =
  | { type: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { type: 'streamable-http'; url: string; headers?: Record<string, string> }
  | LegacySseServerConfig

/**
 * A legacy HTTP+SSE server (MCP 2024-11-05 "Transports › HTTP with SSE"),
 * as the MCP Registry's `remotes[].type: "sse"` and older hosted servers
 * are: `url` is the event stream (often `…/sse`); same rules as
 * `streamable-http` (`https`, or `http` on loopback; no credentials in the
 * URL; `headers` sent with every request, on that origin only). The host
 * GETs the stream (`Accept: text/event-stream`), waits at most 10 s for its
 * `endpoint` event, resolves it against `url` and POSTs every message there;
 * answers come as `message` events, each at most 16 MiB.
 *
 * A `streamable-http` entry whose first POST is answered 400, 404 or 405
 * without a JSON-RPC error is tried this way on the same URL (MCP
 * 2025-11-25 "Transports › Backwards Compatibility"), with a `warn` log
 * (`host.connect`); {@link ServerInfo.transport} says which one was used.
 * OAuth, DPoP, dynamic headers and the proxy and trust options work as on
 * Streamable HTTP.
 *
 * Errors (the server's `error` state): `redirect_refused` (an `endpoint`
 * event on another origin: configured headers and tokens never go there;
 * or a redirect to another origin), `protocol_error` (an `endpoint` event
 * that is empty, over 8 KiB or not a URL), `connect_failed` (the GET was
 * refused or is not an event stream, or no `endpoint` event within 10 s),
 * `auth_required` flow on a 401 as on Streamable HTTP.
 *
 * A lost stream (closed, broken, or an event over 16 MiB) fails the
 * requests waiting for answers (`server_exited`, or `limit_exceeded` for
 * the event), and the host opens a new stream after 0.5, 1, 2, 4 and 8 s
 * and initializes the new session (the server stays `ready`); after five
 * failed attempts the server goes to `error` and its restart policy
 * applies. A new session does not keep what the server remembered of the
 * old one (its log level, resource subscriptions).
 */
export interface LegacySseServerConfig {
  type: 'sse'
  url: string
  headers?: Record<string, string>
}

/** What {@link McpHostOptions.headers} is asked for. */
export interface HeadersRequest {
  /** The server's id. */
  serverId: string
  /** Its URL without userinfo, query and fragment. */
  url: string
  /** `connect`: a connection is being opened; `unauthorized`: the last attempt got 401. */
  reason: 'connect' | 'unauthorized'
}

/**
 * A configuration format {@link McpHost.importConfig} reads:
 * - `'vscode'`: VS Code `mcp.json` (user or `.vscode/mcp.json`; JSONC): `servers`, `inputs`;
 * - `'claude-code'`: Claude Code project `.mcp.json`: `mcpServers`, `${VAR}` / `${VAR:-default}`;
 * - `'claude-desktop'`: Claude Desktop `claude_desktop_config.json`: `mcpServers` (stdio);
 * - `'cursor'`: Cursor `mcp.json`: `mcpServers`, `${env:X}`, `${userHome}`, …;
 * - `'codex'`: Codex `config.toml`: `[mcp_servers.<name>]`;
 * - `'registry'`: MCP Registry `server.json`: `packages` (npm, PyPI, OCI, NuGet) and `remotes`.
 */
export type ImportFormat = 'vscode' | 'claude-code' | 'claude-desktop' | 'cursor' | 'codex' | 'registry'

/** Options of {@link McpHost.importConfig}: exactly one of `text` and `path`. */
export interface ImportConfigOptions {
  /** The file's format. */
  format: ImportFormat
  /** The file's text. */
  text?: string
  /** A file to read (a regular file, at most `limits.maxConfigFileBytes`, within `limits.configReadTimeoutMs`). */
  path?: string
  /** The file name diagnostics show for `text` (default `'<text>'`). */
  file?: string
  /**
   * The app's resolver, called once per variable of the import, in order:
   * a string value, or `undefined` / `null` for none (then the variable's
   * `default`, if any). It may ask the user, read the app's secret store, or
   * read `process.env` for `kind: 'env'` if the app wants that: the host
   * never reads its environment for an import. A resolver that throws gives
   * no value for that variable (its error is not kept: it could hold a
   * value). Any other return type also counts as no value: the entries
   * that need the variable are left out with an `invalid_entry`
   * diagnostic naming the type returned; their siblings load. So does a
   * string longer than `limits.maxConfigFileBytes` (UTF-8). The calls are
   * made one after another and may take `limits.importResolveTimeoutMs`
   * together (then no value, and the diagnostic says so); a dispose of the host meanwhile rejects
   * `importConfig` with `disposed` at once. A Claude Code
   * `${VAR:-default}` keeps its default in its placeholder
   * (`${env:VAR:-default}`): each use gets its own.
   */
  resolve?: (variable: ImportVariable) => string | undefined | null | Promise<string | undefined | null>
}

/** What {@link McpHost.importConfig} made of a file. */
export interface ImportResult {
  /** One entry per server that could be taken, in file order (a registry `server.json`: one per package and remote). */
  servers: ImportedServer[]
  /** Every variable the servers use, once each. */
  variables: ImportVariable[]
  /** What could not be taken, or was taken without a field, in file order; then, with `resolve`, the servers that could not be resolved. */
  diagnostics: ImportDiagnostic[]
}

/** One imported server: this host's entry and what {@link McpHost.addServer} takes beside it. */
export interface ImportedServer {
  /** The server's name in the source (a registry entry: the last segment of its `name`, `-<registryType>` / `-remote` when it has several). */
  name: string
  /** The host's entry; before resolution its variables are placeholders: `${env:X}`, `${input:id}`, `${workspaceFolder}`. */
  config: McpServerConfig
  /** `false` when the source disables it (Codex `enabled = false`): {@link McpHost.addServers} skips it. */
  enabled: boolean
  /** Startup timeout from the source (Codex `startup_timeout_sec` / `_ms`), ms. */
  startupTimeoutMs?: number
  /** OAuth client id from the source (`oauth.clientId`, Cursor `auth.CLIENT_ID`, Codex `oauth.client_id`). */
  oauthClientId?: string
  /**
   * The server's other OAuth settings from the source, as
   * {@link OAuthClientOption} takes them (Claude Code `oauth.scopes`,
   * `oauth.authServerMetadataUrl`, `oauth.callbackPort`; Codex `scopes`,
   * `oauth_resource`, `oauth.callback_port`); {@link McpHost.addServers}
   * passes them on with `oauthClientId`. Absent when the source has none.
   * Checked when the server is added, not by the import.
   */
  oauth?: { scopes?: string[]; authServerMetadataUrl?: string; callbackPort?: number; resource?: string }
  /** {@link ServerToolOptions.includeTools} from the source (Codex `enabled_tools`). */
  includeTools?: string[]
  /** {@link ServerToolOptions.excludeTools} from the source (Codex `disabled_tools`). */
  excludeTools?: string[]
  /** {@link ServerToolOptions.callTimeoutMs} from the source (Codex `tool_timeout_sec`, which bounds the whole call), ms. */
  callTimeoutMs?: number
  /** {@link ServerToolOptions.callMaxTotalMs} from the source (Codex `tool_timeout_sec`), ms. */
  callMaxTotalMs?: number
  /** {@link ServerStartOptions.required} from the source (Codex `required`); absent when false. */
  required?: boolean
  /** 1-based line of the entry in the file. */
  line: number
  /** 1-based column of the entry (UTF-16 code units). */
  column: number
  /** Ids of the variables the entry uses ({@link ImportVariable.id}). */
  variables: string[]
  /** `config` holds no placeholder (no variables, or `resolve` gave them values). */
  resolved: boolean
  /**
   * Once resolved: the values of its secret variables (VS Code `password`, registry `isSecret`, a variable used
   * in a header), wherever they were put (`args`, `command`, `cwd`, the URL path, …). {@link McpHost.addServers}
   * passes them to {@link McpHost.addServer} as {@link AddServerOptions.secrets}. Absent when there are none.
   */
  secrets?: string[]
  /**
   * A registry package run by `docker`: how many of `config.args` are `docker`'s own options (`run -i --rm`,
   * `runtimeArguments`, `-e NAME`), before the image. Resolving checks them again with the values in. Absent for
   * every other entry.
   */
  dockerOptions?: number
}

/** One variable of an import: what an app needs to ask for it. */
export interface ImportVariable {
  /** The placeholder's text between `${` and `}`: `env:GITHUB_TOKEN`, `input:api-key`, `workspaceFolder`. */
  id: string
  /** The name without its kind: `GITHUB_TOKEN`, `api-key`, `workspaceFolder`. */
  name: string
  /**
   * `env`: an environment variable of the source host (`${env:X}`, Claude Code `${X}`, Codex `env_vars`,
   * `bearer_token_env_var`, `env_http_headers`); `input`: a value the user gives (VS Code `${input:id}`, a
   * registry input); `predefined`: a value the source host knows (`${workspaceFolder}`, `${userHome}`, …).
   */
  kind: 'env' | 'input' | 'predefined'
  /** A secret (VS Code `password`, registry `isSecret`, a header value, a bearer token): never show or store it. */
  secret: boolean
  /** The entry cannot start without a value (no default). */
  required: boolean
  /** What the source says about it. */
  description?: string
  /** The source's default. */
  default?: string
  /** The values to pick from (VS Code `pickString` options, registry `choices`). */
  choices?: string[]
}

/** One thing {@link McpHost.importConfig} could not take, or took without a field. Never holds a value. */
export interface ImportDiagnostic {
  /**
   * `invalid_config`: the file does not parse or its top level is wrong (nothing imported);
   * `invalid_entry`: an entry that cannot be taken (severity `error`), or a field the format does not define (`warning`);
   * `not_supported`: a field the format defines that this host does not take yet (`warning`, e.g. Codex `tools`).
   */
  code: 'invalid_config' | 'invalid_entry' | 'not_supported'
  /** `error`: the file or the entry named by `server` is not imported; `warning`: only the field is left out. */
  severity: 'error' | 'warning'
  /** What and why, naming the server and field. */
  message: string
  /** The file (`path`, `file` or `'<text>'`). */
  file: string
  /** 1-based line. */
  line: number
  /** 1-based column, UTF-16 code units. */
  column: number
  /** The server's name in the file, when it is about one. */
  server?: string
  /** The field's path in the entry (`headers.Authorization`, `args[2]`). */
  field?: string
}

/** What {@link McpHost.addServers} did with one server: exactly one of `id`, `error` and `skipped`. */
export interface AddServersResult {
  /** The server's name. */
  name: string
  /** Its id, once added. */
  id?: string
  /** Why it was not added. */
  error?: HostError
  /** `'disabled'`: `enabled: false` in the source. */
  skipped?: 'disabled'
}

/**
 * Options of {@link McpHost.addServer}; the tool filter and call limits are
 * {@link ServerToolOptions}, `required` is {@link ServerStartOptions}.
 */
export interface AddServerOptions extends ServerToolOptions, ServerStartOptions, ServerSandboxOptions {
  /** Name and customization id. Must not contain `/`. */
  name: string
  config: McpServerConfig
  /** Root for `./` commands, `${PLUGIN_ROOT}` and the default cwd. Default: the process cwd. */
  root?: string
  /** Customization URI. Default: the URL (HTTP) or the root's `file://` URI (stdio). */
  uri?: URI
  /** Startup timeout (ms). */
  startupTimeoutMs?: number
  /** Pre-registered OAuth client (else CIMD, else dynamic registration). */
  oauth?: OAuthClientOption
  /** MCP revision to speak (default `'auto'`). */
  protocol?: ProtocolSetting
  /**
   * `config`'s values are literal text, as an imported entry's are once its
   * variables are resolved ({@link McpHost.addServers} sets it): no `${…}` is
   * expanded (not even `${PLUGIN_ROOT}` / `${PLUGIN_DATA}`) or refused, and a
   * validation or launch error (`invalid_entry`, `command_not_found`,
   * `spawn_failed`) names the field, never its value. Default `false`.
   */
  literal?: boolean
  /**
   * More values to keep secret while the server is configured: each one (at
   * least 6 bytes; also as a URL path writes it, percent-encoded) is shown as
   * `[redacted]` in logs (a server's stderr too), errors, actions and state,
   * the customization `uri` included. {@link McpHost.addServers} passes an
   * imported server's {@link ImportedServer.secrets}. Besides these, a stdio
   * server's `env` values and a Streamable HTTP server's header values and
   * URL query are always secret.
   */
  secrets?: string[]
}

/**
 * Per-request options: the last parameter of every async request method of
 * {@link McpHost} (`callTool` has them in its single options object). Checked
 * first: a non-object, a `signal` that is not an AbortSignal or a `timeoutMs`
 * that is not a positive number of ms up to 2^31 − 1 throws `invalid_argument`
 * naming the field (`options.timeoutMs: must be a positive number of ms …`; the
 * parameter is `requestOptions` for `addServer`, `addPlugin` and `readAppResource`,
 * whose first parameter is their `options`).
 *
 * What an abort or a timeout stops, per method (docs/guide/tools-and-calls.md,
 * "Cancellation, timeouts and progress"):
 * - MCP requests (`listResources`, `listResourceTemplates`, `listPrompts`
 *   (the page in flight; no further page), `readResource`, `getPrompt`,
 *   `subscribeResource`, `unsubscribeResource`, `readAppResource`,
 *   `callTool`): not sent if not sent yet, else MCP `notifications/cancelled`
 *   once (MCP 2025-11-25 "Utilities › Cancellation"); a 2026-07-28
 *   subscription's `subscriptions/listen` stream is closed. A cancelled
 *   subscribe follows nothing; a cancelled unsubscribe has dropped the
 *   subscription all the same.
 * - `authorize`: the wait for the user ends and the loopback redirect
 *   listener closes, or the device grant stops polling (its `timeoutMs` is
 *   {@link AuthorizeOptions.timeoutMs}).
 * - `completeAuthorization`: the wait for the sign-in's outcome ends; a
 *   callback URL already handed over is the sign-in's all the same.
 * - `addServer`, `addPlugin`, `remove`, `setRoots`, `authenticate` (they
 *   settle soon and cannot be stopped half-way): an already-aborted signal
 *   rejects before anything happens; an abort or timeout while one runs
 *   rejects at once, and an add that then completes is removed again; a
 *   removal, new roots or a pushed token take effect all the same.
 *
 * Every request sharing one AbortSignal adds one `abort` listener between
 * them (removed when the last settles): no `MaxListenersExceededWarning`.
 */
export interface RequestOptions {
  /**
   * Aborting at any moment after the request started (even in the same tick) rejects
   * promptly with a {@link HostError} `code: 'cancelled'`, `name: 'HostError'`, `cause`:
   * `signal.reason` (a DOMException `AbortError`, or `TimeoutError` for
   * `AbortSignal.timeout()`), the reason's message appended to `message`. An
   * already-aborted signal rejects at once.
   */
  signal?: AbortSignal
  /**
   * Time allowed for the whole request (ms, > 0, at most 2^31 − 1); past it the
   * request is stopped as an abort would and rejects `timeout` with `data: {kind:
   * 'total', ms}`. Default: none (each MCP request is still bounded by
   * `limits.callTimeoutMs`).
   */
  timeoutMs?: number
}

/** One MCP `notifications/progress` of a call (MCP 2025-11-25 "Utilities › Progress"). */
export interface ProgressInfo {
  /** Progress so far; increases with each notification. */
  progress: number
  /** Total, when the server knows it. */
  total?: number
  /** Human-readable status, when the server sent one. */
  message?: string
}

/**
 * `error._meta["ahp-mcp-host/restart"]` of a crashed server's `error` state
 * (AHP `ErrorInfo._meta`) while its automatic restart is scheduled; absent
 * when no restart is coming (a failed start, the restart limit reached).
 */
export interface RestartScheduled {
  /** The backoff before the restart (ms): `limits.restartBackoffMs × 2^(attempt-1)`, capped. */
  delayMs: number
  /** Which restart in a row this is (from 1). */
  attempt: number
  /** `limits.maxRestarts`: after that many restarts in a row the server stays in `error`. */
  maxRestarts: number
}

/** Options of {@link McpHost.callTool}: common fields. */
interface CallToolCommon {
  arguments?: Record<string, unknown>
  /**
   * Aborting at any moment after `callTool()` was called (even in the same tick) rejects
   * promptly with code `cancelled` (`cause`: `signal.reason`): a call not yet sent is not
   * sent; a sent one gets MCP `notifications/cancelled` once (MCP 2025-11-25 "Utilities ›
   * Cancellation"). An already-aborted signal rejects at once. Rejects as
   * {@link RequestOptions.signal} describes.
   */
  signal?: AbortSignal
  /**
   * Called with the MCP `notifications/progress` of this call, in order,
   * before the call resolves; with or without `chat`. Every call carries a
   * `_meta.progressToken`. Only increasing `progress` is passed on (a
   * notification overtaken by a later one is dropped), at most one per
   * 20 ms (`PROGRESS_MIN_INTERVAL_MS`): within that the latest is kept and
   * passed on when the 20 ms end or before the result, so the last one
   * always arrives and a server flooding progress costs at most 50 calls a
   * second (and as many AHP chat actions). A throwing listener
   * does not affect the call: a `warn` log (target `host.progress`) says so.
   * Not a function: `invalid_argument` (`onProgress: must be a function …`).
   */
  onProgress?: (progress: ProgressInfo) => void
  /**
   * Inactivity limit (ms, clamped to 1 ms … 24 h), reset by each progress
   * notification; default the server's {@link ServerToolOptions.callTimeoutMs},
   * else `limits.callTimeoutMs`. It stands still while a
   * request of the server (elicitation, sampling, roots) waits on the app's
   * handler, and restarts from the full limit when the answer is sent.
   * It bounds the wait for a lazy server's start too
   * ({@link ServerStartOptions.start}: nothing comes from the server
   * meanwhile), and starts afresh when the request is sent.
   * Expiry: code `timeout`, `data.kind: 'inactivity'` (while the call waited
   * for a lazy start, the start goes on).
   */
  timeoutMs?: number
  /**
   * Absolute limit (ms, clamped to 1 ms … 24 h) from the call to its answer,
   * the wait for a lazy server's start included; progress never extends it.
   * Default the server's {@link ServerToolOptions.callMaxTotalMs}, else
   * `limits.callMaxTotalMs`. Expiry: code `timeout`, `data.kind: 'total'`
   * (while the call waited for a lazy start, the start goes on).
   */
  maxTotalTimeoutMs?: number
  /**
   * Model-facing output budget of this call (characters, clamped to 1 … 16 Mi;
   * with `chat` only): at most this much of the result goes into
   * `chat/toolCallComplete`, the rest cut with a marker and kept whole in a
   * private file under `dataDir` ({@link HostLimits.modelOutputMaxChars}
   * describes it). Default the server's
   * {@link ServerToolOptions.modelOutputMaxChars}, else
   * `limits.modelOutputMaxChars` (100 000). The promise's result is never cut.
   */
  modelOutputMaxChars?: number
  /**
   * The {@link HostTool.digest} the arguments were built against. Default:
   * the digest as of the last {@link McpHost.listTools}. If the tool changed
   * or disappeared since, the call fails with `stale_tool` before anything
   * reaches the server.
   */
  digest?: string
  /**
   * Run as this AHP tool call (give `chat`, `turnId` and `toolCallId`
   * together). The host emits on the chat channel
   * `chat/toolCallContentChanged` (progress), `chat/toolCallAuthRequired` /
   * `chat/toolCallAuthResolved` (step-up; with `session/inputNeededSet` /
   * `session/inputNeededRemoved` of kind `toolAuthentication` on the
   * session) and `chat/toolCallComplete`. A form elicitation of the server
   * during the call (2025-era `elicitation/create`, or an MRTR
   * `input_required` round) becomes `chat/inputRequested` plus
   * `session/inputNeededSet` of kind `chatInput`, answered by the app's
   * `elicitation` handler or an AHP client's `chat/inputCompleted`,
   * whichever comes first; one still open when the call ends is withdrawn
   * (`chat/inputCompleted` `cancel`, `session/inputNeededRemoved`) before
   * `chat/toolCallComplete`. Time waiting for the answer does not count
   * against `timeoutMs`; `maxTotalTimeoutMs` still holds. Over stdio an
   * `elicitation/create` carries no link to its call: it is published only
   * while its call is the server's only tool call in flight.
   *
   * The harness dispatches the call's `chat/toolCallStart` itself, with
   * `contributor: {kind: 'mcp', customizationId}` (the entry's
   * {@link HostTool.customizationId}); for an App tool (its
   * `_meta.ui.resourceUri` is a `ui://` URI) also with `_meta: {ui}`, the
   * catalogue entry's `_meta.ui`, so the client finds
   * {@link McpServerCustomization.mcpApp} and the `channel` on that
   * customization (AHP "MCP Apps › Identifying an App tool call"). With
   * `mcpApps`, every tool-call action the host emits for an App tool call
   * (`chat/toolCallContentChanged`, `chat/toolCallAuthRequired`,
   * `chat/toolCallAuthResolved`, `chat/toolCallComplete`, and the tool call
   * of `session/inputNeededSet`) carries that `_meta.ui` verbatim (a
   * progress action's `_meta` is `{progress, ui}`, since the reducer
   * replaces `_meta`), up to {@link HostLimits.maxAppUiMetaBytes}. Without
   * `mcpApps`, or for an ordinary tool, `_meta` is as before.
   */
  chat?: URI
  turnId?: string
  toolCallId?: string
  /** Name used in AHP messages; default the tool's `title`, else its `annotations.title`, else its name. */
  displayName?: string
  /**
   * When the server answers with a task (Tasks extension
   * `io.modelcontextprotocol/tasks`, SEP-2663: `resultType: "task"`),
   * resolve with its {@link McpTaskHandle} instead of following the task to
   * its end; the host then neither polls nor records it. A server that
   * answers with a result resolves it as usual. Default `false`. Not a
   * boolean: `invalid_argument` (`options.taskHandle: must be a boolean …`).
   */
  taskHandle?: boolean
}

/**
 * The task handle a server answered `tools/call` with (SEP-2663
 * `CreateTaskResult`), resolved by {@link McpHost.callTool} with
 * `taskHandle: true`. The host neither polls nor records such a task and has
 * no method of its own to poll it: the handle is for showing the task or
 * handing it on (its `tasks/get`, `tasks/update`, `tasks/cancel` go to the
 * same server, by `taskId`).
 */
export interface McpTaskHandle {
  resultType: 'task'
  /** The server's task id. */
  taskId: string
  /** `working` or `input_required` (rarely already terminal). */
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'
  /** Human-readable status, when the server gave one. */
  statusMessage?: string
  /** ISO 8601 creation time. */
  createdAt: string
  /** ISO 8601 time of the last change. */
  lastUpdatedAt: string
  /** Time to live from `createdAt` (ms); `null`: unlimited. */
  ttlMs: number | null
  /** Suggested polling interval (ms). */
  pollIntervalMs?: number
  _meta?: Record<string, unknown>
}

/** Call by catalogue name ({@link HostTool.name}). */
export interface CallToolByName extends CallToolCommon {
  serverId?: undefined
  /** The model-safe catalogue name. */
  name: string
}

/** Call by server and original name (also reaches tools outside the catalogue, e.g. MCP Apps' app-only tools). */
export interface CallToolOnServer extends CallToolCommon {
  /** The server's customization id. */
  serverId: string
  /** The tool's original name ({@link HostTool.toolName}). */
  name: string
}

export type CallToolOptions = CallToolByName | CallToolOnServer

/** A log record: host diagnostics and each server stderr line (`target: 'server.stderr'`). */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error'
  /**
   * `server.stderr`, `server.log` (MCP logging), `host.stdio`, `host.supervisor`, `host.config`,
   * `host.apps` (MCP Apps: an App tool's `_meta.ui` left off for its size),
   * `host.mcpApp` (an MCP App's `notifications/message` on an `mcp://` channel, and refused channel notifications),
   * `host.progress` (a `callTool` `onProgress` listener threw; emitted by the JS wrapper),
   * `host.requests` (a request handler of {@link RequestHandlers} threw or rejected: the server
   * got an error answer; emitted by the JS wrapper),
   * `host.process` (Linux: a descendant of a stdio server left its process group; it is ended with the server),
   * `host.tasks` (task records under `dataDir`: unreadable files, dropped records),
   * `host.logging` (the level of {@link McpHost.setLogLevel} set again on a new connection: `info`, or `warn` with why not),
   * `host.policy` (each {@link ServerPolicyDecision}: `warn` for a denial or a failed {@link TrustCallback}, whose
   * throw the JS wrapper adds; `info` for questions and answers; `debug` for a start let through),
   * `host.notifications`, `host.requests`, `host.events` (also counts of what a flood lost:
   * notifications dropped, server requests refused past their cap, log records dropped
   * while JS was behind). Floods are bounded (docs/reliability.md, "Floods"): a server's
   * `server.log` and `server.stderr` records are paced (1,000 at once, then 200 per second;
   * the rest counted in a `warn` record of the same target) and a stderr line is cut at 8 KiB.
   */
  target: string
  message: string
  serverId?: string
  /**
   * MCP logging only (target `server.log`): the `level` the server sent in
   * `notifications/message`, verbatim (a string; any other JSON value as its
   * JSON text). `level` is the nearest of the four: `debug` ← debug (and
   * `trace`, `verbose`, …); `info` ← info, notice (and any unknown text);
   * `warn` ← warning (and `warn…`); `error` ← error, critical, alert,
   * emergency (and `fatal`, `severe`, …). A level MCP does not define is
   * delivered this way, never dropped for its level.
   *
   * A server's records (`server.log`, `server.stderr`, the host's records
   * about it) and its other events reach JS in the order the host received
   * them: MCP log messages in the order the server sent them, stderr lines
   * in the order written (stdout and stderr are two pipes: their relative
   * order is the order the host read them).
   */
  serverLevel?: string
}

/**
 * Stable error codes (`err.code`, always a string; `tests/error_codes.rs`
 * checks this list against the Rust `ErrorCode`). An id, name or URI argument
 * that is not a non-empty string is refused with `invalid_argument` naming it.
 * A chat tool call paused for authentication whose server leaves `ready`
 * rejects with `server_stopped` (stop request), `server_disabled` (toggled
 * off), `server_removed` (`remove`), `server_exited` (crash),
 * `server_restarted` (start request while running) or `disposed`.
 * `not_supported`: the server did not declare the capability a request needs
 * (`resources`, `prompts`); the request was not sent. Also
 * {@link McpHost.authorize} with `flow: 'deviceCode'` at an authorization
 * server that advertises no `device_authorization_endpoint` (RFC 8628 §4).
 * Task-based tool calls (Tasks extension, SEP-2663): `task_failed` (the task
 * ended `failed`; `data` is its JSON-RPC error `{code, data}`),
 * `task_cancelled` (the server cancelled it), `task_expired` (the server no
 * longer knows it, or a recorded task outlived its `ttlMs`).
 * `tool_disabled`: the server's tool filter leaves the tool out
 * ({@link ServerToolOptions}, {@link McpHost.setToolEnabled}); nothing was sent.
 * `credential_store_failed`: the credential store ({@link McpHostOptions.credentials})
 * could not keep or give back OAuth credentials (the OS keychain is not
 * reachable, locked or did not answer; a method of the app's store threw);
 * the message names the store, and nothing falls back to memory.
 * `policy_denied`: the app's {@link ServerPolicy} refuses the server (a
 * `deny` rule matched, or no rule of an `allow` list did); the server is
 * published in `error` with this code and never starts.
 * `trust_refused`: the app's {@link McpHostOptions.trust} callback refused
 * the server's configuration (now, or earlier and remembered); the server
 * is `stopped`. `trust_failed`: that callback threw, answered something
 * else, or did not answer within `limits.trustTimeoutMs`; not remembered.
 * `sandbox_denied`: a sandboxed stdio server ({@link SandboxOptions}) failed
 * because the sandbox refused it something: it exited with a permission error
 * on stderr (`EACCES`, `EPERM`, "Permission denied", "Operation not
 * permitted"), before `initialize` or later (a crash: the restart policy
 * applies as for `server_exited`), or executing its program was refused; the
 * message starts `sandbox denied: ` and carries the exit and stderr tail. Add
 * what it needs to its profile. `sandbox_unavailable`: the sandbox cannot be
 * set up as asked (`enforce: 'required'` where a part of the profile is not
 * enforced, listed in the message; the rules or the proxy could not be made);
 * the server does not run.
 */
export type HostErrorCode =
  | 'invalid_argument'
  | 'invalid_config'
  | 'invalid_entry'
  | 'not_found'
  | 'already_exists'
  | 'server_not_ready'
  | 'not_supported'
  | 'server_exited'
  | 'server_stopped'
  | 'server_disabled'
  | 'server_removed'
  | 'server_restarted'
  | 'startup_timeout'
  | 'spawn_failed'
  | 'command_not_found'
  | 'command_outside_root'
  | 'connect_failed'
  | 'redirect_refused'
  | 'auth_discovery_failed'
  | 'auth_required'
  | 'auth_failed'
  | 'auth_denied'
  | 'credential_store_failed'
  | 'invalid_params'
  | 'protocol_error'
  | 'cancelled'
  | 'timeout'
  | 'limit_exceeded'
  | 'stale_tool'
  | 'rejected'
  | 'disposed'
  | 'internal'
  | 'skill_verification_failed'
  | 'task_failed'
  | 'task_cancelled'
  | 'task_expired'
  | 'tool_disabled'
  | 'url_elicitation_required'
  | 'policy_denied'
  | 'trust_refused'
  | 'trust_failed'
  | 'sandbox_denied'
  | 'sandbox_unavailable'

/**
 * What a {@link CredentialStore} method may return: a Promise, any
 * thenable (`PromiseLike`, e.g. VS Code's `Thenable`) or the value itself.
 */
export type MaybePromiseLike<T> = T | PromiseLike<T>

/** The methods every {@link CredentialStore} has. */
export interface CredentialStoreBase {
  /** The value stored under `key`; `undefined` or `null` when there is none. */
  get(key: string): MaybePromiseLike<string | undefined | null>
  /** Forgets `key` (a key not stored is no error). */
  delete(key: string): MaybePromiseLike<void>
}

/** A credential store with `set` (a `Map`-like store, a keychain wrapper). */
export interface CredentialStoreWithSet extends CredentialStoreBase {
  /** Stores `value` (JSON text) under `key`. */
  set(key: string, value: string): MaybePromiseLike<void>
}

/**
 * A credential store with `store` instead of `set`: the shape of VS Code's
 * `SecretStorage` (`context.secrets`), which is passed as is (its `keys`
 * and `onDidChange` are not used).
 */
export interface CredentialStoreWithStore extends CredentialStoreBase {
  /** Stores `value` (JSON text) under `key`; an alias of {@link CredentialStoreWithSet.set}. */
  store(key: string, value: string): MaybePromiseLike<void>
}

/**
 * A secret store the host keeps OAuth credentials in (host option
 * `credentials`): `{get, set, delete}` or VS Code's `SecretStorage`
 * (`{get, store, delete}`; `set` wins when both exist). Each method may
 * return a Promise, a thenable or a plain value. Checked when the host is
 * made: anything else throws a {@link HostError} `invalid_argument` naming
 * the field (`options.credentials.get: must be a function …`; neither `set`
 * nor `store`: `options.credentials.set: …`). A method that throws or
 * rejects fails the OAuth step that needed it with `credential_store_failed`
 * (`credential store: …`).
 */
export type CredentialStore = CredentialStoreWithSet | CredentialStoreWithStore

/**
 * What the user of a device authorization grant (RFC 8628 §3.3) is shown:
 * the `deviceCode` of the `authorizationUrl` event (and the second argument
 * of {@link AuthorizeOptions.openUrl}). Show `userCode` and
 * `verificationUri` (a terminal, a notification with a copy button), or
 * open `verificationUriComplete`, which has the code filled in. The user
 * code is in this event only, never in actions, state, logs or errors; the
 * device code never leaves the host.
 */
export interface DeviceCodePrompt {
  /** The code the user enters (`user_code`; at most 64 characters). */
  userCode: string
  /** Where the user enters it (`verification_uri`: `https`, or `http` to loopback; at most 2 KiB). */
  verificationUri: string
  /** The same page with the code filled in (`verification_uri_complete`), when the server gives one. */
  verificationUriComplete?: string
  /**
   * How long the host polls for the user's approval (ms): the server's
   * `expires_in`, at most 30 min and at most the sign-in's
   * {@link AuthorizeOptions.timeoutMs}. Then `authorize` rejects `timeout`.
   */
  expiresInMs: number
}

/** Options of {@link McpHost.authorize}. */
export interface AuthorizeOptions {
  /**
   * Called with the URL to open (in addition to the `authorizationUrl`
   * event), and for a device authorization grant with the
   * {@link DeviceCodePrompt} to show.
   */
  openUrl?: (url: string, deviceCode?: DeviceCodePrompt) => void
  /**
   * Scopes to request. Default: on a 403 `insufficient_scope` step-up, the
   * union of the scopes already granted to the stored credentials and the
   * challenge's `scope`, granted first (MCP 2026-07-28 "Scope Challenge
   * Handling", SEP-2350); otherwise the challenge's `scope`, else
   * `scopes_supported`, else none.
   */
  scopes?: string[]
  /**
   * Time allowed for the whole sign-in (ms): the user, the redirect and the
   * token exchange (a token response that trickles too); for a device
   * grant, the polling too. Default 300 000. Expiry: `timeout`.
   */
  timeoutMs?: number
  /**
   * A redirect URI the app receives the callback on, registered (dynamic
   * registration) and sent in the authorization request instead of the
   * loopback listener's, which is then not opened (RFC 8252 §7): a
   * private-use scheme (`com.example.app:/oauth/callback`,
   * `vscode://publisher.ext/callback`), a claimed `https` URL the app
   * handles, or `http` to a loopback listener of the app's own. A
   * pre-registered client ({@link OAuthClientOption.clientId}) or the app's
   * Client ID Metadata Document (`clientMetadataUrl`) must list it. The app
   * hands the URL it receives to {@link McpHost.completeAuthorization}.
   * Rejects `invalid_argument` (`options.redirectUri: …`) for a URI over
   * 2 KiB, not absolute, with a fragment (RFC 6749 §3.1.2) or userinfo,
   * `http` to a non-loopback host, or a scheme no app can receive
   * (`javascript`, `data`, `file`, `blob`, `about`, `vbscript`, `ws`, `wss`).
   */
  redirectUri?: string
  /**
   * How the user signs in (RFC 8628 for the device grant):
   * - `'authorizationCode'` (default): a browser, redirected to the
   *   loopback listener or {@link AuthorizeOptions.redirectUri}; but the
   *   device grant when the authorization server advertises a
   *   `device_authorization_endpoint` and cannot run this one (its
   *   `grant_types_supported` lacks `authorization_code`, or its
   *   `response_types_supported` lacks `code`);
   * - `'deviceCode'`: the device authorization grant; `not_supported` when
   *   the authorization server advertises no `device_authorization_endpoint`;
   * - `'auto'`: the device grant when it is advertised, else the browser:
   *   what a host with no browser or no way back should ask for (an SSH
   *   session, a container, VS Code Remote), as VS Code and Codex do.
   *
   * The device grant registers a public client for it (`grant_types`:
   * `urn:ietf:params:oauth:grant-type:device_code`, `refresh_token`) unless
   * the server has a pre-registered client or CIMD applies, sends RFC 8707
   * `resource` and the scopes of an authorization code sign-in, and polls
   * the token endpoint every `interval` s (5 when absent, at least 1), 5 s
   * more after each `slow_down`, backing off (up to 30 s) when it cannot be
   * reached, for at most `expires_in` (30 min at most) and `timeoutMs`.
   * `access_denied` rejects `auth_denied`; `expired_token` (or the end of
   * that time) rejects `timeout`. DPoP applies as for the browser sign-in.
   */
  flow?: 'authorizationCode' | 'deviceCode' | 'auto'
  /**
   * Aborting ends the sign-in: the wait for the user ends, the loopback
   * redirect listener closes, and it rejects `cancelled` (`cause`:
   * `signal.reason`), the server staying `authRequired`.
   */
  signal?: AbortSignal
  /** Enterprise ID token for `grant: 'enterpriseManaged'` (a secret). */
  idToken?: string
  /**
   * The workload JWT for `grant: 'jwtBearer'` (SEP-1933 workload identity
   * federation; a secret): a JWT the workload platform issued to this
   * process (Kubernetes service-account token, CI OIDC token, SPIFFE
   * JWT-SVID) whose `aud` the authorization server accepts (its token
   * endpoint or issuer). Redeemed once with the RFC 7523 §2.1 JWT-bearer
   * grant; pass a fresh one on each `authorize` (there is no refresh).
   * Without it, `authorize` rejects `invalid_argument`.
   */
  assertion?: string
}

/**
 * A server's host-side OAuth setting (not part of `mcp.json`): a
 * pre-registered client (`clientId`, its secret or key, its grant) and the
 * server's overrides (`scopes`, `authServerMetadataUrl`, `callbackPort`,
 * `resource`: the settings Claude Code's `oauth` and Codex's `scopes` /
 * `oauth_resource` have). Without `clientId` the host identifies itself
 * by the app's Client ID Metadata Document (`clientMetadataUrl`, when the
 * authorization server supports CIMD), else by dynamic registration.
 * Checked by `addServer` / `addPlugin`: `invalid_argument` naming
 * `options.oauth.<field>` (`options.servers.<name>.oauth.<field>`).
 *
 * For the `authorizationCode` and `clientCredentials` grants, when the authorization server advertises `ES256` in
 * `dpop_signing_alg_values_supported` (RFC 9449 §5.1; the MCP DPoP extension,
 * SEP-1932) the host uses DPoP with no option to set: a fresh P-256 key per
 * host and server (memory only, never logged), a proof on every token
 * request (code exchange, refresh, client credentials), the `DPoP`-bound
 * token presented as `Authorization: DPoP <token>` with a fresh proof
 * (`htm`, `htu`, `iat`, `jti`, `ath`) on every MCP HTTP request, and the
 * nonces of the authorization server (§8, `use_dpop_nonce` at the token
 * endpoint) and of the MCP server (§9, a 401 `DPoP error="use_dpop_nonce"`)
 * answered once each, then reused. The enterprise-managed and JWT-bearer
 * grants give bearer tokens.
 */
export interface OAuthClientOption {
  /**
   * The client id registered with the authorization server. For
   * `jwtBearer` it identifies the workload client and is sent as
   * `client_id` (with HTTP Basic when `clientSecret` is set). Required by
   * every `grant` but `authorizationCode`, and by `clientSecret` and
   * `privateKeyPem`.
   */
  clientId?: string
  /** Secret of a confidential client; never appears in state, logs or errors. */
  clientSecret?: string
  /**
   * `authorizationCode` (default: a user signs in in a browser);
   * `clientCredentials` (SEP-1046 machine client: `clientSecret` or `privateKeyPem`);
   * `enterpriseManaged` (SEP-990 cross-app access: `idp`, and `authorize({idToken})`);
   * `jwtBearer` (SEP-1933 workload identity federation: `authorize({assertion})`
   * with a workload JWT, redeemed with the RFC 7523 §2.1 JWT-bearer grant at the
   * server's authorization server with RFC 8707 `resource`; no browser, no
   * registration, no refresh; a refusal rejects `auth_failed` naming the OAuth
   * `error`, never the assertion, and is not retried with another grant).
   */
  grant?: 'authorizationCode' | 'clientCredentials' | 'enterpriseManaged' | 'jwtBearer'
  /** PEM private key for `private_key_jwt` client authentication (RFC 7523); a secret. */
  privateKeyPem?: string
  /** JWS algorithm of `privateKeyPem`. Default `ES256`. */
  signingAlgorithm?: 'ES256' | 'ES384' | 'RS256' | 'RS384' | 'RS512'
  /** The enterprise identity provider for `enterpriseManaged`. */
  idp?: { issuer: string; tokenEndpoint: string; clientId: string; clientSecret?: string }
  /**
   * Scopes to request when {@link AuthorizeOptions.scopes} names none and
   * no 403 `insufficient_scope` step-up asks for more (then the union of
   * the granted and the challenged scopes), instead of the challenge's
   * `scope` or `scopes_supported`; also those of the `clientCredentials`,
   * `enterpriseManaged` and `jwtBearer` grants. `offline_access` is added
   * when the authorization server lists it.
   */
  scopes?: string[]
  /**
   * The authorization server's RFC 8414 (or OpenID Connect) metadata URL,
   * read instead of RFC 9728 → RFC 8414 discovery: for a server whose
   * protected resource metadata is missing or names another authorization
   * server. `https`, or `http` to a loopback host (`invalid_argument`
   * otherwise). Configured by the app, it is not under the address rule
   * that guards the URLs a server names (like `idp.tokenEndpoint`); the
   * endpoints it names are. Stored tokens are those of its `issuer`. A
   * server without protected resource metadata is shown `authRequired`
   * naming that issuer.
   */
  authServerMetadataUrl?: string
  /** Port of this server's loopback redirect listener (0–65535; 0: a random port); wins over {@link McpHostOptions.oauthRedirectPort}. */
  callbackPort?: number
  /**
   * The RFC 8707 resource indicator sent in the authorization request and
   * every token request (code exchange, refresh, device, client
   * credentials, enterprise-managed, JWT bearer) instead of the server's
   * URL: for an authorization server that knows the server by another
   * identifier. An absolute URI without a fragment (RFC 8707 §2).
   */
  resource?: string
}

/** AHP `authenticate` parameters. */
export interface AuthenticateParams {
  /** `resource` of the advertised RFC 9728 metadata. */
  resource: URI
  /** Bearer access token; empty string revokes. */
  token: string
  /** Seconds until expiry, already reduced by the client. */
  expiresIn?: number
  /** Scopes the token grants; checked against `requiredScopes` before any retry. */
  scopes?: string[]
}

/**
 * Error thrown by every command. `code` is always one of the stable strings
 * of {@link HostErrorCode}. `data` carries structured detail, e.g. an MCP
 * server's JSON-RPC error `{code, data}` for `protocol_error`.
 */
export declare class HostError extends Error {
  constructor(code: HostErrorCode, message: string, data?: unknown, rpcCode?: number)
  readonly name: 'HostError'
  /** The stable string code; never a number. */
  readonly code: HostErrorCode
  /**
   * The AHP JSON-RPC error number (AHP 1.0 "Errors"), present only on AHP
   * errors: `-32007` (AuthRequired) with `code: 'auth_required'`, `-32602`
   * (InvalidParams) with `code: 'invalid_params'`. An MCP server's own
   * JSON-RPC code is not here but in `data.code` (`protocol_error`).
   */
  readonly rpcCode?: number
  readonly data?: HostErrorData
}

/**
 * The `data` of a {@link HostError} `url_elicitation_required` (SEP-1036):
 * a `tools/call` the server answered `-32042` "URL elicitation required"
 * (MCP 2025-11-25 "Client Features › Elicitation") did not go on. `reason`:
 * `'unanswerable'` (not an AHP chat call and no URL
 * {@link ElicitationRegistration}: nobody could show the URLs), `'decline'` /
 * `'cancel'` (the user's answer, or a handler that failed: `'cancel'`),
 * `'requiredAgain'` (the one retry after completion got `-32042` again).
 * Each elicitation as it may be shown: its id, the server's message and the
 * URL's origin, never the URL (its query may hold a secret).
 */
export interface UrlElicitationRequiredData {
  reason: 'unanswerable' | 'decline' | 'cancel' | 'requiredAgain'
  elicitations: Array<{ elicitationId: string; message: string; origin: string }>
}

/**
 * The `data` of a {@link HostError}, by the code that carries it (see each
 * method's Errors):
 * - `protocol_error`, `task_failed`: the MCP server's JSON-RPC error `{code, data}`;
 * - `auth_required` / `invalid_params` of `authenticate`: `{resources?}` (AHP);
 * - `auth_required` of a request (RFC 6750 challenge): `{code: -32007, insufficientScope, requiredScopes}`;
 * - `timeout`: `{kind: 'inactivity' | 'total', ms}`, or `{kind: 'ready', ms, serverId}` from `whenReady`;
 * - `stale_tool`: `{reason: 'changed' | 'removed', serverId?, toolName?}`;
 * - `skill_verification_failed`: `{serverId, uri, file, reason: 'size' | 'digest' | 'frontmatter'}`;
 * - `tool_disabled`: `{serverId, toolName, reason}` (`reason` as the tool's `filtered` {@link ToolDiagnostic});
 * - `url_elicitation_required`: {@link UrlElicitationRequiredData} (never a URL);
 * - `whenReady`'s `connect_failed`, `auth_required`, …: `{serverId, state}`.
 */
export type HostErrorData =
  | { code: number; data: unknown }
  | { code?: number; resources?: ProtectedResourceMetadata[] }
  | { code: -32007; insufficientScope: boolean; requiredScopes: string[] }
  | { kind: 'inactivity' | 'total'; ms: number }
  | { kind: 'ready'; ms: number; serverId: string }
  | { kind: 'ready'; ms: number; serverIds: string[] }
  | { serverIds: string[] }
  | { reason: 'changed' | 'removed'; serverId?: string; toolName?: string }
  | { serverId: string; uri: string; file: string; reason: 'size' | 'digest' | 'frontmatter' }
  | { serverId: string; toolName: string; reason: string }
  | UrlElicitationRequiredData
  | { serverId: string; state: McpServerState }

// ─── MCP Apps: the mcp:// channel ────────────────────────────────────────────

/** A JSON-RPC id: a string or a number (never `null` in a request). */
export type JsonRpcId = string | number

/**
 * An MCP JSON-RPC request on an `mcp://` channel (AHP "MCP Servers › MCP
 * Apps"): `channel` is the `McpServerCustomization.channel` of a ready server.
 */
export interface McpChannelRequest {
  jsonrpc: '2.0'
  id: JsonRpcId
  method: string
  params?: Record<string, unknown>
  channel: URI
}

/** An MCP JSON-RPC notification on an `mcp://` channel (no `id`; never answered). */
export interface McpChannelNotification {
  jsonrpc: '2.0'
  method: string
  params?: Record<string, unknown>
  channel: URI
}

/**
 * The response to an {@link McpChannelRequest}, with the client's own `id`
 * (string or number, unchanged; `null` for a message too malformed to have
 * one). `error.data.code` is a stable {@link HostErrorCode} on every
 * host-made error; a server's own JSON-RPC error passes through unchanged.
 */
export type McpChannelResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: Record<string, unknown>; channel: URI }
  | {
      jsonrpc: '2.0'
      id: JsonRpcId | null
      error: { code: number; message: string; data?: { code?: HostErrorCode; uri?: string; [key: string]: unknown } | unknown }
      channel: URI
    }

/** Any message on an `mcp://` channel. */
export type McpChannelMessage = McpChannelRequest | McpChannelNotification | McpChannelResponse

/**
 * What `McpHost.onAction`, `onLog`, … return (VS Code's `Disposable`
 * shape): `dispose()` removes that one listener; calling it again does
 * nothing. Also `[Symbol.dispose]`, so `using sub = host.onLog(…)` works
 * (TypeScript 5.2+).
 */
export interface Disposable {
  /** Removes the listener this subscription added (only that one); idempotent. */
  dispose(): void
  /** The same as {@link Disposable.dispose}: what `using` calls at the end of its block. */
  [Symbol.dispose](): void
}

/** The outcome of one server's start in {@link McpHost.whenReady} over many servers. */
export type ReadyOutcome =
  | { serverId: string; status: 'ready'; info: ServerInfo }
  | { serverId: string; status: 'failed'; error: HostError }
  | { serverId: string; status: 'background' }

/** Options of {@link McpHost.whenReady}. */
export interface WhenReadyOptions {
  /**
   * Aborting rejects the wait (only the wait: the server goes on starting)
   * with code `cancelled`, `cause`: `signal.reason`; an already-aborted
   * signal rejects at once. Any number of waits may share one signal (one
   * `abort` listener per host and signal). Not an AbortSignal: `invalid_argument`.
   */
  signal?: AbortSignal
  /**
   * Gives up after this many milliseconds (0 to 2^31 - 1) with code
   * `timeout`, `data: {kind: 'ready', ms, serverId}`; the server goes on
   * starting. Default: none (a start is bounded anyway: by `startupTimeoutMs`,
   * then `startup_timeout`).
   */
  timeoutMs?: number
}

// ─── Reducers and the state mirror (issue 12) ────────────────────────────────

/**
 * AHP 1.0 `ChatState` (a chat channel's state). The fields every chat has
 * are typed; turns, the active turn and its response parts (tool calls in
 * their `status`) follow the `ahp-types` wire format.
 */
export interface ChatState {
  resource: URI
  title: string
  /** `SessionStatus` bit flags, as on the session. */
  status: number
  modifiedAt: string
  turns: unknown[]
  activeTurn?: { id: string; responseParts: unknown[]; [key: string]: unknown }
  [key: string]: unknown
}

/**
 * Any AHP 1.0 `StateAction` (wire form, discriminated by `type`): the
 * actions this host emits or accepts ({@link HostAction}), and the others
 * of AHP (e.g. `chat/toolCallStart`, `chat/turnStarted`).
 */
export type StateAction = HostAction | { type: string; [key: string]: unknown }

/**
 * What a reducer did (the `ahp` crate's `ReduceOutcome`): `applied` (the
 * action was applied; note the `ahp` 1.0.0 tool-call reducers say `applied`
 * whenever the call is found, even if its status rule left it unchanged),
 * `noOp` (recognized, but nothing to change: unknown id, stale status),
 * `outOfScope` (an action of another channel's reducer, or of a type this
 * version does not know), `invalid` (refused; the state is unchanged and
 * `error` says why).
 */
export type ReduceOutcome = 'applied' | 'noOp' | 'outOfScope' | 'invalid'

/** The answer of {@link reduceSession} / {@link reduceChat}: a new state object (the input is not changed). */
export interface ReduceResult<S> {
  state: S
  outcome: ReduceOutcome
  /** Only with `outcome: 'invalid'`: the reducer's reason. */
  error?: string
}

/**
 * Applies one action to a session state with the `ahp` crate's session
 * reducer (`ahp::reducers::apply_action_to_session`, AHP 1.0 "State model ›
 * Reducers"), through the native addon. Pure: `state` is not changed.
 * Throws {@link HostError} `invalid_argument` naming `state` (not an object,
 * or not a `SessionState`: the message gives the field) or `action` (not an
 * object with a string `type`, or not serializable).
 */
export declare function reduceSession(state: SessionState, action: StateAction): ReduceResult<SessionState>

/**
 * Applies one action to a chat state with the `ahp` crate's chat reducer
 * (`ahp::reducers::apply_action_to_chat`), through the native addon. Pure.
 * Throws {@link HostError} `invalid_argument` naming `state` or `action`, as
 * {@link reduceSession}.
 */
export declare function reduceChat(state: ChatState, action: StateAction): ReduceResult<ChatState>

/** The reducers an {@link AhpStateMirror} applies actions with: the native ones, or `loadReducers()` of `ahp-mcp-host/reducers-wasm`. */
export interface AhpReducers {
  reduceSession(state: SessionState, action: StateAction): ReduceResult<SessionState>
  reduceChat(state: ChatState, action: StateAction): ReduceResult<ChatState>
}

/**
 * A state to (re)start a mirror from: `host.getState()` as `session` with
 * the `serverSeq` of the last envelope it includes, or an AHP `Snapshot`'s
 * `state` and `fromSeq`. Parts not given keep their mirrored state.
 */
export interface MirrorSnapshot {
  serverSeq: number
  session?: SessionState
  /** Chat states by chat channel URI. */
  chats?: { [uri: string]: ChatState }
}

/** What {@link AhpStateMirror.dispatch} returns: send `action` to the host with `origin: {clientId, clientSeq}` (e.g. `host.dispatch(action, {clientId: mirror.clientId, clientSeq})`). */
export interface MirrorDispatch {
  channel: URI
  clientSeq: number
  action: StateAction
}

/** Events of {@link AhpStateMirror}, by name. */
export interface AhpStateMirrorEvents {
  /** The visible state of `channel` changed (an envelope, a dispatch, a rollback, a seed). */
  change: { channel: URI }
  /** An envelope skipped `serverSeq`s: nothing more is applied until {@link AhpStateMirror.seed}. */
  gap: { expected: number; got: number }
  /** An envelope with a `serverSeq` already applied; ignored. */
  duplicate: { serverSeq: number }
  /** The host refused a pending dispatch (`rejectionReason`); it was removed without being applied. */
  rejected: { clientSeq: number; channel: URI; action: StateAction; reason: string }
  /** The host's echo of a pending dispatch arrived and was applied to the confirmed state. */
  confirmed: { clientSeq: number }
}

/** Options of {@link AhpStateMirror}. */
export interface AhpStateMirrorOptions {
  /** The session channel URI (the host's `session` option); every other channel is a chat. */
  session: URI
  /** Default (from `ahp-mcp-host`): the native {@link reduceSession} / {@link reduceChat}. Required from `ahp-mcp-host/mirror`. */
  reducers?: AhpReducers
  /** The `origin.clientId` of this mirror's dispatches; default a random `mirror-…`. */
  clientId?: string
  /** Start state; default the host's empty session at `serverSeq` 0. */
  snapshot?: MirrorSnapshot
}

/**
 * A client-side mirror of one AHP host's state (the session channel and the
 * chat channels it emits on), fed with {@link ActionEnvelope}s from
 * `host.on('action')` or any transport (AHP 1.0 "Actions › Envelopes";
 * the client rules of the `ahp` crate's state mirror). Plain JavaScript: the
 * `ahp-mcp-host/mirror` build imports nothing and runs in a browser.
 *
 * Envelopes form one `serverSeq` stream over all channels: one at or below
 * the last is a `duplicate` (ignored); one beyond the next is a `gap`
 * (nothing further is applied until {@link AhpStateMirror.seed}).
 * Optimistic dispatch: {@link AhpStateMirror.dispatch} keeps the action
 * pending by `clientSeq`; the echo whose `origin` matches confirms it
 * (applied to the confirmed state in `serverSeq` order), an echo with
 * `rejectionReason` drops it unapplied; the visible state is the confirmed
 * state with the remaining pending actions re-applied in order. Other
 * envelopes with `rejectionReason` are not applied. A chat without a
 * snapshot starts empty (no turns). Returned states are shared: do not
 * mutate them.
 *
 * Throws `TypeError` for a missing `session` or `reducers`, a dispatch
 * without a channel or action, a seed without `serverSeq`; the reducers'
 * `invalid_argument` for an envelope whose action is not an object.
 */
export declare class AhpStateMirror {
  constructor(options: AhpStateMirrorOptions)
  /** The `origin.clientId` of this mirror's dispatches. */
  readonly clientId: string
  /** The last `serverSeq` applied or seeded. */
  readonly serverSeq: number
  /** Optimistic actions not yet echoed. */
  readonly pending: number
  /** The session: confirmed state with the pending actions applied. */
  readonly session: SessionState
  /** The chat channels the mirror holds a state of. */
  readonly chatUris: URI[]
  /** A chat's visible state, or `undefined` if no envelope, snapshot or dispatch named it. */
  chat(uri: URI): ChatState | undefined
  /** Applies one envelope of the host's stream. */
  receive(envelope: ActionEnvelope<StateAction>): void
  /** Applies `action` optimistically on `channel`; send the result to the host. */
  dispatch(channel: URI, action: StateAction): MirrorDispatch
  /** Replaces the given parts of the state and the `serverSeq`; resumes after a gap. Pending actions stay. */
  seed(snapshot: MirrorSnapshot): void
  on<E extends keyof AhpStateMirrorEvents>(event: E, listener: (payload: AhpStateMirrorEvents[E]) => void): this
  off<E extends keyof AhpStateMirrorEvents>(event: E, listener: (payload: AhpStateMirrorEvents[E]) => void): this
}

// ─── Skills (SEP-2640) ───────────────────────────────────────────────────────

/** One file of a skill's manifest (SEP-2640 `SkillResource`). */
export interface SkillResource {
  uri: string
  /** `sha256:` + 64 lowercase hex digits, over the file's raw bytes. */
  digest: string
  /** Length of the raw bytes. */
  size: number
}

/** A skill entry as listed by a server ({@link McpHost.listSkills}). */
export interface SkillEntry {
  /** The host's id of the server that listed it. */
  serverId: string
  /** The skill's `SKILL.md` URI (`''` when the entry has none). */
  uri: string
  /** `frontmatter.name` (`''` when absent). */
  name: string
  /** `frontmatter.description` (`''` when absent). */
  description: string
  /** The entry's frontmatter, verbatim. */
  frontmatter: { name: string; description: string; [key: string]: unknown }
  /** The manifest, or `"dynamic"` (such a skill cannot be loaded here). */
  resources: SkillResource[] | 'dynamic'
  /** Why the entry cannot be loaded (shape, naming rules, limits); absent when it can. */
  problem?: string
}

/** One verified file of a loaded skill: `text` (UTF-8) or `blob` (base64), as the server sent it. */
export interface LoadedSkillFile extends SkillResource {
  mimeType?: string
  text?: string
  blob?: string
}

/** A skill loaded and verified by {@link McpHost.loadSkill}. */
export interface LoadedSkill {
  serverId: string
  uri: string
  name: string
  /** The frontmatter (the entry's, equal to the file's). */
  frontmatter: { name: string; description: string; [key: string]: unknown }
  /** Every file of the manifest, `SKILL.md` first, each checked against its size and digest. */
  files: LoadedSkillFile[]
}
