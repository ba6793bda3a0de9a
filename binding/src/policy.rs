//! The server policy and the trust callback seen from JS (issue 32; the
//! core's `ahp_mcp_host::host::ServerPolicy` and `TrustAsker`): the
//! `policy` option and `setPolicy` ([`JsPolicy`], compiled by
//! `ServerPolicy::new`, which names the broken field), the `trust`
//! callback ([`JsTrust`]: a question is withdrawn like a server request,
//! a `requestWithdrawn` item aborting its `signal`), and `resetTrust`.

use std::sync::Arc;

use ahp_mcp_host::error::HostResult;
use ahp_mcp_host::host::{
    HostConfig, PolicyRule, RuleTransport, ServerPolicy, TrustAnswer, TrustAsker, TrustRequest,
};
use futures::future::BoxFuture;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::json;

use super::callbacks::{ask, Withdrawal};
use super::options::JsHostOptions;
use super::{parse, respond, run, JsSink, NativeHost, RequestFn};

/// The host option `policy` and the argument of `setPolicy` (JS `ServerPolicy`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsPolicy {
    /// Only servers one of these matches may start (`[]`: none); absent:
    /// every server not denied.
    #[serde(default)]
    allow: Option<Vec<JsPolicyRule>>,
    /// Servers one of these matches never start (wins over `allow`).
    #[serde(default)]
    deny: Vec<JsPolicyRule>,
}

/// One rule (JS `PolicyRule`; see the core's `PolicyRule`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsPolicyRule {
    /// Shown in decisions and messages.
    #[serde(default)]
    label: Option<String>,
    /// Glob over the server's name (with a `/`, its id).
    #[serde(default)]
    name: Option<String>,
    /// Glob over the plugin's name.
    #[serde(default)]
    plugin: Option<String>,
    /// Glob over a stdio server's command (or its last path segment).
    #[serde(default)]
    command: Option<String>,
    /// Globs over a stdio server's arguments, one each.
    #[serde(default)]
    args: Option<Vec<String>>,
    /// Glob over a remote server's URL without user info, query and fragment.
    #[serde(default)]
    url: Option<String>,
    /// `"stdio"`, `"streamable-http"` or `"sse"`.
    #[serde(default)]
    transport: Option<JsRuleTransport>,
}

/// A rule's `transport`: `"stdio"`, `"streamable-http"`, `"sse"`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum JsRuleTransport {
    /// A local process.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// Legacy HTTP+SSE.
    Sse,
}

impl JsPolicy {
    /// The host's settings of the constructor's `options`, with their
    /// policy compiled (`From<JsHostOptions>` cannot refuse one); errors
    /// name the field under `options.policy`.
    pub(crate) fn host_config(mut options: JsHostOptions) -> HostResult<HostConfig> {
        let policy = options.policy.take().unwrap_or_default();
        let policy = policy.compile("options.policy")?;
        Ok(HostConfig {
            policy,
            ..HostConfig::try_from(options)?
        })
    }

    /// The core's policy; errors name the field under `path`.
    pub(crate) fn compile(self, path: &str) -> HostResult<ServerPolicy> {
        let rules = |rules: Vec<JsPolicyRule>| rules.into_iter().map(PolicyRule::from).collect();
        ServerPolicy::new(self.allow.map(rules), rules(self.deny), path)
    }
}

impl From<JsPolicyRule> for PolicyRule {
    fn from(js: JsPolicyRule) -> Self {
        Self {
            label: js.label,
            name: js.name,
            plugin: js.plugin,
            command: js.command,
            args: js.args,
            url: js.url,
            transport: js.transport.map(|t| match t {
                JsRuleTransport::Stdio => RuleTransport::Stdio,
                JsRuleTransport::StreamableHttp => RuleTransport::StreamableHttp,
                JsRuleTransport::Sse => RuleTransport::Sse,
            }),
        }
    }
}

/// The app's `trust` callback: `{serverId, name, plugin?, reason, config,
/// requestId}` in, `{trust, remember}` out (`index.js` turns the app's
/// `boolean | {trust, remember?}` into that, and throws for anything else).
pub(super) struct JsTrust {
    pub(super) tsfn: Arc<RequestFn>,
    /// Gives each question its id; where a withdrawal goes.
    pub(super) sink: Arc<JsSink>,
}

impl JsTrust {
    /// The app's `trust` callback `tsfn`, its questions numbered and
    /// withdrawn through `sink`.
    pub(super) fn asker(tsfn: Arc<RequestFn>, sink: &Arc<JsSink>) -> Arc<dyn TrustAsker> {
        let sink = sink.clone();
        Arc::new(Self { tsfn, sink })
    }
}

/// The answer as `index.js` sends it.
#[derive(Deserialize)]
struct JsTrustAnswer {
    trust: bool,
    remember: bool,
}

impl TrustAsker for JsTrust {
    fn ask(&self, request: TrustRequest) -> BoxFuture<'static, Result<TrustAnswer, String>> {
        let id = self.sink.next_request();
        let mut payload = serde_json::to_value(&request).unwrap_or_default();
        payload["requestId"] = json!(id);
        let withdrawal = Withdrawal::armed(self.sink.clone(), id);
        let tsfn = self.tsfn.clone();
        Box::pin(async move {
            // The whole guard moves into the future (not only its field).
            let mut withdrawal = withdrawal;
            let answer: Result<JsTrustAnswer, String> = ask(tsfn, payload, "trust").await;
            withdrawal.armed = false;
            answer.map(|a| TrustAnswer {
                trust: a.trust,
                remember: a.remember,
            })
        })
    }
}

#[napi]
impl NativeHost {
    /// `setPolicy(policyJson)` → response JSON with `null`.
    #[napi(catch_unwind)]
    pub fn set_policy(&self, policy_json: String) -> String {
        let policy = parse::<JsPolicy>("policy", &policy_json).and_then(|p| p.compile("policy"));
        respond(policy.and_then(|p| self.host.set_policy(p)))
    }

    /// `resetTrust(serverId | null)` → response JSON with the count forgotten.
    #[napi]
    pub async fn reset_trust(&self, server_id: Option<String>) -> String {
        let host = self.host.clone();
        run(async move { host.reset_trust(server_id.as_deref()).await }).await
    }
}
