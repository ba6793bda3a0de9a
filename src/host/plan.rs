//! What adding a plugin means, as a pure function: from the parsed
//! `mcp.json` (Agent Plugins "Validate in two stages": stage 1 is the
//! file, stage 2 each entry), the plugin's variables, its `addPlugin`
//! overrides and the limits, [`plan_plugin`] builds the plugin
//! customization, one server spec per valid entry and the log records to
//! send. No I/O: `add_plugin` reads the file and creates `PLUGIN_DATA`
//! before, and publishes and starts actors after.

use std::time::Duration;

use ahp_types::state::{
    Customization, CustomizationDegradedState, CustomizationErrorState, CustomizationLoadState,
    CustomizationLoadedState, McpServerStartingState, McpServerState,
};

use super::options::{clamped_timeout, AddPlugin};
use crate::config::sandbox::{effective_profile, SandboxOptions, SandboxProfile, SandboxSetting};
use crate::config::{LiteralPlaceholder, McpJson, PluginVars, ServerConfig};
use crate::events::{log, HostEvent, LogLevel};
use crate::limits::Limits;
use crate::mcp::{ServerSpec, StartPolicy, TransportSpec};
use crate::session::{
    child_server_id, mcp_server_entry, plugin_entry, LITERAL_PLACEHOLDERS_META_KEY,
    SANDBOX_META_KEY,
};

/// Where a plugin comes from and what the caller asked for.
pub(super) struct PluginSource<'a> {
    /// The plugin's customization id and display name.
    pub name: &'a str,
    /// The plugin customization's `uri`.
    pub uri: &'a str,
    /// `file://` URI of its `mcp.json` (the children's `uri`).
    pub file_uri: &'a str,
    /// The `addPlugin` options (startup timeouts, per-server overrides).
    pub opts: &'a AddPlugin,
    /// The host's (clamped) limits: the default startup timeout.
    pub limits: &'a Limits,
    /// The host's default start ([`crate::host::HostConfig::lazy_start`]).
    pub lazy_start: bool,
    /// The host's default sandbox ([`crate::host::HostConfig::sandbox`]).
    pub sandbox: Option<&'a SandboxOptions>,
}

/// Everything `add_plugin` does after reading the file, decided up front.
#[derive(Debug)]
pub(super) struct PluginPlan {
    /// The plugin customization to publish: final load state and one
    /// `starting` child per valid entry.
    pub customization: Customization,
    /// One spec per valid entry, in file order.
    pub specs: Vec<ServerSpec>,
    /// `loaded`, `degraded` (some entries invalid; message joins theirs with
    /// `"; "`) or `error` (the file is unusable; no specs).
    pub load: CustomizationLoadState,
    /// Log records to send before publishing, in order.
    pub logs: Vec<HostEvent>,
}

/// `starting`, the state every new server customization is created in;
/// `blocking: true` for a `required` server ([`StartPolicy`]).
pub(super) fn starting(start: StartPolicy) -> McpServerState {
    McpServerState::Starting(McpServerStartingState {
        blocking: start.required.then_some(true),
    })
}

/// `ms` clamped to 1 ms ..= 24 h, or the `startupTimeoutMs` limit.
pub(super) fn startup_timeout(ms: Option<u64>, limits: &Limits) -> Duration {
    ms.map_or(
        Duration::from_millis(limits.startup_timeout_ms),
        clamped_timeout,
    )
}

/// The sandbox of a server from its own setting and the host's default:
/// stdio servers only (a remote server runs nowhere here).
pub(super) fn server_sandbox(
    transport: &TransportSpec,
    own: &SandboxSetting,
    host: Option<&SandboxOptions>,
) -> Option<SandboxProfile> {
    match transport {
        TransportSpec::Stdio(..) => effective_profile(own, host),
        TransportSpec::StreamableHttp(_) => None,
    }
}

