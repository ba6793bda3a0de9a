//! The loopback redirect listener of a host-run sign-in (RFC 8252 §7.3:
//! loopback interface redirection). It listens on 127.0.0.1, answers the
//! browser's redirect with a short page, hands the full callback URL over
//! and closes; any other request gets 404 and is ignored.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::error::{ErrorCode, HostError, HostResult};

/// Path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";
/// Largest request head read from the browser.
const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// A bound listener; `redirect_uri` is what gets registered and used.
pub struct CallbackListener {
    listener: TcpListener,
    /// `http://127.0.0.1:<port>/callback`.
    pub redirect_uri: String,
}

impl CallbackListener {
    /// Binds 127.0.0.1:`port` (0 = a random free port).
    ///
    /// Errors: `internal` when the port cannot be bound.
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
    /// (with `code`, `state`, `iss` or `error`). The listener is closed when
    /// this returns, so the port is free again.
    ///
    /// Errors: `timeout`.
    pub async fn wait(self, timeout: Duration) -> HostResult<url::Url> {
        let base = self.redirect_uri.clone();
        tokio::time::timeout(timeout, async move {
            loop {
                let Ok((mut stream, _)) = self.listener.accept().await else { continue };
                let Some(target) = read_target(&mut stream).await else { continue };
                let Ok(url) = url::Url::parse(&base).and_then(|b| b.join(&target)) else { continue };
                if url.path() != CALLBACK_PATH {
                    let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
                    continue;
                }
                let denied = url.query_pairs().any(|(k, _)| k == "error");
                let body = if denied {
                    "<!doctype html><title>Sign-in not completed</title><p>Sign-in was not completed. You can close this window."
                } else {
                    "<!doctype html><title>Signed in</title><p>Signed in. You can close this window and return to the app."
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
                return url;
            }
        })
        .await
        .map_err(|_| HostError::new(ErrorCode::Timeout, format!("no OAuth redirect arrived within {} s", timeout.as_secs())))
    }
}

/// Reads the request head and returns the request target of a `GET`.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST_BYTES {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_the_redirect_and_frees_the_port() {
        let listener = CallbackListener::bind(0)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let redirect = listener.redirect_uri.clone();
        let port: u16 = redirect
            .rsplit(':')
            .next()
            .and_then(|p| p.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let waiter = tokio::spawn(listener.wait(Duration::from_secs(10)));
        let mut other = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        other
            .write_all(b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        s.write_all(b"GET /callback?code=abc&state=xyz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut page = String::new();
        s.read_to_string(&mut page)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            page.starts_with("HTTP/1.1 200") && page.contains("Signed in"),
            "{page}"
        );
        let url = waiter
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.query(), Some("code=abc&state=xyz"));
        assert!(
            tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .is_ok(),
            "port still taken"
        );
    }
}
