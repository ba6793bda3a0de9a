//! What a server declared it supports, and the host's rule for the rest.
//!
//! The capabilities are those rmcp stores on the connection's peer
//! ([`Peer::peer_info`]): from the `initialize` result (MCP 2025-11-25
//! "Lifecycle › Capability Negotiation") or from the `server/discover`
//! result (2026-07-28), so the rule is the same in both eras:
//!
//! | request | server without the capability |
//! | --- | --- |
//! | `tools/list` (start, `list_changed`) | no request; the tool list is empty, no diagnostic |
//! | `resources/list`, `resources/templates/list`, `prompts/list` | no request; `[]` |
//! | `resources/read`, `prompts/get` | no request; `not_supported` naming the server and the capability |
//! | `resources/subscribe`, `resources/unsubscribe` | as above, capability `resources.subscribe` |
//! | `completion/complete` | no request; `not_supported`, capability `completions` |
//! | `logging/setLevel` | no request; `not_supported`, capability `logging` |
//!
//! A connection whose peer has no stored capabilities yet (none after a
//! completed handshake) is treated as declaring everything: the request is
//! sent and the server answers for itself.

use rmcp::model::ServerCapabilities;
use rmcp::service::{Peer, RoleClient};

use crate::error::{ErrorCode, HostError, HostResult};

/// A server capability a request depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// `tools` (`tools/list`, `tools/call`).
    Tools,
    /// `resources` (`resources/list`, `resources/templates/list`, `resources/read`).
    Resources,
    /// `resources.subscribe: true` (`resources/subscribe`, `resources/unsubscribe`).
    ResourceSubscribe,
    /// `prompts` (`prompts/list`, `prompts/get`).
    Prompts,
    /// `completions` (`completion/complete`, MCP 2025-06-18+ "Utilities ›
    /// Completion").
    Completions,
    /// `logging` (`logging/setLevel`, MCP 2025-11-25 "Utilities › Logging").
    Logging,
}

impl Capability {
    /// The capability that MCP request `method` needs, if it needs one of
    /// the six this module knows.
    #[must_use]
    pub fn of_method(method: &str) -> Option<Self> {
        match method {
            "tools/list" | "tools/call" => Some(Self::Tools),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                Some(Self::Resources)
            }
            "resources/subscribe" | "resources/unsubscribe" => Some(Self::ResourceSubscribe),
            "prompts/list" | "prompts/get" => Some(Self::Prompts),
            "completion/complete" => Some(Self::Completions),
            "logging/setLevel" => Some(Self::Logging),
            _ => None,
        }
    }

    /// The capability as written in the spec: `tools`, `resources`,
    /// `resources.subscribe`, `prompts`, `completions` or `logging`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Resources => "resources",
            Self::ResourceSubscribe => "resources.subscribe",
            Self::Prompts => "prompts",
            Self::Completions => "completions",
            Self::Logging => "logging",
        }
    }

    /// Whether `capabilities` declare it (an object, even `{}`, declares
    /// it; `resources.subscribe` must be `true`).
    #[must_use]
    pub fn declared_in(self, capabilities: &ServerCapabilities) -> bool {
        match self {
            Self::Tools => capabilities.tools.is_some(),
            Self::Resources => capabilities.resources.is_some(),
            Self::ResourceSubscribe => capabilities
                .resources
                .as_ref()
                .and_then(|r| r.subscribe)
                .unwrap_or(false),
            Self::Prompts => capabilities.prompts.is_some(),
            Self::Completions => capabilities.completions.is_some(),
            Self::Logging => capabilities.logging.is_some(),
        }
    }
}

/// Whether the server behind `peer` may be sent `method`: `false` only when
/// its stored capabilities lack the one `method` needs.
#[must_use]
pub fn allows(peer: &Peer<RoleClient>, method: &str) -> bool {
    match (Capability::of_method(method), peer.peer_info()) {
        (Some(needed), Some(info)) => needed.declared_in(&info.capabilities),
        _ => true,
    }
}

/// Checks `method` against what server `server_id` declared.
///
/// # Errors
/// `not_supported`, e.g. `server docs did not declare the prompts
/// capability; prompts/get was not sent`.
pub fn require(peer: &Peer<RoleClient>, server_id: &str, method: &str) -> HostResult<()> {
    if allows(peer, method) {
        return Ok(());
    }
    let capability = Capability::of_method(method).map_or("required", Capability::name);
    Err(HostError::new(
        ErrorCode::NotSupported,
        format!(
            "server {server_id} did not declare the {capability} capability; {method} was not sent"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(v: serde_json::Value) -> ServerCapabilities {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn methods_map_to_their_capability() {
        let cases = [
            ("tools/list", Some(Capability::Tools)),
            ("resources/templates/list", Some(Capability::Resources)),
            ("resources/read", Some(Capability::Resources)),
            ("resources/subscribe", Some(Capability::ResourceSubscribe)),
            ("prompts/get", Some(Capability::Prompts)),
            ("ping", None),
            ("completion/complete", Some(Capability::Completions)),
            ("logging/setLevel", Some(Capability::Logging)),
        ];
        for (method, want) in cases {
            assert_eq!(Capability::of_method(method), want, "{method}");
        }
    }

    #[test]
    fn an_empty_object_declares_and_subscribe_must_be_true() {
        let resources_only = caps(serde_json::json!({"resources": {}}));
        assert!(Capability::Resources.declared_in(&resources_only));
        assert!(!Capability::Tools.declared_in(&resources_only));
        assert!(!Capability::Prompts.declared_in(&resources_only));
        assert!(!Capability::ResourceSubscribe.declared_in(&resources_only));
        let subscribe = caps(serde_json::json!({"resources": {"subscribe": true}, "tools": {}}));
        assert!(Capability::ResourceSubscribe.declared_in(&subscribe));
        assert!(Capability::Tools.declared_in(&subscribe));
        assert!(!Capability::Tools.declared_in(&caps(serde_json::json!({}))));
        let utilities = caps(serde_json::json!({"completions": {}, "logging": {}}));
        assert!(Capability::Completions.declared_in(&utilities));
        assert!(Capability::Logging.declared_in(&utilities));
        assert!(!Capability::Logging.declared_in(&subscribe));
        assert!(!Capability::Completions.declared_in(&subscribe));
    }
}
