'use strict'
// `importConfig` and `addServers` (issue 30; see index.d.ts): another host's
// MCP configuration read natively (src/config/import/), its variables
// resolved only through the app's `resolve` callback (never from this
// process's environment), each server's placeholders replaced natively
// (`resolveImported`), then each server added on its own, so one broken
// entry never stops its siblings. Values are never put in a diagnostic or
// an error.

const { HostError, invalidArgument: invalid } = require('./errors.js')

/** The formats `importConfig` reads (src/config/import/mod.rs `ImportFormat::name`). */
const FORMATS = ['vscode', 'claude-code', 'claude-desktop', 'cursor', 'codex', 'registry']

/** Checks `importConfig` options; returns the native part (`resolve` stays here). */
function importOptions(options) {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid('options: must be an object (ImportConfigOptions: {format, text | path, …})')
  }
  const { format, text, path, file, resolve, ...rest } = options
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw invalid(`options.${unknown}: unknown field (allowed: format, text, path, file, resolve)`)
  if (!FORMATS.includes(format)) throw invalid(`options.format: must be one of ${FORMATS.join(', ')}`)
  if ((text === undefined) === (path === undefined)) throw invalid('options: give exactly one of text and path')
  if (text !== undefined && typeof text !== 'string') throw invalid('options.text: must be a string')
  if (path !== undefined && (typeof path !== 'string' || path === '')) throw invalid('options.path: must be a non-empty string')
  if (file !== undefined && typeof file !== 'string') throw invalid('options.file: must be a string')
  if (resolve !== undefined && typeof resolve !== 'function') throw invalid('options.resolve: must be a function')
  return { native: { format, text, path, file }, resolve, label: path ?? file ?? '<text>' }
}

/**
 * One answer of `resolve` for `variable`, within `timeoutMs`: `{value}`, or
 * `{timedOut: true}`; a throw is no value (its error is not kept: it could
 * hold a value). Rejects `disposed` at once when `disposal` aborts (the host
 * was disposed), whatever the resolver does.
 */
function answerOf(variable, resolve, { timeoutMs, disposal }) {
  return new Promise((settle, reject) => {
    const disposed = () => finish(() => reject(new HostError('disposed', 'the host was disposed while importConfig was resolving variables')))
    const timer = setTimeout(() => finish(() => settle({ timedOut: true })), timeoutMs)
    function finish(then) {
      clearTimeout(timer)
      disposal.removeEventListener('abort', disposed)
      then()
    }
    if (disposal.aborted) return disposed()
    disposal.addEventListener('abort', disposed, { once: true })
    Promise.resolve()
      .then(() => resolve({ ...variable, choices: [...(variable.choices ?? [])] }))
      .then((value) => finish(() => settle({ value })), () => finish(() => settle({ value: undefined })))
  })
}

/**
 * The values of `variables` from `resolve` (a string, or undefined/null for
 * none, then the variable's `default`), and why each other answer gave none
 * (`refused`: id → why: the type answered, a value longer than
 * `bounds.maxBytes`, or no answer in time; that variable then has no value,
 * so only the entries that need it are left out). The variables are asked
 * one after another (an app may show one prompt at a time), all within
 * `bounds.timeoutMs` together: once it has passed, each variable still to
 * ask gets only what it answers at once. See {@link answerOf}.
 */
async function valuesOf(variables, resolve, bounds) {
  const values = {}
  const refused = {}
  const deadline = Date.now() + bounds.timeoutMs
  for (const variable of variables) {
    const timeoutMs = Math.max(0, deadline - Date.now())
    let { value, timedOut } = await answerOf(variable, resolve, { ...bounds, timeoutMs })
    if (timedOut) {
      refused[variable.id] = `options.resolve did not answer within ${bounds.timeoutMs} ms (limits.importResolveTimeoutMs, for all the variables of one import) for \${${variable.id}}`
      continue
    }
    if (value === undefined || value === null) value = variable.default
    if (value === undefined) continue
    if (typeof value !== 'string') {
      const type = Array.isArray(value) ? 'array' : typeof value
      refused[variable.id] = `options.resolve gave a ${type} for \${${variable.id}}, not a string`
      continue
    }
    if (value.length > bounds.maxBytes || Buffer.byteLength(value) > bounds.maxBytes) {
      refused[variable.id] = `options.resolve gave a value longer than ${bounds.maxBytes} bytes (limits.maxConfigFileBytes) for \${${variable.id}}`
      continue
    }
    values[variable.id] = value
  }
  return { values, refused }
}

/**
 * `result` (a native ImportResult) with each unresolved server's
 * placeholders replaced (`resolveOne`: the native `resolveImported`, which
 * also gives the values of its secret variables: `secrets`); a server that
 * cannot be resolved leaves `servers` for an `invalid_entry` error
 * diagnostic at its position. `bounds`: `{timeoutMs, disposal, maxBytes}`
 * (see {@link valuesOf}); the resolved servers hold at most `maxBytes` of
 * text together (`limits.maxConfigFileBytes`): a server past it is left out.
 */
