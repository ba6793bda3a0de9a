//! The ordering rules of one id: the registry's states on their own, then
//! a real [`Host`] adding and removing one plugin concurrently.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ahp::reducers::apply_action_to_session;
use ahp_types::actions::ActionEnvelope;
use serde_json::json;

use super::*;
use crate::events::{EventSink, HostEvent};
use crate::host::{AddPlugin, Host, HostConfig};
use crate::session::empty_session_state;

fn code<T: std::fmt::Debug>(r: HostResult<T>) -> (ErrorCode, String) {
    let e = r.expect_err("an error");
    (e.code, e.to_string())
}

fn stop(r: HostResult<Removal<u32>>) -> Vec<u32> {
    match r.expect("begin_remove") {
        Removal::Stop(h) => h,
        other => panic!("expected Stop, got {other:?}"),
    }
}

#[test]
fn an_id_is_held_once_from_reserve_until_the_removal_ended() {
    let mut reg = Registry::<u32>::default();
    reg.reserve("p").expect("free");
    let (c, m) = code(reg.reserve("p"));
    assert_eq!(
        (c, m.contains("\"p\" is being added")),
        (ErrorCode::AlreadyExists, true),
        "{m}"
    );
    assert!(reg.go_live("p", Some(vec!["p/a".into()]), || vec![("p/a".into(), 1)]));
    let (c, m) = code(reg.reserve("p"));
    assert_eq!(
        (c, m.contains("\"p\" already exists")),
        (ErrorCode::AlreadyExists, true),
        "{m}"
    );
    assert_eq!(stop(reg.begin_remove("p")), [1]);
    assert!(reg.servers.is_empty() && reg.plugins.is_empty());
    let (c, m) = code(reg.reserve("p"));
    assert_eq!(
        (c, m.contains("\"p\" is being removed")),
        (ErrorCode::AlreadyExists, true),
        "{m}"
    );
    let (c, m) = code(reg.begin_remove("p"));
    assert_eq!(
        (c, m.contains("\"p\" is already being removed")),
        (ErrorCode::NotFound, true),
        "{m}"
    );
    reg.end_remove("p");
    assert!(matches!(reg.begin_remove("p"), Ok(Removal::Absent)));
    reg.reserve("p")
        .expect("free again after the removal ended");
}

#[test]
fn names_are_non_empty_without_slash_and_children_are_not_top_level() {
    let mut reg = Registry::<u32>::default();
    for bad in ["", "a/b"] {
        assert_eq!(
            code(reg.reserve(bad)).0,
            ErrorCode::InvalidArgument,
            "{bad:?}"
        );
    }
    reg.reserve("p").expect("free");
    assert!(reg.go_live("p", Some(vec!["p/a".into()]), || vec![("p/a".into(), 1)]));
    assert!(matches!(reg.begin_remove("p/a"), Ok(Removal::Absent)));
    assert_eq!(reg.servers.keys().collect::<Vec<_>>(), ["p/a"]);
}

#[test]
fn a_remove_during_the_add_stops_it_before_any_actor_starts() {
    let mut reg = Registry::<u32>::default();
    let flight = reg.reserve("p").expect("free");
    let Ok(Removal::WaitForAdd(ended)) = reg.begin_remove("p") else {
        panic!("the add is in flight: remove must wait");
    };
    assert!(flight.removal.is_cancelled(), "the add is told to stop");
    assert!(!ended.is_cancelled());
    // The add had published its customization: it goes live without servers.
    let started = reg.go_live("p", Some(vec!["p/a".into()]), || {
        panic!("no actor may start")
    });
    assert!(!started);
    assert_eq!(reg.plugins.get("p"), Some(&Vec::new()));
    assert!(stop(reg.begin_remove("p")).is_empty());
    reg.end_remove("p");
    assert!(reg.plugins.is_empty() && reg.servers.is_empty());
}

#[test]
fn an_add_that_published_nothing_frees_the_id_and_only_its_own_state_changes() {
    let mut reg = Registry::<u32>::default();
    reg.reserve("p").expect("free");
    reg.release("p");
    assert!(matches!(reg.begin_remove("p"), Ok(Removal::Absent)));
    // release / go_live / end_remove touch only an id in their own state.
    reg.reserve("s").expect("free");
    assert!(reg.go_live("s", None, || vec![("s".into(), 7)]));
    reg.release("s");
    reg.end_remove("s");
    assert!(!reg.go_live("s", None, || panic!("not adding")));
    assert_eq!(stop(reg.begin_remove("s")), [7]);
    reg.release("s");
    assert_eq!(
        code(reg.reserve("s")).0,
        ErrorCode::AlreadyExists,
        "still removing"
    );
    reg.end_remove("s");
    assert_eq!(reg.take_servers(), Vec::<u32>::new());
}