/// `meta` with the configured sandbox profile of a sandboxed server
/// ([`SANDBOX_META_KEY`]).
pub(super) fn with_sandbox_meta(
    meta: Option<serde_json::Map<String, serde_json::Value>>,
    sandbox: Option<&SandboxProfile>,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let Some(profile) = sandbox else { return meta };
    let mut meta = meta.unwrap_or_default();
    meta.insert(SANDBOX_META_KEY.to_owned(), profile.to_json());
    Some(meta)
}

/// What an actor runs for `config`.
pub(super) fn transport_spec(config: ServerConfig, vars: PluginVars) -> TransportSpec {
    match config {
        ServerConfig::Stdio(c) => TransportSpec::Stdio(c, vars),
        ServerConfig::StreamableHttp(h) => TransportSpec::StreamableHttp(h),
    }
}

/// A `warn` log for each `servers` override naming no server of the
/// plugin's `mcp.json` (a typo would otherwise go unnoticed), in name order.
fn unknown_overrides(source: &PluginSource<'_>, mcp: &McpJson) -> Vec<HostEvent> {
    let mut unknown: Vec<&String> = source
        .opts
        .servers
        .keys()
        .filter(|k| !mcp.servers.iter().any(|s| &s.name == *k))
        .collect();
    unknown.sort();
    unknown
        .into_iter()
        .map(|k| {
            let text = format!(
                "plugin {}: servers override {k:?} names no server of its mcp.json; ignored",
                source.name
            );
            log(LogLevel::Warn, "host.config", None, text)
        })
        .collect()
}

/// The diagnostics of entry `server` of plugin `plugin` whose `url` or
/// `headers` hold `${…}` placeholders, which reach the server literally
/// (Agent Plugins expands nothing there, seed 002): one `warn` log each
/// (target `host.config`) and the `_meta` value of the server's
/// customization, `[{field, placeholder, message}]`; `None` without any.
/// The server still starts with the literal values.
fn literal_placeholders_meta(
    plugin: &str,
    server: &str,
    found: &[LiteralPlaceholder],
    logs: &mut Vec<HostEvent>,
) -> Option<Vec<serde_json::Value>> {
    if found.is_empty() {
        return None;
    }
    let diagnostic = |p: &LiteralPlaceholder| {
        let message = p.message(server);
        let text = format!("plugin {plugin}: {message}");
        logs.push(log(LogLevel::Warn, "host.config", None, text));
        serde_json::json!({"field": p.field, "placeholder": p.placeholder, "message": message})
    };
    Some(found.iter().map(diagnostic).collect())
}

