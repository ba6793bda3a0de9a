//! The log level the app chose for one server (`Host::set_log_level`, JS
//! `setLogLevel`), remembered across its connections, and how each MCP era
//! carries it.
//!
//! - **2025 era** (`initialize`, MCP 2025-06-18 / 2025-11-25 "Utilities ›
//!   Logging"): one `logging/setLevel` request (rmcp's typed
//!   `SetLevelRequest`) sets the level of the session; a new connection
//!   (reconnect, restart, crash recovery) starts without it, so the host
//!   sends it again before the connection's first `tools/list`
//!   (`supervisor::connector::open_listed`).
//! - **2026-07-28** (stateless, `server/discover`): there is no
//!   `logging/setLevel`; a client asks for log messages per request with
//!   `_meta["io.modelcontextprotocol/logLevel"]` (SEP-2575; the server MUST
//!   NOT send `notifications/message` for a request without it). The host
//!   stamps every request of that era with the level the app chose for the
//!   server, `debug` until it chose one
//!   (`crate::transport::ordered::stamp_log_level`, through the
//!   connection's `InOrder::log_level`), on this connection and the next.
//!
//! Levels are RFC 5424's eight, spelled as MCP does (`debug`, `info`,
//! `notice`, `warning`, `error`, `critical`, `alert`, `emergency`), parsed
//! into rmcp's `LoggingLevel`.

#![allow(deprecated)] // MCP logging: SEP-2577 deprecates it; servers still offer it

use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::{LoggingLevel, ProtocolVersion};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

use crate::error::{ErrorCode, HostError, HostResult};

/// The eight level names, least severe first (RFC 5424 §6.2.1 as MCP spells them).
pub const LEVEL_NAMES: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// One server's chosen level, shared by its `ServerLive` and, through its
/// `ServerTasks`, the client handler of each of its connections (cheap to
/// clone; `None` until the app sets one).
#[derive(Clone, Default)]
pub struct LogLevelCell(Arc<RwLock<Option<LoggingLevel>>>);

impl LogLevelCell {
    /// The level the app set last, if any.
    pub fn get(&self) -> Option<LoggingLevel> {
        *self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers `level` for this server.
    pub fn set(&self, level: LoggingLevel) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }
}

/// `text` as an MCP log level.
///
/// # Errors
/// `invalid_argument` naming `level` and listing the eight names.
pub fn parse_level(text: &str) -> HostResult<LoggingLevel> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(|_| {
        HostError::new(
            ErrorCode::InvalidArgument,
            format!(
                "level: must be one of {} (RFC 5424 levels as MCP spells them), got {text:?}",
                LEVEL_NAMES.join(", ")
            ),
        )
    })
}

/// The name of `level` as MCP spells it (`"warning"`).
pub fn level_name(level: &LoggingLevel) -> String {
    match serde_json::to_value(level) {
        Ok(Value::String(name)) => name,
        _ => format!("{level:?}").to_ascii_lowercase(),
    }
}

/// Whether the connection behind `peer` speaks the stateless 2026-07-28
/// revision (no `logging/setLevel`; levels travel in each request's `_meta`).
pub fn stateless(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version == ProtocolVersion::V_2026_07_28)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_levels_parse_and_keep_their_names() {
        for name in LEVEL_NAMES {
            let level = parse_level(name).unwrap_or_else(|e| panic!("{name}: {}", e.message));
            assert_eq!(level_name(&level), name);
        }
        for bad in ["", "warn", "WARNING", "verbose", "fatal"] {
            let e = parse_level(bad).err().map(|e| (e.code, e.message));
            let (code, message) = e.unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert_eq!(code, ErrorCode::InvalidArgument);
            assert!(
                message.starts_with("level: must be one of debug, info,"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_cell_is_shared_by_its_clones() {
        let cell = LogLevelCell::default();
        let other = cell.clone();
        assert_eq!(other.get(), None);
        cell.set(LoggingLevel::Warning);
        assert_eq!(other.get(), Some(LoggingLevel::Warning));
    }
}
