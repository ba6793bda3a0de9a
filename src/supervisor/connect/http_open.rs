//! Opening a Streamable HTTP connection (MCP 2025-11-25 / 2026-07-28
//! "Transports › Streamable HTTP"): the HTTP client policy, the credentials
//! ([`HttpAuth`]), the handshake bounded by the startup timeout, and a
//! failure's readable cause.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::sync::mpsc;

use super::{finish, startup, strip_type_names, Connection, HttpAuth, Opening};
use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError};
use crate::supervisor::client::{HostClient, Notice};
use crate::supervisor::request::RequestFailure;
use crate::supervisor::ServerTasks;
use crate::transport::http;

/// Connects to `cfg.url` with `auth` and runs the `lifecycle` handshake
/// within `startup_timeout`.
///
/// # Errors
///
/// `redirect_refused`, `protocol_error` (an answer refusing the
/// handshake), [`RequestFailure::Auth`] (a challenge), `connect_failed`,
/// `startup_timeout`; [`Opening::ProbeUnusable`] (`auto` only).
pub(super) async fn open_http(
    server_id: &str,
    cfg: &HttpConfig,
    handler: HostClient,
    notices: mpsc::UnboundedReceiver<Notice>,
    (startup_timeout, auth, lifecycle): (Duration, HttpAuth<'_>, ClientLifecycleMode),
    tasks: &ServerTasks,
) -> Result<Connection, Opening> {
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let bearer = match auth {
        HttpAuth::Bearer(token) => Some(token.to_owned()),
        _ => None,
    };
    let (client, config, redirect_refused) = http::client_for(cfg)?;
    let mut cell = None;
    let served = match auth {
        HttpAuth::OAuth(template) => {
            let mut authorized = template.clone();
            authorized.http_client = client;
            let client = authorized;
            tokio::time::timeout(
                startup_timeout,
                handler.serve_with_lifecycle(
                    StreamableHttpClientTransport::with_client(client, config),
                    lifecycle,
                ),
            )
            .await
        }
        _ => {
            let token: http::BearerCell = Arc::new(std::sync::RwLock::new(bearer));
            cell = Some(token.clone());
            let client = http::BearerClient {
                inner: client,
                token,
            };
            tokio::time::timeout(
                startup_timeout,
                handler.serve_with_lifecycle(
                    StreamableHttpClientTransport::with_client(client, config),
                    lifecycle,
                ),
            )
            .await
        }
    };
    match served {
        Ok(Ok(service)) => {
            let mut conn = finish(service, notices, (None, None), tasks);
            conn.redirect_refused = Some(redirect_refused);
            conn.bearer = cell;
            conn.endpoint = Some(cfg.url.clone());
            Ok(conn)
        }
        Ok(Err(_)) if redirect_refused.load(std::sync::atomic::Ordering::Acquire) => {
            Err(HostError::new(
                ErrorCode::RedirectRefused,
                format!("connect failed: {}", http::CROSS_ORIGIN_REDIRECT),
            )
            .into())
        }
        Ok(Err(e)) => Err(handshake_failure(server_id, &e, auto)),
        Err(_) => Err(HostError::new(
            ErrorCode::StartupTimeout,
            format!(
                "did not answer initialize within {} ms",
                startup_timeout.as_millis()
            ),
        )
        .into()),
    }
}

/// Why the handshake failed: an unusable `server/discover` answer (`auto`
/// only), a refusal (`protocol_error`), a challenge, or `connect_failed`.
fn handshake_failure(
    server_id: &str,
    e: &rmcp::service::ClientInitializeError,
    auto: bool,
) -> Opening {
    if let Some(why) = startup::probe_unusable(e).filter(|_| auto) {
        return Opening::ProbeUnusable(why);
    }
    match (
        startup::initialize_refusal(server_id, e),
        e.auth_challenge(),
    ) {
        (Some(refusal), _) => refusal.into(),
        (None, Some(header)) => RequestFailure::Auth(header.to_owned()).into(),
        (None, None) => http_error(e).into(),
    }
}

/// Maps a connect failure to `connect_failed` with a readable message: the
/// error chain, minus the Rust type names rmcp puts in brackets.
fn http_error(e: &(dyn std::error::Error + 'static)) -> HostError {
    let mut chain: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        let text = strip_type_names(&err.to_string());
        if !chain.iter().any(|c| c.contains(&text)) {
            chain.push(text);
        }
        cur = err.source();
    }
    HostError::new(
        ErrorCode::ConnectFailed,
        format!("connect failed: {}", chain.join(": ")),
    )
}
