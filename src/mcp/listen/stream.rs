//! One `subscriptions/listen` stream (MCP 2026-07-28 "Subscriptions"): opened,
//! its notifications delivered as [`Change`]s, opened again
//! after a bounded backoff when it ends, cancelled when the host stops
//! following it.

use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, ServiceError, Subscription};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::super::cache::Invalidation;
use super::super::client::{Change, HostClient, Notice};
use super::super::request::{map_service_error, RequestFailure};
use crate::error::strip_type_names;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::LogLevel;
use crate::limits::{LISTEN_REOPEN_MAX_MS, LISTEN_REOPEN_MIN_MS};

/// One `subscriptions/listen` stream, kept open while the connection lives.
pub(super) struct Stream {
    /// The connection's request handle.
    pub(super) peer: Peer<RoleClient>,
    /// Where what the stream carries goes.
    pub(super) client: HostClient,
    pub(super) filter: SubscriptionFilter,
    /// The resource it follows (`None`: the list changes stream).
    pub(super) uri: Option<String>,
    pub(super) cancel: CancellationToken,
    /// Time allowed for the acknowledgment.
    pub(super) timeout: Duration,
}

/// Whether a listen stream that ended (or failed to open) is opened again.
enum Outcome {
    /// Opened and ended; open it again.
    Again,
    /// Do not open it again.
    Done,
}

impl Stream {
    fn what(&self) -> String {
        match &self.uri {
            Some(uri) => format!("subscriptions/listen for {uri}"),
            None => "subscriptions/listen for list changes".to_owned(),
        }
    }

