//! Following a server's changes, the same way in both eras.
//!
//! - 2025 era: the server sends free-standing `notifications/*/list_changed`
//!   and, for the URIs subscribed with `resources/subscribe`,
//!   `notifications/resources/updated` (MCP 2025-11-25 "Server Features ›
//!   Resources › Subscriptions"); they reach [`HostClient`]'s notification
//!   callbacks.
//! - 2026-07-28: nothing arrives unasked. The host opens
//!   `subscriptions/listen` streams (MCP 2026-07-28 "Subscriptions", rmcp's
//!   [`Peer::listen`]): one for the list changes the server declared
//!   (`tools`, `prompts`, `resources` with `listChanged: true`), opened as
//!   soon as the connection is up, and one per subscribed resource URI. A
//!   stream that ends while the connection lives is opened again after a
//!   bounded backoff ([`LISTEN_REOPEN_MIN_MS`] doubling up to
//!   [`LISTEN_REOPEN_MAX_MS`]); after a reopen the host re-lists tools and
//!   drops cached results, since changes may have been missed meanwhile.
//!   A stream the server refuses (a JSON-RPC error to the first
//!   `subscriptions/listen`) or acknowledges with nothing is not reopened.
//!   Streams are cancelled when the connection closes ([`Subscriptions::stop`]).
//!
//! Either way a change goes through [`HostClient::changed`]: cached results
//! it makes stale are dropped, then a tools change reaches the server's
//! actor (the debounced re-list, as [`Notice::ToolsChanged`]), a prompts or
//! resources list change the app (`listChanged`), a resource update the app
//! (`resourceUpdated`); a tools or resources list change also reaches the
//! server's MCP Apps `mcp://` channel when it advertises `listChanged`
//! ([`HostClient::to_app`]).
//!
//! The resources the app subscribed to ([`WantedResources`], per server)
//! outlive connections: each new connection subscribes to them again.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RoleClient};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::cache::Invalidation;
use super::capabilities;
use super::client::{Change, HostClient, Notice};
use super::request::{send_bounded, RequestFailure};
use super::ServerTasks;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, HostEvent, LogLevel};
use crate::limits::{LISTEN_STOP_WAIT_MS, MAX_RESOURCE_SUBSCRIPTIONS};
use stream::Stream;

mod stream;

impl HostClient {
    /// Acts on `change`: drops the cached results it makes stale, then
    /// tells the actor (tools) or the app (`listChanged`, `resourceUpdated`).
    pub(crate) fn changed(&self, change: Change) {
        let server_id = self.server_id.clone();
        match change {
            Change::Tools => {
                self.cache.invalidate(&Invalidation::Tools);
                let _ = self.notices.send(Notice::ToolsChanged);
                self.to_app("notifications/tools/list_changed");
            }
            Change::Prompts => {
                self.cache.invalidate(&Invalidation::Prompts);
                let list = "prompts";
                self.sink.send(HostEvent::ListChanged { server_id, list });
            }
            Change::Resources => {
                self.cache.invalidate(&Invalidation::Resources);
                let _ = self.notices.send(Notice::ResourcesChanged);
                self.to_app("notifications/resources/list_changed");
                let list = "resources";
                self.sink.send(HostEvent::ListChanged { server_id, list });
            }
            Change::Resource(uri) => {
                self.cache.invalidate(&Invalidation::Resource(uri.clone()));
                self.sink
                    .send(HostEvent::ResourceUpdated { server_id, uri });
            }
        }
    }

    /// A change notification that reached the client handler: a
    /// free-standing one (2025 era) is acted on; one stamped with a
    /// `subscriptionId` belongs to a listen stream the host no longer has
    /// (cancelled or replaced; live streams get theirs directly), so it is
    /// dropped.
    pub(crate) fn notified(&self, change: Change, context: &NotificationContext<RoleClient>) {
        if context.meta.subscription_id().is_some() {
            let what = format!("ignored {change:?} of a closed subscriptions/listen stream");
            self.log(LogLevel::Debug, what);
            return;
        }
        self.changed(change);
    }

