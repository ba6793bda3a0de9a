//! The loopback redirect listener over real TCP on 127.0.0.1.

use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn port_of(listener: &CallbackListener) -> u16 {
    Url::parse(&listener.redirect_uri)
        .ok()
        .and_then(|u| u.port())
        .unwrap_or_else(|| panic!("no port in {}", listener.redirect_uri))
}

async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"))
}

/// Sends `request` on a new connection and reads the answer until the
/// server closes it.
async fn exchange(port: u16, request: &[u8]) -> String {
    let mut s = connect(port).await;
    s.write_all(request)
        .await
        .unwrap_or_else(|e| panic!("write: {e}"));
    read_all(&mut s).await
}

async fn read_all(s: &mut TcpStream) -> String {
    let mut page = Vec::new();
    // A reset after the answer (unread request bytes) still leaves what was read.
    let _ = s.read_to_end(&mut page).await;
    String::from_utf8_lossy(&page).into_owned()
}

async fn refuses_connections(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).await.is_err()
}

fn short_bounds() -> Bounds {
    Bounds {
        header_read_timeout: Duration::from_millis(300),
        ..BOUNDS
    }
}

#[tokio::test]
async fn answers_the_redirect_and_frees_the_port() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(10)));
    let mut other = connect(port).await;
    other
        .write_all(b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let page = exchange(
        port,
        b"GET /callback?code=abc&state=xyz HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(
        page.starts_with("HTTP/1.1 200") && page.contains("Signed in"),
        "{page}"
    );
    let lower = page.to_ascii_lowercase();
    assert!(
        lower.contains("content-type: text/html; charset=utf-8"),
        "{page}"
    );
    assert!(lower.contains("cache-control: no-store"), "{page}");
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("code=abc&state=xyz"));
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    assert_eq!(
        pairs,
        [
            ("code".into(), "abc".into()),
            ("state".into(), "xyz".into())
        ]
    );
    assert!(
        tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .is_ok(),
        "port still taken"
    );
}

#[tokio::test]
async fn an_idle_connection_does_not_delay_the_redirect() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let started = Instant::now();
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(30)));
    // A browser preconnect: opened first, sends nothing (or half a head).
    let _idle = connect(port).await;
    let mut half = connect(port).await;
    half.write_all(b"GET /callback?code=half")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let page = exchange(
        port,
        b"GET /callback?code=real&state=s1 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("code=real&state=s1"));
    // Well below the 10 s header read timeout the idle connections get.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the redirect took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_oversized_request_is_refused_and_not_delivered() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(10)));
    let pad = "a".repeat(BOUNDS.max_head_bytes + 1);
    // A complete head over the limit.
    let big = format!("GET /callback?code=big&state=s HTTP/1.1\r\nHost: x\r\nX-Pad: {pad}\r\n\r\n");
    let page = exchange(port, big.as_bytes()).await;
    assert!(!page.contains("Signed in"), "{page}");
    assert!(
        page.is_empty() || page.starts_with("HTTP/1.1 431"),
        "{page}"
    );
    // A head that never ends, over the limit.
    let endless = format!("GET /callback?code=endless&state=s HTTP/1.1\r\nX-Pad: {pad}");
    let page = exchange(port, endless.as_bytes()).await;
    assert!(!page.contains("Signed in"), "{page}");
    // A request line over the limit.
    let long_target =
        format!("GET /callback?code=long&state=s&pad={pad} HTTP/1.1\r\nHost: x\r\n\r\n");
    let page = exchange(port, long_target.as_bytes()).await;
    assert!(!page.contains("Signed in"), "{page}");
    assert!(!waiter.is_finished(), "an oversized request was delivered");
    let page = exchange(
        port,
        b"GET /callback?code=ok&state=s HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("code=ok&state=s"));
}

#[tokio::test]
async fn after_the_redirect_the_port_accepts_no_connection() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(10)));
    let mut idle = connect(port).await;
    let page = exchange(
        port,
        b"GET /callback?error=access_denied&state=s HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(
        page.starts_with("HTTP/1.1 200") && page.contains("Sign-in was not completed"),
        "{page}"
    );
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("error=access_denied&state=s"));
    assert!(refuses_connections(port).await, "the port still accepts");
    // The connection still open when the redirect arrived is dropped too.
    let closed = tokio::time::timeout(Duration::from_secs(5), read_all(&mut idle)).await;
    assert_eq!(closed.ok().as_deref(), Some(""));
}

#[tokio::test]
async fn a_sign_in_that_ends_without_a_redirect_frees_the_port() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let err = listener
        .wait(Duration::from_millis(200))
        .await
        .err()
        .unwrap_or_else(|| panic!("no redirect, yet wait succeeded"));
    assert_eq!(err.code, ErrorCode::Timeout);
    assert!(refuses_connections(port).await, "the port still accepts");
    // Dropping the wait (the sign-in was cancelled) frees it too.
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(30)));
    let _idle = connect(port).await;
    waiter.abort();
    let _ = waiter.await;
    assert!(refuses_connections(port).await, "the port still accepts");
}

#[tokio::test]
async fn other_paths_and_methods_are_answered_and_ignored() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.wait(Duration::from_secs(10)));
    let page = exchange(port, b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(page.starts_with("HTTP/1.1 404"), "{page}");
    let page = exchange(
        port,
        b"POST /callback?code=p&state=s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 405"), "{page}");
    assert!(!waiter.is_finished(), "a non-redirect was delivered");
    // Dot segments resolve as a browser would.
    let page = exchange(
        port,
        b"GET /x/../callback?code=dots&state=s HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("code=dots&state=s"));
}

#[tokio::test]
async fn a_connection_that_sends_no_head_is_closed_after_the_header_timeout() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.serve(Duration::from_secs(30), short_bounds()));
    let mut idle = connect(port).await;
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(5), read_all(&mut idle)).await;
    assert!(closed.is_ok(), "the idle connection was never closed");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "closed before the header timeout: {:?}",
        started.elapsed()
    );
    assert!(!waiter.is_finished());
    waiter.abort();
}

#[tokio::test]
async fn more_connections_than_the_bound_wait_for_a_free_slot() {
    let listener = CallbackListener::bind(0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = port_of(&listener);
    let waiter = tokio::spawn(listener.serve(Duration::from_secs(30), short_bounds()));
    let mut idle = Vec::new();
    for _ in 0..BOUNDS.max_connections + 4 {
        idle.push(connect(port).await);
    }
    // Served once the idle ones time out (300 ms here), not dropped.
    let page = exchange(
        port,
        b"GET /callback?code=late&state=s HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let url = waiter
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.query(), Some("code=late&state=s"));
}
