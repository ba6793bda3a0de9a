//! The loopback redirect listener of a host-run sign-in (RFC 8252 §7.3:
//! loopback interface redirection). It listens on 127.0.0.1, answers the
//! browser's redirect to [`CALLBACK_PATH`] with a short page, hands the full
//! callback URL over and closes; any other path gets 404 and is ignored.
//!
//! HTTP/1.1 is served by `hyper` (one task per connection, so an idle
//! browser preconnect never delays the redirect on another connection).
//! Each connection is bounded: its request head (request line and headers)
//! must arrive within 10 s and fit in 16 KiB (else it is closed, or answered
//! 431), no body is read, and it serves one request. At most 16 connections
//! are served at once; more wait in the accept queue. When
//! [`CallbackListener::wait`] returns or is dropped (the sign-in ended), the
//! listener is closed (the port is free again) and every open connection is
//! dropped.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use url::Url;

use crate::error::{ErrorCode, HostError, HostResult};

/// Path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// Page for a redirect that carries a result (`code` or no `error`).
const SIGNED_IN_PAGE: &str = "<!doctype html><title>Signed in</title><p>Signed in. You can close this window and return to the app.";
/// Page for a redirect that carries `error` (consent refused, …).
const NOT_COMPLETED_PAGE: &str = "<!doctype html><title>Sign-in not completed</title><p>Sign-in was not completed. You can close this window.";

/// How much one connection may take.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// Time from accepting a connection until its whole request head arrived.
    header_read_timeout: Duration,
    /// Largest request head (request line and headers), in bytes; hyper's
    /// minimum read buffer is 8 KiB.
    max_head_bytes: usize,
    /// Most header fields in one request.
    max_headers: usize,
    /// Most connections served at the same time.
    max_connections: usize,
}

/// The bounds of [`CallbackListener::wait`].
const BOUNDS: Bounds = Bounds {
    header_read_timeout: Duration::from_secs(10),
    max_head_bytes: 16 * 1024,
    max_headers: 64,
    max_connections: 16,
};

/// A bound listener; `redirect_uri` is what gets registered and used.
pub struct CallbackListener {
    listener: TcpListener,
    /// `http://127.0.0.1:<port>/callback`.
    pub redirect_uri: String,
}

impl CallbackListener {
    /// Binds 127.0.0.1:`port` (0 = a random free port).
    ///
    /// # Errors
    ///
    /// `internal` when the port cannot be bound.
    pub async fn bind(port: u16) -> HostResult<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot listen on 127.0.0.1:{port} for the OAuth redirect: {e}"),
            )
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| HostError::new(ErrorCode::Internal, e.to_string()))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// Waits up to `timeout` for the redirect; returns the full callback URL
    /// (with `code`, `state`, `iss` or `error`) once the browser got its page.
    /// The listener is closed when this returns or is dropped, so the port is
    /// free again.
    ///
    /// # Errors
    ///
    /// `timeout` when no redirect arrived in time; `internal` when the
    /// redirect URI does not parse (a bug).
    pub async fn wait(self, timeout: Duration) -> HostResult<Url> {
        self.serve(timeout, BOUNDS).await
    }

    async fn serve(self, timeout: Duration, bounds: Bounds) -> HostResult<Url> {
        let base = Url::parse(&self.redirect_uri)
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("redirect URI: {e}")))?;
        // Dropped on return: aborts every connection still open.
        let mut connections = JoinSet::new();
        let (redirects, mut arrived) = mpsc::channel::<Url>(1);
        let accept_loop = async {
            loop {
                tokio::select! {
                    Some(url) = arrived.recv() => return url,
                    accepted = self.listener.accept(), if connections.len() < bounds.max_connections => {
                        if let Ok((stream, _)) = accepted {
                            connections.spawn(serve_connection(stream, base.clone(), bounds, redirects.clone()));
                        }
                    }
                    Some(_) = connections.join_next() => {}
                }
            }
        };
        let outcome = tokio::time::timeout(timeout, accept_loop).await;
        drop(self.listener);
        outcome.map_err(|_| {
            HostError::new(
                ErrorCode::Timeout,
                format!("no OAuth redirect arrived within {} s", timeout.as_secs()),
            )
        })
    }
}

/// Serves one connection (one request, then closed). A redirect it answered
/// is handed over after the response was written, so the browser gets its
/// page before the listener shuts down.
async fn serve_connection(
    stream: TcpStream,
    base: Url,
    bounds: Bounds,
    redirects: mpsc::Sender<Url>,
) {
    let redirect: Arc<Mutex<Option<Url>>> = Arc::default();
    let slot = Arc::clone(&redirect);
    let service = service_fn(move |request: Request<Incoming>| {
        let response = respond(&request, &base, &slot);
        async move { Ok::<_, Infallible>(response) }
    });
    // Errors (timeouts, oversized or malformed heads, resets) only end this
    // connection; hyper has answered what it could (408/431/400).
    let _ = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_read_timeout)
        .max_buf_size(bounds.max_head_bytes)
        .max_header_size(bounds.max_head_bytes)
        .max_headers(bounds.max_headers)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    let url = redirect
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(url) = url {
        // Full: another connection's redirect already won.
        let _ = redirects.try_send(url);
    }
}

/// The answer to one request: the redirect page (and the URL kept in
/// `redirect`) for `GET /callback…`, 404 for another path, 405 for
/// another method, 400 for a target that does not resolve.
fn respond(
    request: &Request<Incoming>,
    base: &Url,
    redirect: &Mutex<Option<Url>>,
) -> Response<String> {
    if request.method() != Method::GET {
        let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return response;
    }
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let Ok(url) = base.join(target) else {
        return empty(StatusCode::BAD_REQUEST);
    };
    if url.path() != CALLBACK_PATH {
        return empty(StatusCode::NOT_FOUND);
    }
    let denied = url.query_pairs().any(|(k, _)| k == "error");
    let page = if denied {
        NOT_COMPLETED_PAGE
    } else {
        SIGNED_IN_PAGE
    };
    redirect
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert(url);
    let mut response = Response::new(page.to_owned());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn empty(status: StatusCode) -> Response<String> {
    let mut response = Response::new(String::new());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests;
