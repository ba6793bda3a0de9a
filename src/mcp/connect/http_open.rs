//! Opening a Streamable HTTP connection (MCP 2025-11-25 / 2026-07-28
//! "Transports › Streamable HTTP"): the HTTP client policy, the credentials
//! ([`HttpAuth`]), the handshake bounded by the startup timeout, and a
//! failure's readable cause.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::client::ClientHandler;
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::sync::mpsc;

use super::connection::{finish, Connection, HttpAuth, Opening};
use super::{http_answer, startup};
use crate::auth::dpop::DpopKeys;
use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError};
use crate::mcp::client::{HostClient, Notice};
use crate::mcp::request::RequestFailure;
use crate::mcp::ServerTasks;
use crate::network::Network;
use crate::transport::http;
use crate::transport::ordered::{Ordered, Overflow};
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
/// `startup_timeout`; [`Opening::ProbeUnusable`] (`auto` only);
/// [`Opening::Legacy`] (the POST was answered 400, 404 or 405 without a
/// JSON-RPC error).
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
    let diagnosis = (client.clone(), initialize_body(&handler));
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
        Ok(Err(e)) => {
            let failure = handshake_failure((server_id, method), &e, auto, (cfg, network));
            Err(with_answer(failure, cfg, auth, diagnosis).await)
        }
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
    let transport = Ordered::new(transport, handler.clone(), Overflow::DropAnswers);
    tokio::time::timeout(
        startup_timeout,
        handler.serve_with_lifecycle(transport, lifecycle),
    )
    .await
}

/// Why the handshake failed: the answer of a legacy HTTP+SSE server
/// ([`Opening::Legacy`]), an unusable `server/discover` answer (`auto`
/// only), a refusal (`protocol_error`), a challenge, or `connect_failed`.
fn handshake_failure(
    (server_id, method): (&str, &str),
    e: &ClientInitializeError,
    auto: bool,
    (cfg, network): (&HttpConfig, &Network),
) -> Opening {
    if let Some(status) = legacy_status(e) {
        return Opening::Legacy(status);
    }
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

/// The JSON of the `initialize` request `handler` sends (2025 era), for
/// [`http_answer::ask`].
fn initialize_body(handler: &HostClient) -> Vec<u8> {
    let mut params = serde_json::to_value(handler.get_info()).unwrap_or_default();
    params["protocolVersion"] = ProtocolVersion::LATEST_WITH_INITIALIZE.to_string().into();
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params
    });
    serde_json::to_vec(&request).unwrap_or_default()
}

/// A `connect_failed` `failure` said again with what the endpoint answered
/// (see [`http_answer`]), when it answered over HTTP with something that is
/// not MCP; any other failure, and any failure of a host-run sign-in's
/// connection, unchanged.
async fn with_answer(
    failure: Opening,
    cfg: &HttpConfig,
    auth: HttpAuth<'_>,
    (client, body): (reqwest::Client, Vec<u8>),
) -> Opening {
    let Opening::Failed(RequestFailure::Failed(e)) = &failure else {
        return failure;
    };
    if e.code != ErrorCode::ConnectFailed {
        return failure;
    }
    let bearer = match auth {
        HttpAuth::Bearer(token) => Some(token),
        HttpAuth::None => None,
        // rmcp's `AuthClient` holds the token: asked without it, the answer
        // would be a 401, not what the handshake got.
        HttpAuth::OAuth(_) => return failure,
    };
    match http_answer::ask(&client, cfg, bearer, body).await {
        Some(answer) => {
            let text = http_answer::message(&cfg.url, &answer);
            HostError::new(ErrorCode::ConnectFailed, text).into()
        }
        None => failure,
    }
}

/// The `connect_failed` of a server whose Streamable HTTP POST was answered
/// `status` (400, 404 or 405) and whose legacy HTTP+SSE fallback failed
/// with `fallback` (`connect_failed` too): what the endpoint answered the
/// POST (see [`with_answer`]), then what the fallback got.
pub(super) async fn refused_post(
    (cfg, network): (&HttpConfig, &Network),
    handler: &HostClient,
    auth: HttpAuth<'_>,
    status: u16,
    fallback: HostError,
) -> Opening {
    let Ok((client, _, _)) = http::client_for(cfg, network) else {
        return fallback.into();
    };
    let origin = crate::redact::origin(&cfg.url);
    let text = format!("connect failed: {origin} answered the MCP POST with HTTP {status}");
    let posted = HostError::new(ErrorCode::ConnectFailed, text).into();
    let said = with_answer(posted, cfg, auth, (client, initialize_body(handler))).await;
    let Opening::Failed(RequestFailure::Failed(said)) = said else {
        return said;
    };
    let then = fallback.message.strip_prefix("connect failed: ");
    let then = then.unwrap_or(&fallback.message);
    let text = format!("{}; and {then}", said.message);
    HostError::new(ErrorCode::ConnectFailed, text).into()
}