    fn log(&self, level: LogLevel, message: String) {
        self.sink
            .send(log(level, "host.listen", Some(&self.server_id), message));
    }
}

/// The resource URIs the app subscribed to on one server, kept across
/// connections (at most [`MAX_RESOURCE_SUBSCRIPTIONS`]).
#[derive(Default)]
pub struct WantedResources(Mutex<BTreeSet<String>>);

impl WantedResources {
    fn set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `uri`.
    ///
    /// # Errors
    /// `limit_exceeded` when [`MAX_RESOURCE_SUBSCRIPTIONS`] URIs are wanted already.
    pub fn insert(&self, server_id: &str, uri: &str) -> HostResult<()> {
        let mut set = self.set();
        if !set.contains(uri) && set.len() >= MAX_RESOURCE_SUBSCRIPTIONS {
            return Err(HostError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "subscribeResource on {server_id}: more than {MAX_RESOURCE_SUBSCRIPTIONS} \
                     resource subscriptions"
                ),
            ));
        }
        set.insert(uri.to_owned());
        Ok(())
    }

    /// Removes `uri`.
    pub fn remove(&self, uri: &str) {
        self.set().remove(uri);
    }

    /// Whether no resource is wanted.
    pub fn is_empty(&self) -> bool {
        self.set().is_empty()
    }

    /// Every wanted URI, in order.
    pub fn list(&self) -> Vec<String> {
        self.set().iter().cloned().collect()
    }
}

/// How one subscribed resource is followed on the wire.
enum Follow {
    /// `resources/subscribe` was sent (2025 era).
    Legacy,
    /// A `subscriptions/listen` stream (2026-07-28): its number, its
    /// cancellation and the task running it.
    Stream(u64, CancellationToken, Option<JoinHandle<()>>),
}

/// One connection's change streams and resource subscriptions (cheap to
/// clone: shared).
#[derive(Clone)]
pub struct Subscriptions(Arc<Inner>);

struct Inner {
    peer: Peer<RoleClient>,
    client: HostClient,
    /// Cancelled by [`Subscriptions::stop`] (and with the server's token).
    root: CancellationToken,
    /// The stream tasks (also on the server's tracker).
    tracker: TaskTracker,
    server_tracker: TaskTracker,
    resources: Mutex<HashMap<String, Follow>>,
    /// Numbers the resource streams.
    streams: AtomicU64,
}

impl Subscriptions {
    /// The subscriptions of a connection on `peer` whose notifications go
    /// to `client`; nothing is opened before [`Subscriptions::start`].
    pub fn new(peer: Peer<RoleClient>, client: HostClient, tasks: &ServerTasks) -> Self {
        Self(Arc::new(Inner {
            peer,
            client,
            root: tasks.cancel.child_token(),
            tracker: TaskTracker::new(),
            server_tracker: tasks.tracker.clone(),
            resources: Mutex::default(),
            streams: AtomicU64::new(0),
        }))
    }

