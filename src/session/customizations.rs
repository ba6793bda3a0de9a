//! Builders and lookups for the customization entries the host publishes.
//!
//! Ids: a plugin's id is its name; a plugin's MCP server child is
//! `<plugin>/<server>`; a top-level server's id is its name.

use ahp_types::state::{
    ChildCustomization, Customization, CustomizationEnablement, CustomizationLoadState, ErrorInfo,
    McpServerCustomization, McpServerCustomizationApps, McpServerErrorState, McpServerState,
    PluginCustomization, SessionState, TextRange,
};

use crate::error::ErrorCode;

/// Id of server `server` inside plugin `plugin`.
pub fn child_server_id(plugin: &str, server: &str) -> String {
    format!("{plugin}/{server}")
}

/// A new `McpServerCustomization` (AHP `type: "mcpServer"`).
pub fn mcp_server_entry(
    id: &str,
    uri: &str,
    name: &str,
    range: Option<TextRange>,
    state: McpServerState,
) -> McpServerCustomization {
    McpServerCustomization {
        id: id.to_owned(),
        uri: uri.to_owned(),
        name: name.to_owned(),
        icons: None,
        range,
        meta: None,
        enablement: None,
        state,
        channel: None,
        mcp_app: None,
    }
}

/// A new `PluginCustomization` with the given load state and MCP server children.
pub fn plugin_entry(
    id: &str,
    uri: &str,
    name: &str,
    load: CustomizationLoadState,
    children: Vec<McpServerCustomization>,
) -> PluginCustomization {
    PluginCustomization {
        id: id.to_owned(),
        uri: uri.to_owned(),
        name: name.to_owned(),
        icons: None,
        range: None,
        meta: None,
        client_id: None,
        load: Some(load),
        children: Some(
            children
                .into_iter()
                .map(|c| ChildCustomization::McpServer(Box::new(c)))
                .collect(),
        ),
        enablement: None,
        version: None,
    }
}

/// `McpServerState::Error` (AHP `McpServerErrorState`) with `errorType` =
/// the stable string of `code` (e.g. `"server_exited"`) and `message`
/// (every `http(s)` URL in it without userinfo, query and fragment, every
/// secret value the host holds replaced: `crate::redact::shown`).
pub fn server_error_state(code: ErrorCode, message: impl Into<String>) -> McpServerState {
    let message = message.into();
    McpServerState::Error(McpServerErrorState {
        error: ErrorInfo {
            error_type: code.as_str().to_owned(),
            message: crate::redact::shown(&message).into_owned(),
            stack: None,
            meta: None,
        },
    })
}

/// The `ErrorInfo._meta` key of a crashed server's `error` state while a
/// restart is scheduled: `{delayMs, attempt, maxRestarts}` (ms; the attempt
/// counts from 1). Its absence means no restart is coming (a failed start,
/// the restart limit). AHP `ErrorInfo._meta` holds provider-specific keys.
pub const RESTART_META_KEY: &str = "ahp-mcp-host/restart";

/// [`server_error_state`] of a crashed server that restarts after
/// `delay_ms` (restart `attempt` of `max_restarts`), under [`RESTART_META_KEY`].
pub fn restarting_error_state(
    code: ErrorCode,
    message: impl Into<String>,
    (delay_ms, attempt, max_restarts): (u64, u32, u32),
) -> McpServerState {
    let restart = serde_json::json!({
        "delayMs": delay_ms,
        "attempt": attempt,
        "maxRestarts": max_restarts,
    });
    let mut meta = serde_json::Map::new();
    meta.insert(RESTART_META_KEY.to_owned(), restart);
    let mut state = server_error_state(code, message);
    if let McpServerState::Error(e) = &mut state {
        e.error.meta = Some(meta);
    }
    state
}

/// `state` with its server-authored texts as the host may show them
/// (`crate::redact::shown`): an `error` state's message, an `authRequired`
/// state's `description` (an authorization server's `error_description`
/// or a sign-in failure, either of which may echo a secret it was sent);
/// then every other string in it with each secret value the host holds
/// replaced (`crate::redact::hidden_in_texts`): an `authRequired` state's
/// `resource` (RFC 9728 metadata naming the server's URL, whose path may
/// hold a secret), whatever a server put in it. Every server state passes
/// through here before it is published.
pub fn shown_server_state(mut state: McpServerState) -> McpServerState {
    let text = match &mut state {
        McpServerState::Error(e) => Some(&mut e.error.message),
        McpServerState::AuthRequired(required) => required.description.as_mut(),
        _ => None,
    };
    if let Some(text) = text {
        if let std::borrow::Cow::Owned(shown) = crate::redact::shown(text) {
            *text = shown;
        }
    }
    hidden_everywhere(state)
}

