//! The host-run HTTP `CONNECT` proxy of a sandboxed server whose network
//! is `'loopback'` or `{allowHosts}`: one listener on `127.0.0.1` per
//! server start, the only TCP port Landlock lets the server connect to.
//! The child gets `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` naming it.
//!
//! Each connection sends one `CONNECT host:port HTTP/1.1` head (at most
//! [`SANDBOX_PROXY_MAX_HEAD_BYTES`], within
//! [`SANDBOX_PROXY_HANDSHAKE_TIMEOUT_MS`]); a host the profile allows is
//! resolved and connected by the host and the bytes are relayed both ways;
//! any other host is answered `403` (the first refusals are `warn` logs
//! naming the host), any other method `405` (plain `http://` requests
//! through the proxy are not forwarded: clients tunnel with `CONNECT`). A
//! name other than a loopback one that resolves to a loopback or
//! unspecified address (IPv4-mapped IPv6 ones included) is refused too
//! (DNS rebinding), and in `'loopback'` mode only loopback addresses are
//! connected, whatever a `*.localhost` name resolves to. At most
//! [`SANDBOX_PROXY_MAX_CONNECTIONS`] connections at once; the listener and
//! every relay end when the server's process is gone.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::config::sandbox::{is_loopback_name, SandboxNetwork};
use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    SANDBOX_PROXY_HANDSHAKE_TIMEOUT_MS, SANDBOX_PROXY_MAX_CONNECTIONS, SANDBOX_PROXY_MAX_HEAD_BYTES,
};

/// Refusals logged per proxy (later ones are only answered `403`).
const LOGGED_REFUSALS: usize = 16;

/// A running proxy; dropping it stops the listener and its relays.
pub struct SandboxProxy {
    /// The loopback port it listens on.
    pub port: u16,
    _stop: DropGuard,
}

/// What every connection of one proxy shares.
struct Shared {
    network: SandboxNetwork,
    server_id: String,
    sink: Arc<dyn EventSink>,
    refusals: AtomicUsize,
    stop: CancellationToken,
}

/// Starts the proxy of server `server_id` for `network`.
///
/// # Errors
/// The listener could not be bound on `127.0.0.1`.
pub fn start(
    network: SandboxNetwork,
    server_id: &str,
    sink: Arc<dyn EventSink>,
) -> std::io::Result<SandboxProxy> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let listener = TcpListener::from_std(listener)?;
    let stop = CancellationToken::new();
    let shared = Arc::new(Shared {
        network,
        server_id: server_id.to_owned(),
        sink,
        refusals: AtomicUsize::new(0),
        stop: stop.clone(),
    });
    tokio::spawn(accept_loop(listener, shared));
    Ok(SandboxProxy {
        port,
        _stop: stop.drop_guard(),
    })
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let slots = Arc::new(Semaphore::new(SANDBOX_PROXY_MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            _ = shared.stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((client, _)) = accepted else { continue };
        // Past the bound: closed at once (dropped), unanswered.
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = shared.stop.cancelled() => {}
                _ = serve(client, &shared) => {}
            }
            drop(slot);
        });
    }
}

