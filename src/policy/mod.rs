//! Server policy and trust on first use (issue 32): what may start, asked
//! before every start of a server ([`Gate::admit`], called by its actor
//! before the launch permit, so before any spawn or connect).
//!
//! - **Policy** ([`ServerPolicy`], `rules.rs`): the app's allow and deny
//!   rules (host option `policy`, `setPolicy`). A denied server never
//!   starts: it is published in `error` with `policy_denied`.
//! - **Trust on first use** (`store.rs`, `subject.rs`): with the app's
//!   `trust` callback ([`TrustAsker`]), a server whose configuration
//!   digest has no remembered decision is asked about before it starts
//!   (and again once its configuration changes); the answer is remembered
//!   under `dataDir` unless the app says not to. A refused server is
//!   `stopped` (`trust_refused`); a callback that throws, answers
//!   something else or does not answer within `limits.trustTimeoutMs` is
//!   a refusal that is not remembered (`trust_failed`). While the app is
//!   asked the server is `starting` (AHP has no input request for it).
//!
//! Every decision is visible: on the server's customization as
//! `_meta["ahp-mcp-host/policy"]` ([`Decision`], published when it
//! changes), in `serverInfo(id).policy`, and in a log record (target
//! `host.policy`). Without rules and without a callback nothing is
//! checked, published or logged: every server starts as before.

mod ask;
mod rules;
mod store;
mod subject;
mod url_pattern;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::mcp::ServerSpec;
use crate::publisher::SessionPublisher;
use ask::Asking;
use store::{Known, TrustStore};

pub use rules::{PolicyRule, RuleTransport, ServerPolicy, Verdict};
pub use store::TRUST_FILE;
pub use subject::{config_digest, shown_config, subject_of};

/// The `_meta` key of a server's customization that holds its
/// `Decision` (JS `ServerPolicyDecision`).
pub const POLICY_META_KEY: &str = "ahp-mcp-host/policy";

/// The log target of every decision.
const TARGET: &str = "host.policy";

/// Why the app is asked (JS `TrustRequest.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TrustReason {
    /// No decision about this server is remembered.
    New,
    /// Decisions about other configurations of this server are: it changed.
    Changed,
}

/// The question the app's `trust` callback gets (JS `TrustRequest`,
/// without its `signal`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustRequest {
    /// The customization id.
    pub server_id: String,
    /// The server's name.
    pub name: String,
    /// The plugin that declares it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Why it is asked.
    pub reason: TrustReason,
    /// What would run, secrets withheld (`shown_config`).
    pub config: Value,
}

/// The app's answer (JS `boolean | {trust, remember?}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustAnswer {
    /// Whether the server may start.
    pub trust: bool,
    /// Whether the answer holds for later hosts on the same `dataDir`
    /// (default); `false`: a trust holds for this host only, a refusal not
    /// at all (the next start asks again).
    pub remember: bool,
}

/// The app's `trust` callback.
pub trait TrustAsker: Send + Sync {
    /// Asks whether the server of `request` may start. `Err` is the app's
    /// failure (a throw, a wrong answer), never shown: it is `trust_failed`.
    /// Dropping the future withdraws the question.
    fn ask(&self, request: TrustRequest) -> BoxFuture<'static, Result<TrustAnswer, String>>;
}

/// Where a trust decision stands (JS `TrustDecision.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TrustState {
    /// The app is being asked; the server is `starting`.
    Pending,
    /// The app trusts this configuration.
    Trusted,
    /// The app refused it (`trust_refused`).
    Refused,
    /// The callback failed or did not answer (`trust_failed`).
    Failed,
}

/// The trust part of a [`Decision`] (JS `TrustDecision`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustDecision {
    /// Where it stands.
    pub state: TrustState,
    /// Taken from the remembered decisions: the app was not asked.
    pub remembered: bool,
    /// Asked because the configuration changed since an earlier decision.
    pub changed: bool,
    /// Why, in words.
    pub message: String,
}