/// The members of a server state's JSON form that are a fixed vocabulary,
/// never rewritten: the variant's `kind`, an error's `errorType`, an
/// `authRequired` state's `reason`, its scopes and the RFC 9728 metadata's
/// method and algorithm lists (`blocking` is a boolean, kept anyway).
const STATE_VOCABULARY: &[&str] = &[
    "kind",
    "errorType",
    "reason",
    "blocking",
    "requiredScopes",
    "scopes_supported",
    "bearer_methods_supported",
    "resource_signing_alg_values_supported",
];

/// `state` with [`crate::redact::hidden_in_texts`] applied to its JSON
/// form: its free texts and URLs, never an object key, a number or a
/// [`STATE_VOCABULARY`] member (a kept value equal to `starting`, `exited`
/// or `message` leaves every state well-formed); `state` itself when
/// nothing is hidden.
fn hidden_everywhere(state: McpServerState) -> McpServerState {
    let Ok(json) = serde_json::to_value(&state) else {
        return state;
    };
    let mut hidden = json.clone();
    crate::redact::hidden_in_texts(&mut hidden, STATE_VOCABULARY);
    if hidden == json {
        return state;
    }
    serde_json::from_value(hidden).unwrap_or(state)
}

/// AHP "effective enabled": the first enablement entry decides; no entries = enabled.
/// An unknown first entry counts as disabled (as the reducer does).
pub fn effective_enabled(enablement: Option<&[CustomizationEnablement]>) -> bool {
    match enablement.and_then(|e| e.first()) {
        None => true,
        Some(CustomizationEnablement::Global { enabled })
        | Some(CustomizationEnablement::Workspace { enabled, .. })
        | Some(CustomizationEnablement::Session { enabled }) => *enabled,
        Some(CustomizationEnablement::Unknown(_)) => false,
    }
}

/// Where a customization id points in the session state.
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    /// A top-level plugin.
    Plugin(&'a PluginCustomization),
    /// An MCP server, with its containing plugin when it is a child.
    McpServer(&'a McpServerCustomization, Option<&'a PluginCustomization>),
    /// Something else (directory, skill, …) the host does not manage.
    Other,
}

/// Finds `id` by the reducer's rule: top-level entries first, then children.
pub fn find<'a>(state: &'a SessionState, id: &str) -> Option<Found<'a>> {
    let list = state.customizations.as_ref()?;
    for c in list {
        match c {
            Customization::Plugin(p) if p.id == id => return Some(Found::Plugin(p)),
            Customization::McpServer(s) if s.id == id => return Some(Found::McpServer(s, None)),
            Customization::Directory(d) if d.id == id => return Some(Found::Other),
            _ => {}
        }
    }
    for c in list {
        if let Customization::Plugin(p) = c {
            for child in p.children.iter().flatten() {
                match child {
                    ChildCustomization::McpServer(s) if s.id == id => {
                        return Some(Found::McpServer(s, Some(p)))
                    }
                    _ => {}
                }
            }
        }
    }
    None
}

/// Whether server `id` should be running: it and its plugin (if any) are
/// effectively enabled.
pub fn server_enabled(state: &SessionState, id: &str) -> bool {
    match find(state, id) {
        Some(Found::McpServer(s, parent)) => {
            effective_enabled(s.enablement.as_deref())
                && parent.is_none_or(|p| effective_enabled(p.enablement.as_deref()))
        }
        _ => false,
    }
}

/// Every MCP server in the session: top-level ones and plugin children.
pub fn mcp_servers(state: &SessionState) -> Vec<&McpServerCustomization> {
    let mut out = Vec::new();
    for c in state.customizations.iter().flatten() {
        match c {
            Customization::McpServer(s) => out.push(s.as_ref()),
            Customization::Plugin(p) => {
                out.extend(p.children.iter().flatten().filter_map(|child| match child {
                    ChildCustomization::McpServer(s) => Some(s.as_ref()),
                    _ => None,
                }))
            }
            _ => {}
        }
    }
    out
}

/// `_meta` key under which the host publishes a connected server's identity
/// (see `mcp::identity::ServerIdentity`) on its `McpServerCustomization`.
pub const SERVER_INFO_META_KEY: &str = "ahp-mcp-host/serverInfo";

/// The `_meta` key of a sandboxed stdio server's customization: its
/// profile as configured (`{filesystem: {read, write}, network,
/// enforce}`), set when the server is added.
pub const SANDBOX_META_KEY: &str = "ahp-mcp-host/sandbox";

