//! The progress tokens of one connection (MCP 2025-11-25 "Utilities ›
//! Progress"), and [`Progress`], one notification as a call reports it.
//!
//! [`ProgressRoutes`]: rmcp's [`ProgressDispatcher`] routes each
//! `notifications/progress` to the call that subscribed its token, and
//! [`ProgressRoutes`] also knows which tokens are live, so progress for a token
//! the host never issued (or no longer waits on) is dropped unread and
//! counted (docs/reliability.md, "Floods") instead of being handed on.
//! When a call's queue is full, the newest notification is kept aside
//! ([`ProgressRoutes::keep_latest`], one per token, replacing the one kept) and
//! read after the queue, so a flood costs no task and no memory per
//! notification and the last progress before the response still arrives
//! (older ones kept aside are dropped there: progress only increases).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::Stream;
use rmcp::handler::client::progress::{ProgressDispatcher, ProgressSubscriber};
use rmcp::model::{ProgressNotificationParam, ProgressToken};

/// A connection's progress routing (shared by the client handler and the
/// calls); cheap to clone.
#[derive(Clone, Default)]
pub struct ProgressRoutes {
    dispatcher: ProgressDispatcher,
    live: Live,
}

/// The live tokens, each with the notification kept aside for it (if any).
type Live = Arc<Mutex<HashMap<ProgressToken, Option<ProgressNotificationParam>>>>;

impl ProgressRoutes {
    /// Subscribes to the progress of `token` until the returned stream is
    /// dropped.
    pub async fn subscribe(&self, token: ProgressToken) -> Subscribed {
        self.lock().insert(token.clone(), None);
        let inner = self.dispatcher.subscribe(token.clone()).await;
        Subscribed {
            inner,
            token,
            live: self.live.clone(),
        }
    }

    /// Whether a call waits on the progress of `token`.
    pub fn is_live(&self, token: &ProgressToken) -> bool {
        self.lock().contains_key(token)
    }

    /// Keeps `notification` aside for its token's subscriber, in place of
    /// the one kept (used when the subscriber's queue is full; nothing for a
    /// token that is not live). It is read once the queue is empty.
    pub fn keep_latest(&self, notification: ProgressNotificationParam) {
        if let Some(kept) = self.lock().get_mut(&notification.progress_token) {
            *kept = Some(notification);
        }
    }

    /// Passes one notification to the subscriber of its token (waits while
    /// that subscriber's queue is full; nothing for an unknown token).
    pub async fn handle_notification(&self, notification: ProgressNotificationParam) {
        self.dispatcher.handle_notification(notification).await;
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Option<ProgressNotificationParam>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The progress of one token (a [`Stream`]); dropped, the token is no
/// longer live.
pub struct Subscribed {
    inner: ProgressSubscriber,
    token: ProgressToken,
    live: Live,
}

impl Stream for Subscribed {
    type Item = ProgressNotificationParam;

    /// The queue first, then the notification kept aside (newer than
    /// everything queued when it was kept).
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Pending => {
                let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
                match live.get_mut(&self.token).and_then(Option::take) {
                    Some(kept) => Poll::Ready(Some(kept)),
                    None => Poll::Pending,
                }
            }
            ready => ready,
        }
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    fn param(token: &ProgressToken, progress: f64) -> ProgressNotificationParam {
        serde_json::from_value(serde_json::json!({ "progressToken": token, "progress": progress }))
            .expect("progress params")
    }

    #[tokio::test]
    async fn a_token_is_live_while_its_subscription_is_kept() {
        let progress = ProgressRoutes::default();
        let token: ProgressToken = serde_json::from_value(serde_json::json!(7)).unwrap();
        assert!(!progress.is_live(&token));
        let mut sub = progress.subscribe(token.clone()).await;
        assert!(progress.is_live(&token));
        progress.handle_notification(param(&token, 1.0)).await;
        assert_eq!(sub.next().await.map(|p| p.progress), Some(1.0));
        drop(sub);
        assert!(!progress.is_live(&token));
    }
}

/// One `notifications/progress` of a call (MCP 2025-11-25 "Utilities › Progress").
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// Human-readable status.
    pub message: Option<String>,
}

impl From<ProgressNotificationParam> for Progress {
    fn from(p: ProgressNotificationParam) -> Self {
        Self {
            progress: p.progress,
            total: p.total,
            message: p.message,
        }
    }
}
