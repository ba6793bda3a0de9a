//! The `mcp://` side channels of ready servers (AHP
//! `McpServerCustomization.channel`): one per server while it is `ready`,
//! a new URI for each connection, and the capabilities it serves.
//!
//! A URI is `mcp:/<session>/<server id>/<generation>` (each part
//! percent-encoded; `<session>` is the session channel's path): opaque to
//! clients, stable while one connection lives, different after a restart,
//! so traffic for an earlier connection never reaches a later one.
//!
//! One writer: a server's actor opens the channel when the server becomes
//! `ready` and closes it when the server leaves `ready`; the channel proxy
//! only resolves URIs and counts requests in flight.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ahp_types::state::AhpMcpUiHostCapabilities;

/// The open channel of one server, as [`AppChannels::resolve`] gives it.
#[derive(Debug, Clone)]
pub struct ChannelRef {
    /// The channel URI.
    pub uri: String,
    /// The server's customization id.
    pub server_id: String,
    /// What the channel serves (`mcpApp.capabilities`); `None`: the server
    /// does not host Apps, so nothing is served.
    pub capabilities: Option<AhpMcpUiHostCapabilities>,
    in_flight: Arc<AtomicUsize>,
}

impl ChannelRef {
    /// Takes one of at most `max` request slots of this channel (the slot
    /// is given back when the returned guard is dropped); `None` when all
    /// are taken.
    #[must_use]
    pub fn begin_request(&self, max: usize) -> Option<RequestSlot> {
        let taken = self
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            });
        taken.ok().map(|_| RequestSlot(Arc::clone(&self.in_flight)))
    }
}

/// One request in flight on a channel; dropping it frees the slot.
#[derive(Debug)]
pub struct RequestSlot(Arc<AtomicUsize>);

impl Drop for RequestSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Every open channel, by server id.
#[derive(Debug, Default)]
pub struct AppChannels(Mutex<Channels>);

#[derive(Debug, Default)]
struct Channels {
    next_generation: u64,
    by_server: HashMap<String, ChannelRef>,
}

impl AppChannels {
    fn lock(&self) -> MutexGuard<'_, Channels> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a new channel for `server_id` (replacing any earlier one) on
    /// the session `session` (the session channel URI) and returns its URI.
    pub fn open(
        &self,
        session: &str,
        server_id: &str,
        capabilities: Option<AhpMcpUiHostCapabilities>,
    ) -> String {
        let mut channels = self.lock();
        channels.next_generation += 1;
        let uri = channel_uri(session, server_id, channels.next_generation);
        let channel = ChannelRef {
            uri: uri.clone(),
            server_id: server_id.to_owned(),
            capabilities,
            in_flight: Arc::default(),
        };
        channels.by_server.insert(server_id.to_owned(), channel);
        uri
    }

    /// Replaces what `server_id`'s open channel serves (after its tools
    /// changed); returns whether it changed. Nothing when none is open.
    pub fn set_capabilities(
        &self,
        server_id: &str,
        capabilities: Option<AhpMcpUiHostCapabilities>,
    ) -> bool {
        let mut channels = self.lock();
        match channels.by_server.get_mut(server_id) {
            Some(c) if c.capabilities != capabilities => {
                c.capabilities = capabilities;
                true
            }
            _ => false,
        }
    }

    /// Closes `server_id`'s channel; returns its URI if one was open.
    /// Requests in flight on it end with their own connection.
    pub fn close(&self, server_id: &str) -> Option<String> {
        self.lock().by_server.remove(server_id).map(|c| c.uri)
    }

    /// The open channel with URI `uri`.
    #[must_use]
    pub fn resolve(&self, uri: &str) -> Option<ChannelRef> {
        self.lock()
            .by_server
            .values()
            .find(|c| c.uri == uri)
            .cloned()
    }

    /// The URI of `server_id`'s open channel.
    #[must_use]
    pub fn uri_of(&self, server_id: &str) -> Option<String> {
        self.lock().by_server.get(server_id).map(|c| c.uri.clone())
    }
}

/// `mcp:/<session path>/<server id>/<generation>`, percent-encoded.
fn channel_uri(session: &str, server_id: &str, generation: u64) -> String {
    let session_path = session
        .split_once(':')
        .map_or(session, |(_, rest)| rest)
        .trim_start_matches('/');
    let Ok(mut uri) = url::Url::parse("mcp:/") else {
        // Not reached: a constant, valid URL.
        return format!("mcp:/{generation}");
    };
    if let Ok(mut segments) = uri.path_segments_mut() {
        segments
            .clear()
            .extend([session_path, server_id, generation.to_string().as_str()]);
    }
    uri.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_connection_gets_a_new_uri_and_old_ones_stop_resolving() {
        let channels = AppChannels::default();
        let first = channels.open("ahp-session:/s1", "plug/srv a", None);
        assert_eq!(first, "mcp:/s1/plug%2Fsrv%20a/1");
        assert_eq!(channels.resolve(&first).unwrap().server_id, "plug/srv a");
        let second = channels.open("ahp-session:/s1", "plug/srv a", None);
        assert_ne!(first, second);
        assert!(channels.resolve(&first).is_none());
        assert_eq!(channels.uri_of("plug/srv a"), Some(second.clone()));
        assert_eq!(channels.close("plug/srv a"), Some(second.clone()));
        assert!(channels.resolve(&second).is_none());
        assert_eq!(channels.close("plug/srv a"), None);
    }

    #[test]
    fn request_slots_are_bounded_and_given_back() {
        let channels = AppChannels::default();
        let uri = channels.open("ahp-session:/s", "a", None);
        let channel = channels.resolve(&uri).unwrap();
        let one = channel.begin_request(2).unwrap();
        let _two = channel.begin_request(2).unwrap();
        assert!(channel.begin_request(2).is_none());
        drop(one);
        assert!(channels.resolve(&uri).unwrap().begin_request(2).is_some());
    }

    #[test]
    fn capabilities_are_replaced_only_on_change() {
        let channels = AppChannels::default();
        let caps = AhpMcpUiHostCapabilities::default();
        assert!(!channels.set_capabilities("a", Some(caps.clone())));
        let uri = channels.open("ahp-session:/s", "a", None);
        assert!(channels.set_capabilities("a", Some(caps.clone())));
        assert!(!channels.set_capabilities("a", Some(caps.clone())));
        assert_eq!(channels.resolve(&uri).unwrap().capabilities, Some(caps));
    }
}