/// `_meta` key under which a plugin's MCP server customization lists the
/// `${…}` placeholders its `mcp.json` entry sends literally (in `url` or
/// `headers`, where Agent Plugins expands nothing): an array of
/// `{field, placeholder, message}` (`field`: `url` or `headers.<name>`;
/// `placeholder`: e.g. `${TOKEN}`; never a value).
pub const LITERAL_PLACEHOLDERS_META_KEY: &str = "ahp-mcp-host/literalPlaceholders";

/// The top-level customization holding MCP server `id`, with that server's
/// `icons` replaced and `_meta[SERVER_INFO_META_KEY]` set to `info` (other
/// `_meta` keys kept): what a `session/customizationUpdated` for it carries
/// (the reducer replaces top-level entries whole). `None` when `id` is not
/// an MCP server of the session.
pub fn with_server_info(
    state: &SessionState,
    id: &str,
    icons: Option<Vec<ahp_types::state::Icon>>,
    info: serde_json::Value,
) -> Option<Customization> {
    with_server(state, id, |s| {
        s.icons = icons;
        let meta = s.meta.get_or_insert_with(Default::default);
        meta.insert(SERVER_INFO_META_KEY.to_owned(), info);
        true
    })
}

/// The top-level customization holding MCP server `id`, with that
/// server's `_meta[key]` set to `value` (other `_meta` keys kept): what a
/// `session/customizationUpdated` for it carries; a `null` `value` removes
/// the key. `None` when `id` is not an MCP server of the session, or
/// `_meta[key]` already is `value`.
pub fn with_server_meta(
    state: &SessionState,
    id: &str,
    key: &str,
    value: serde_json::Value,
) -> Option<Customization> {
    with_server(state, id, |s| {
        if value.is_null() {
            return s.meta.as_mut().and_then(|m| m.remove(key)).is_some();
        }
        let meta = s.meta.get_or_insert_with(Default::default);
        let changed = meta.get(key) != Some(&value);
        meta.insert(key.to_owned(), value);
        changed
    })
}

/// The top-level customization holding MCP server `id`, with that server's
/// `mcpApp` (AHP `McpServerCustomizationApps`, MCP Apps) set to `app`
/// (`None` removes it), everything else kept: what a
/// `session/customizationUpdated` for it carries. `None` when `id` is not
/// an MCP server of the session, or its `mcpApp` already is `app`.
pub fn with_mcp_app(
    state: &SessionState,
    id: &str,
    app: Option<McpServerCustomizationApps>,
) -> Option<Customization> {
    with_server(state, id, |s| {
        let changed = s.mcp_app != app;
        s.mcp_app = app;
        changed
    })
}

