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
//! [`Observed`] so the handler rmcp calls later leaves them alone. Sending
//! is untouched: the transport keeps its one writer.

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::{GetExtensions, JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Sees every server notification of one connection in arrival order.
pub trait InOrder: Send + Sync + 'static {
    /// Called from the connection's receive loop for each notification, in
    /// the order the server sent them (per stream: Streamable HTTP merges the
    /// call's response streams and the standalone GET stream as they
    /// arrive). Must be quick and must not wait: the next message is not
    /// received until it returns. Returns `true` when it acted on the
    /// notification (which is then marked [`Observed`]).
    fn observe(&self, notification: &ServerNotification) -> bool;
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
}

impl<T, O> Ordered<T, O> {
    /// Wraps `inner`; `observer` sees its notifications in arrival order.
    pub fn new(inner: T, observer: O) -> Self {
        Self { inner, observer }
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

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &mut message {
            if self.observer.observe(&n.notification) {
                n.notification.extensions_mut().insert(Observed);
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records the methods it sees; observes `notifications/message` only.
    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl InOrder for Seen {
        fn observe(&self, notification: &ServerNotification) -> bool {
            let value = serde_json::to_value(notification).unwrap_or_default();
            let method = value["method"].as_str().unwrap_or_default().to_owned();
            let logging = method == "notifications/message";
            self.0.lock().unwrap().push(method);
            logging
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
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        ];
        let seen = Seen::default();
        let fixed = Fixed(messages.into_iter().map(server_message).collect());
        let mut ordered = Ordered::new(fixed, seen.clone());
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
            ["notifications/message", "notifications/tools/list_changed"]
        );
    }
}