/// Everything decided about one server (JS `ServerPolicyDecision`): the
/// rules' verdict (with rules) and the trust decision (with a callback,
/// once a start got that far).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The rules' verdict (JS `rules`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Verdict>,
    /// The trust decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustDecision>,
}

/// How a start got through the [`Gate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// At once (allowed, nothing asked or a remembered trust).
    Now,
    /// After the app was asked (the launch queue place taken before was
    /// given up by `before_asking`: a new one is needed).
    Asked,
}

/// The policy, the trust callback and the remembered decisions of one host.
pub struct Gate {
    policy: RwLock<Arc<ServerPolicy>>,
    asker: Option<Arc<dyn TrustAsker>>,
    store: TrustStore,
    /// The latest decision per server id (removed with the server).
    decisions: Mutex<HashMap<String, Decision>>,
    timeout: Duration,
    /// The unusable trust store was logged once.
    warned: std::sync::atomic::AtomicBool,
}

impl Default for Gate {
    /// No rules, no callback: every server starts.
    fn default() -> Self {
        Self::new(ServerPolicy::default(), None, None, Duration::from_secs(1))
    }
}

impl Gate {
    /// A gate with `policy`, asking `asker` (within `timeout`) and
    /// remembering its answers in `data_dir` (`None`: in memory).
    pub fn new(
        policy: ServerPolicy,
        asker: Option<Arc<dyn TrustAsker>>,
        data_dir: Option<&Path>,
        timeout: Duration,
    ) -> Self {
        Self {
            policy: RwLock::new(Arc::new(policy)),
            asker,
            store: data_dir.map(TrustStore::in_dir).unwrap_or_default(),
            decisions: Mutex::default(),
            timeout,
            warned: Default::default(),
        }
    }

    /// Replaces the policy (`setPolicy`); the caller re-evaluates the servers.
    pub fn set_policy(&self, policy: ServerPolicy) {
        *self.policy.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
    }

    /// The rules' verdict on `spec`; `None` when the policy has no rule.
    pub fn verdict(&self, spec: &ServerSpec) -> Option<Verdict> {
        let policy = self
            .policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        (!policy.is_empty()).then(|| policy.evaluate(&subject_of(spec)))
    }

    /// The latest decision about server `id` as JSON, if any.
    pub fn decision(&self, id: &str) -> Option<Value> {
        let decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        decisions.get(id).and_then(|d| serde_json::to_value(d).ok())
    }

    /// The refusal of server `id`'s latest trust decision (refused or
    /// failed), for a call that waited on its start.
    pub fn refusal(&self, id: &str) -> Option<HostError> {
        let decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let trust = decisions.get(id)?.trust.as_ref()?;
        let code = match trust.state {
            TrustState::Refused => ErrorCode::TrustRefused,
            TrustState::Failed => ErrorCode::TrustFailed,
            _ => return None,
        };
        Some(HostError::new(
            code,
            format!("server {id:?}: {}", trust.message),
        ))
    }

    /// Forgets the decision about server `id` (it is removed).
    pub fn forget(&self, id: &str) {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        decisions.remove(id);
    }

    /// Forgets the remembered trust decisions about server `id` (`None`:
    /// every server), in `dataDir` and in this host; how many.
    pub async fn reset_trust(&self, id: Option<&str>) -> usize {
        self.store.forget(id).await
    }

    /// Records the rules' `verdict` on server `id` without publishing it
    /// (the caller puts it on the customization it publishes); the
    /// decision's JSON.
    pub fn note(&self, id: &str, verdict: Verdict) -> Value {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let decision = decisions.entry(id.to_owned()).or_default();
        decision.rules = Some(verdict);
        serde_json::to_value(&*decision).unwrap_or_default()
    }

