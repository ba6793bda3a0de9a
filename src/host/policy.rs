//! The app's server policy and trust decisions at the façade (issue 32;
//! the rules, the trust store and the check before every start are
//! `crate::policy`): the verdict on each server when it is added
//! ([`Screened`]: a denied server is published in `error`, its cached
//! tools unused, its actor begun `Blocked`, so it never spawns or
//! connects), `setPolicy`, `resetTrust`, and the decision `serverInfo`
//! shows.

use ahp_types::state::{ChildCustomization, Customization, McpServerCustomization, McpServerState};
use serde_json::{json, Value};

use super::Host;
use crate::error::{ErrorCode, HostResult};
use crate::events::{log, LogLevel};
use crate::mcp::ServerSpec;
use crate::policy::{ServerPolicy, Verdict, POLICY_META_KEY};
use crate::session::{find, server_enabled, server_error_state, Found};
use crate::supervisor::{Begin, Command};

/// The rules' verdicts on the servers of one add (none without rules).
#[derive(Default)]
pub(super) struct Screened {
    /// Per server id: its decision's JSON and, when denied, its state.
    decided: Vec<(String, Value, Option<McpServerState>)>,
}

impl Screened {
    /// Whether server `id` is denied.
    pub(super) fn denied(&self, id: &str) -> bool {
        self.decided
            .iter()
            .any(|(d, _, denied)| d == id && denied.is_some())
    }

    /// How server `id`'s actor begins, given whether it has `cached` tools.
    pub(super) fn begin(&self, id: &str, cached: bool) -> Begin {
        match (self.denied(id), cached) {
            (true, _) => Begin::Blocked,
            (false, true) => Begin::Dormant,
            (false, false) => Begin::Start,
        }
    }

    /// The specs of `specs` that are not denied (whose cache may be read).
    pub(super) fn allowed(&self, specs: &[ServerSpec]) -> Vec<ServerSpec> {
        specs
            .iter()
            .filter(|s| !self.denied(&s.id))
            .cloned()
            .collect()
    }

    /// `customization` (a plugin, or a top-level server) with each screened
    /// server's decision under `_meta["ahp-mcp-host/policy"]`, and a denied
    /// one in `error` (`policy_denied`) instead of `starting`.
    pub(super) fn apply(&self, customization: &mut Customization) {
        let mark = |s: &mut McpServerCustomization| {
            if let Some((_, decision, denied)) = self.decided.iter().find(|(id, ..)| *id == s.id) {
                let meta = s.meta.get_or_insert_with(Default::default);
                meta.insert(POLICY_META_KEY.to_owned(), decision.clone());
                if let Some(state) = denied {
                    s.state = state.clone();
                }
            }
        };
        match customization {
            Customization::McpServer(s) => mark(s),
            Customization::Plugin(p) => {
                for child in p.children.iter_mut().flatten() {
                    if let ChildCustomization::McpServer(s) = child {
                        mark(s);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Host {
    /// The rules' verdicts on `specs`, being added: each recorded (for
    /// `serverInfo`) and logged (`host.policy`: `warn` when denied).
    pub(super) fn screen(&self, specs: &[ServerSpec]) -> Screened {
        let gate = self.shared.gate();
        let mut screened = Screened::default();
        for spec in specs {
            let Some(verdict) = gate.verdict(spec) else {
                continue;
            };
            let id = spec.id.as_str();
            let denied = (!verdict.allowed).then(|| verdict.error(id));
            let level = if denied.is_some() {
                LogLevel::Warn
            } else {
                LogLevel::Debug
            };
            let text = format!("server {id:?} {}", verdict.message);
            self.shared
                .publisher()
                .log(log(level, "host.policy", Some(id), text));
            let state = denied.map(|e| server_error_state(e.code, e.message));
            screened
                .decided
                .push((id.to_owned(), gate.note(id, verdict), state));
        }
        screened
    }

    /// Replaces the server policy (`setPolicy`) and applies it at once to
    /// every server: a server it now denies is stopped and shown in
    /// `error` (`policy_denied`, its decision published and logged); one
    /// it denied before and now allows is started again (stopped instead
    /// when it is toggled off); the others keep running, their decision
    /// updated. Every later start is checked against it too.
    ///
    /// # Errors
    /// `disposed`.
    pub fn set_policy(&self, policy: ServerPolicy) -> HostResult<()> {
        self.check_live()?;
        let gate = self.shared.gate();
        gate.set_policy(policy);
        let handles: Vec<_> = self.registry().servers.values().cloned().collect();
        let publisher = self.shared.publisher();
        for handle in handles {
            let id = handle.id.as_str();
            let (shown, enabled) =
                publisher.read_state(|s| (denial_shown(s, id), server_enabled(s, id)));
            let verdict = gate.verdict(&handle.spec);
            let text = match &verdict {
                Some(v) => format!("server {id:?} {} (setPolicy)", v.message),
                None => format!("server {id:?}: the policy has no rule (setPolicy)"),
            };
            let level = match &verdict {
                Some(Verdict { allowed: false, .. }) => LogLevel::Warn,
                _ => LogLevel::Info,
            };
            let error = verdict.as_ref().filter(|v| !v.allowed).map(|v| v.error(id));
            gate.record(publisher, id, |d| d.rules = verdict, (level, text));
            match (error, shown) {
                (Some(e), shown) if shown.as_deref() != Some(e.message.as_str()) => {
                    handle.send(Command::Deny(Box::new(e)));
                }
                (None, Some(_)) if enabled => handle.send(Command::Start),
                (None, Some(_)) => handle.send(Command::Stop),
                _ => {}
            }
        }
        Ok(())
    }

    /// Forgets the remembered trust decisions about server `server_id`
    /// (`None`: every server), under `dataDir` and in this host, so its
    /// next start asks the app's `trust` callback again (VS Code's "Reset
    /// Trust"); a running server keeps running. Resolves how many
    /// decisions were forgotten.
    ///
    /// # Errors
    /// `disposed`.
    pub async fn reset_trust(&self, server_id: Option<&str>) -> HostResult<usize> {
        self.check_live()?;
        let forgotten = self.shared.gate().reset_trust(server_id);
        self.until_disposed(async { Ok(forgotten.await) }).await
    }

    /// `identity` (the server's `serverInfo`, or `null` before its first
    /// connection) with the policy's decision about server `id` as its
    /// `policy`; `{policy}` alone when it never connected.
    pub(super) fn with_decision(&self, id: &str, identity: Option<Value>) -> Value {
        match (identity, self.shared.gate().decision(id)) {
            (Some(mut info), Some(policy)) => {
                if let Value::Object(members) = &mut info {
                    members.insert("policy".to_owned(), policy);
                }
                info
            }
            (Some(info), None) => info,
            (None, Some(policy)) => json!({ "policy": policy }),
            (None, None) => Value::Null,
        }
    }
}

/// The message of the `policy_denied` error server `id` shows now, if it does.
fn denial_shown(state: &ahp_types::state::SessionState, id: &str) -> Option<String> {
    match find(state, id) {
        Some(Found::McpServer(s, _)) => match &s.state {
            McpServerState::Error(e) if e.error.error_type == ErrorCode::PolicyDenied.as_str() => {
                Some(e.error.message.clone())
            }
            _ => None,
        },
        _ => None,
    }
}