/// Every action envelope a host emitted, in order.
#[derive(Default)]
struct Actions(Mutex<Vec<ActionEnvelope>>);

impl EventSink for Actions {
    fn send(&self, event: HostEvent) {
        if let Some(a) = event.envelope() {
            self.0.lock().expect("actions").push(a);
        }
    }
}

impl Actions {
    fn len(&self) -> usize {
        self.0.lock().expect("actions").len()
    }

    /// Whether an action from index `from` on mentions top-level id `id`.
    fn mention_after(&self, from: usize, id: &str) -> Vec<String> {
        let all = self.0.lock().expect("actions");
        let text = |e: &ActionEnvelope| serde_json::to_string(&e.action).expect("json");
        let hit = |t: &String| t.contains(&format!("\"{id}\"")) || t.contains(&format!("\"{id}/"));
        all[from..].iter().map(text).filter(hit).collect()
    }
}

/// `addPlugin` and `remove` of one id race on one thread, the removal
/// starting 0 .. 200 scheduler turns after the add published its `loading`
/// entry: whatever the interleaving,
/// once `remove` resolved nothing about the id follows, the replayed state
/// has no such customization, nothing runs, and the id can be added again.
#[tokio::test]
async fn add_plugin_and_remove_of_one_id_apply_in_call_order() {
    let data = tempfile::tempdir().expect("tempdir");
    let root = tempfile::tempdir().expect("tempdir");
    let mcp = json!({"mcpServers": {"s": {"type": "stdio", "command": "sleep", "args": ["600"]}}});
    // 2 MB of JSON whitespace: reading and parsing the file takes a while.
    let text = format!("{}{mcp}", " \n".repeat(1 << 20));
    std::fs::write(root.path().join("mcp.json"), text).expect("mcp.json");
    let options = HostConfig {
        data_dir: data.path().into(),
        ..HostConfig::default()
    };
    let sink = Arc::new(Actions::default());
    let host = Host::new(options, sink.clone());
    let opts = AddPlugin {
        name: Some("racy".into()),
        ..AddPlugin::new(root.path())
    };
    for turns in [0, 1, 2, 3, 5, 8, 13, 50, 200].repeat(3) {
        let remove = async {
            // From the moment the add has published its `loading` entry.
            let published = || {
                let state = serde_json::to_string(&host.state().customizations);
                state.expect("json").contains("\"id\":\"racy\"")
            };
            while !published() {
                tokio::task::yield_now().await;
            }
            for _ in 0..turns {
                tokio::task::yield_now().await;
            }
            let r = host.remove("racy").await;
            (r, sink.len())
        };
        let (added, (removed, after)) = tokio::join!(host.add_plugin(opts.clone()), remove);
        let after = match removed {
            Ok(()) => after,
            Err(e) => {
                // Only when the add had not taken the id yet: then it applied.
                assert_eq!(e.code, ErrorCode::NotFound, "{turns}: {e}");
                added.as_ref().expect("the add applied");
                host.remove("racy").await.expect("remove the live plugin");
                sink.len()
            }
        };
        if let Err(e) = &added {
            assert_eq!(e.code, ErrorCode::Cancelled, "{turns}: {e}");
            assert!(e.to_string().contains("\"racy\""), "{e}");
        }
        let mut replayed = empty_session_state();
        for e in sink.0.lock().expect("actions").iter() {
            let _ = apply_action_to_session(&mut replayed, &e.action);
        }
        assert_eq!(replayed, host.state(), "{turns}: replay");
        let left: Vec<_> = replayed.customizations.iter().flatten().collect();
        assert!(left.is_empty(), "{turns}: {left:?}");
        for _ in 0..200 {
            if host.process_count() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(host.process_count(), 0, "{turns}: processes left");
        assert_eq!(
            sink.mention_after(after, "racy"),
            Vec::<String>::new(),
            "{turns}"
        );
    }
    host.shutdown().await;
}