    /// Opens the stream, delivers what it carries, and opens it again
    /// after each end until cancelled. `first` hears whether the first
    /// opening was acknowledged.
    pub(super) async fn run(self, mut first: Option<oneshot::Sender<HostResult<()>>>) {
        let client = &self.client;
        let mut ends: u32 = 0;
        let mut opened_before = false;
        loop {
            let outcome = match self.open().await {
                Ok(subscription) => {
                    if let Some(first) = first.take() {
                        let _ = first.send(Ok(()));
                    }
                    if opened_before {
                        self.reopened();
                    }
                    opened_before = true;
                    let began = Instant::now();
                    let outcome = self.pump(subscription).await;
                    if began.elapsed() >= Duration::from_millis(LISTEN_REOPEN_MAX_MS) {
                        ends = 0;
                    }
                    outcome
                }
                Err(_) if self.cancel.is_cancelled() => return,
                Err(e) => {
                    // A refusal (or an acknowledgment of nothing) is final;
                    // a silence or a broken stream is tried again.
                    let done = first.is_some()
                        || e.code == ErrorCode::NotSupported
                        || (!opened_before && e.code != ErrorCode::Timeout);
                    if let Some(first) = first.take() {
                        let _ = first.send(Err(e));
                    } else {
                        let level = if done { LogLevel::Warn } else { LogLevel::Info };
                        client.log(level, format!("{}: {}", self.what(), e.message));
                    }
                    if done || self.peer.is_transport_closed() {
                        Outcome::Done
                    } else {
                        Outcome::Again
                    }
                }
            };
            if matches!(outcome, Outcome::Done) || self.cancel.is_cancelled() {
                return;
            }
            let pause = LISTEN_REOPEN_MIN_MS.saturating_mul(1 << ends.min(16));
            let pause = Duration::from_millis(pause.min(LISTEN_REOPEN_MAX_MS));
            ends = ends.saturating_add(1);
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = tokio::time::sleep(pause) => {}
            }
        }
    }

    /// Sends `subscriptions/listen` and waits (at most `timeout`) for its
    /// acknowledgment, which must cover what this stream is for.
    ///
    /// # Errors
    /// `timeout`, `cancelled`, `not_supported` (acknowledged without the
    /// resource, or with nothing), or the request's failure.
    async fn open(&self) -> HostResult<Subscription> {
        let server_id = &self.client.server_id;
        let context = format!("{} on {server_id}", self.what());
        let listen = tokio::time::timeout(self.timeout, self.peer.listen(self.filter.clone()));
        let answer = tokio::select! {
            _ = self.cancel.cancelled() => {
                return Err(HostError::new(ErrorCode::Cancelled, format!("{context}: stopped")));
            }
            answer = listen => answer,
        };
        let subscription = match answer {
            Err(_) => {
                let ms = self.timeout.as_millis();
                let what = format!("{context} was not acknowledged within {ms} ms");
                return Err(HostError::new(ErrorCode::Timeout, what));
            }
            Ok(Err(e)) => return Err(listen_failure(&context, e)),
            Ok(Ok(subscription)) => subscription,
        };
        let acknowledged = subscription.acknowledged();
        let covered = match &self.uri {
            Some(uri) => acknowledged
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.contains(uri)),
            None => *acknowledged != SubscriptionFilter::default(),
        };
        if !covered {
            let what = match &self.uri {
                Some(uri) => {
                    format!("server {server_id} did not acknowledge the subscription to {uri}")
                }
                None => format!("server {server_id} acknowledged no list changes"),
            };
            return Err(HostError::new(ErrorCode::NotSupported, what));
        }
        Ok(subscription)
    }

    /// Delivers the stream's notifications until it ends (then [`Outcome::Again`])
    /// or is cancelled (then it cancels the subscription: [`Outcome::Done`]).
    async fn pump(&self, mut subscription: Subscription) -> Outcome {
        let client = &self.client;
        loop {
            let next = tokio::select! {
                _ = self.cancel.cancelled() => {
                    let reason = Some("the host stopped following these changes".to_owned());
                    let _ = subscription.cancel_with_reason(reason).await;
                    return Outcome::Done;
                }
                next = subscription.next() => next,
            };
            match next {
                Ok(Some(notification)) => {
                    if let Some(change) = change_of(notification) {
                        client.changed(change);
                    }
                }
                Ok(None) => {
                    let end = subscription
                        .end()
                        .map(|e| format!("{e:?}"))
                        .unwrap_or_default();
                    client.log(
                        LogLevel::Info,
                        format!("{} ended ({end}); opening it again", self.what()),
                    );
                    return Outcome::Again;
                }
                Err(e) => {
                    let what = format!("{} failed: {e}; opening it again", self.what());
                    client.log(LogLevel::Info, strip_type_names(&what));
                    return Outcome::Again;
                }
            }
        }
    }

    /// After a reopen: changes may have been missed, so cached results go
    /// and the tools are listed again (published only if they changed).
    fn reopened(&self) {
        let client = &self.client;
        match &self.uri {
            Some(uri) => client
                .cache
                .invalidate(&Invalidation::Resource(uri.clone())),
            None => {
                client.cache.invalidate(&Invalidation::All);
                if self.filter.tools_list_changed == Some(true) {
                    let _ = client.notices.send(Notice::ToolsChanged);
                }
            }
        }
    }
}

/// The change a listen notification announces.
fn change_of(notification: ServerNotification) -> Option<Change> {
    match notification {
        ServerNotification::ToolListChangedNotification(_) => Some(Change::Tools),
        ServerNotification::PromptListChangedNotification(_) => Some(Change::Prompts),
        ServerNotification::ResourceListChangedNotification(_) => Some(Change::Resources),
        ServerNotification::ResourceUpdatedNotification(n) => Some(Change::Resource(n.params.uri)),
        _ => None,
    }
}

/// A failed `subscriptions/listen` as the host's error (`protocol_error`,
/// `auth_required`, `timeout`).
fn listen_failure(context: &str, e: ServiceError) -> HostError {
    match map_service_error(context, e, None) {
        RequestFailure::Failed(e) => e,
        RequestFailure::Auth(_) => HostError::new(
            ErrorCode::AuthRequired,
            format!("{context} was refused (authorization)"),
        ),
    }
}
