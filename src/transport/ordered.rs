//! Server notifications acted on in arrival order.
//!
//! rmcp's service loop (`rmcp::service::serve_inner`) hands every
//! notification it receives to a task of its own (`spawn_service_task`),
//! so two notifications from one server reach the client handler in
//! whichever order the runtime runs those tasks: a burst of 200
//! `notifications/message` came out with dozens of swaps. [`Ordered`] wraps
//! a connection's rmcp transport (stdio and Streamable HTTP alike) and shows
//! each server notification, as it is received, to an [`InOrder`] observer
//! before rmcp sees it; the observer acts on the ones whose order matters
//! right there (the receive loop is sequential), and those are marked
//! [`Observed`] so the handler rmcp calls later leaves them alone, and
//! those that need nothing more of rmcp ([`Seen::Done`]: a log message) or
//! carry nothing to act on ([`Seen::Drop`]) are not passed on at all.
//! Sending keeps the transport's one writer; a request of the 2026-07-28
//! era (its `_meta` names the protocol version) is given the log level the
//! host wants ([`stamp_log_level`]).
//!
//! Backpressure: each notification and request passed on carries an
//! [`InFlight`] slot in its extensions, which rmcp moves into the context
//! of the handler task it spawns and drops when that task ends. With
//! [`PEER_MESSAGES_IN_FLIGHT`] slots taken the transport is not read until
//! one is free, so a flood fills the server's pipe (or the HTTP stream)
//! rather than this process's memory.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

#[allow(deprecated)] // MCP logging (SEP-2577 deprecates it; servers still send it)
use rmcp::model::LoggingLevel;
use rmcp::model::{GetExtensions, GetMeta, JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::limits::{PEER_MESSAGES_IN_FLIGHT, SENDS_IN_FLIGHT};

/// What an [`InOrder`] observer did with a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Not acted on: rmcp's handler gets it.
    Pass,
    /// Acted on; rmcp still gets it (marked [`Observed`]) for its own
    /// bookkeeping (progress timeouts, its response cache).
    Observed,
    /// Acted on completely: not passed on.
    Done,
    /// Nothing to act on (no answer is due; counted by the observer): not
    /// passed on.
    Drop,
}

/// One of a connection's [`PEER_MESSAGES_IN_FLIGHT`] slots, held by the
/// handler task rmcp runs for a notification or request (found in its
/// context's extensions; dropped with it).
#[derive(Debug, Clone)]
pub struct InFlight(#[allow(dead_code)] Arc<OwnedSemaphorePermit>);

/// Sees every server notification of one connection in arrival order.
pub trait InOrder: Send + Sync + 'static {
    /// Called from the connection's receive loop for each notification, in
    /// the order the server sent them (per stream: Streamable HTTP merges the
    /// call's response streams and the standalone GET stream as they
    /// arrive). Must be quick and must not wait: the next message is not
    /// received until it returns. Says what became of the notification
    /// ([`Seen`]).
    fn observe(&self, notification: &ServerNotification) -> Seen;

    /// An answer to a server request was left unsent ([`Overflow::DropAnswers`]);
    /// counted by the observer.
    fn unanswered(&self) {}

    /// The log level the app chose for the server (`setLogLevel`), asked
    /// for in each 2026-07-28 request ([`stamp_log_level`]); `None`:
    /// [`SERVER_LOG_LEVEL`].
    #[allow(deprecated)]
    fn log_level(&self) -> Option<LoggingLevel> {
        None
    }
}

/// What a connection does while all of its [`SENDS_IN_FLIGHT`] send slots
/// are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// The reader waits until one is free (stdio: reading and writing are
    /// apart, so a server that does not take its answers in is not read).
    Wait,
    /// Answers to server requests are left unsent and counted; the reader
    /// goes on (Streamable HTTP: rmcp's worker both reads the streams and
    /// sends the POSTs, so a waiting reader would stop the sends too).
    DropAnswers,
}

/// Marks a notification already acted on in arrival order (found in
/// `NotificationContext::extensions` by the client handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed;

/// An rmcp client transport whose received notifications pass an
/// [`InOrder`] observer first (see the module documentation).
pub struct Ordered<T, O> {
    inner: T,
    observer: O,
    slots: Arc<Semaphore>,
    /// A slot taken before the next message was received (cancel safety).
    slot: Option<OwnedSemaphorePermit>,
    /// Messages handed to the transport and not yet written
    /// ([`SENDS_IN_FLIGHT`]); see [`Overflow`].
    sends: Arc<Semaphore>,
    overflow: Overflow,
}

