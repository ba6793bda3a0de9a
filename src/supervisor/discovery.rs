//! Tool discovery: `tools/list` following every cursor (MCP 2025-11-25
//! "Server Features › Tools › Listing Tools", "Utilities › Pagination"),
//! bounded by [`MAX_LIST_PAGES`], [`MAX_CURSOR_BYTES`] and
//! [`MAX_TOOLS_PER_SERVER`], stopping on a repeated cursor.

use std::collections::HashSet;

use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::{Peer, RoleClient};

use crate::error::{ErrorCode, HostError};
use crate::limits::{MAX_CURSOR_BYTES, MAX_LIST_PAGES, MAX_TOOLS_PER_SERVER};

/// What discovery found, plus warnings about pages it did not follow.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Tools in server order.
    pub tools: Vec<Tool>,
    /// Human-readable notes (repeated cursor, page cap, tool cap).
    pub warnings: Vec<String>,
}

/// Why discovery failed.
#[derive(Debug)]
pub enum ListFailure {
    /// The server answered 401/403 with this `WWW-Authenticate` challenge.
    Auth(String),
    /// Any other failure (`protocol_error`).
    Failed(HostError),
}

/// Lists every tool of the server behind `peer`.
///
/// Errors: [`ListFailure::Auth`] on an authorization challenge, otherwise
/// `protocol_error` when a `tools/list` request fails.
pub async fn list_tools(peer: &Peer<RoleClient>) -> Result<Discovered, ListFailure> {
    let mut found = Discovered::default();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let result = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| match e.auth_challenge() {
                Some(header) => ListFailure::Auth(header.to_owned()),
                None => ListFailure::Failed(HostError::new(ErrorCode::ProtocolError, format!("tools/list failed: {e}"))),
            })?;
        found.tools.extend(result.tools);
        if found.tools.len() > MAX_TOOLS_PER_SERVER {
            found.tools.truncate(MAX_TOOLS_PER_SERVER);
            found.warnings.push(format!("more than {MAX_TOOLS_PER_SERVER} tools; the rest are ignored"));
            return Ok(found);
        }
        match result.next_cursor {
            None => return Ok(found),
            Some(next) if next.len() > MAX_CURSOR_BYTES => {
                found.warnings.push(format!("tools/list cursor longer than {MAX_CURSOR_BYTES} bytes; stopped after page {}", page + 1));
                return Ok(found);
            }
            Some(next) if !seen.insert(next.clone()) => {
                found.warnings.push(format!("tools/list returned a cursor it already returned; stopped after page {}", page + 1));
                return Ok(found);
            }
            Some(next) => cursor = Some(next),
        }
    }
    found.warnings.push(format!("tools/list has more than {MAX_LIST_PAGES} pages; the rest are ignored"));
    Ok(found)
}
