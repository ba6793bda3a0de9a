//! The sending half's contract under attack (a red-team review of the
//! stdio writer): cancels at every poll point, late first polls, close()
//! while sends wait or after a cancel, bad lines answered among sends, a
//! stdin whose flush stalls.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncReadExt, AsyncWrite};

use super::StdioTransport;
use crate::events::HostEvent;
use crate::limits::MAX_LOST_STDIN_BATCHES;
use crate::transport::stdout_monitor::Reporter;

fn ping(id: i64) -> TxJsonRpcMessage<RoleClient> {
    let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
    TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(id))
}

fn line_len(message: &TxJsonRpcMessage<RoleClient>) -> usize {
    serde_json::to_vec(message).expect("serializes").len() + 1
}

fn reporter() -> Reporter {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    std::mem::forget(rx);
    Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None)
}

/// Wire check: (complete lines' ids, torn tail if any). Panics on a complete
/// line that does not parse.
fn parse_wire(wire: &[u8]) -> (Vec<serde_json::Value>, Vec<u8>) {
    let mut ids = Vec::new();
    let mut rest = wire;
    while let Some(i) = rest.iter().position(|b| *b == b'\n') {
        let line = &rest[..i];
        let v: serde_json::Value = serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!(
                "torn line on wire: {e}: {:?}",
                String::from_utf8_lossy(line)
            )
        });
        ids.push(v["id"].clone());
        rest = &rest[i + 1..];
    }
    (ids, rest.to_vec())
}

async fn slow_reader(
    mut server_in: tokio::io::DuplexStream,
    chunk: usize,
) -> tokio::task::JoinHandle<Vec<u8>> {
    tokio::spawn(async move {
        let mut wire = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            match server_in.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => wire.extend_from_slice(&buf[..n]),
            }
            tokio::task::yield_now().await;
        }
        wire
    })
}

// ---------------------------------------------------------------------------
// Attack 1: a send first polled after more than MAX_LOST_STDIN_BATCHES stalls.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn rt_send_first_polled_after_many_stalls_is_not_told_ok() {
    late_polled(MAX_LOST_STDIN_BATCHES as i64 + 1).await;
}

#[tokio::test]
async fn rt_send_first_polled_after_exactly_max_stalls_fails() {
    late_polled(MAX_LOST_STDIN_BATCHES as i64).await;
}

async fn late_polled(stalls: i64) {
    let first = ping(1);
    let (stdin, server_in) = tokio::io::duplex(line_len(&first));
    let (stdout, _server_out) = tokio::io::duplex(1024);
    let mut transport = StdioTransport::new((stdout, stdin), reporter())
        .with_write_timeout(Duration::from_millis(5));
    transport.send(first).await.expect("fits the pipe");
    // Line 2: queued now, its future first polled much later.
    let late = transport.send(ping(2));
    // Line 2 goes with line 3's batch (stalls, none written); then
    // MAX_LOST_STDIN_BATCHES more batches stall.
    for id in 3..(3 + stalls) {
        let err = transport.send(ping(id)).await.expect_err("stalls");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    }
    let late_result = late.await;
    let reader = slow_reader(server_in, 4096).await;
    transport.close().await.unwrap();
    drop(transport);
    let wire = reader.await.unwrap();
    let (ids, tail) = parse_wire(&wire);
    assert!(tail.is_empty());
    let written = ids.contains(&serde_json::json!(2));
    assert!(
        late_result.is_err() || written,
        "send of id 2 told {late_result:?} but the wire holds only ids {ids:?}"
    );
}

// ---------------------------------------------------------------------------
// Attack 2: sends cancelled at every poll point, slow reader, tiny pipe.
// ---------------------------------------------------------------------------

type SendFut = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

struct Outcome {
    ok: BTreeSet<i64>,
    err: BTreeSet<i64>,
    wire_ids: Vec<serde_json::Value>,
    tail: Vec<u8>,
}

