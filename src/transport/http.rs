//! Streamable HTTP client policy (MCP 2025-11-25 "Transports › Streamable
//! HTTP"; Agent Plugins "Connect remote servers").
//!
//! - One pooled `reqwest` client per server (keep-alive: no new TCP
//!   connection per POST; idle connections dropped after
//!   [`HTTP_POOL_IDLE_MS`], before a typical server closes them).
//! - Configured headers go only to the configured origin: a redirect to
//!   another origin is refused with an error (`redirect_refused`), never
//!   followed; same-origin 307/308 redirects are followed up to
//!   [`MAX_HTTP_REDIRECTS`] hops.
//! - Header values are marked sensitive so they never appear in `Debug` output.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

mod dpop;

pub use dpop::{bound_key, dpop_auth_client, DpopClient};

use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{HTTP_POOL_IDLE_MS, MAX_HTTP_REDIRECTS};
use crate::network::Network;

/// Text of the error raised when a redirect leaves the configured origin.
pub const CROSS_ORIGIN_REDIRECT: &str =
    "redirect to another origin refused (configured headers are never sent to another origin)";

/// Set by the redirect policy when it refused a redirect to another origin
/// (rmcp's error chain does not carry the policy's error text through).
pub type RedirectRefused = Arc<AtomicBool>;

/// The pooled client (with the redirect policy and `network`'s proxy route
/// and trust roots), the transport config for
/// `cfg` (endpoint and configured headers, values marked sensitive) and the
/// flag that tells whether a cross-origin redirect was refused. Callers wrap
/// the client (in [`BearerClient`] or rmcp's `AuthClient`) for credentials.
///
/// # Errors
/// `internal` when the TLS stack cannot start; `invalid_entry` when a header
/// cannot be encoded, which validated config never has (stage 2 checks names
/// with the same `HeaderName` parser and forbids control characters in
/// values).
pub fn client_for(
    cfg: &HttpConfig,
    network: &Network,
) -> HostResult<(
    reqwest::Client,
    StreamableHttpClientTransportConfig,
    RedirectRefused,
)> {
    let refused = RedirectRefused::default();
    let client = Network::build(
        network
            .client_builder()
            .redirect(redirect_policy(refused.clone()))
            .pool_idle_timeout(Duration::from_millis(HTTP_POOL_IDLE_MS)),
    )?;
    let mut headers = HashMap::new();
    for (name, value) in &cfg.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            HostError::new(
                ErrorCode::InvalidEntry,
                format!("header {name:?}: invalid name"),
            )
        })?;
        let mut value = HeaderValue::from_bytes(value.as_bytes()).map_err(|_| {
            HostError::new(
                ErrorCode::InvalidEntry,
                format!("header {name:?}: invalid value"),
            )
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(Arc::<str>::from(cfg.url.as_str()))
        .custom_headers(headers);
    Ok((client, config, refused))
}

fn redirect_policy(refused: RedirectRefused) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            refused.store(true, Ordering::Release);
            attempt.error(CROSS_ORIGIN_REDIRECT)
        } else if attempt.previous().len() > MAX_HTTP_REDIRECTS {
            attempt.error(format!("more than {MAX_HTTP_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The bearer token of a Streamable HTTP connection, replaceable while the
/// connection is open (a step-up token from AHP `authenticate` is used by
/// the next request, without reconnecting). A secret: never logged.
pub type BearerCell = Arc<std::sync::RwLock<Option<String>>>;

/// The pooled client plus a [`BearerCell`]: every request carries the
/// cell's current token as `Authorization: Bearer …`.
#[derive(Clone)]
pub struct BearerClient {
    /// The pooled client with the redirect policy.
    pub inner: reqwest::Client,
    /// Current token (`None`: no `Authorization` header).
    pub token: BearerCell,
}

impl BearerClient {
    fn current(&self) -> Option<String> {
        self.token
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

type StreamResult = Result<
    futures::stream::BoxStream<
        'static,
        Result<sse_stream::Sse, rmcp::transport::streamable_http_client::SseError>,
    >,
    rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>,
>;
type PostResult = Result<
    rmcp::transport::streamable_http_client::StreamableHttpPostResponse,
    rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>,
>;

impl rmcp::transport::streamable_http_client::StreamableHttpClient for BearerClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.inner
            .post_message(uri, message, session_id, self.current(), custom_headers)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: rmcp::transport::streamable_http_client::StreamableHttpResponseLimits,
    ) -> PostResult {
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                self.current(),
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>>
    {
        self.inner
            .delete_session(uri, session_id, self.current(), custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> StreamResult {
        self.inner
            .get_stream(
                uri,
                session_id,
                last_event_id,
                self.current(),
                custom_headers,
            )
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> StreamResult {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                self.current(),
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn cfg(headers: &[(&str, &str)]) -> HttpConfig {
        HttpConfig {
            url: url::Url::parse("https://tools.example.com/mcp").unwrap(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            transport: Default::default(),
        }
    }

    #[tokio::test]
    async fn configured_headers_are_sent_as_sensitive_values_and_no_bearer() {
        let (_client, config, refused) = client_for(
            &cfg(&[("X-Api-Key", "s3cr3t"), ("X-B", "b")]),
            &Network::default(),
        )
        .unwrap();
        assert_eq!(&*config.uri, "https://tools.example.com/mcp");
        assert_eq!(config.auth_header, None);
        let key = &config.custom_headers[&HeaderName::from_static("x-api-key")];
        assert_eq!(key.as_bytes(), b"s3cr3t");
        assert!(key.is_sensitive());
        assert!(!format!("{:?}", config.custom_headers).contains("s3cr3t"));
        assert_eq!(config.custom_headers.len(), 2);
        assert!(!refused.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn a_header_the_http_stack_rejects_is_invalid_entry() {
        let err = client_for(&cfg(&[("Bad Name", "v")]), &Network::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidEntry);
        let err = client_for(&cfg(&[("X-A", "a\nb")]), &Network::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidEntry);
        assert!(!err.message.contains("a\nb"), "{}", err.message);
    }
}
