'use strict'
// Argument checks at the edge of McpHost: every public entry point checks
// the shape of what it was given (object, string, number, boolean,
// function, array per top-level field) before anything reaches the native
// side, and throws HostError `invalid_argument` whose message starts with
// the parameter and field path (`options.limits.callTimeoutMs: must be …`).
// Deeper fields are checked natively, where the same path notation is used
// (binding/src/lib.rs `parse`), so no napi or serde wording reaches users.
// `credentials` (index.js) and `RequestOptions` (lib/host/request-options.js)
// are checked where they are used.

const { invalidArgument: invalid } = require('./errors.js')

/** How a refused value is shown in a message: its type, or the value itself for scalars. */
function shown(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'string': return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
    case 'number': case 'boolean': case 'bigint': return String(value)
    case 'undefined': return 'undefined'
    default: return `a ${typeof value}`
  }
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A plain object (not null, not an array), else `<path>: must be an object`. */
function object(value, path, what = '') {
  if (!isObject(value)) throw invalid(`${path}: must be an object${what}, got ${shown(value)}`)
  return value
}

/** `undefined` (absent), else as {@link object}. */
function optionalObject(value, path, what = '') {
  return value === undefined ? value : object(value, path, what)
}

/** A non-empty string. */
function nonEmptyString(value, path) {
  if (typeof value !== 'string' || value === '') throw invalid(`${path}: must be a non-empty string`)
  return value
}

/** Each check takes (value, path) and throws for a present value of the wrong type. */
const optional = {
  string(value, path) {
    if (value !== undefined && typeof value !== 'string') throw invalid(`${path}: must be a string, got ${shown(value)}`)
  },
  nonEmptyString(value, path) {
    if (value !== undefined) nonEmptyString(value, path)
  },
  boolean(value, path) {
    if (value !== undefined && typeof value !== 'boolean') throw invalid(`${path}: must be a boolean, got ${shown(value)}`)
  },
  /** A non-negative safe integer (ms, bytes, counts). */
  count(value, path) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw invalid(`${path}: must be a non-negative integer, got ${shown(value)}`)
    }
  },
  object(value, path) { optionalObject(value, path) },
  array(value, path) {
    if (value !== undefined && !Array.isArray(value)) throw invalid(`${path}: must be an array, got ${shown(value)}`)
  },
  strings(value, path) {
    optional.array(value, path)
    value?.forEach((item, i) => { if (typeof item !== 'string') throw invalid(`${path}[${i}]: must be a string, got ${shown(item)}`) })
  },
  function(value, path) {
    if (value !== undefined && typeof value !== 'function') throw invalid(`${path}: must be a function, got ${shown(value)}`)
  },
  oneOf(allowed) {
    return (value, path) => {
      if (value !== undefined && !allowed.includes(value)) {
        throw invalid(`${path}: must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${shown(value)}`)
      }
    }
  },
}

/** Checks the given fields of `value` (an object) with `spec` (field → check). Unknown fields are left to the native parser, which names them. */
function fields(value, path, spec) {
  for (const [key, check] of Object.entries(spec)) check(value[key], `${path}.${key}`)
}

/** `sandbox` (host default, `addServer`, plugin overrides): a boolean or a `SandboxOptions` object (its fields are checked natively). */
const sandboxSetting = (value, path) => {
  if (value !== undefined && typeof value !== 'boolean' && !isObject(value)) {
    throw invalid(`${path}: must be a boolean or an object (SandboxOptions), got ${shown(value)}`)
  }
}

const stringOrObject = (value, path) => {
  if (value !== undefined && typeof value !== 'string' && !isObject(value)) {
    throw invalid(`${path}: must be a string or an object, got ${shown(value)}`)
  }
}

/** The request handlers the host can declare (src/requests.rs `ServerRequestKind`). */
const REQUEST_KINDS = ['elicitation', 'sampling', 'roots']

/** Every field of `McpHostOptions` (index.d.ts), in its order there. */
const HOST_OPTIONS = ['session', 'clientInfo', 'dataDir', 'limits', 'env', 'publishServerTools', 'credentials',
  'clientMetadataUrl', 'oauthRedirectPort', 'handlers', 'chatElicitation', 'mcpApps', 'roots', 'proxy', 'caCertificates', 'headers', 'start',
  'policy', 'trust', 'sandbox']