/// `n` sends; send i created at round `create[i]`, first polled at round
/// `start[i]` (>= create), dropped after `cancel[i]` polls if still pending.
/// With `finisher`, one live send is made at the end (finishing any batch
/// a cancelled send left) before `close`.
async fn scenario(
    cap: usize,
    chunk: usize,
    create: &[usize],
    start: &[usize],
    cancel: &[Option<usize>],
    finisher: bool,
) -> Outcome {
    let n = create.len();
    let (stdin, server_in) = tokio::io::duplex(cap);
    let (stdout, _server_out) = tokio::io::duplex(1024);
    let mut transport = StdioTransport::new((stdout, stdin), reporter());
    let reader = slow_reader(server_in, chunk).await;
    let mut futs: Vec<Option<SendFut>> = (0..n).map(|_| None).collect();
    let mut created = vec![false; n];
    let mut polls = vec![0usize; n];
    let mut done = vec![false; n];
    let mut ok = BTreeSet::new();
    let mut err = BTreeSet::new();
    let mut round = 0;
    loop {
        for i in 0..n {
            if !created[i] && create[i] <= round {
                created[i] = true;
                futs[i] = Some(Box::pin(transport.send(ping(i as i64))));
            }
        }
        for i in 0..n {
            if done[i] || !created[i] || start[i] > round {
                continue;
            }
            let Some(f) = futs[i].as_mut() else { continue };
            polls[i] += 1;
            match futures::poll!(f) {
                Poll::Ready(r) => {
                    done[i] = true;
                    futs[i] = None;
                    if r.is_ok() {
                        ok.insert(i as i64);
                    } else {
                        err.insert(i as i64);
                    }
                }
                Poll::Pending => {
                    if cancel[i].is_some_and(|c| polls[i] >= c) {
                        futs[i] = None;
                        done[i] = true;
                    }
                }
            }
        }
        tokio::task::yield_now().await;
        round += 1;
        if done.iter().all(|d| *d) {
            break;
        }
        assert!(round < 100_000, "stuck");
    }
    if finisher {
        let id = n as i64;
        match transport.send(ping(id)).await {
            Ok(()) => {
                ok.insert(id);
            }
            Err(_) => {
                err.insert(id);
            }
        }
    }
    transport.close().await.unwrap();
    drop(transport);
    let wire = reader.await.unwrap();
    let (wire_ids, tail) = parse_wire(&wire);
    Outcome {
        ok,
        err,
        wire_ids,
        tail,
    }
}