/// The top-level customization holding MCP server `id` with `update`
/// applied to that server; `None` when `id` is not an MCP server of the
/// session or `update` says nothing changed (returns `false`).
fn with_server(
    state: &SessionState,
    id: &str,
    update: impl FnOnce(&mut McpServerCustomization) -> bool,
) -> Option<Customization> {
    for c in state.customizations.iter().flatten() {
        match c {
            Customization::McpServer(s) if s.id == id => {
                let mut s = s.clone();
                return update(&mut s).then_some(Customization::McpServer(s));
            }
            Customization::Plugin(p) => {
                let mut p = p.clone();
                let child = p.children.iter_mut().flatten().find_map(|c| match c {
                    ChildCustomization::McpServer(s) if s.id == id => Some(s),
                    _ => None,
                });
                if let Some(s) = child {
                    return update(s).then_some(Customization::Plugin(p));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_of_a_published_state_hides_the_kept_secrets() {
        let canary = "PathSecretCanary9";
        let _kept = crate::redact::KeptSecret::new(canary);
        let url = format!("http://127.0.0.1:1/mcp/{canary}");
        let state: McpServerState = serde_json::from_value(serde_json::json!({
            "kind": "authRequired",
            "resource": {"resource": url, "authorization_servers": [format!("{url}/as")]},
            "description": format!("sign in to {url}"),
        }))
        .unwrap();
        let shown = serde_json::to_string(&shown_server_state(state)).unwrap();
        assert!(!shown.contains(canary), "{shown}");
        assert!(
            shown.contains("http://127.0.0.1:1/mcp/[redacted]"),
            "{shown}"
        );
        assert!(shown.contains("\"kind\":\"authRequired\""), "{shown}");
    }

    #[test]
    fn a_kept_value_equal_to_a_tag_code_or_key_leaves_the_state_well_formed() {
        let word = "KeptWordCanary7";
        let _kept = crate::redact::KeptSecret::new(word);
        let state: McpServerState = serde_json::from_value(serde_json::json!({
            "kind": "error",
            "error": {"errorType": word, "message": format!("said {word}"),
                "_meta": {word: {"n": 1}}},
        }))
        .unwrap();
        let McpServerState::Error(e) = shown_server_state(state) else {
            panic!("not an error state");
        };
        assert_eq!(e.error.error_type, word);
        assert_eq!(e.error.message, "said [redacted]");
        assert!(e.error.meta.unwrap().contains_key(word));
    }

    #[test]
    fn server_error_state_carries_the_stable_code() {
        let McpServerState::Error(e) = server_error_state(ErrorCode::ServerExited, "exited 1")
        else {
            panic!("not an error state");
        };
        assert_eq!(e.error.error_type, "server_exited");
        assert_eq!(e.error.message, "exited 1");
        let McpServerState::Error(e) = server_error_state(ErrorCode::SpawnFailed, "m") else {
            panic!("not an error state");
        };
        assert_eq!(e.error.error_type, "spawn_failed");
    }

    #[test]
    fn server_info_updates_a_plugin_child_and_keeps_the_rest() {
        let child = mcp_server_entry(
            "p/s",
            "file:///p",
            "s",
            None,
            McpServerState::Starting(ahp_types::state::McpServerStartingState { blocking: None }),
        );
        let other = mcp_server_entry("p/t", "file:///p", "t", None, child.state.clone());
        let load = CustomizationLoadState::Loaded(ahp_types::state::CustomizationLoadedState {});
        let plugin = plugin_entry("p", "file:///p", "p", load, vec![child, other]);
        let mut state = crate::session::empty_session_state();
        state.customizations = Some(vec![Customization::Plugin(plugin)]);
        let icon: ahp_types::state::Icon =
            serde_json::from_value(serde_json::json!({"src": "https://x.test/i.png"}))
                .unwrap_or_else(|e| panic!("{e}"));
        let info = serde_json::json!({"name": "srv", "protocolVersion": "2026-07-28"});
        let Some(Customization::Plugin(p)) =
            with_server_info(&state, "p/s", Some(vec![icon]), info.clone())
        else {
            panic!("the plugin, updated");
        };
        let children: Vec<_> = p.children.iter().flatten().collect();
        let ChildCustomization::McpServer(s) = children[0] else {
            panic!("a server")
        };
        assert_eq!(
            s.meta.as_ref().and_then(|m| m.get(SERVER_INFO_META_KEY)),
            Some(&info)
        );
        assert_eq!(s.icons.as_ref().map(Vec::len), Some(1));
        let ChildCustomization::McpServer(t) = children[1] else {
            panic!("a server")
        };
        assert!(t.meta.is_none(), "the sibling is untouched");
        assert!(with_server_info(&state, "p/missing", None, info).is_none());
    }

    #[test]
    fn mcp_app_is_set_on_the_child_only_when_it_changes() {
        let starting =
            McpServerState::Starting(ahp_types::state::McpServerStartingState { blocking: None });
        let child = mcp_server_entry("p/s", "file:///p", "s", None, starting.clone());
        let other = mcp_server_entry("p/t", "file:///p", "t", None, starting);
        let load = CustomizationLoadState::Loaded(ahp_types::state::CustomizationLoadedState {});
        let plugin = plugin_entry("p", "file:///p", "p", load, vec![child, other]);
        let mut state = crate::session::empty_session_state();
        state.customizations = Some(vec![Customization::Plugin(plugin)]);
        let app = McpServerCustomizationApps {
            capabilities: serde_json::from_value(serde_json::json!({"serverTools": {}}))
                .unwrap_or_else(|e| panic!("{e}")),
        };
        let Some(updated) = with_mcp_app(&state, "p/s", Some(app.clone())) else {
            panic!("the plugin, updated");
        };
        let Customization::Plugin(p) = &updated else {
            panic!("a plugin")
        };
        let children: Vec<_> = p.children.iter().flatten().collect();
        let (ChildCustomization::McpServer(s), ChildCustomization::McpServer(t)) =
            (children[0], children[1])
        else {
            panic!("servers")
        };
        assert_eq!(s.mcp_app.as_ref(), Some(&app));
        assert!(t.mcp_app.is_none(), "the sibling is untouched");
        state.customizations = Some(vec![updated]);
        assert!(
            with_mcp_app(&state, "p/s", Some(app)).is_none(),
            "unchanged"
        );
        assert!(with_mcp_app(&state, "p/t", None).is_none(), "unchanged");
        assert!(with_mcp_app(&state, "p/s", None).is_some(), "removed");
        assert!(with_mcp_app(&state, "p/missing", None).is_none());
    }
}