/// Plans plugin `source` from its loaded `mcp.json` and variables, or the
/// message saying why it could not be loaded (unreadable or broken file,
/// no `PLUGIN_DATA`): then the plugin is in `error` with that message.
///
/// Invalid entries are skipped with a `warn` record and make the plugin
/// `degraded`; valid ones become child `<plugin>/<server>` with a spec
/// whose startup timeout is the server's override, else the plugin's,
/// else the limit, clamped to 1 ms ..= 24 h.
///
/// A valid entry whose `url` or `headers` hold `${…}` placeholders still
/// starts, with them as literal text (seed 002), but each is reported: a
/// `warn` record, the plugin `degraded` with the diagnostic (naming the
/// server, the field and the placeholder, never the value) and the
/// server's customization `_meta[LITERAL_PLACEHOLDERS_META_KEY]`.
pub(super) fn plan_plugin(
    source: &PluginSource<'_>,
    loaded: Result<(McpJson, PluginVars), String>,
) -> PluginPlan {
    let name = source.name;
    let entry = |load: &CustomizationLoadState, children| {
        Customization::Plugin(plugin_entry(name, source.uri, name, load.clone(), children))
    };
    let (mcp, vars) = match loaded {
        Ok(loaded) => loaded,
        Err(message) => {
            let text = format!("plugin {name}: MCP disabled: {message}");
            let load = CustomizationLoadState::Error(CustomizationErrorState { message });
            return PluginPlan {
                customization: entry(&load, Vec::new()),
                specs: Vec::new(),
                load,
                logs: vec![log(LogLevel::Error, "host.config", None, text)],
            };
        }
    };
    let (mut problems, mut logs, mut children, mut specs) = (vec![], vec![], vec![], vec![]);
    logs.extend(unknown_overrides(source, &mcp));
    for server in mcp.servers {
        let config = match server.config {
            Ok(c) => c,
            Err(message) => {
                let text = format!("plugin {name}: skipped {message}");
                logs.push(log(LogLevel::Warn, "host.config", None, text));
                problems.push(message);
                continue;
            }
        };
        let id = child_server_id(name, &server.name);
        let spec = child_spec(
            source,
            &server.name,
            id,
            transport_spec(config, vars.clone()),
        );
        let state = starting(spec.start);
        let mut child =
            mcp_server_entry(&spec.id, source.file_uri, &server.name, server.range, state);
        let literal = &server.literal_placeholders;
        if let Some(meta) = literal_placeholders_meta(name, &server.name, literal, &mut logs) {
            problems.extend(
                meta.iter()
                    .filter_map(|d| d["message"].as_str().map(str::to_owned)),
            );
            let key = LITERAL_PLACEHOLDERS_META_KEY.to_owned();
            child.meta = Some(
                [(key, serde_json::Value::Array(meta))]
                    .into_iter()
                    .collect(),
            );
        }
        child.meta = with_sandbox_meta(child.meta.take(), spec.sandbox.as_ref());
        children.push(child);
        specs.push(spec);
    }
    let load = if problems.is_empty() {
        CustomizationLoadState::Loaded(CustomizationLoadedState {})
    } else {
        CustomizationLoadState::Degraded(CustomizationDegradedState {
            message: problems.join("; "),
        })
    };
    PluginPlan {
        customization: entry(&load, children),
        specs,
        load,
        logs,
    }
}

