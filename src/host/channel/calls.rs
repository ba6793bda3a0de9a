//! The requests in flight on every `mcp://` channel, by channel and client
//! id, so a client's `notifications/cancelled` finds the one it names (MCP
//! 2025-11-25 "Utilities › Cancellation").

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// `(channel URI, the id as JSON text)`: `1` and `"1"` are different ids.
type Key = (String, String);

/// Every channel request in flight (a leaf lock).
#[derive(Debug, Default)]
pub struct ChannelCalls(Mutex<HashMap<Key, CancellationToken>>);

fn key(channel: &str, id: &Value) -> Key {
    (channel.to_owned(), id.to_string())
}

impl ChannelCalls {
    fn map(&self) -> MutexGuard<'_, HashMap<Key, CancellationToken>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records request `id` on `channel` as in flight until the returned
    /// registration is dropped; `None` when that id is in flight there
    /// already (JSON-RPC ids are unique among a sender's pending requests).
    pub fn register(self: &Arc<Self>, channel: &str, id: &Value) -> Option<Registration> {
        let key = key(channel, id);
        let token = CancellationToken::new();
        let mut map = self.map();
        if map.contains_key(&key) {
            return None;
        }
        map.insert(key.clone(), token.clone());
        Some(Registration {
            calls: Arc::clone(self),
            key,
            token,
        })
    }

    /// The client cancelled its request `id` on `channel`; returns whether
    /// it was in flight.
    pub fn cancel(&self, channel: &str, id: &Value) -> bool {
        match self.map().get(&key(channel, id)) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// One request in flight; dropping it forgets the request.
#[derive(Debug)]
pub struct Registration {
    calls: Arc<ChannelCalls>,
    key: Key,
    token: CancellationToken,
}

impl Registration {
    /// Resolves once the client cancelled the request.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.calls.map().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_unique_per_channel_and_type() {
        let calls = Arc::new(ChannelCalls::default());
        let one = calls.register("mcp:/a", &json!(1)).unwrap();
        assert!(calls.register("mcp:/a", &json!(1)).is_none());
        let _text = calls.register("mcp:/a", &json!("1")).unwrap();
        let _other = calls.register("mcp:/b", &json!(1)).unwrap();
        assert!(calls.cancel("mcp:/a", &json!(1)));
        assert!(one.token.is_cancelled());
        drop(one);
        assert!(!calls.cancel("mcp:/a", &json!(1)));
        assert!(calls.register("mcp:/a", &json!(1)).is_some());
    }
}
