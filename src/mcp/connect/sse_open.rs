//! Opening a legacy HTTP+SSE connection (MCP 2024-11-05 "Transports › HTTP
//! with SSE"; MCP 2025-11-25 "Transports › Backwards Compatibility"): the
//! same HTTP client policy and credentials ([`HttpAuth`]) as Streamable
//! HTTP, the transport of [`crate::transport::sse`], and the `initialize`
//! handshake (2025-era: a legacy server never speaks `server/discover`)
//! bounded by the startup timeout.

use std::time::Duration;

use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connection::{finish, Connection, HttpAuth, Opening};
use super::{http_open, startup};
use crate::auth::dpop::DpopKeys;
use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError};
use crate::mcp::client::{HostClient, Notice};
use crate::mcp::request::RequestFailure;
use crate::mcp::ServerTasks;
use crate::network::Network;
use crate::redact::origin;
use crate::transport::http;
use crate::transport::ordered::{Ordered, Overflow};
use crate::transport::sse::{SseConfig, SseOpenError, SseTransport};

/// Why serving over SSE failed.
enum Failed {
    /// The stream or its `endpoint` event.
    Open(SseOpenError),
    /// The `initialize` handshake.
    Handshake(Box<ClientInitializeError>),
}

/// Connects to the legacy HTTP+SSE server at `cfg.url` with `auth` (as
/// [`http_open::open_http`] does: a DPoP-bound sign-in with proofs, any
/// other token as a bearer token) and runs the `initialize` handshake
/// within `startup_timeout`.
///
/// # Errors
///
/// `redirect_refused` (a cross-origin redirect, or an `endpoint` event on
/// another origin), `protocol_error` (an unusable `endpoint` event, an
/// answer refusing the handshake), [`RequestFailure::Auth`] (a challenge on
/// the GET or a POST), `connect_failed` (the GET failed or gave no event
/// stream, no `endpoint` event in time), `startup_timeout`.
pub(super) async fn open_sse(
    (server_id, dpop_keys, network): (&str, &DpopKeys, &Network),
    cfg: &HttpConfig,
    handler: HostClient,
    notices: mpsc::UnboundedReceiver<Notice>,
    (startup_timeout, auth): (Duration, HttpAuth<'_>),
    tasks: &ServerTasks,
) -> Result<Connection, Opening> {
    let (client, config, redirect_refused) = http::client_for(cfg, network)?;
    let sse = SseConfig {
        url: cfg.url.clone(),
        headers: config.custom_headers,
    };
    let how = (handler, sse, (&tasks.tracker, &tasks.cancel));
    let mut cell = None;
    let served = tokio::time::timeout(startup_timeout, async {
        match auth {
            HttpAuth::OAuth(template) => {
                match http::bound_key(template, dpop_keys, &cfg.url).await? {
                    Some(key) => {
                        let client = http::DpopClient { inner: client, key };
                        let client = http::dpop_auth_client(template, client, &cfg.url).await?;
                        Ok(serve(client, how).await)
                    }
                    None => {
                        let mut authorized = template.clone();
                        authorized.http_client = client;
                        Ok(serve(authorized, how).await)
                    }
                }
            }
            HttpAuth::Bearer(_) | HttpAuth::None => {
                let bearer = match auth {
                    HttpAuth::Bearer(token) => Some(token.to_owned()),
                    _ => None,
                };
                let token: http::BearerCell = std::sync::Arc::new(std::sync::RwLock::new(bearer));
                cell = Some(token.clone());
                let client = http::BearerClient {
                    inner: client,
                    token,
                };
                Ok::<_, HostError>(serve(client, how).await)
            }
        }
    })
    .await;
    let refused = redirect_refused.load(std::sync::atomic::Ordering::Acquire);
    match served {
        Ok(Ok(Ok(service))) => {
            let mut conn = finish(service, notices, (None, None), tasks);
            conn.redirect_refused = Some(redirect_refused);
            conn.bearer = cell;
            conn.endpoint = Some(cfg.url.clone());
            Ok(conn)
        }
        Ok(Err(e)) => Err(e.into()),
        Ok(Ok(Err(_))) if refused => Err(HostError::new(
            ErrorCode::RedirectRefused,
            format!("connect failed: {}", http::CROSS_ORIGIN_REDIRECT),
        )
        .into()),
        Ok(Ok(Err(Failed::Open(e)))) => Err(open_failure(e, cfg, network)),
        Ok(Ok(Err(Failed::Handshake(e)))) => Err(handshake_failure(server_id, &e, cfg, network)),
        Err(_) => Err(HostError::new(
            ErrorCode::StartupTimeout,
            format!(
                "did not answer initialize within {} ms (legacy HTTP+SSE)",
                startup_timeout.as_millis()
            ),
        )
        .into()),
    }
}

/// Serves `handler` over SSE with `client`: the stream, its endpoint, then
/// the `initialize` handshake.
async fn serve<C>(
    client: C,
    (handler, config, tasks): (HostClient, SseConfig, (&TaskTracker, &CancellationToken)),
) -> Result<RunningService<RoleClient, HostClient>, Failed>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static,
{
    let transport = SseTransport::connect(client, config, tasks)
        .await
        .map_err(Failed::Open)?;
    let transport = Ordered::new(transport, handler.clone(), Overflow::DropAnswers);
    handler
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .map_err(|e| Failed::Handshake(Box::new(e)))
}

/// A failed GET of the stream or an unusable `endpoint` event, in the
/// host's words (the origin, never the path or query).
fn open_failure(e: SseOpenError, cfg: &HttpConfig, network: &Network) -> Opening {
    let e = match e {
        SseOpenError::Endpoint(e) => return e.into(),
        SseOpenError::Http(e) => e,
    };
    if let Some(header) = e.auth_challenge() {
        return RequestFailure::Auth(header.to_owned()).into();
    }
    let answered = |what: String| {
        let text = format!(
            "connect failed: {} answered the legacy HTTP+SSE GET with {what}",
            origin(&cfg.url)
        );
        Opening::from(HostError::new(ErrorCode::ConnectFailed, text))
    };
    match &e {
        StreamableHttpError::ServerDoesNotSupportSse => {
            answered("HTTP 405 Method Not Allowed: it serves no event stream there".into())
        }
        StreamableHttpError::UnexpectedContentType(kind) => answered(format!(
            "content type {}, not text/event-stream",
            kind.as_deref().unwrap_or("(none)")
        )),
        StreamableHttpError::Client(inner) if inner.status().is_some() => {
            answered(status_text(inner.status().map_or(0, |s| s.as_u16())))
        }
        StreamableHttpError::HttpStatus(status) => answered(status.to_string()),
        _ => http_open::http_error(&e, &cfg.url, network).into(),
    }
}

/// `HTTP 404 Not Found`.
fn status_text(status: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    format!("HTTP {status}{reason}")
}

/// Why the `initialize` handshake failed: a refusal (`protocol_error`), a
/// challenge on a POST, or the POST's failure (`connect_failed`).
fn handshake_failure(
    server_id: &str,
    e: &ClientInitializeError,
    cfg: &HttpConfig,
    network: &Network,
) -> Opening {
    match (
        startup::initialize_refusal(server_id, e, "initialize"),
        e.auth_challenge(),
    ) {
        (Some(refusal), _) => refusal.into(),
        (None, Some(header)) => RequestFailure::Auth(header.to_owned()).into(),
        (None, None) => http_open::http_error(e, &cfg.url, network).into(),
    }
}