    /// Whether the connection speaks 2026-07-28 (no `initialize`), so
    /// changes arrive only on `subscriptions/listen` streams.
    fn modern(&self) -> bool {
        self.0
            .peer
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize())
    }

    fn resources(&self) -> std::sync::MutexGuard<'_, HashMap<String, Follow>> {
        self.0
            .resources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn spawn(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> JoinHandle<()> {
        let task = self.0.tracker.track_future(task);
        self.0.server_tracker.spawn(task)
    }

    /// Starts following the connection's changes: in 2026-07-28 the list
    /// changes stream (when the server declared a `listChanged`), and, in
    /// both eras, a subscription to each of `wanted` (a failure is logged,
    /// `warn`, target `host.listen`). `timeout` bounds each subscription's
    /// answer or acknowledgment.
    pub fn start(&self, wanted: Vec<String>, timeout: Duration) {
        if self.modern() {
            if let Some(filter) = self.list_filter() {
                let stream = Stream {
                    peer: self.0.peer.clone(),
                    client: self.0.client.clone(),
                    filter,
                    uri: None,
                    cancel: self.0.root.child_token(),
                    timeout,
                };
                self.spawn(stream.run(None));
            }
        }
        if !wanted.is_empty() && !capabilities::allows(&self.0.peer, "resources/subscribe") {
            let what = format!(
                "the server no longer declares resources.subscribe; not subscribed again to {}",
                wanted.join(", ")
            );
            self.0.client.log(LogLevel::Warn, what);
            return;
        }
        for uri in wanted {
            let subs = self.clone();
            self.spawn(async move {
                if let Err(e) = subs.subscribe(&uri, (timeout, None)).await {
                    let what = format!("could not subscribe again to {uri}: {}", e.message);
                    subs.0.client.log(LogLevel::Warn, what);
                }
            });
        }
    }

    /// The list changes the server declared, as a listen filter; `None` for none.
    fn list_filter(&self) -> Option<SubscriptionFilter> {
        let info = self.0.peer.peer_info()?;
        let caps = &info.capabilities;
        let on = |flag: Option<bool>| flag == Some(true);
        let mut filter = SubscriptionFilter::builder();
        let mut any = false;
        if on(caps.tools.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.tools_list_changed();
            any = true;
        }
        if on(caps.prompts.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.prompts_list_changed();
            any = true;
        }
        if on(caps.resources.as_ref().and_then(|c| c.list_changed)) {
            filter = filter.resources_list_changed();
            any = true;
        }
        any.then(|| filter.build())
    }

    /// Follows updates of resource `uri`: `resources/subscribe` (2025 era)
    /// or a `subscriptions/listen` stream for it (2026-07-28), acknowledged
    /// within `timeout`. Already followed: nothing is sent.
    ///
    /// # Errors
    /// `not_supported` (a 2026-07-28 server that did not acknowledge the
    /// URI), `timeout`, `protocol_error`, `auth_required`, each naming the
    /// server and the URI.
    ///
    /// `abort` (when given) gives the subscription up once cancelled: the
    /// request in flight is cancelled (`notifications/cancelled`) or the
    /// stream closed, `uri` is not followed, and this fails with `cancelled`.
    pub async fn subscribe(
        &self,
        uri: &str,
        (timeout, abort): (Duration, Option<&CancellationToken>),
    ) -> HostResult<()> {
        if self.modern() {
            let (first, answer) = oneshot::channel();
            let cancel = self.0.root.child_token();
            let number = self.0.streams.fetch_add(1, Ordering::Relaxed);
            {
                let mut resources = self.resources();
                // A stream that gave up (refused on a reopen) follows nothing.
                let gave_up = matches!(resources.get(uri), Some(Follow::Stream(_, _, Some(task))) if task.is_finished());
                if resources.contains_key(uri) && !gave_up {
                    return Ok(());
                }
                let follow = Follow::Stream(number, cancel.clone(), None);
                resources.insert(uri.to_owned(), follow);
            }
            let stream = Stream {
                peer: self.0.peer.clone(),
                client: self.0.client.clone(),
                filter: SubscriptionFilter::builder()
                    .resource_subscription(uri)
                    .build(),
                uri: Some(uri.to_owned()),
                cancel: cancel.clone(),
                timeout,
            };
            let handle = self.spawn(stream.run(Some(first)));
            if let Some(Follow::Stream(n, _, slot)) = self.resources().get_mut(uri) {
                if *n == number {
                    *slot = Some(handle);
                }
            }
            let answered = async { answer.await.unwrap_or_else(|_| Err(stopped(uri))) };
            let outcome = match abort {
                None => answered.await,
                Some(abort) => tokio::select! {
                    outcome = answered => outcome,
                    () = abort.cancelled() => {
                        cancel.cancel();
                        Err(aborted(uri))
                    }
                },
            };
            if outcome.is_err() {
                self.forget(uri, number);
            }
            return outcome;
        }
        if self
            .resources()
            .insert(uri.to_owned(), Follow::Legacy)
            .is_some()
        {
            return Ok(());
        }
        let sent = self
            .legacy("resources/subscribe", uri, (timeout, abort))
            .await;
        if sent.is_err() {
            self.resources().remove(uri);
        }
        sent
    }

    /// Stops following resource `uri`: `resources/unsubscribe` (2025 era)
    /// or the stream is cancelled (2026-07-28, waiting at most
    /// [`LISTEN_STOP_WAIT_MS`]). Not followed: nothing is sent.
    ///
    /// # Errors
    /// Those of the `resources/unsubscribe` request (2025 era).
    /// `abort` (when given) cancels a `resources/unsubscribe` in flight
    /// (`cancelled`); `uri` is not followed any more all the same.
    pub async fn unsubscribe(
        &self,
        uri: &str,
        (timeout, abort): (Duration, Option<&CancellationToken>),
    ) -> HostResult<()> {
        let follow = self.resources().remove(uri);
        match follow {
            None => Ok(()),
            Some(Follow::Legacy) => {
                let sending = (timeout, abort);
                self.legacy("resources/unsubscribe", uri, sending).await
            }
            Some(Follow::Stream(_, cancel, handle)) => {
                cancel.cancel();
                if let Some(handle) = handle {
                    let wait = Duration::from_millis(LISTEN_STOP_WAIT_MS);
                    let _ = tokio::time::timeout(wait, handle).await;
                }
                Ok(())
            }
        }
    }

    /// Drops `uri`'s entry if it is still stream `number`.
    fn forget(&self, uri: &str, number: u64) {
        let mut resources = self.resources();
        if matches!(resources.get(uri), Some(Follow::Stream(n, ..)) if *n == number) {
            resources.remove(uri);
        }
    }

    /// Sends 2025-era `method` (`resources/subscribe` / `resources/unsubscribe`) for `uri`.
    /// With `abort`, the request is given up once that is cancelled
    /// (`notifications/cancelled`, see [`send_bounded`]).
    async fn legacy(
        &self,
        method: &str,
        uri: &str,
        (timeout, abort): (Duration, Option<&CancellationToken>),
    ) -> HostResult<()> {
        let server_id = &self.0.client.server_id;
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let params = json!({ "uri": uri });
        let sending = send_bounded(
            &self.0.peer,
            server_id,
            method,
            params,
            options,
            (None, None, abort),
        );
        match sending.await {
            Ok(_) => Ok(()),
            Err(RequestFailure::Failed(e)) => Err(e),
            Err(RequestFailure::Auth(_)) => Err(HostError::new(
                ErrorCode::AuthRequired,
                format!("{method} on {server_id} was refused (authorization)"),
            )),
        }
    }

    /// Cancels every stream without waiting (the connection is dropped).
    pub fn cancel(&self) {
        self.0.root.cancel();
    }

    /// Cancels every stream (each sends its cancellation) and waits for
    /// them, at most [`LISTEN_STOP_WAIT_MS`]; called before the connection closes.
    pub async fn stop(&self) {
        self.0.root.cancel();
        self.0.tracker.close();
        let wait = Duration::from_millis(LISTEN_STOP_WAIT_MS);
        let _ = tokio::time::timeout(wait, self.0.tracker.wait()).await;
    }
}

/// The error of a subscription given up by its caller before it was acknowledged.
fn aborted(uri: &str) -> HostError {
    HostError::new(
        ErrorCode::Cancelled,
        format!("the subscription to {uri} was cancelled"),
    )
}

/// The error of a subscription whose stream ended before it was acknowledged.
fn stopped(uri: &str) -> HostError {
    HostError::new(
        ErrorCode::Cancelled,
        format!("the subscription to {uri} ended before it was acknowledged"),
    )
}