/// Maps a failed handshake exchange to `connect_failed`: what happened at
/// which origin (and proxy; see [`Network::describe`]) and what to check,
/// in the host's words (never rmcp's or reqwest's, which name the URL's
/// path and query).
pub(super) fn http_error(
    e: &(dyn std::error::Error + 'static),
    url: &url::Url,
    network: &Network,
) -> HostError {
    let texts: Vec<String> = crate::network::error_text::causes(e)
        .iter()
        .map(|c| c.to_string())
        .collect();
    let any = |needle: &str| texts.iter().any(|t| t.contains(needle));
    let fallback = if any("connection closed before message completed") {
        "the connection closed without an answer"
    } else if any("error decoding response body") || any("unexpected end of") {
        "the answer broke off"
    } else {
        "the request failed"
    };
    let what = network.describe(e, url, fallback);
    let hint = match () {
        () if what.starts_with("connection refused") => "; is the server running on that port?",
        () if what.starts_with("DNS lookup failed") => "; check the URL's host name",
        () if what.starts_with("TLS failure") => {
            "; check the server's certificate (or the caCertificates option)"
        }
        () if what.starts_with("timed out") => "; the server or the network did not answer",
        () => "",
    };
    HostError::new(
        ErrorCode::ConnectFailed,
        format!("connect failed: {what} during the MCP handshake{hint}"),
    )
}

/// The HTTP status (400, 404 or 405) that refused the POST of the first
/// request of a Streamable HTTP handshake without a JSON-RPC error: the
/// answer of a legacy HTTP+SSE server (MCP 2025-11-25 "Transports ›
/// Backwards Compatibility"); `None` for any other failure.
fn legacy_status(e: &ClientInitializeError) -> Option<u16> {
    let e = match e {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => fallback.as_ref(),
        e => e,
    };
    let ClientInitializeError::TransportError { error, .. } = e else {
        return None;
    };
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(err) = cur {
        if let Some(StreamableHttpError::UnexpectedServerResponse(text)) =
            err.downcast_ref::<crate::transport::sse::HttpError>()
        {
            let status: u16 = text.strip_prefix("HTTP ")?.get(..3)?.parse().ok()?;
            return matches!(status, 400 | 404 | 405).then_some(status);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use rmcp::transport::DynamicTransportError;

    use super::*;

    fn refused(e: crate::transport::sse::HttpError) -> ClientInitializeError {
        let error =
            DynamicTransportError::from_parts("t", std::any::TypeId::of::<()>(), Box::new(e));
        ClientInitializeError::TransportError {
            error,
            context: "send initialize request".into(),
        }
    }

    fn answered(text: &str) -> ClientInitializeError {
        refused(StreamableHttpError::UnexpectedServerResponse(
            text.to_owned().into(),
        ))
    }

    #[test]
    fn a_post_refused_400_404_or_405_without_json_rpc_is_a_legacy_server() {
        for status in ["400 Bad Request", "404 Not Found", "405 Method Not Allowed"] {
            let e = answered(&format!("HTTP {status}: <pre>Cannot POST /sse</pre>"));
            assert_eq!(legacy_status(&e), status[..3].parse().ok(), "{status}");
        }
        let after_probe = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(ClientInitializeError::Cancelled),
            fallback: Box::new(answered("HTTP 405 Method Not Allowed: ")),
        };
        assert_eq!(legacy_status(&after_probe), Some(405));
    }

    #[test]
    fn other_refusals_are_not() {
        for text in [
            "HTTP 401 Unauthorized: x",
            "HTTP 403 Forbidden: x",
            "HTTP 410 Gone: x",
            "HTTP 500 x",
        ] {
            assert_eq!(legacy_status(&answered(text)), None, "{text}");
        }
        assert_eq!(
            legacy_status(&refused(StreamableHttpError::UnexpectedEndOfStream)),
            None
        );
        let rpc =
            ClientInitializeError::JsonRpcError(rmcp::model::ErrorData::invalid_request("x", None));
        assert_eq!(
            legacy_status(&rpc),
            None,
            "a JSON-RPC error is a Streamable HTTP server's answer"
        );
    }
}