async function resolveAll(result, resolve, resolveOne, file, bounds) {
  const { values, refused } = await valuesOf(result.variables, resolve, bounds)
  const secretIds = new Set(result.variables.filter((v) => v.secret).map((v) => v.id))
  const servers = []
  const diagnostics = [...result.diagnostics]
  let left = bounds.maxBytes
  for (const server of result.servers) {
    if (server.resolved) {
      servers.push(server)
      continue
    }
    const own = Object.fromEntries(server.variables.filter((id) => id in values).map((id) => [id, values[id]]))
    const secret = server.variables.filter((id) => secretIds.has(id))
    const args = { name: server.name, config: server.config, variables: server.variables, values: own, secret, dockerOptions: server.dockerOptions, maxBytes: left }
    const r = JSON.parse(resolveOne(JSON.stringify(args)))
    if (r.ok) {
      left -= r.value.bytes
      const resolved = { ...server, config: r.value.config, resolved: true }
      if (r.value.secrets.length) resolved.secrets = r.value.secrets
      servers.push(resolved)
    } else {
      const why = server.variables.filter((id) => id in refused).map((id) => refused[id])
      const message = why.length ? `${r.message} (${why.join('; ')})` : r.message
      diagnostics.push({ code: r.code, severity: 'error', message, file, line: server.line, column: server.column, server: server.name })
    }
  }
  return { servers, variables: result.variables, diagnostics }
}

/** The `addServer` options of an imported server, or why it cannot be added. */
function addOptions(server, i) {
  if (typeof server !== 'object' || server === null || typeof server.name !== 'string') {
    throw invalid(`servers[${i}]: must be an ImportedServer ({name, config, …})`)
  }
  if (server.resolved === false) {
    const ids = (server.variables ?? []).map((id) => `\${${id}}`).join(', ')
    return new HostError('invalid_entry', `server ${JSON.stringify(server.name)}: variables not resolved: ${ids}`)
  }
  // An imported entry's values are literal (its variables were resolved
  // once); its secret variables' values are kept secret wherever they went.
  const options = { name: server.name, config: server.config, literal: true }
  if (server.secrets !== undefined) options.secrets = server.secrets
  if (server.startupTimeoutMs !== undefined) options.startupTimeoutMs = server.startupTimeoutMs
  // OAuth: the client id and the other settings (scopes, authServerMetadataUrl, callbackPort, resource).
  if (server.oauthClientId !== undefined || server.oauth !== undefined) {
    options.oauth = { ...server.oauth, ...(server.oauthClientId !== undefined && { clientId: server.oauthClientId }) }
  }
  // Tool filter, call limits and required (Codex enabled_tools, disabled_tools, tool_timeout_sec, required).
  for (const key of ['includeTools', 'excludeTools', 'callTimeoutMs', 'callMaxTotalMs', 'required']) {
    if (server[key] !== undefined) options[key] = server[key]
  }
  return options
}

/**
 * Adds each server through `addServer` (the host's method), in order:
 * `{name, id}`, `{name, error}` (a HostError) or `{name, skipped:
 * 'disabled'}` (`enabled: false` in the source) per server.
 */
async function addEach(servers, addServer) {
  if (!Array.isArray(servers)) throw invalid('servers: must be an array of ImportedServer')
  const planned = servers.map(addOptions)
  const results = []
  for (const [i, options] of planned.entries()) {
    const name = servers[i].name
    if (servers[i].enabled === false) {
      results.push({ name, skipped: 'disabled' })
    } else if (options instanceof HostError) {
      results.push({ name, error: options })
    } else {
      try {
        results.push({ name, id: await addServer(options) })
      } catch (error) {
        results.push({ name, error })
      }
    }
  }
  return results
}

/**
 * The native side of the `headers` option (issue 30, item 4): `{serverId,
 * url, reason}` in, the app's answer checked (an object of strings, or
 * undefined / null for none) and sent as JSON. A wrong shape or a throw
 * fails that connect (`connect_failed`); the app's error is not passed on
 * (it could hold a value).
 */
function headersCallback(headers) {
  return async (json) => {
    const { serverId, url, reason } = JSON.parse(json)
    const answer = await headers({ serverId, url, reason })
    if (answer === undefined || answer === null) return 'null'
    const strings = typeof answer === 'object' && !Array.isArray(answer) && Object.values(answer).every((v) => typeof v === 'string')
    if (!strings) throw new Error('headers must return an object of strings, undefined or null')
    return JSON.stringify(answer)
  }
}

module.exports = { FORMATS, importOptions, resolveAll, addEach, headersCallback }
