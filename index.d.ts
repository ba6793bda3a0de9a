// Public types of ahp-mcp-host.
//
// AHP shapes follow the `ahp-types` 1.0.0 wire format (Agent Host Protocol
// 1.0.0, session channel). Only the parts an MCP host produces or accepts are
// declared here; unknown fields from newer protocol versions may appear.

import { EventEmitter } from 'node:events'

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
  /** True while the server blocks the session's first turn. */
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
  channel?: URI
  icons?: unknown[]
  mcpApp?: { capabilities: Record<string, unknown> }
  _meta?: Record<string, unknown>
}

/** Load state of a container (AHP `CustomizationLoadState`). */
export type CustomizationLoadState =
  | { kind: 'loading' }
  | { kind: 'loaded' }
  /** Some `mcp.json` entries were invalid and skipped; `message` names each server and field. */
  | { kind: 'degraded'; message: string }
  /** `mcp.json` failed top-level validation; `message` names the file, `line:column` and the rule. */
  | { kind: 'error'; message: string }

/** AHP `PluginCustomization` published for each `addPlugin`. */
export interface PluginCustomization {
  type: 'plugin'
  id: string
  uri: URI
  name: string
  load?: CustomizationLoadState
  children?: McpServerCustomization[]
  enablement?: CustomizationEnablement[]
  version?: string
  clientId?: string
  icons?: unknown[]
  range?: TextRange
  _meta?: Record<string, unknown>
}

/** Top-level customizations this host publishes. */
export type Customization = PluginCustomization | McpServerCustomization

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

/** Actions a client may pass to {@link McpHost.dispatch}. */
export type ClientSessionAction =
  | SessionCustomizationToggledAction
  | SessionMcpServerStartRequestedAction
  | SessionMcpServerStopRequestedAction
  | SessionMcpServerBackgroundRequestedAction

/** Every action this host emits: its own, and echoes of client dispatches. */
export type HostAction =
  | SessionCustomizationUpdatedAction
  | SessionCustomizationRemovedAction
  | SessionMcpServerStateChangedAction
  | ClientSessionAction

/** Who dispatched an echoed action. */
export interface ActionOrigin {
  clientId: string
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
  _meta?: Record<string, unknown>
}

/** A catalogue entry of {@link McpHost.listTools}. */
export interface HostTool extends ToolDefinition {
  /** The owning `McpServerCustomization` id (AHP `ToolCallContributor.customizationId`). */
  customizationId: string
  /** The tool's name exactly as the server listed it. */
  toolName: string
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

/** Timeouts (ms) and restart policy; clamped to hard caps (timeouts 1 ms … 24 h, ≤ 100 restarts). */
export interface HostLimits {
  /** Spawn/connect + `initialize` budget per server. Default 30 000 ms. */
  startupTimeoutMs?: number
  /** Default `tools/call` timeout. Default 60 000 ms. */
  callTimeoutMs?: number
  /** Automatic restarts after crashes before staying in `error`. Default 3. */
  maxRestarts?: number
  /** First restart delay; doubles per consecutive crash. Default 1 000 ms. */
  restartBackoffMs?: number
  /** Restart delay cap. Default 30 000 ms. */
  restartBackoffMaxMs?: number
  /** Uptime after which the crash counter resets. Default 60 000 ms. */
  restartResetAfterMs?: number
}

export interface McpHostOptions {
  /** Session channel URI stamped on every envelope. Default `ahp-session:/mcp-host`. */
  session?: URI
  /** `clientInfo` sent in MCP `initialize`. Default `{name: 'ahp-mcp-host', version}`. */
  clientInfo?: { name: string; version: string; title?: string }
  /** Parent of the per-plugin `PLUGIN_DATA` directories (created, never emptied). Default `<tmp>/ahp-mcp-host-data`. */
  dataDir?: string
  limits?: HostLimits
  /**
   * Base environment of stdio servers: `'inherit'` (default) passes the host's
   * environment; `'allowList'` passes only PATH, HOME, USER, LOGNAME, SHELL, TMPDIR/TMP/TEMP, LANG/LC_*, TZ, TERM
   * (and Windows basics). Configured `env` overlays it; PLUGIN_ROOT/PLUGIN_DATA are set last.
   */
  env?: 'inherit' | 'allowList'
  /**
   * Where OAuth tokens and client registrations persist (for example VS Code
   * `SecretStorage` or a keychain); default: memory. Key format:
   * `ahp-mcp-host/oauth/v1 <issuer> <resource>`; the value is JSON with
   * `client_id`, the token response (access/refresh token, expiry, scopes),
   * `granted_scopes`, `token_received_at` and `issuer`. With stored tokens a
   * new host connects without a browser.
   */
  credentials?: CredentialStore
  /** HTTPS URL of the app's OAuth Client ID Metadata Document (used when the AS supports CIMD). */
  clientMetadataUrl?: string
  /** Fixed port for the loopback OAuth redirect listener; default random. */
  oauthRedirectPort?: number
  /**
   * Answers to requests servers send to the client (MCP 2025-11-25 "Client
   * Features"). A capability is declared in `initialize` only when its handler
   * is given. Without one: elicitation is declined, sampling gets `-32601`,
   * `roots/list` returns no roots. A handler that throws answers `-32603`.
   */
  handlers?: RequestHandlers
}

/** Context of a server-initiated request. */
export interface ServerRequestContext {
  /** Customization id of the server that sent it. */
  serverId: string
}

/** App handlers for server-initiated requests; each resolves the MCP result object. */
export interface RequestHandlers {
  /**
   * `elicitation/create` (form mode). Resolve `{action: 'accept', content}`,
   * `{action: 'decline'}` or `{action: 'cancel'}`. On accept, schema defaults
   * are filled in for fields `content` omits (SEP-1034).
   */
  elicitation?: (
    params: { mode?: 'form'; message: string; requestedSchema: Record<string, unknown>; _meta?: Record<string, unknown> },
    context: ServerRequestContext,
  ) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }>
  /** `sampling/createMessage`: resolve an MCP `CreateMessageResult`. */
  sampling?: (params: Record<string, unknown>, context: ServerRequestContext) => Promise<Record<string, unknown>>
  /** `roots/list`: resolve `{roots: [{uri, name?}]}`. */
  roots?: (params: Record<string, unknown>, context: ServerRequestContext) => Promise<{ roots: { uri: string; name?: string }[] }>
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
  /** Per-server overrides keyed by the name in `mcpServers`. */
  servers?: Record<string, { startupTimeoutMs?: number; oauth?: OAuthClientOption }>
}