/// One client connection: its head, the check, the tunnel.
async fn serve(mut client: TcpStream, shared: &Shared) {
    let within = Duration::from_millis(SANDBOX_PROXY_HANDSHAKE_TIMEOUT_MS);
    let Ok(Some((head, early))) = tokio::time::timeout(within, read_head(&mut client)).await else {
        let _ = client
            .write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
            .await;
        return;
    };
    let Some((host, port)) = connect_target(&head) else {
        let _ = client
            .write_all(
                b"HTTP/1.1 405 Method Not Allowed\r\nAllow: CONNECT\r\nConnection: close\r\n\r\n",
            )
            .await;
        return;
    };
    if !shared.network.allows(&host, port) {
        shared.refused(&host, port, "not allowed by the sandbox profile");
        let _ = client
            .write_all(b"HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n")
            .await;
        return;
    }
    let upstream = tokio::time::timeout(within, connect(&shared.network, &host, port)).await;
    let mut upstream = match upstream {
        Ok(Ok(s)) => s,
        Ok(Err(why)) => {
            shared.refused(&host, port, &why);
            let _ = client
                .write_all(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
                .await;
            return;
        }
        Err(_) => {
            let _ = client
                .write_all(b"HTTP/1.1 504 Gateway Timeout\r\nConnection: close\r\n\r\n")
                .await;
            return;
        }
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
        || upstream.write_all(&early).await.is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

impl Shared {
    fn refused(&self, host: &str, port: u16, why: &str) {
        if self.refusals.fetch_add(1, Ordering::Relaxed) >= LOGGED_REFUSALS {
            return;
        }
        let text = format!("sandbox proxy refused CONNECT {host}:{port}: {why}");
        let record = log(LogLevel::Warn, "host.sandbox", Some(&self.server_id), text);
        self.sink.send(record);
    }
}

/// Reads the request head (through the blank line); `None` past the
/// bound or at end of stream. Returns the head and the bytes after it.
async fn read_head(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let early = buf.split_off(end + 4);
            return Some((String::from_utf8_lossy(&buf).into_owned(), early));
        }
        if buf.len() > SANDBOX_PROXY_MAX_HEAD_BYTES {
            return None;
        }
    }
}

/// The `host` and `port` of a `CONNECT host:port HTTP/1.x` head (an IPv6
/// host keeps its brackets); `None` for any other request.
fn connect_target(head: &str) -> Option<(String, u16)> {
    let line = head.lines().next()?;
    let mut parts = line.split_ascii_whitespace();
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if !method.eq_ignore_ascii_case("CONNECT") || !version.starts_with("HTTP/1.") {
        return None;
    }
    let (host, port) = target.rsplit_once(':')?;
    let port = port.parse::<u16>().ok().filter(|p| *p > 0)?;
    let bracketed = host.starts_with('[') && host.ends_with(']');
    if host.is_empty() || (host.contains(':') && !bracketed) {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// Whether the proxy of `network` may connect to `ip`, an address `host`
/// resolved to: in `'loopback'` mode only a loopback address; otherwise
/// a name that is not a loopback one never reaches a loopback or
/// unspecified address. IPv4-mapped IPv6 addresses count as IPv4.
fn may_reach(network: &SandboxNetwork, host: &str, ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    match network {
        SandboxNetwork::Loopback => ip.is_loopback(),
        _ => is_loopback_name(host) || !(ip.is_loopback() || ip.is_unspecified()),
    }
}

/// Resolves `host` and connects to its first address that answers and
/// [`may_reach`] allows.
async fn connect(network: &SandboxNetwork, host: &str, port: u16) -> Result<TcpStream, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    let usable = |a: &&SocketAddr| may_reach(network, host, a.ip());
    let mut last = format!("{host} resolves to no address it may reach");
    for addr in addrs.iter().filter(usable) {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("cannot connect to {host}:{port}: {e}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connect_heads_name_a_target() {
        let t = |h: &str| connect_target(h);
        assert_eq!(
            t("CONNECT Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(("example.com".into(), 443))
        );
        assert_eq!(
            t("CONNECT [::1]:80 HTTP/1.1\r\n\r\n"),
            Some(("[::1]".into(), 80))
        );
        for bad in [
            "GET http://x.test/ HTTP/1.1\r\n\r\n",
            "CONNECT x.test HTTP/1.1\r\n\r\n",
            "CONNECT x.test:0 HTTP/1.1\r\n\r\n",
            "CONNECT ::1:80 HTTP/1.1\r\n\r\n",
            "CONNECT x.test:80 SPDY/3\r\n\r\n",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }

    #[test]
    fn rebinding_answers_never_reach_loopback_even_ipv4_mapped() {
        let hosts = SandboxNetwork::Hosts(Vec::new());
        let ip = |t: &str| t.parse::<IpAddr>().unwrap();
        for local in [
            "127.0.0.1",
            "::1",
            "0.0.0.0",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:0:0",
        ] {
            assert!(!may_reach(&hosts, "evil.test", ip(local)), "{local}");
        }
        assert!(may_reach(&hosts, "evil.test", ip("93.184.215.14")));
        assert!(may_reach(&hosts, "evil.test", ip("::ffff:93.184.215.14")));
        assert!(may_reach(&hosts, "localhost", ip("127.0.0.1")));
    }

    #[test]
    fn loopback_mode_connects_only_loopback_addresses() {
        let loopback = SandboxNetwork::Loopback;
        let ip = |t: &str| t.parse::<IpAddr>().unwrap();
        for local in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            assert!(may_reach(&loopback, "x.localhost", ip(local)), "{local}");
        }
        for remote in [
            "93.184.215.14",
            "::ffff:93.184.215.14",
            "2606:2800::1",
            "0.0.0.0",
            "::",
        ] {
            assert!(!may_reach(&loopback, "x.localhost", ip(remote)), "{remote}");
            assert!(!may_reach(&loopback, "localhost", ip(remote)), "{remote}");
        }
    }
}