/** An unknown field of `value` (at `path`) is `invalid_argument` listing every field of `names`. */
function known(value, path, names) {
  const unknown = Object.keys(value).find((k) => !names.includes(k))
  if (unknown !== undefined) {
    throw invalid(`${path}.${unknown}: unknown field \`${unknown}\`, expected one of ${names.map((n) => `\`${n}\``).join(', ')}`)
  }
}

/**
 * A `ServerPolicy` (`options.policy`, `setPolicy`): an object whose `allow`
 * (optional) and `deny` (optional) are arrays of objects; the rules
 * themselves are checked natively, which names the broken field.
 */
function policy(value, path) {
  object(value, path, ' (ServerPolicy)')
  for (const list of ['allow', 'deny']) {
    optional.array(value[list], `${path}.${list}`)
    value[list]?.forEach((rule, i) => object(rule, `${path}.${list}[${i}]`, ' (PolicyRule)'))
  }
  return value
}

function optionalPolicy(value, path) {
  if (value !== undefined) policy(value, path)
}

/** `new McpHost(options)`: the options object and its top-level fields. */
function hostOptions(options) {
  if (options === undefined) return {}
  object(options, 'options', ' (McpHostOptions)')
  known(options, 'options', HOST_OPTIONS)
  fields(options, 'options', {
    session: optional.nonEmptyString,
    clientInfo: optional.object,
    dataDir: optional.nonEmptyString,
    limits: optional.object,
    env: optional.oneOf(['inherit', 'allowList']),
    publishServerTools: optional.boolean,
    clientMetadataUrl: optional.string,
    oauthRedirectPort: optional.count,
    handlers: optional.object,
    chatElicitation: optional.boolean,
    mcpApps: optional.boolean,
    roots: optional.array,
    proxy: stringOrObject,
    caCertificates: optional.strings,
    headers: optional.function,
    start: optional.oneOf(['eager', 'lazy']),
    policy: optionalPolicy,
    trust: optional.function,
    sandbox: sandboxSetting,
  })
  if (options.clientInfo) {
    fields(options.clientInfo, 'options.clientInfo', { name: nonEmptyString, version: nonEmptyString, title: optional.string })
  }
  for (const [key, value] of Object.entries(options.limits ?? {})) optional.count(value, `options.limits.${key}`)
  for (const [key, value] of Object.entries(options.handlers ?? {})) {
    if (!REQUEST_KINDS.includes(key)) {
      throw invalid(`options.handlers.${key}: unknown request handler (expected ${REQUEST_KINDS.join(', ')})`)
    }
    const flag = REGISTRATION_FLAGS[key]
    if (flag && isObject(value)) registration(value, `options.handlers.${key}`, flag)
    else if (flag && value !== undefined && typeof value !== 'function') {
      throw invalid(`options.handlers.${key}: must be a function or {handler, ${flag}?}, got ${shown(value)}`)
    } else optional.function(value, `options.handlers.${key}`)
  }
  return options
}

/**
 * The handlers that may be registered as `{handler, <flag>?}`, and that flag:
 * `sampling: {handler, tools}` (SEP-1577 sampling with tools),
 * `elicitation: {handler, url}` (SEP-1036 URL-mode elicitation).
 */
const REGISTRATION_FLAGS = { sampling: 'tools', elicitation: 'url' }

/** A handler given as `{handler, <flag>?}` (see REGISTRATION_FLAGS). */
function registration(value, path, flag) {
  known(value, path, ['handler', flag])
  if (typeof value.handler !== 'function') throw invalid(`${path}.handler: must be a function, got ${shown(value.handler)}`)
  optional.boolean(value[flag], `${path}.${flag}`)
}

/** A per-server OAuth option (`OAuthClientOption`); the native side checks the values (URLs, port range). */
function oauthClient(value, path) {
  if (value === undefined) return
  object(value, path, ' (OAuthClientOption)')
  fields(value, path, {
    clientId: optional.nonEmptyString,
    clientSecret: optional.string,
    grant: optional.string,
    privateKeyPem: optional.string,
    signingAlgorithm: optional.string,
    idp: optional.object,
    scopes: optional.strings,
    authServerMetadataUrl: optional.nonEmptyString,
    callbackPort: optional.count,
    resource: optional.nonEmptyString,
  })
}

const serverSettings = {
  startupTimeoutMs: optional.count,
  oauth: oauthClient,
  protocol: optional.oneOf(['auto', '2026-07-28', 'legacy']),
  // Checked here too: JSON would turn NaN and Infinity into null (unset).
  callTimeoutMs: optional.count,
  callMaxTotalMs: optional.count,
  modelOutputMaxChars: optional.count,
  idleStopMs: optional.count,
  required: optional.boolean,
  start: optional.oneOf(['eager', 'lazy']),
  sandbox: sandboxSetting,
}

/** `addPlugin(options)`. */
function addPluginOptions(options) {
  object(options, 'options', ' (AddPluginOptions: {root, …})')
  fields(options, 'options', {
    root: nonEmptyString,
    uri: optional.nonEmptyString,
    name: optional.nonEmptyString,
    startupTimeoutMs: optional.count,
    servers: optional.object,
  })
  for (const [name, overrides] of Object.entries(options.servers ?? {})) {
    const path = `options.servers.${name}`
    object(overrides, path)
    fields(overrides, path, serverSettings)
  }
  return options
}

/** `addServer(options)`. */
function addServerOptions(options) {
  object(options, 'options', ' (AddServerOptions: {name, config, …})')
  fields(options, 'options', {
    name: nonEmptyString,
    config: (value, path) => object(value, path, ' (an mcp.json server entry)'),
    root: optional.nonEmptyString,
    uri: optional.nonEmptyString,
    literal: optional.boolean,
    secrets: optional.strings,
    ...serverSettings,
  })
  return options
}

/** `authenticate(params)` (AHP `authenticate`). */
function authenticateParams(params) {
  object(params, 'params', ' (AuthenticateParams: {resource, token, …})')
  fields(params, 'params', {
    resource: nonEmptyString,
    token: (value, path) => { if (typeof value !== 'string') throw invalid(`${path}: must be a string, got ${shown(value)}`) },
    expiresIn: optional.count,
    scopes: optional.strings,
  })
  return params
}

/** `authorize(serverId, options)`: the options' own fields (`signal` aside). */
function authorizeOptions(options) {
  if (options === undefined || options === null) return {}
  object(options, 'options', ' (AuthorizeOptions)')
  fields(options, 'options', {
    openUrl: optional.function,
    scopes: optional.strings,
    timeoutMs: optional.count,
    idToken: optional.string,
    assertion: optional.string,
    redirectUri: optional.nonEmptyString,
    flow: optional.oneOf(['authorizationCode', 'deviceCode', 'auto']),
  })
  return options
}

/** `dispatch(action, origin)`: the origin object (its `clientSeq` is checked by index.js). */
function dispatchOrigin(origin) {
  if (origin === undefined) return {}
  return object(origin, 'origin', ' ({clientId?, clientSeq?})')
}

/** `getPrompt(serverId, name, args)`: prompt arguments, string values. */
function promptArgs(args) {
  if (args === undefined || args === null) return args
  object(args, 'args', ' of string values')
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string') throw invalid(`args.${key}: must be a string, got ${shown(value)}`)
  }
  return args
}

/** `callTool(options)`: the call's own fields (`signal`, the timeouts and `onProgress` are request options). */
// callTool's checked fields, each with its path: built once, not per call.
const CALL_TOOL_FIELDS = Object.entries({
  name: nonEmptyString,
  serverId: optional.nonEmptyString,
  digest: optional.string,
  chat: optional.string,
  turnId: optional.string,
  toolCallId: optional.string,
  displayName: optional.string,
  taskHandle: optional.boolean,
  // Checked here too: JSON would turn NaN and Infinity into null (unset).
  timeoutMs: optional.count,
  maxTotalTimeoutMs: optional.count,
  modelOutputMaxChars: optional.count,
}).map(([key, check]) => [key, check, `options.${key}`])

function callToolOptions(options) {
  object(options, 'options', ' (CallToolOptions: {name, serverId?, arguments?, …})')
  for (const [key, check, path] of CALL_TOOL_FIELDS) check(options[key], path)
  return options
}

/** `complete(params)`: `{serverId, ref, argument, context?}` (MCP `completion/complete`); unknown fields are named natively. */
function completeParams(params) {
  object(params, 'params', ' (CompleteParams: {serverId, ref, argument, context?})')
  fields(params, 'params', {
    serverId: nonEmptyString,
    ref: (value, path) => object(value, path, " ({type: 'ref/prompt', name} or {type: 'ref/resource', uri})"),
    argument: (value, path) => object(value, path, ' ({name, value})'),
    context: optional.object,
  })
  const { ref, argument, context } = params
  optional.oneOf(['ref/prompt', 'ref/resource'])(ref.type, 'params.ref.type')
  if (ref.type === undefined) throw invalid("params.ref.type: must be 'ref/prompt' or 'ref/resource'")
  nonEmptyString(ref.type === 'ref/prompt' ? ref.name : ref.uri, `params.ref.${ref.type === 'ref/prompt' ? 'name' : 'uri'}`)
  nonEmptyString(argument.name, 'params.argument.name')
  if (typeof argument.value !== 'string') throw invalid(`params.argument.value: must be a string, got ${shown(argument.value)}`)
  if (context?.arguments !== undefined) {
    object(context.arguments, 'params.context.arguments', ' of string values')
    for (const [key, value] of Object.entries(context.arguments)) {
      if (typeof value !== 'string') throw invalid(`params.context.arguments.${key}: must be a string, got ${shown(value)}`)
    }
  }
  return params
}

/** The MCP log levels (RFC 5424, least severe first; src/mcp/log_level.rs `LEVEL_NAMES`). */
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

/** `setLogLevel(serverId, level)`: one of {@link LOG_LEVELS}. */
function logLevel(level) {
  if (!LOG_LEVELS.includes(level)) {
    throw invalid(`level: must be one of ${LOG_LEVELS.join(', ')} (RFC 5424 levels as MCP spells them), got ${shown(level)}`)
  }
  return level
}

module.exports = {
  callToolOptions,
  completeParams,
  logLevel,
  invalid,
  object,
  optionalObject,
  nonEmptyString,
  hostOptions,
  policy,
  addPluginOptions,
  addServerOptions,
  authenticateParams,
  authorizeOptions,
  dispatchOrigin,
  promptArgs,
}
