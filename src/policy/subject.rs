//! What the policy and the trust store know about a server, from its
//! [`ServerSpec`]: the [`Subject`] its rules are matched against, what the
//! app's `trust` callback is shown ([`shown_config`]), and its
//! configuration digest ([`config_digest`], over [`digest_input`]).
//!
//! The digest covers what decides what runs: the server id, the
//! transport; for stdio the command, arguments, working directory, plugin
//! root and whether the entry is literal, and each environment variable's
//! name with a SHA-256 of its value; for a remote server the whole URL
//! (user info, query and fragment included) and each header's name with a
//! SHA-256 of its value. A change of any of them asks the app again. No
//! value is kept in clear anywhere: only the final digest (hex SHA-256)
//! is written, to `<dataDir>/mcp-trust.json`. The launch environment the
//! host adds (its own, `PLUGIN_ROOT`, `PLUGIN_DATA`) and the program a
//! bare command resolves to through `PATH` are not part of it.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::rules::{RuleTransport, Subject};
use crate::config::HttpTransport;
use crate::mcp::{ServerSpec, TransportSpec};

/// The version of the digest input (part of every digest): a new field
/// makes a new version, so every server is asked again once.
const FORMAT: &str = "ahp-mcp-host trust digest v1";

/// The policy's view of `spec`.
pub fn subject_of(spec: &ServerSpec) -> Subject {
    let (plugin, name) = match spec.id.split_once('/') {
        Some((plugin, name)) => (Some(plugin.to_owned()), name.to_owned()),
        None => (None, spec.id.clone()),
    };
    let (transport, command, args, url) = match &spec.transport {
        TransportSpec::Stdio(cfg, _) => (
            RuleTransport::Stdio,
            Some(cfg.command.clone()),
            cfg.args.clone(),
            None,
        ),
        TransportSpec::StreamableHttp(cfg) => {
            let transport = match cfg.transport {
                HttpTransport::StreamableHttp => RuleTransport::StreamableHttp,
                HttpTransport::Sse => RuleTransport::Sse,
            };
            let url = crate::redact::shown_server_url(&cfg.url);
            (transport, None, Vec::new(), Some(url))
        }
    };
    Subject {
        id: spec.id.clone(),
        name,
        plugin,
        transport,
        command,
        args,
        url,
    }
}

/// What the app's `trust` callback is shown of `spec` (JS `TrustedConfig`):
/// stdio `{type, command, args, cwd?, env: [names]}`, remote `{type, url,
/// headers: [names]}` with the URL's user info, query and fragment taken
/// off; every secret value the host holds replaced in the texts
/// (`crate::redact::shown`, and the server's own `secret_values`).
pub fn shown_config(spec: &ServerSpec) -> Value {
    let hide = |text: &str| {
        let shown = crate::redact::shown(text);
        crate::redact::without(&shown, &spec.secret_values)
    };
    match &spec.transport {
        TransportSpec::Stdio(cfg, _) => {
            let mut shown = json!({
                "type": "stdio",
                "command": hide(&cfg.command),
                "args": cfg.args.iter().map(|a| hide(a)).collect::<Vec<_>>(),
            });
            if let Some(cwd) = &cfg.cwd {
                shown["cwd"] = json!(hide(cwd));
            }
            shown["env"] = json!(cfg.env.keys().collect::<Vec<_>>());
            shown
        }
        TransportSpec::StreamableHttp(cfg) => json!({
            "type": cfg.transport.type_name(),
            "url": hide(&crate::redact::shown_server_url(&cfg.url)),
            "headers": cfg.headers.keys().collect::<Vec<_>>(),
        }),
    }
}

/// The digest input of `spec` (see the module documentation): the one
/// place that says what a trust decision covers (a stdio server's sandbox
/// profile included, when it has one). A setting that changes what runs is
/// added here.
pub fn digest_input(spec: &ServerSpec) -> Value {
    let hashed = |values: &mut dyn Iterator<Item = (&String, &String)>| -> Map<String, Value> {
        values
            .map(|(k, v)| (k.clone(), json!(sha256_hex(v.as_bytes()))))
            .collect()
    };
    let mut input = json!({ "id": spec.id });
    match &spec.transport {
        TransportSpec::Stdio(cfg, vars) => {
            input["transport"] = json!("stdio");
            input["command"] = json!(cfg.command);
            input["args"] = json!(cfg.args);
            input["cwd"] = json!(cfg.cwd);
            input["pluginRoot"] = json!(vars.plugin_root.to_string_lossy());
            input["literal"] = json!(cfg.literal);
            input["env"] = Value::Object(hashed(&mut cfg.env.iter()));
            // What the server may read, write and reach decides what runs
            // too: loosening or tightening the sandbox asks again.
            if let Some(profile) = &spec.sandbox {
                input["sandbox"] = profile.to_json();
            }
        }
        TransportSpec::StreamableHttp(cfg) => {
            input["transport"] = json!(cfg.transport.type_name());
            input["url"] = json!(sha256_hex(cfg.url.as_str().as_bytes()));
            input["headers"] = Value::Object(hashed(&mut cfg.headers.iter()));
        }
    }
    input
}