fn check(o: &Outcome, what: &str) {
    assert!(
        o.tail.is_empty(),
        "{what}: torn tail {:?}",
        String::from_utf8_lossy(&o.tail)
    );
    let ids: Vec<i64> = o.wire_ids.iter().map(|v| v.as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{what}: order {ids:?}");
    for id in &o.ok {
        assert!(ids.contains(id), "{what}: Ok id {id} not on wire {ids:?}");
    }
    for id in &o.err {
        assert!(!ids.contains(id), "{what}: Err id {id} on wire {ids:?}");
    }
}

#[tokio::test]
async fn rt_cancel_at_every_poll_point() {
    let n = 4;
    let mut count = 0;
    for (cap, chunk) in [(16usize, 7usize), (45, 13), (64, 64), (100, 3)] {
        // cancel[i] in {None, 1..=5}
        let choices: Vec<Option<usize>> = std::iter::once(None).chain((1..=5).map(Some)).collect();
        let mut idx = vec![0usize; n];
        loop {
            let cancel: Vec<Option<usize>> = idx.iter().map(|&k| choices[k]).collect();
            for (create, start) in [
                (vec![0, 0, 0, 0], vec![0, 0, 0, 0]),
                (vec![0, 1, 2, 3], vec![0, 1, 2, 3]),
                (vec![0, 0, 0, 0], vec![3, 2, 1, 0]),
                (vec![0, 0, 1, 1], vec![0, 6, 1, 2]),
            ] {
                let o = scenario(cap, chunk, &create, &start, &cancel, true).await;
                check(
                    &o,
                    &format!("cap {cap} chunk {chunk} cancel {cancel:?} create {create:?} start {start:?}"),
                );
                count += 1;
            }
            // next combination
            let mut j = 0;
            while j < n {
                idx[j] += 1;
                if idx[j] < choices.len() {
                    break;
                }
                idx[j] = 0;
                j += 1;
            }
            if j == n {
                break;
            }
        }
    }
    eprintln!("{count} scenarios");
}

/// Same, but no finishing send: close() right after a send cancelled
/// half-way through its batch.
#[tokio::test]
async fn rt_close_after_a_send_cancelled_half_way() {
    let o = scenario(16, 7, &[0], &[0], &[Some(1)], false).await;
    check(&o, "close after cancel");
}

// ---------------------------------------------------------------------------
// Attack 3: close() while sends wait behind a slow write.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn rt_close_while_sends_wait() {
    for late_poll in [false, true] {
        let (stdin, server_in) = tokio::io::duplex(16);
        let (stdout, _server_out) = tokio::io::duplex(1024);
        let mut transport = StdioTransport::new((stdout, stdin), reporter());
        let reader = slow_reader(server_in, 5).await;
        let mut a = Box::pin(transport.send(ping(1)));
        assert!(futures::poll!(&mut a).is_pending());
        let mut b = Box::pin(transport.send(ping(2)));
        if !late_poll {
            assert!(futures::poll!(&mut b).is_pending());
        }
        let c = transport.send(ping(3));
        let writer = transport.writer.clone();
        let mut close = Box::pin(async move {
            writer.lock().await.close().await;
        });
        assert!(futures::poll!(&mut close).is_pending());
        let d = transport.send(ping(4));
        let (ra, rb, (), rc, rd) = tokio::join!(a, b, close, c, d);
        drop(transport);
        let wire = reader.await.unwrap();
        let (ids, tail) = parse_wire(&wire);
        let res = [ra, rb, rc, rd];
        eprintln!(
            "late_poll {late_poll}: {:?} wire {ids:?}",
            res.iter()
                .map(|r| r.as_ref().map_err(|e| e.kind()))
                .collect::<Vec<_>>()
        );
        assert!(tail.is_empty());
        for (k, r) in res.iter().enumerate() {
            let id = serde_json::json!(k as i64 + 1);
            assert_eq!(r.is_ok(), ids.contains(&id), "id {id}: {r:?} wire {ids:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Attack 4: receive() answering bad lines while sends run (slow reader).
// ---------------------------------------------------------------------------

#[tokio::test]
async fn rt_receive_answers_interleaved_with_sends() {
    for (cap, chunk) in [(16usize, 7usize), (40, 11), (200, 200)] {
        let bad_count = 6;
        let stdout: Vec<u8> = b"{\"jsonrpc\":\"2.0\",\"id\":5}\n".repeat(bad_count);
        let (stdin, server_in) = tokio::io::duplex(cap);
        let mut transport = StdioTransport::new((std::io::Cursor::new(stdout), stdin), reporter());
        let reader = slow_reader(server_in, chunk).await;
        let mut sends: Vec<(i64, SendFut)> = Vec::new();
        let mut ok = BTreeSet::new();
        let mut err = BTreeSet::new();
        let mut next_id = 100;
        let mut ended = false;
        for round in 0..2000 {
            if !ended {
                let mut r = Box::pin(transport.receive());
                // cancel the receive after 1..3 polls
                for _ in 0..(round % 3 + 1) {
                    match futures::poll!(&mut r) {
                        Poll::Ready(None) => {
                            ended = true;
                            break;
                        }
                        Poll::Ready(Some(m)) => panic!("unexpected message {m:?}"),
                        Poll::Pending => {}
                    }
                }
            }
            if round % 2 == 0 && next_id < 130 {
                sends.push((next_id, Box::pin(transport.send(ping(next_id)))));
                next_id += 1;
            }
            let mut keep = Vec::new();
            for (id, mut f) in sends.drain(..) {
                match futures::poll!(&mut f) {
                    Poll::Ready(Ok(())) => {
                        ok.insert(id);
                    }
                    Poll::Ready(Err(_)) => {
                        err.insert(id);
                    }
                    Poll::Pending => keep.push((id, f)),
                }
            }
            sends = keep;
            tokio::task::yield_now().await;
            if ended && sends.is_empty() && next_id >= 130 {
                break;
            }
        }
        assert!(ended && sends.is_empty(), "did not finish");
        transport.close().await.unwrap();
        drop(transport);
        let wire = reader.await.unwrap();
        let text = String::from_utf8_lossy(&wire).to_string();
        let (ids, tail) = parse_wire(&wire);
        assert!(tail.is_empty());
        let answers = text.lines().filter(|l| l.contains("-32600")).count();
        assert_eq!(answers, bad_count, "cap {cap}: answers {answers}: {text}");
        let pings: Vec<i64> = ids.iter().filter_map(|v| v.as_i64()).collect();
        assert!(pings.windows(2).all(|w| w[0] < w[1]), "order {pings:?}");
        assert_eq!(
            pings.iter().copied().collect::<BTreeSet<_>>(),
            ok,
            "err {err:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Attack 5: a stdin whose write takes the bytes but whose flush stalls
// (a buffering W). Theoretical for ChildStdin, whose flush is a no-op.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Shared {
    pending: Vec<u8>,
    wire: Vec<u8>,
    block_flush: bool,
}

#[derive(Clone, Default)]
struct BufferingStdin(Arc<std::sync::Mutex<Shared>>);

impl AsyncWrite for BufferingStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.lock().unwrap().pending.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut s = self.0.lock().unwrap();
        if s.block_flush {
            return Poll::Pending;
        }
        let p = std::mem::take(&mut s.pending);
        s.wire.extend_from_slice(&p);
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[tokio::test]
async fn rt_flush_stall_then_recovery() {
    let stdin = BufferingStdin::default();
    stdin.0.lock().unwrap().block_flush = true;
    let mut transport = StdioTransport::new((tokio::io::empty(), stdin.clone()), reporter())
        .with_write_timeout(Duration::from_millis(20));
    let r1 = transport.send(ping(1)).await;
    stdin.0.lock().unwrap().block_flush = false;
    let r2 = transport.send(ping(2)).await;
    let wire = stdin.0.lock().unwrap().wire.clone();
    let (ids, _) = parse_wire(&wire);
    eprintln!("r1 {r1:?} r2 {r2:?} wire {ids:?}");
    assert!(
        r1.is_ok() || !ids.contains(&serde_json::json!(1)),
        "send 1 failed ({r1:?}) but its line was written later: {ids:?}"
    );
}

// ---------------------------------------------------------------------------
// Attack 6: multi-thread stress, sends cancelled by random timeouts, a slow
// reader on a tiny pipe, a live send at the end.
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rt_multithread_random_cancels() {
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for iter in 0..200 {
        let cap = 8 + (rnd() % 120) as usize;
        let chunk = 1 + (rnd() % 40) as usize;
        let (stdin, server_in) = tokio::io::duplex(cap);
        let (stdout, _server_out) = tokio::io::duplex(1024);
        let mut transport = StdioTransport::new((stdout, stdin), reporter());
        let reader = slow_reader(server_in, chunk).await;
        let mut handles = Vec::new();
        for id in 0..20i64 {
            let f = transport.send(ping(id));
            let micros = rnd() % 300;
            let cancel = rnd() % 2 == 0;
            handles.push(tokio::spawn(async move {
                if cancel {
                    match tokio::time::timeout(Duration::from_micros(micros), f).await {
                        Ok(r) => Some((id, r.is_ok())),
                        Err(_) => None,
                    }
                } else {
                    Some((id, f.await.is_ok()))
                }
            }));
            if rnd() % 3 == 0 {
                tokio::task::yield_now().await;
            }
        }
        let mut ok = BTreeSet::new();
        let mut err = BTreeSet::new();
        for h in handles {
            if let Some((id, good)) = h.await.unwrap() {
                if good {
                    ok.insert(id);
                } else {
                    err.insert(id);
                }
            }
        }
        transport.send(ping(99)).await.expect("finisher written");
        ok.insert(99);
        transport.close().await.unwrap();
        drop(transport);
        let wire = reader.await.unwrap();
        let (wire_ids, tail) = parse_wire(&wire);
        check(
            &Outcome {
                ok,
                err,
                wire_ids,
                tail,
            },
            &format!("iter {iter} cap {cap} chunk {chunk}"),
        );
    }
}
