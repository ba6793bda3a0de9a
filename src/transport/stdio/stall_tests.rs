//! A server that stops reading its stdin: sends are abandoned after the
//! write timeout; a torn line fails the connection, an unstarted one only
//! its own send.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::StdioTransport;
use crate::events::HostEvent;
use crate::transport::stdout_monitor::Reporter;

/// The write timeout of these tests (ms): only when a stuck send gives up.
const TIMEOUT: Duration = Duration::from_millis(50);

fn ping(id: i64) -> TxJsonRpcMessage<RoleClient> {
    let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
    TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(id))
}

fn line_len(message: &TxJsonRpcMessage<RoleClient>) -> usize {
    serde_json::to_vec(message).expect("serializes").len() + 1
}

/// A transport whose stdin (never read) holds `capacity` bytes; stdout
/// stays open and silent.
fn deaf(
    capacity: usize,
) -> (
    StdioTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>,
    [tokio::io::DuplexStream; 2],
    tokio::sync::mpsc::UnboundedReceiver<HostEvent>,
) {
    let (stdin, server_in) = tokio::io::duplex(capacity);
    let (stdout, server_out) = tokio::io::duplex(1024);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let reporter = Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None);
    let transport = StdioTransport::new((stdout, stdin), reporter).with_write_timeout(TIMEOUT);
    (transport, [server_in, server_out], rx)
}

#[tokio::test]
async fn a_torn_line_fails_the_send_and_the_connection() {
    let (mut transport, _server, mut logs) = deaf(16);
    let stalled = transport.stalled();
    let err = transport.send(ping(1)).await.expect_err("abandoned");
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    assert!(*stalled.borrow(), "the stream is torn");
    // The receiving side ends; later sends fail at once.
    assert!(transport.receive().await.is_none());
    assert!(transport.send(ping(2)).await.is_err());
    let Ok(HostEvent::Log(warning)) = logs.try_recv() else {
        panic!("a warning")
    };
    assert_eq!(warning.target, "host.stdio");
    assert!(warning.message.contains("stopped reading its stdin"));
    assert!(warning
        .message
        .ends_with("its line is torn, so the connection fails"));
}

#[tokio::test]
async fn a_line_not_started_fails_only_its_send() {
    let first = ping(1);
    let (mut transport, _server, mut logs) = deaf(line_len(&first));
    let stalled = transport.stalled();
    transport.send(first).await.expect("fits the pipe");
    let err = transport.send(ping(2)).await.expect_err("abandoned");
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    assert!(!*stalled.borrow(), "nothing of it was written");
    let Ok(HostEvent::Log(warning)) = logs.try_recv() else {
        panic!("a warning")
    };
    assert!(warning
        .message
        .ends_with("it was dropped (none of it was written)"));
}

#[tokio::test]
async fn a_stalled_batch_fails_every_send_in_it_with_one_warning() {
    let (mut transport, _server, mut logs) = deaf(16);
    // Queued together (as rmcp calls `send`), so written as one batch.
    let sends = vec![transport.send(ping(1)), transport.send(ping(2))];
    for result in futures::future::join_all(sends).await {
        let err = result.expect_err("abandoned");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    }
    assert!(*transport.stalled().borrow(), "the stream is torn");
    let Ok(HostEvent::Log(warning)) = logs.try_recv() else {
        panic!("a warning")
    };
    assert!(warning
        .message
        .ends_with("its line is torn, so the connection fails"));
    assert!(logs.try_recv().is_err(), "one warning for the batch");
}

#[tokio::test]
async fn a_send_first_polled_after_two_stalls_fails_as_its_batch_did() {
    let first = ping(1);
    let (mut transport, _server, _logs) = deaf(line_len(&first));
    transport.send(first).await.expect("fits the pipe");
    let second = transport.send(ping(2));
    // Line 2 goes with line 3's batch, which stalls; then line 4's does.
    assert!(transport.send(ping(3)).await.is_err());
    assert!(transport.send(ping(4)).await.is_err());
    let err = second.await.expect_err("line 2 was never written");
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
}

#[tokio::test]
async fn a_send_given_up_behind_a_stalled_batch_is_never_written_later() {
    let first = ping(1);
    let (mut transport, [mut server_in, _out], _logs) = deaf(line_len(&first));
    transport.send(first).await.expect("fits the pipe");
    let mut third = Box::pin(transport.send(ping(3)));
    // The first poll takes the writer and line 3 alone, which stalls.
    assert!(futures::poll!(&mut third).is_pending());
    // Line 4 is queued behind the stalled batch and waits for the writer.
    let fourth = transport.send(ping(4));
    let (third, fourth) = futures::join!(third, fourth);
    assert!(third.is_err() && fourth.is_err(), "{third:?} {fourth:?}");
    // The server reads again: only what comes after is written.
    let reader = tokio::spawn(async move {
        let mut wire = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut server_in, &mut wire)
            .await
            .map(|_| wire)
    });
    transport.send(ping(5)).await.expect("written");
    transport.close().await.expect("closed");
    drop(transport);
    let wire = reader.await.expect("joined").expect("read");
    let ids: Vec<serde_json::Value> = wire
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("whole line")["id"].clone())
        .collect();
    assert_eq!(ids, [serde_json::json!(1), serde_json::json!(5)]);
}