    /// Applies `change` to server `id`'s decision; when it changed,
    /// publishes it on the customization (removes it when nothing is
    /// decided any more) and logs `message` at `level`.
    pub fn record(
        &self,
        publisher: &SessionPublisher,
        id: &str,
        change: impl FnOnce(&mut Decision),
        (level, message): (LogLevel, String),
    ) {
        let value = {
            let mut decisions = self
                .decisions
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let decision = decisions.entry(id.to_owned()).or_default();
            let before = decision.clone();
            change(decision);
            if *decision == before {
                return;
            }
            match *decision == Decision::default() {
                // Nothing decided any more: the key goes.
                true => {
                    decisions.remove(id);
                    Value::Null
                }
                false => serde_json::to_value(&*decision).unwrap_or_default(),
            }
        };
        publisher.publish_meta(id, POLICY_META_KEY, value);
        publisher.log(log(level, TARGET, Some(id), message));
    }

    /// Whether `spec` may start now: the rules first (`policy_denied`),
    /// then the trust decision (remembered, else the app is asked:
    /// `trust_refused`, `trust_failed`). Every decision is recorded,
    /// published and logged (see the module documentation); `cancel`
    /// (the server's) cancelled means the host is going: nothing more is
    /// published then. `before_asking` runs right before the app is asked
    /// (the caller gives up its launch queue place: [`Admission::Asked`]).
    ///
    /// # Errors
    /// `policy_denied`, `trust_refused`, `trust_failed`.
    pub async fn admit(
        &self,
        spec: &ServerSpec,
        publisher: &SessionPublisher,
        cancel: &CancellationToken,
        before_asking: impl FnOnce(),
    ) -> HostResult<Admission> {
        let id = spec.id.as_str();
        if let Some(verdict) = self.verdict(spec) {
            let (allowed, error) = (verdict.allowed, verdict.error(id));
            let level = if allowed {
                LogLevel::Debug
            } else {
                LogLevel::Warn
            };
            let message = format!("server {id:?} {}", verdict.message);
            self.record(publisher, id, |d| d.rules = Some(verdict), (level, message));
            if !allowed {
                return Err(error);
            }
        }
        let Some(asker) = self.asker.clone() else {
            return Ok(Admission::Now);
        };
        let digest = config_digest(spec);
        let (known, warning) = self.store.known(id, &digest).await;
        if let Some(warning) = warning {
            if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                publisher.log(log(LogLevel::Warn, TARGET, None, warning));
            }
        }
        let reason = match known {
            Known::Decided(trusted) => return self.remembered(publisher, id, trusted),
            Known::Changed => TrustReason::Changed,
            Known::New => TrustReason::New,
        };
        before_asking();
        let asking = Asking::begin(self, publisher, id, reason, cancel);
        let request = ask::request(spec, reason);
        let answer = match tokio::time::timeout(self.timeout, asker.ask(request)).await {
            Ok(Ok(answer)) => Ok(answer),
            // The app's own error is not shown (it could hold a value).
            Ok(Err(_)) => Err(ask::FAILED.to_owned()),
            Err(_) => Err(ask::timed_out(self.timeout)),
        };
        asking.end(answer, &digest).await
    }

    /// A remembered decision about server `id`'s configuration.
    fn remembered(
        &self,
        publisher: &SessionPublisher,
        id: &str,
        trusted: bool,
    ) -> HostResult<Admission> {
        let (state, level, message) = match trusted {
            true => (
                TrustState::Trusted,
                LogLevel::Debug,
                "trusted by the app (remembered)",
            ),
            false => (
                TrustState::Refused,
                LogLevel::Info,
                "refused by the app (remembered; resetTrust asks again)",
            ),
        };
        let decision = TrustDecision {
            state,
            remembered: true,
            changed: false,
            message: message.to_owned(),
        };
        let log = (level, format!("server {id:?} is {message}"));
        self.record(publisher, id, |d| d.trust = Some(decision), log);
        match trusted {
            true => Ok(Admission::Now),
            false => Err(HostError::new(
                ErrorCode::TrustRefused,
                format!("server {id:?} is {message}"),
            )),
        }
    }
}
