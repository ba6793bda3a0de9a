//! Streamable HTTP client policy (MCP 2025-11-25 "Transports › Streamable
//! HTTP"; Agent Plugins "Connect remote servers").
//!
//! - One pooled `reqwest` client per server (keep-alive: no new TCP
//!   connection per POST).
//! - Configured headers go only to the configured origin: a redirect to
//!   another origin is refused with an error (`redirect_refused`), never
//!   followed; same-origin 307/308 redirects are followed up to 10 hops.
//! - Header values are marked sensitive so they never appear in `Debug` output.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError, HostResult};

/// Redirect hops followed for one request (same origin only).
pub const MAX_REDIRECTS: usize = 10;

/// Text of the error raised when a redirect leaves the configured origin.
pub const CROSS_ORIGIN_REDIRECT: &str =
    "redirect to another origin refused (configured headers are never sent to another origin)";

/// Set by the redirect policy when it refused a redirect to another origin
/// (rmcp's error chain does not carry the policy's error text through).
pub type RedirectRefused = Arc<AtomicBool>;

/// Builds the rmcp Streamable HTTP transport for `cfg`, and the flag that
/// tells whether a cross-origin redirect was refused.
///
/// Errors: `invalid_entry` when a header cannot be encoded (validation
/// normally catches this first), `internal` when the TLS stack cannot start.
/// `bearer` is sent as `Authorization: Bearer …` (never logged).
pub fn transport(
    cfg: &HttpConfig,
    bearer: Option<&str>,
) -> HostResult<(
    StreamableHttpClientTransport<reqwest::Client>,
    RedirectRefused,
)> {
    let (client, config, refused) = client_and_config(cfg, bearer)?;
    Ok((
        StreamableHttpClientTransport::with_client(client, config),
        refused,
    ))
}

/// The pooled client (with the redirect policy) and the transport config for
/// `cfg`, for callers that wrap the client (e.g. in rmcp's `AuthClient`).
pub fn client_and_config(
    cfg: &HttpConfig,
    bearer: Option<&str>,
) -> HostResult<(
    reqwest::Client,
    StreamableHttpClientTransportConfig,
    RedirectRefused,
)> {
    let refused = RedirectRefused::default();
    let client = reqwest::Client::builder()
        .redirect(redirect_policy(refused.clone()))
        .build()
        .map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot build HTTP client: {e}"),
            )
        })?;
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
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(Arc::<str>::from(cfg.url.as_str()))
            .custom_headers(headers);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
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
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
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
