//! MCP Apps (`mcp_apps`): a server's `mcp://` channel is open exactly while
//! its customization shows it. The sink records, as each state action is
//! emitted (under the session lock), the channel the action carries and the
//! one the registry holds at that moment: they must agree on every action.

use std::sync::{OnceLock, Weak};

use ahp_types::actions::{ActionOrigin, SessionMcpServerStartRequestedAction};

use super::*;

/// What one emitted `session/mcpServerStateChanged` (or client start echo)
/// said, and what the registry held as it left.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    kind: &'static str,
    carried: Option<String>,
    registry: Option<String>,
}

/// A sink that records [`Seen`] and forwards every event.
struct Recorder {
    shared: OnceLock<Weak<HostShared>>,
    seen: Mutex<Vec<Seen>>,
    events: mpsc::UnboundedSender<HostEvent>,
}

impl crate::events::EventSink for Recorder {
    fn send(&self, event: HostEvent) {
        if let HostEvent::Action(envelope) = &event {
            let registry = || {
                let shared = self.shared.get().and_then(Weak::upgrade);
                shared.and_then(|s| s.publisher().app_channels().uri_of(ID))
            };
            let seen = match &envelope.action {
                StateAction::SessionMcpServerStateChanged(a) => Some(Seen {
                    kind: kind(&a.state),
                    carried: a.channel.clone(),
                    registry: registry(),
                }),
                StateAction::SessionMcpServerStartRequested(_) => Some(Seen {
                    kind: "startRequested",
                    carried: None,
                    registry: registry(),
                }),
                _ => None,
            };
            lock(&self.seen).extend(seen);
        }
        let _ = self.events.send(event);
    }
}

/// [`host`] with `mcp_apps` and the [`Recorder`] sink.
fn apps_host(
    limits: Limits,
    mcp_apps: bool,
) -> (
    Arc<HostShared>,
    Arc<Recorder>,
    mpsc::UnboundedReceiver<HostEvent>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let recorder = Arc::new(Recorder {
        shared: OnceLock::new(),
        seen: Mutex::default(),
        events: tx,
    });
    let shared = host_with(limits, recorder.clone(), mcp_apps);
    let _ = recorder.shared.set(Arc::downgrade(&shared));
    (shared, recorder, rx)
}

fn seen(recorder: &Recorder) -> Vec<Seen> {
    lock(&recorder.seen).clone()
}

#[tokio::test]
async fn the_channel_is_open_exactly_while_ready_and_new_after_a_restart() {
    let limits = Limits {
        restart_backoff_ms: 10,
        ..Limits::default()
    };
    let (shared, recorder, mut events) = apps_host(limits, true);
    let fake = Fake::new([Attempt::Ready, Attempt::Ready, Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    let first = shared
        .publisher()
        .app_channels()
        .uri_of(ID)
        .unwrap_or_default();
    assert!(first.starts_with("mcp:/test/srv/"), "{first}");
    let _ = fake.conn(0).crash.send(Some("exited".to_owned()));
    assert_eq!(kinds(&mut events, 3).await, ["error", "starting", "ready"]);
    let second = shared
        .publisher()
        .app_channels()
        .uri_of(ID)
        .unwrap_or_default();
    assert_ne!(first, second, "a restart gives a new URI");
    // A client's start request: its echo clears the channel, so the channel
    // is closed before it; the restart opens a third one.
    let start = StateAction::SessionMcpServerStartRequested(SessionMcpServerStartRequestedAction {
        id: ID.to_owned(),
    });
    let origin: ActionOrigin = serde_json::from_value(json!({"clientId": "c", "clientSeq": 1}))
        .unwrap_or_else(|e| panic!("{e}"));
    shared.publisher().echo_client(start, origin, |_, _| Ok(()));
    handle.send(Command::Start);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    let third = shared
        .publisher()
        .app_channels()
        .uri_of(ID)
        .unwrap_or_default();
    handle.send(Command::Stop);
    assert_eq!(kinds(&mut events, 1).await, ["stopped"]);
    assert_eq!(shared.publisher().app_channels().uri_of(ID), None);
    let at = |kind, uri: &str| Seen {
        kind,
        carried: (!uri.is_empty()).then(|| uri.to_owned()),
        registry: (!uri.is_empty()).then(|| uri.to_owned()),
    };
    assert_eq!(
        seen(&recorder),
        [
            at("ready", &first),
            at("error", ""),
            at("starting", ""),
            at("ready", &second),
            at("startRequested", ""),
            at("ready", &third),
            at("stopped", ""),
        ]
    );
    assert!(second != third && first != third);
    handle.shutdown().await;
}

#[tokio::test]
async fn a_failed_connection_closes_the_channel_before_the_error_state() {
    let (shared, recorder, mut events) = apps_host(Limits::default(), true);
    let fake = Fake::new([Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    let error = HostError::new(ErrorCode::RedirectRefused, "refused");
    handle.send(Command::ConnectionFailed {
        error: Box::new(error),
        challenge: None,
    });
    assert_eq!(kinds(&mut events, 1).await, ["error"]);
    let last = seen(&recorder).pop();
    assert_eq!(
        last.map(|s| (s.carried, s.registry)),
        Some((None, None)),
        "closed before the error state left"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn dispose_and_shutdown_leave_no_channel() {
    let (shared, _recorder, mut events) = apps_host(Limits::default(), true);
    let fake = Fake::new([Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    assert!(shared.publisher().app_channels().uri_of(ID).is_some());
    shared.disposed().cancel();
    tokio::time::timeout(Duration::from_secs(5), handle.tasks_ended())
        .await
        .unwrap_or_else(|_| panic!("tasks still running after dispose"));
    assert_eq!(
        shared.publisher().app_channels().uri_of(ID),
        None,
        "closed on dispose"
    );

    let (shared, _recorder, mut events) = apps_host(Limits::default(), true);
    let fake = Fake::new([Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    handle.shutdown().await;
    assert_eq!(
        shared.publisher().app_channels().uri_of(ID),
        None,
        "closed on shutdown"
    );
}

#[tokio::test]
async fn without_mcp_apps_there_is_never_a_channel() {
    let (shared, recorder, mut events) = apps_host(Limits::default(), false);
    let fake = Fake::new([Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    handle.send(Command::Stop);
    assert_eq!(kinds(&mut events, 1).await, ["stopped"]);
    let carried: Vec<_> = seen(&recorder)
        .into_iter()
        .map(|s| (s.kind, s.carried, s.registry))
        .collect();
    assert_eq!(carried, [("ready", None, None), ("stopped", None, None)]);
    let mcp_app = shared.publisher().read_state(|s| {
        crate::session::mcp_servers(s)
            .iter()
            .map(|m| m.mcp_app.is_some() || m.channel.is_some())
            .collect::<Vec<_>>()
    });
    assert_eq!(mcp_app, [false]);
    handle.shutdown().await;
}