export interface PluginAdded {
  /** The plugin customization id. */
  id: string
  /** Ids of the servers being started (`<plugin>/<server>`), valid entries only. */
  servers: string[]
  load: CustomizationLoadState
}

/** One `mcp.json` server entry (Agent Plugins 1.0.0). */
export type McpServerConfig =
  | { type: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { type: 'streamable-http'; url: string; headers?: Record<string, string> }

export interface AddServerOptions {
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
}

export interface CallToolOptions {
  /** The server's customization id. */
  serverId: string
  /** The tool's original name ({@link HostTool.toolName}). */
  name: string
  arguments?: Record<string, unknown>
  /** Aborting sends MCP `notifications/cancelled` and rejects with `signal.reason`. */
  signal?: AbortSignal
  /** Time limit (ms); default `limits.callTimeoutMs`. Expiry rejects with code `timeout`. */
  timeoutMs?: number
}

/** A log record: host diagnostics and each server stderr line (`target: 'server.stderr'`). */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error'
  /** `server.stderr`, `server.log` (MCP logging), `host.stdio`, `host.supervisor`, `host.config`. */
  target: string
  message: string
  serverId?: string
}

/** Stable error codes (`err.code`). */
export type HostErrorCode =
  | 'invalid_argument'
  | 'invalid_config'
  | 'invalid_entry'
  | 'not_found'
  | 'already_exists'
  | 'server_not_ready'
  | 'server_exited'
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
  | 'invalid_params'
  | 'protocol_error'
  | 'cancelled'
  | 'timeout'
  | 'limit_exceeded'
  | 'rejected'
  | 'disposed'
  | 'internal'

/** An async secret store the host keeps OAuth credentials in. */
export interface CredentialStore {
  get(key: string): Promise<string | undefined | null>
  set(key: string, value: string): Promise<void>
  delete(key: string): Promise<void>
}

/** Options of {@link McpHost.authorize}. */
export interface AuthorizeOptions {
  /** Called with the authorization URL to open (in addition to the `authorizationUrl` event). */
  openUrl?: (url: string) => void
  /** Scopes to request; default: the challenge's `scope`, else `scopes_supported`, else none. */
  scopes?: string[]
  /** Time allowed for the user to finish (ms). Default 300 000. */
  timeoutMs?: number
  /** Enterprise ID token for `grant: 'enterpriseManaged'` (a secret). */
  idToken?: string
}

