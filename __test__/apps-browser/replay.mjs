// Replays the host's session envelopes the way an AHP client does, to check
// that they rebuild `host.getState()`.
//
// The reducers are `ahp` 1.0.0's `apply_action_to_session`
// (src/reducers.rs), transcribed for the session actions an MCP host emits;
// the Rust suite (tests/host_replay.rs) runs the crate's own reducer on the
// same property. A session action this file does not transcribe throws, so
// a new kind of action cannot slip past unreplayed.

const clone = (v) => structuredClone(v)

/** The container's children (plugin, directory), if it has any. */
const childrenOf = (c) => (c.type === 'plugin' || c.type === 'directory' ? c.children : undefined)

/** The `mcpServer` customization with `id`, top-level or a container's child. */
function findServer(state, id) {
  const list = state.customizations
  if (!list) return undefined
  const top = list.find((c) => c.id === id)
  if (top) return top.type === 'mcpServer' ? top : undefined
  for (const c of list) {
    const child = childrenOf(c)?.find((x) => x.id === id)
    if (child) return child.type === 'mcpServer' ? child : undefined
  }
  return undefined
}

/** `update_mcp_server_customization_state`: state and channel replaced (no channel → none). */
function setServerState(state, id, next, channel) {
  const server = findServer(state, id)
  if (!server) return
  server.state = clone(next)
  if (channel === undefined) delete server.channel
  else server.channel = channel
}

const REDUCERS = {
  'session/customizationUpdated'(state, a) {
    const list = (state.customizations ??= [])
    const i = list.findIndex((c) => c.id === a.customization.id)
    if (i >= 0) list[i] = clone(a.customization)
    else list.push(clone(a.customization))
  },
  'session/customizationRemoved'(state, a) {
    const list = state.customizations
    if (!list) return
    const i = list.findIndex((c) => c.id === a.id)
    if (i >= 0) return void list.splice(i, 1)
    for (const c of list) {
      const children = childrenOf(c)
      const j = children?.findIndex((x) => x.id === a.id) ?? -1
      if (j >= 0) return void children.splice(j, 1)
    }
  },
  'session/mcpServerStateChanged'(state, a) {
    setServerState(state, a.id, a.state, a.channel)
  },
  'session/mcpServerStartRequested'(state, a) {
    setServerState(state, a.id, { kind: 'starting' }, undefined)
  },
  'session/mcpServerStopRequested'(state, a) {
    setServerState(state, a.id, { kind: 'stopped' }, undefined)
  },
  'session/serverToolsChanged'(state, a) {
    state.serverTools = clone(a.tools)
  },
}

/**
 * Replays `envelopes` (as the host emitted them) on the session channel
 * `channel` from `initial`: in `serverSeq` order, rejected echoes skipped
 * (the AHP rule). Returns the state.
 */
export function replaySession(initial, envelopes, channel) {
  const state = clone(initial)
  const ordered = envelopes.filter((e) => e.channel === channel).sort((x, y) => x.serverSeq - y.serverSeq)
  for (const e of ordered) {
    if (e.rejectionReason !== undefined) continue
    const reduce = REDUCERS[e.action.type]
    if (!reduce) throw new Error(`replay.mjs does not transcribe ${e.action.type} (serverSeq ${e.serverSeq})`)
    reduce(state, e.action)
  }
  return state
}
