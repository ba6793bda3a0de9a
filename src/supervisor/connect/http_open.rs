//! Opening a Streamable HTTP connection (MCP 2025-11-25 / 2026-07-28
//! "Transports › Streamable HTTP"): the HTTP client policy, the credentials
//! ([`HttpAuth`]), the handshake bounded by the startup timeout, and a
//! failure's readable cause.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::sync::mpsc;

use super::{finish, startup, strip_type_names, Connection, HttpAuth, Opening};
use crate::auth::dpop::DpopKeys;
use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError};
use crate::network::Network;
use crate::supervisor::client::{HostClient, Notice};
use crate::supervisor::request::RequestFailure;
use crate::supervisor::ServerTasks;
use crate::transport::http;
use crate::transport::ordered::Ordered;
use crate::transport::stream_watch::{StreamWatch, Watched};

/// Connects to `cfg.url` with `auth` and runs the `lifecycle` handshake
/// within `startup_timeout`. A host-run sign-in whose token is DPoP-bound
/// (RFC 9449) presents it with proofs of the server's key from `dpop_keys`
/// ([`http::DpopClient`]); any other token as a bearer token.
///
/// # Errors
///
/// `redirect_refused`, `protocol_error` (an answer refusing the
/// handshake), [`RequestFailure::Auth`] (a challenge), `connect_failed`,
/// `startup_timeout`; [`Opening::ProbeUnusable`] (`auto` only).
pub(super) async fn open_http(
    (server_id, dpop_keys, network): (&str, &DpopKeys, &Network),
    cfg: &HttpConfig,
    handler: HostClient,
    notices: mpsc::UnboundedReceiver<Notice>,
    (startup_timeout, auth, lifecycle): (Duration, HttpAuth<'_>, ClientLifecycleMode),
    tasks: &ServerTasks,
) -> Result<Connection, Opening> {
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let method = startup::handshake_method(&lifecycle);
    let (client, config, redirect_refused) = http::client_for(cfg, network)?;
    let mut cell = None;
    let watch = StreamWatch::new();
    let how = (handler, config, lifecycle, startup_timeout, watch.clone());
    let served = match auth {
        // A DPoP-bound sign-in (RFC 9449): proofs of the server's key on every request.
        HttpAuth::OAuth(template) => match http::bound_key(template, dpop_keys, &cfg.url).await? {
            Some(key) => {
                let client = http::DpopClient { inner: client, key };
                let client = http::dpop_auth_client(template, client, &cfg.url).await?;
                serve(client, how).await
            }
            None => {
                let mut authorized = template.clone();
                authorized.http_client = client;
                serve(authorized, how).await
            }
        },
        HttpAuth::Bearer(_) | HttpAuth::None => {
            let bearer = match auth {
                HttpAuth::Bearer(token) => Some(token.to_owned()),
                _ => None,
            };
            let token: http::BearerCell = Arc::new(std::sync::RwLock::new(bearer));
            cell = Some(token.clone());
            let client = http::BearerClient {
                inner: client,
                token,
            };
            serve(client, how).await
        }
    };
    match served {
        Ok(Ok(service)) => {
            // `ready` waits for the session's GET stream (`ServerConnection::settled`).
            let mut conn = finish(service, notices, (None, None), tasks);
            conn.redirect_refused = Some(redirect_refused);
            conn.bearer = cell;
            conn.endpoint = Some(cfg.url.clone());
            conn.stream_watch = Some(watch);
            Ok(conn)
        }
        Ok(Err(_)) if redirect_refused.load(std::sync::atomic::Ordering::Acquire) => {
            Err(HostError::new(
                ErrorCode::RedirectRefused,
                format!("connect failed: {}", http::CROSS_ORIGIN_REDIRECT),
            )
            .into())
        }
        Ok(Err(e)) => Err(handshake_failure(
            (server_id, method),
            &e,
            auto,
            (cfg, network),
        )),
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

/// Serves `handler` over Streamable HTTP with `client` (watched by
/// `watch`, see [`StreamWatch`]), the `lifecycle` handshake bounded by
/// `startup_timeout`.
async fn serve<C: StreamableHttpClient + Sync>(
    client: C,
    (handler, config, lifecycle, startup_timeout, watch): (
        HostClient,
        StreamableHttpClientTransportConfig,
        ClientLifecycleMode,
        Duration,
        Arc<StreamWatch>,
    ),
) -> Result<
    Result<RunningService<RoleClient, HostClient>, ClientInitializeError>,
    tokio::time::error::Elapsed,
> {
    let client = Watched {
        inner: client,
        watch,
    };
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let transport = Ordered::new(transport, handler.clone());
    tokio::time::timeout(
        startup_timeout,
        handler.serve_with_lifecycle(transport, lifecycle),
    )
    .await
}

/// Why the handshake failed: an unusable `server/discover` answer (`auto`
/// only), a refusal (`protocol_error`), a challenge, or `connect_failed`.
fn handshake_failure(
    (server_id, method): (&str, &str),
    e: &ClientInitializeError,
    auto: bool,
    (cfg, network): (&HttpConfig, &Network),
) -> Opening {
    if let Some(why) = startup::probe_unusable(e).filter(|_| auto) {
        return Opening::ProbeUnusable(why);
    }
    match (
        startup::initialize_refusal(server_id, e, method),
        e.auth_challenge(),
    ) {
        (Some(refusal), _) => refusal.into(),
        (None, Some(header)) => RequestFailure::Auth(header.to_owned()).into(),
        (None, None) => http_error(e, &cfg.url, network).into(),
    }
}

/// Maps a connect failure to `connect_failed` with a readable message: what
/// happened at which origin (and proxy; see [`Network::describe`]), then
/// the error chain, minus the Rust type names rmcp puts in brackets.
fn http_error(
    e: &(dyn std::error::Error + 'static),
    url: &url::Url,
    network: &Network,
) -> HostError {
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
        format!(
            "connect failed: {}; {}",
            network.describe(e, url, "request failed"),
            chain.join(": ")
        ),
    )
}