/// The spec of plugin server `server` (id `id`, running `transport`): the
/// host-side settings of its overrides, its startup timeout the
/// override's, else the plugin's, else the limit.
fn child_spec(
    source: &PluginSource<'_>,
    server: &str,
    id: String,
    transport: TransportSpec,
) -> ServerSpec {
    let overrides = source.opts.servers.get(server);
    let ms = overrides.and_then(|o| o.startup_timeout_ms);
    let ms = ms.or(source.opts.startup_timeout_ms);
    let own = overrides.map(|o| o.sandbox.clone()).unwrap_or_default();
    let sandbox = server_sandbox(&transport, &own, source.sandbox);
    ServerSpec {
        id,
        transport,
        startup_timeout: startup_timeout(ms, source.limits),
        oauth_client: overrides.and_then(|o| o.oauth.clone()),
        protocol: overrides.map(|o| o.protocol).unwrap_or_default(),
        secret_values: Vec::new(),
        tool_filter: overrides.map(|o| o.tool_filter.clone()).unwrap_or_default(),
        call_limits: overrides.map(|o| o.call_limits).unwrap_or_default(),
        start: overrides
            .map(|o| o.start)
            .unwrap_or_default()
            .or_default(source.lazy_start),
        sandbox,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use ahp_types::state::ChildCustomization;
    use serde_json::json;

    use super::*;
    use crate::config::parse_mcp_json;
    use crate::config::{OAuthClientSetting, OAuthGrant};
    use crate::limits::MAX_TIMEOUT_MS;

    fn vars() -> PluginVars {
        PluginVars {
            plugin_root: PathBuf::from("/plugins/p"),
            plugin_data: PathBuf::from("/data/p"),
        }
    }

    /// The `addPlugin` parameters of a JS-shaped options object (`root`,
    /// `startupTimeoutMs`, `servers` with `startupTimeoutMs`, `oauth`,
    /// `protocol`, `excludeTools`, `callTimeoutMs`), as the binding converts them.
    fn opts(v: serde_json::Value) -> AddPlugin {
        let ms = |v: &serde_json::Value| v.get("startupTimeoutMs").and_then(|m| m.as_u64());
        let mut opts = AddPlugin::new(v["root"].as_str().unwrap());
        opts.startup_timeout_ms = ms(&v);
        for (name, o) in v
            .get("servers")
            .and_then(|s| s.as_object())
            .into_iter()
            .flatten()
        {
            let field = |k: &str| o.get(k).cloned().unwrap_or_default();
            let overrides = super::super::ServerOverrides {
                startup_timeout_ms: ms(o),
                oauth: o.get("oauth").map(|c| OAuthClientSetting {
                    client_id: Some(c["clientId"].as_str().unwrap().to_owned()),
                    grant: OAuthGrant::AuthorizationCode,
                    ..Default::default()
                }),
                protocol: serde_json::from_value(field("protocol")).unwrap_or_default(),
                tool_filter: crate::catalogue::ToolFilter::new(
                    None,
                    &serde_json::from_value::<Vec<String>>(field("excludeTools"))
                        .unwrap_or_default(),
                )
                .unwrap(),
                call_limits: crate::mcp::CallLimits::from_ms(
                    o.get("callTimeoutMs").and_then(|m| m.as_u64()),
                    None,
                ),
                start: crate::mcp::StartPolicy {
                    required: o.get("required").and_then(|r| r.as_bool()) == Some(true),
                    ..Default::default()
                },
                sandbox: Default::default(),
            };
            opts.servers.insert(name.clone(), overrides);
        }
        opts
    }

    fn plan(file: &str, opts: &AddPlugin, limits: &Limits) -> PluginPlan {
        let source = PluginSource {
            name: "p",
            uri: "file:///plugins/p/",
            file_uri: "file:///plugins/p/mcp.json",
            opts,
            limits,
            lazy_start: false,
            sandbox: None,
        };
        let loaded = parse_mcp_json(file, "/plugins/p/mcp.json").map(|m| (m, vars()));
        plan_plugin(&source, loaded)
    }

    /// (id, startup timeout ms, oauth client id) of every spec.
    fn specs(plan: &PluginPlan) -> Vec<(String, u128, Option<String>)> {
        let client = |s: &ServerSpec| s.oauth_client.as_ref().and_then(|o| o.client_id.clone());
        let row = |s: &ServerSpec| (s.id.clone(), s.startup_timeout.as_millis(), client(s));
        plan.specs.iter().map(row).collect()
    }

    /// (id, uri, name) of every child of the planned plugin customization.
    fn children(plan: &PluginPlan) -> Vec<(String, String, String)> {
        let Customization::Plugin(p) = &plan.customization else {
            panic!("not a plugin: {:?}", plan.customization);
        };
        assert_eq!((p.id.as_str(), p.uri.as_str()), ("p", "file:///plugins/p/"));
        assert_eq!(p.load.as_ref(), Some(&plan.load));
        let child = |c: &ChildCustomization| match c {
            ChildCustomization::McpServer(s) => {
                assert_eq!(s.state, starting(StartPolicy::default()));
                (s.id.clone(), s.uri.clone(), s.name.clone())
            }
            other => panic!("unexpected child {other:?}"),
        };
        p.children.iter().flatten().map(child).collect()
    }

    const TWO: &str = r#"{"mcpServers": {
        "a": {"type": "stdio", "command": "node", "args": ["a.js"]},
        "b": {"type": "streamable-http", "url": "https://mcp.example/b"}
    }}"#;

    #[test]
    fn valid_entries_are_loaded_with_one_child_and_spec_each() {
        let limits = Limits {
            startup_timeout_ms: 7_000,
            ..Limits::default()
        };
        let cases = [
            (json!({"root": "/plugins/p"}), [7_000, 7_000], None),
            (
                json!({"root": "/plugins/p", "startupTimeoutMs": 5_000}),
                [5_000, 5_000],
                None,
            ),
            (
                json!({"root": "/plugins/p", "startupTimeoutMs": 5_000,
                       "servers": {"b": {"startupTimeoutMs": 0, "oauth": {"clientId": "cid"}}}}),
                [5_000, 1],
                Some("cid"),
            ),
            (
                json!({"root": "/plugins/p", "startupTimeoutMs": u64::MAX}),
                [MAX_TIMEOUT_MS, MAX_TIMEOUT_MS],
                None,
            ),
        ];
        for (options, [a_ms, b_ms], b_client) in cases {
            let plan = plan(TWO, &opts(options.clone()), &limits);
            assert_eq!(
                plan.load,
                CustomizationLoadState::Loaded(CustomizationLoadedState {})
            );
            assert!(plan.logs.is_empty(), "{options}: {:?}", plan.logs);
            let b_client = b_client.map(str::to_owned);
            assert_eq!(
                specs(&plan),
                [
                    ("p/a".into(), a_ms.into(), None),
                    ("p/b".into(), b_ms.into(), b_client)
                ],
                "{options}"
            );
            let file = "file:///plugins/p/mcp.json".to_owned();
            assert_eq!(
                children(&plan),
                [
                    ("p/a".into(), file.clone(), "a".into()),
                    ("p/b".into(), file, "b".into())
                ]
            );
        }
        let plan = plan(TWO, &opts(json!({"root": "/p"})), &limits);
        assert!(matches!(&plan.specs[0].transport, TransportSpec::Stdio(_, v) if v == &vars()));
        assert!(matches!(
            &plan.specs[1].transport,
            TransportSpec::StreamableHttp(_)
        ));
    }

    #[test]
    fn an_override_naming_no_server_is_a_warning_and_a_known_one_is_used() {
        let options = json!({"root": "/p", "servers": {
            "b": {"protocol": "legacy"}, "zz": {"protocol": "legacy"}, "nosuch": {}
        }});
        let plan = plan(TWO, &opts(options), &Limits::default());
        let warned: Vec<String> = plan
            .logs
            .iter()
            .filter_map(|e| match e {
                HostEvent::Log(l) if l.level == LogLevel::Warn => Some(l.message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(
            warned[0].contains("\"nosuch\"") && warned[1].contains("\"zz\""),
            "{warned:?}"
        );
        let protocol = |id: &str| plan.specs.iter().find(|s| s.id == id).map(|s| s.protocol);
        assert_eq!(
            protocol("p/b"),
            Some(crate::config::ProtocolSetting::Legacy)
        );
        assert_eq!(protocol("p/a"), Some(crate::config::ProtocolSetting::Auto));
    }

    #[test]
    fn a_servers_tool_filter_and_call_limits_reach_its_spec_only() {
        let options = json!({"root": "/p", "servers": {
            "b": {"excludeTools": ["x_*"], "callTimeoutMs": 1500}
        }});
        let plan = plan(TWO, &opts(options), &Limits::default());
        let spec = |id: &str| plan.specs.iter().find(|s| s.id == id).unwrap();
        assert!(spec("p/b").tool_filter.why_disabled("x_1").is_some());
        assert_eq!(spec("p/b").tool_filter.why_disabled("y"), None);
        assert_eq!(
            spec("p/b").call_limits.timeout,
            Some(Duration::from_millis(1500))
        );
        assert!(spec("p/a").tool_filter.is_empty());
        assert_eq!(spec("p/a").call_limits, crate::mcp::CallLimits::default());
    }

    #[test]
    fn an_invalid_entry_degrades_the_plugin_and_keeps_its_siblings() {
        let file = r#"{"mcpServers": {
            "good": {"type": "stdio", "command": "node"},
            "bad": {"type": "streamable-http", "url": "http://example.com/mcp"},
            "also": {"type": "stdio", "command": "python3"}
        }}"#;
        let plan = plan(file, &opts(json!({"root": "/p"})), &Limits::default());
        let CustomizationLoadState::Degraded(d) = &plan.load else {
            panic!("not degraded: {:?}", plan.load);
        };
        assert!(d.message.starts_with("server \"bad\": "), "{}", d.message);
        let ids: Vec<String> = specs(&plan).into_iter().map(|s| s.0).collect();
        assert_eq!(ids, ["p/good", "p/also"]);
        assert_eq!(children(&plan).len(), 2);
        let [HostEvent::Log(record)] = &plan.logs[..] else {
            panic!("one log record expected: {:?}", plan.logs);
        };
        assert_eq!(record.level, LogLevel::Warn);
        assert_eq!(record.message, format!("plugin p: skipped {}", d.message));
    }

    #[test]
    fn a_placeholder_in_a_header_or_url_is_reported_and_sent_literally() {
        let file = r#"{"mcpServers": {
            "api": {"type": "streamable-http", "url": "https://mcp.example/${TENANT}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}", "X-Plain": "s3cr3t-value"}},
            "local": {"type": "stdio", "command": "node", "args": ["${PLUGIN_ROOT}/a.js"]}
        }}"#;
        let plan = plan(file, &opts(json!({"root": "/p"})), &Limits::default());
        let CustomizationLoadState::Degraded(d) = &plan.load else {
            panic!("not degraded: {:?}", plan.load);
        };
        let url = "server \"api\": field \"url\": ${TENANT} is sent literally (Agent Plugins expands variables only in args, env values and cwd)";
        let auth = "server \"api\": field \"headers.Authorization\": ${TOKEN} is sent literally (Agent Plugins expands variables only in args, env values and cwd)";
        assert_eq!(d.message, format!("{url}; {auth}"));
        let warned: Vec<&str> = plan
            .logs
            .iter()
            .map(|e| match e {
                HostEvent::Log(l) if l.level == LogLevel::Warn => l.message.as_str(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            warned,
            [format!("plugin p: {url}"), format!("plugin p: {auth}")]
        );
        // Both servers still start; the header goes as written.
        assert_eq!(children(&plan).len(), 2);
        let TransportSpec::StreamableHttp(http) = &plan.specs[0].transport else {
            panic!("not http: {:?}", plan.specs[0].transport);
        };
        assert_eq!(http.headers["Authorization"], "Bearer ${TOKEN}");
        let Customization::Plugin(p) = &plan.customization else {
            panic!("not a plugin");
        };
        let metas: Vec<Option<serde_json::Value>> = p
            .children
            .iter()
            .flatten()
            .map(|c| match c {
                ChildCustomization::McpServer(s) => s.meta.as_ref().map(|m| json!(m)),
                other => panic!("unexpected child {other:?}"),
            })
            .collect();
        let expected = json!({ LITERAL_PLACEHOLDERS_META_KEY: [
            {"field": "url", "placeholder": "${TENANT}", "message": url},
            {"field": "headers.Authorization", "placeholder": "${TOKEN}", "message": auth},
        ]});
        assert_eq!(metas, [Some(expected), None]);
        let everything = format!("{:?} {:?} {:?}", plan.logs, plan.load, plan.customization);
        assert!(!everything.contains("s3cr3t-value") && !everything.contains("Bearer"));
    }

    #[test]
    fn a_broken_file_is_an_error_state_without_specs() {
        let plan = plan(
            r#"{"mcpServers": {"#,
            &opts(json!({"root": "/p"})),
            &Limits::default(),
        );
        let CustomizationLoadState::Error(e) = &plan.load else {
            panic!("not an error: {:?}", plan.load);
        };
        assert!(
            e.message.starts_with("/plugins/p/mcp.json:1:"),
            "{}",
            e.message
        );
        assert!(plan.specs.is_empty());
        assert!(children(&plan).is_empty());
        let [HostEvent::Log(record)] = &plan.logs[..] else {
            panic!("one log record expected: {:?}", plan.logs);
        };
        assert_eq!(record.level, LogLevel::Error);
        assert_eq!(
            record.message,
            format!("plugin p: MCP disabled: {}", e.message)
        );
    }
}