/// The configuration digest of `spec`: hex SHA-256 of [`FORMAT`] and the
/// canonical JSON of [`digest_input`] (keys in the order written there;
/// env and headers sorted by name).
pub fn config_digest(spec: &ServerSpec) -> String {
    let input = digest_input(spec).to_string();
    let mut hash = Sha256::new();
    hash.update((FORMAT.len() as u64).to_le_bytes());
    hash.update(FORMAT.as_bytes());
    hash.update(input.as_bytes());
    hex(&hash.finalize())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `text` looks like a [`config_digest`] (64 lowercase hex digits).
pub fn is_digest(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HttpConfig;
    use crate::mcp::eras::tests::stdio;

    fn spec(id: &str, transport: TransportSpec) -> ServerSpec {
        ServerSpec::of(id, transport)
    }

    fn http(url: &str, header: &str) -> TransportSpec {
        TransportSpec::StreamableHttp(HttpConfig {
            url: url.parse().unwrap(),
            headers: [("Authorization".to_owned(), header.to_owned())].into(),
            transport: Default::default(),
        })
    }

    #[test]
    fn the_digest_follows_every_value_but_holds_none_in_clear() {
        let canaries = ["CANARY-env-1", "CANARY-header-2", "CANARY-query-3"];
        let base = spec("p/a", stdio(&["s.py"], &[("KEY", canaries[0])]));
        let d = config_digest(&base);
        assert!(is_digest(&d));
        assert_eq!(d, config_digest(&base.clone()), "stable");
        let other_env = spec("p/a", stdio(&["s.py"], &[("KEY", "other")]));
        assert_ne!(d, config_digest(&other_env), "an env value is covered");
        assert_ne!(d, config_digest(&spec("p/a", stdio(&["s.py", "-v"], &[]))));
        assert_ne!(
            d,
            config_digest(&spec("p/b", stdio(&["s.py"], &[("KEY", canaries[0])])))
        );
        let remote = spec(
            "r",
            http(
                "https://a.test/mcp?k=CANARY-query-3",
                "Bearer CANARY-header-2",
            ),
        );
        let r = config_digest(&remote);
        assert_ne!(
            r,
            config_digest(&spec(
                "r",
                http("https://a.test/mcp?k=x", "Bearer CANARY-header-2")
            ))
        );
        assert_ne!(
            r,
            config_digest(&spec(
                "r",
                http("https://a.test/mcp?k=CANARY-query-3", "Bearer y")
            ))
        );
        for s in [&base, &remote] {
            let text = digest_input(s).to_string();
            for c in canaries {
                assert!(!text.contains(c), "{c} in {text}");
            }
            let shown = shown_config(s).to_string();
            for c in canaries {
                assert!(!shown.contains(c), "{c} in {shown}");
            }
        }
        assert_eq!(
            shown_config(&remote),
            json!({"type": "streamable-http", "url": "https://a.test/mcp", "headers": ["Authorization"]})
        );
    }

    #[test]
    fn the_sandbox_profile_is_covered_by_the_digest() {
        use crate::config::sandbox::{Enforcement, SandboxNetwork, SandboxProfile};
        let plain = spec("p/a", stdio(&["s.py"], &[]));
        let profile = |network| SandboxProfile {
            read: vec!["~/notes".into()],
            write: Vec::new(),
            network,
            enforce: Enforcement::BestEffort,
        };
        let mut sandboxed = plain.clone();
        sandboxed.sandbox = Some(profile(SandboxNetwork::None));
        let mut looser = plain.clone();
        looser.sandbox = Some(profile(SandboxNetwork::Loopback));
        let digests = [&plain, &sandboxed, &looser].map(config_digest);
        assert_ne!(digests[0], digests[1], "sandboxing asks again");
        assert_ne!(digests[1], digests[2], "loosening the network asks again");
        assert_eq!(digests[1], config_digest(&sandboxed.clone()), "stable");
    }

    #[test]
    fn the_subject_splits_a_plugin_id_and_hides_the_query() {
        let s = subject_of(&spec("plug/srv", stdio(&["x"], &[])));
        assert_eq!(
            (s.plugin.as_deref(), s.name.as_str()),
            (Some("plug"), "srv")
        );
        let r = subject_of(&spec("top", http("https://u:p@a.test/mcp?k=v#f", "x")));
        assert_eq!((r.plugin, r.name.as_str()), (None, "top"));
        assert_eq!(r.url.as_deref(), Some("https://a.test/mcp"));
    }
}
