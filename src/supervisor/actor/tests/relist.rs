//! What a re-list logs: each diagnostic once, not once per listing.

use super::*;

#[tokio::test]
async fn a_relist_logs_only_the_diagnostics_the_last_listing_did_not_have() {
    let (shared, mut events) = host(Limits::default());
    let fake = Fake::new([Attempt::Ready]);
    fake.lists_job.store(true, Ordering::SeqCst);
    let handle = spawn(&shared, &fake);
    let mut logs = Vec::new();
    assert_eq!(kind(&next_state(&mut events, &mut logs).await), "ready");
    let about_job = |logs: &[String]| logs.iter().filter(|m| m.contains("\"job\"")).count();
    let _ = fake.conn(0).notices.send(Notice::ToolsChanged);
    listed(&fake, 2).await;
    // The re-list's own record comes after its publication: wait for it.
    let relisted = |logs: &[String]| logs.iter().any(|m| m.starts_with("tools/list_changed"));
    collect_logs_until(&mut events, &mut logs, relisted).await;
    assert_eq!(
        about_job(&logs),
        1,
        "the warning once, not per listing: {logs:?}"
    );
    fake.lists_job.store(false, Ordering::SeqCst);
    let _ = fake.conn(0).notices.send(Notice::ToolsChanged);
    listed(&fake, 3).await;
    fake.lists_job.store(true, Ordering::SeqCst);
    let _ = fake.conn(0).notices.send(Notice::ToolsChanged);
    listed(&fake, 4).await;
    let relists = |logs: &[String]| {
        logs.iter()
            .filter(|m| m.starts_with("tools/list_changed"))
            .count()
            == 3
    };
    collect_logs_until(&mut events, &mut logs, relists).await;
    assert_eq!(
        about_job(&logs),
        2,
        "back after a listing without it: {logs:?}"
    );
    handle.shutdown().await;
}

/// Collects log messages into `logs` until `done(logs)` (failing after 10 s).
async fn collect_logs_until(
    events: &mut mpsc::UnboundedReceiver<HostEvent>,
    logs: &mut Vec<String>,
    done: impl Fn(&[String]) -> bool,
) {
    let wait = async {
        while !done(logs) {
            match events.recv().await {
                Some(HostEvent::Log(record)) => logs.push(record.message),
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("logs so far: {logs:?}"));
}
