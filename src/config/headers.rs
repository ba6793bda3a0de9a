//! Dynamic headers (issue 30, item 4): a provider the app gives (JS option
//! `headers`) that the host asks at each connect of a Streamable HTTP
//! server, and again once after a 401, as Claude Code's `headersHelper` and
//! Codex's `env_http_headers` do. What it answers goes over the configured
//! headers for that connection only, checked by the same rules, and its
//! values are secrets.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::model::{HttpConfig, ServerConfig};
use super::validate::validate_entry_value;

/// Why the host asks the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderReason {
    /// A connection is being opened.
    Connect,
    /// The server answered the last attempt with 401 (once per start).
    Unauthorized,
}

impl HeaderReason {
    /// `connect` or `unauthorized`, as JS sees it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Unauthorized => "unauthorized",
        }
    }
}

/// The app's provider of headers for Streamable HTTP servers.
pub trait HeaderProvider: Send + Sync {
    /// The headers to send to server `server_id` at `url` (its configured
    /// URL, query and fragment removed) for this connection: `Ok(None)`
    /// when it has none for that server. `Err` is the app's failure, never
    /// shown (it could hold a value).
    fn headers(
        &self,
        server_id: String,
        url: String,
        reason: HeaderReason,
    ) -> BoxFuture<'static, Result<Option<BTreeMap<String, String>>, String>>;
}

/// `cfg` with `provided` over its configured headers (a provided name
/// replaces a configured one whatever its case), checked by the rules of a
/// configured `streamable-http` entry.
///
/// # Errors
/// The message of the broken rule, naming the header (never its value):
/// `server "api": field "headers.X": value must not contain CR, LF, …`.
pub fn with_provided_headers(
    server_id: &str,
    cfg: &HttpConfig,
    provided: &BTreeMap<String, String>,
) -> Result<HttpConfig, String> {
    let mut headers: Map<String, Value> = cfg
        .headers
        .iter()
        .filter(|(name, _)| !provided.keys().any(|p| p.eq_ignore_ascii_case(name)))
        .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
        .collect();
    for (name, value) in provided {
        headers.insert(name.clone(), Value::from(value.as_str()));
    }
    let kind = cfg.transport.type_name();
    let entry = json!({"type": kind, "url": cfg.url.as_str(), "headers": headers});
    match validate_entry_value(server_id, &entry)? {
        ServerConfig::StreamableHttp(http) => Ok(http),
        ServerConfig::Stdio(_) => Err(format!(
            "server {server_id:?}: not a Streamable HTTP server"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::HttpTransport;

    fn cfg() -> HttpConfig {
        HttpConfig {
            url: url::Url::parse("https://mcp.example/mcp?k=1").unwrap(),
            headers: [
                ("authorization".to_owned(), "Bearer old".to_owned()),
                ("X-Keep".to_owned(), "k".to_owned()),
            ]
            .into(),
            transport: HttpTransport::Sse,
        }
    }

    #[test]
    fn provided_headers_replace_configured_ones_whatever_the_case() {
        let provided = [("Authorization".to_owned(), "Bearer new-123".to_owned())].into();
        let merged = with_provided_headers("api", &cfg(), &provided).unwrap();
        let names: Vec<(&str, &str)> = merged
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            names,
            [("Authorization", "Bearer new-123"), ("X-Keep", "k")]
        );
        assert_eq!(merged.url.as_str(), "https://mcp.example/mcp?k=1");
        assert_eq!(
            merged.transport,
            HttpTransport::Sse,
            "the entry's transport is kept"
        );
    }

    #[test]
    fn a_broken_provided_header_names_the_header_not_the_value() {
        let provided = [("X-Token".to_owned(), "s3cr3t\r\nInjected: 1".to_owned())].into();
        let err = with_provided_headers("api", &cfg(), &provided).unwrap_err();
        assert!(
            err.starts_with("server \"api\": field \"headers.X-Token\""),
            "{err}"
        );
        assert!(!err.contains("s3cr3t"), "{err}");
        let reserved = [("Mcp-Session-Id".to_owned(), "x".to_owned())].into();
        assert!(with_provided_headers("api", &cfg(), &reserved).is_err());
    }
}
