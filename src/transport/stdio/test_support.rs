//! Test support of the stdio transport: an in-memory stdout read in
//! chunks, and one run of a transport over it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::StdioTransport;
use crate::events::HostEvent;
use crate::transport::stdout_monitor::Discarded;
use crate::transport::stdout_monitor::Reporter;

/// An in-memory reader handing out at most `chunk` bytes per read.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    chunk: usize,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self
            .chunk
            .min(self.data.len() - self.at)
            .min(buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Runs a transport over `stdout` (read `chunk` bytes at a time, lines of
/// at most `max_line` bytes): the messages received, the discarded ids,
/// the warnings and what it wrote to stdin.
pub(super) async fn receive_all(
    stdout: &[u8],
    chunk: usize,
    max_line: usize,
) -> (
    Vec<ServerJsonRpcMessage>,
    Vec<Discarded>,
    Vec<String>,
    String,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let (ids, mut got) = tokio::sync::broadcast::channel(64);
    let (stdin, mut server_in) = tokio::io::duplex(1 << 16);
    let read = Chunked {
        data: stdout.to_vec(),
        at: 0,
        chunk,
    };
    let reporter = Reporter::new("srv".into(), Arc::new(tx), max_line, Some(ids));
    let mut transport = StdioTransport::new((read, stdin), reporter);
    let mut messages = Vec::new();
    while let Some(m) = transport.receive().await {
        messages.push(m);
    }
    transport.close().await.unwrap();
    let mut written = String::new();
    server_in.read_to_string(&mut written).await.unwrap();
    let mut discarded = Vec::new();
    while let Ok(d) = got.try_recv() {
        discarded.push(d);
    }
    let mut warnings = Vec::new();
    while let Ok(HostEvent::Log(r)) = rx.try_recv() {
        assert_eq!(r.server_id.as_deref(), Some("srv"), "{}", r.message);
        warnings.push(r.message);
    }
    (messages, discarded, warnings, written)
}