/** A pre-registered OAuth client for one server (host-side; not part of `mcp.json`). */
export interface OAuthClientOption {
  clientId: string
  /** Secret of a confidential client; never appears in state, logs or errors. */
  clientSecret?: string
  /**
   * `authorizationCode` (default: a user signs in in a browser);
   * `clientCredentials` (SEP-1046 machine client: `clientSecret` or `privateKeyPem`);
   * `enterpriseManaged` (SEP-990 cross-app access: `idp`, and `authorize({idToken})`).
   */
  grant?: 'authorizationCode' | 'clientCredentials' | 'enterpriseManaged'
  /** PEM private key for `private_key_jwt` client authentication (RFC 7523); a secret. */
  privateKeyPem?: string
  /** JWS algorithm of `privateKeyPem`. Default `ES256`. */
  signingAlgorithm?: 'ES256' | 'ES384' | 'RS256' | 'RS384' | 'RS512'
  /** The enterprise identity provider for `enterpriseManaged`. */
  idp?: { issuer: string; tokenEndpoint: string; clientId: string; clientSecret?: string }
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

/** Error thrown by every command. `data` carries e.g. a JSON-RPC error's `{code, data}`. */
export declare class HostError extends Error {
  /** A stable string code, or an AHP JSON-RPC code (-32007, -32602) from {@link McpHost.authenticate}. */
  readonly code: HostErrorCode | -32007 | -32602
  readonly data?: { resources?: ProtectedResourceMetadata[]; [key: string]: unknown } | unknown
}

/** Events of {@link McpHost}. */
export interface McpHostEvents {
  action: [envelope: ActionEnvelope]
  log: [record: LogRecord]
  /** A host-run sign-in ({@link McpHost.authorize}) needs this URL opened in a browser. */
  authorizationUrl: [event: { serverId: string; url: string }]
}

/**
 * The MCP host of one AHP session. Servers run in Rust; state changes arrive
 * as `'action'` events in `serverSeq` order. While alive the host keeps the
 * Node process running (see {@link McpHost.unref}); call {@link McpHost.dispose}.
 */
export declare class McpHost extends EventEmitter<McpHostEvents> {
  constructor(options?: McpHostOptions)
  /** Reads `<root>/mcp.json`, publishes a `PluginCustomization` and starts its valid servers. Errors: `invalid_argument`, `already_exists`, `disposed`. */
  addPlugin(options: AddPluginOptions): Promise<PluginAdded>
  /** Publishes a top-level `McpServerCustomization` and starts it; resolves to its id. Errors: `invalid_entry`, `already_exists`, `disposed`. */
  addServer(options: AddServerOptions): Promise<string>
  /** Stops and removes a plugin (with its servers) or a top-level server. Errors: `not_found`. */
  remove(id: string): Promise<null>
  /** AHP `dispatchAction`: returns the echoed envelope (with `rejectionReason` when refused). */
  dispatch(action: ClientSessionAction, origin?: Partial<ActionOrigin>): ActionEnvelope
  /**
   * AHP `authenticate`: pushes a bearer token for a protected resource this
   * host advertised in a live `authRequired` state (`state.resource.resource`).
   * Resolves `{}` once the server is `ready` with it. An empty token revokes.
   * Rejects with a {@link HostError} whose `code` is the AHP JSON-RPC code:
   * `-32602` (InvalidParams; unknown resource; `data.resources` lists the
   * advertised ones) or `-32007` (AuthRequired; the server refused the token, or
   * `scopes` do not cover `requiredScopes`; `data.resources`).
   */
  authenticate(params: AuthenticateParams): Promise<Record<string, never>>
  /**
   * Host-run OAuth sign-in (authorization code + PKCE S256, RFC 8707
   * `resource`, RFC 9207 `iss` check), all in Rust. The authorization URL
   * arrives as an `authorizationUrl` event (and through `openUrl`); the app
   * opens it, the browser is redirected to a one-shot listener on 127.0.0.1.
   * Resolves once the server is `ready`; tokens are refreshed automatically.
   * A denied consent, wrong `state` or timeout (default 5 min) rejects
   * (`auth_denied`, `auth_failed`, `timeout`) and leaves the server
   * `authRequired` with the reason as `description`. Never opens a browser itself.
   */
  authorize(serverId: string, options?: AuthorizeOptions): Promise<void>
  /** The session state, exactly as the AHP reducer made it from the emitted actions. */
  getState(): SessionState
  /** Tools of every `ready` server. */
  listTools(): HostTool[]
  /** Calls a tool. Errors: `not_found`, `server_not_ready`, `server_exited`, `timeout`, `cancelled`, `protocol_error`, `disposed`. */
  callTool(options: CallToolOptions): Promise<CallToolResult>
  /** Stops every server (stdin close → SIGTERM → SIGKILL of each process group) and releases the host. Idempotent. */
  dispose(): Promise<void>
  /** Kills every server process group immediately. Synchronous, idempotent. */
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
