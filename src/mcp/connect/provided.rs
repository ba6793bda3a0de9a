//! The app's dynamic headers at a connect (`config::headers`): asked within
//! [`HEADER_PROVIDER_TIMEOUT_MS`], laid over the configured headers for
//! this connection, their values kept as secrets while it lives.

use std::time::Duration;

use crate::config::{with_provided_headers, HeaderReason, HttpConfig};
use crate::error::{ErrorCode, HostError};
use crate::limits::HEADER_PROVIDER_TIMEOUT_MS;
use crate::mcp::Opener;
use crate::redact::{header_secrets, shown_server_url, KeptSecret};

/// `cfg` with the provider's headers for this connect of `server_id`, and
/// their kept values; `cfg` as it is without a provider or an answer.
///
/// # Errors
/// `connect_failed`: the provider did not answer within
/// [`HEADER_PROVIDER_TIMEOUT_MS`], failed (its error is not shown: it
/// could hold a value), or gave a header this host refuses (named).
pub(super) async fn provided_config(
    opener: &Opener,
    server_id: &str,
    cfg: &HttpConfig,
    reason: HeaderReason,
) -> Result<(HttpConfig, Vec<KeptSecret>), HostError> {
    let Some(provider) = opener.header_provider() else {
        return Ok((cfg.clone(), Vec::new()));
    };
    let failed =
        |why: String| HostError::new(ErrorCode::ConnectFailed, format!("headers provider {why}"));
    let call = provider.headers(server_id.to_owned(), shown_server_url(&cfg.url), reason);
    let wait = Duration::from_millis(HEADER_PROVIDER_TIMEOUT_MS);
    let answer = tokio::time::timeout(wait, call)
        .await
        .map_err(|_| {
            failed(format!(
                "did not answer within {HEADER_PROVIDER_TIMEOUT_MS} ms"
            ))
        })?
        .map_err(|_| failed("failed (its error is not shown)".to_owned()))?;
    let Some(provided) = answer else {
        return Ok((cfg.clone(), Vec::new()));
    };
    let values: Vec<String> = provided.values().flat_map(|v| header_secrets(v)).collect();
    let kept = KeptSecret::all(values.iter().map(String::as_str));
    let merged = with_provided_headers(server_id, cfg, &provided)
        .map_err(|m| failed(format!("gave a header this host refuses: {m}")))?;
    Ok((merged, kept))
}