impl<T, O> Ordered<T, O> {
    /// Wraps `inner`; `observer` sees its notifications in arrival order;
    /// `overflow` says what happens while every send slot is taken.
    pub fn new(inner: T, observer: O, overflow: Overflow) -> Self {
        Self {
            inner,
            observer,
            slots: Arc::new(Semaphore::new(PEER_MESSAGES_IN_FLIGHT)),
            slot: None,
            sends: Arc::new(Semaphore::new(SENDS_IN_FLIGHT)),
            overflow,
        }
    }
}

impl<T, O> Transport<RoleClient> for Ordered<T, O>
where
    T: Transport<RoleClient>,
    O: InOrder,
{
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    /// Each message holds one of [`SENDS_IN_FLIGHT`] send slots until it
    /// is written (taken in order: the semaphore is fair). With
    /// [`Overflow::DropAnswers`] an answer that finds none free is not sent.
    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let mut slot = None;
        if answer && self.overflow == Overflow::DropAnswers {
            slot = self.sends.clone().try_acquire_owned().ok();
            if slot.is_none() {
                self.observer.unanswered();
            }
        }
        stamp_log_level(&mut item, self.observer.log_level());
        let sending = (slot.is_some() || !answer || self.overflow == Overflow::Wait)
            .then(|| self.inner.send(item));
        let sends = self.sends.clone();
        async move {
            let Some(sending) = sending else {
                return Ok(());
            };
            // Never closed: `acquire_owned` fails only on a closed semaphore.
            let _slot = match slot {
                Some(slot) => Some(slot),
                None => sends.acquire_owned().await.ok(),
            };
            sending.await
        }
    }

    /// Cancel-safe: with [`Overflow::Wait`], waits while every send slot is
    /// taken (answers a server does not take in: a deaf stdin), then a slot is taken
    /// (and kept), then the inner transport's cancel-safe `receive`.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.overflow == Overflow::Wait {
            // Released at once: only "one is free" is waited for.
            drop(self.sends.acquire().await);
        }
        loop {
            if self.slot.is_none() {
                // Never closed: `acquire_owned` fails only on a closed semaphore.
                self.slot = self.slots.clone().acquire_owned().await.ok();
            }
            let mut message = self.inner.receive().await?;
            let extensions = match &mut message {
                JsonRpcMessage::Notification(n) => match self.observer.observe(&n.notification) {
                    Seen::Done | Seen::Drop => continue,
                    Seen::Observed => {
                        n.notification.extensions_mut().insert(Observed);
                        n.notification.extensions_mut()
                    }
                    Seen::Pass => n.notification.extensions_mut(),
                },
                JsonRpcMessage::Request(r) => r.request.extensions_mut(),
                _ => return Some(message),
            };
            if let Some(slot) = self.slot.take() {
                extensions.insert(InFlight(Arc::new(slot)));
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The level the host asks 2026-07-28 servers to log at until the app
/// chose one (`setLogLevel`): every level, as a 2025-era server logs
/// without a `logging/setLevel`.
#[allow(deprecated)]
pub const SERVER_LOG_LEVEL: LoggingLevel = LoggingLevel::Debug;

/// MCP 2026-07-28 "Server Utilities › Logging" (SEP-2575): `logging/setLevel`
/// is gone and a server MUST NOT send `notifications/message` for a request
/// whose `_meta` lacks `io.modelcontextprotocol/logLevel`. A request of that
/// era (its `_meta` carries `io.modelcontextprotocol/protocolVersion`, which
/// rmcp sets on every request of a discovered connection and never in the
/// 2025 era) without a level gets `chosen` (the app's `setLogLevel` for
/// the server), else [`SERVER_LOG_LEVEL`]; a level already set (an MCP
/// App's forwarded request) is kept; other messages are untouched.
#[allow(deprecated)]
pub fn stamp_log_level(item: &mut TxJsonRpcMessage<RoleClient>, chosen: Option<LoggingLevel>) {
    if let JsonRpcMessage::Request(r) = item {
        let meta = r.request.get_meta_mut();
        if meta.protocol_version().is_some() && meta.log_level().is_none() {
            meta.set_log_level(chosen.unwrap_or(SERVER_LOG_LEVEL));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records the methods it sees; observes `notifications/message` only.
    #[derive(Clone, Default)]
    struct Methods(Arc<Mutex<Vec<String>>>);

    impl InOrder for Methods {
        fn observe(&self, notification: &ServerNotification) -> Seen {
            let value = serde_json::to_value(notification).unwrap_or_default();
            let method = value["method"].as_str().unwrap_or_default().to_owned();
            let seen = match method.as_str() {
                "notifications/message" => Seen::Observed,
                "notifications/x" => Seen::Drop,
                _ => Seen::Pass,
            };
            self.0.lock().unwrap().push(method);
            seen
        }
    }

    fn server_message(json: serde_json::Value) -> RxJsonRpcMessage<RoleClient> {
        serde_json::from_value(json).expect("a server message")
    }

    #[test]
    fn an_unknown_logging_level_reaches_rmcp_as_a_custom_notification() {
        // rmcp's `LoggingLevel` has no `verbose`: the untagged union falls
        // through to `CustomNotification`, which its handler ignores.
        let message = server_message(serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/message",
            "params": { "level": "verbose", "data": "x" }
        }));
        let JsonRpcMessage::Notification(n) = message else {
            panic!("not a notification")
        };
        assert!(matches!(
            n.notification,
            ServerNotification::CustomNotification(ref c) if c.method == "notifications/message"
        ));
    }

    /// A transport that yields fixed messages, then ends.
    struct Fixed(std::collections::VecDeque<RxJsonRpcMessage<RoleClient>>);

    impl Transport<RoleClient> for Fixed {
        type Error = std::io::Error;
        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }
        fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
            std::future::ready(self.0.pop_front())
        }
        fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
            std::future::ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn notifications_pass_the_observer_in_order_and_observed_ones_are_marked() {
        let messages = [
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": 1}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/x"}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        ];
        let seen = Methods::default();
        let fixed = Fixed(messages.into_iter().map(server_message).collect());
        let mut ordered = Ordered::new(fixed, seen.clone(), Overflow::Wait);
        let mut marks = Vec::new();
        while let Some(message) = ordered.receive().await {
            if let JsonRpcMessage::Notification(n) = message {
                marks.push(n.notification.extensions().get::<Observed>().is_some());
            }
        }
        assert_eq!(marks, [true, false]);
        let seen = seen.0.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                "notifications/message",
                "notifications/x",
                "notifications/tools/list_changed"
            ]
        );
    }

    fn client_request(json: serde_json::Value) -> TxJsonRpcMessage<RoleClient> {
        serde_json::from_value(json).expect("a client message")
    }

    #[test]
    #[allow(deprecated)] // MCP logging levels (SEP-2577)
    fn a_2026_request_asks_for_a_log_level_and_a_2025_request_does_not() {
        let era = "io.modelcontextprotocol/protocolVersion";
        let level = "io.modelcontextprotocol/logLevel";
        let mut modern = client_request(serde_json::json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "t", "_meta": {era: "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}
        }));
        stamp_log_level(&mut modern, None);
        let sent = serde_json::to_value(&modern).unwrap();
        assert_eq!(sent["params"]["_meta"][level], "debug");
        let mut chosen = client_request(serde_json::json!({
            "jsonrpc": "2.0", "id": 6, "method": "tools/call",
            "params": {"name": "t", "_meta": {era: "2026-07-28"}}
        }));
        stamp_log_level(&mut chosen, Some(LoggingLevel::Warning));
        let sent = serde_json::to_value(&chosen).unwrap();
        assert_eq!(sent["params"]["_meta"][level], "warning");
        let mut kept = client_request(serde_json::json!({
            "jsonrpc": "2.0", "id": 4, "method": "tools/list",
            "params": {"_meta": {era: "2026-07-28", level: "error"}}
        }));
        stamp_log_level(&mut kept, Some(LoggingLevel::Critical));
        let sent = serde_json::to_value(&kept).unwrap();
        assert_eq!(sent["params"]["_meta"][level], "error");
        let mut legacy = client_request(serde_json::json!({
            "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t"}
        }));
        stamp_log_level(&mut legacy, Some(LoggingLevel::Error));
        let sent = serde_json::to_value(&legacy).unwrap();
        assert!(
            sent["params"]
                .get("_meta")
                .is_none_or(|m| m.get(level).is_none()),
            "{sent}"
        );
    }

    #[tokio::test]
    async fn the_reader_waits_while_every_slot_is_held_by_a_handler() {
        use futures::FutureExt as _;
        let one =
            || server_message(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/y"}));
        let messages = (0..PEER_MESSAGES_IN_FLIGHT + 1).map(|_| one()).collect();
        let mut ordered = Ordered::new(Fixed(messages), Methods::default(), Overflow::Wait);
        let mut held = Vec::new();
        for _ in 0..PEER_MESSAGES_IN_FLIGHT {
            let message = ordered.receive().await.expect("a message");
            held.push(message);
        }
        // Unconstrained: one poll each, whatever is left of tokio's budget.
        let once = |o: &mut Ordered<Fixed, Methods>| {
            tokio::task::unconstrained(o.receive()).now_or_never()
        };
        assert!(once(&mut ordered).is_none(), "read with every slot held");
        // A handler task ends: its slot goes with its context's extensions.
        drop(held.pop());
        assert!(once(&mut ordered).flatten().is_some());
    }
}
