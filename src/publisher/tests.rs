//! The publication of the tool catalogue.

use std::sync::Arc;

use ahp_types::actions::StateAction;
use serde_json::json;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::{Publishing, SessionPublisher};
use crate::catalogue::ServerTools;
use crate::events::{HostEvent, ToolsChangeReason};
use crate::limits::Limits;
use crate::session::SessionStore;

fn listing(server: &str, names: &[&str]) -> Option<Arc<ServerTools>> {
    let raw = names.iter().map(|n| json!({"name": n})).collect();
    let tools = ServerTools::build(server, raw, &Limits::default());
    Some(Arc::new(tools.unwrap_or_else(|e| panic!("{e}"))))
}

/// The tool counts of the `session/serverToolsChanged` actions and the
/// server ids of the `toolsChanged` events sent so far.
fn sent(events: &mut UnboundedReceiver<HostEvent>) -> (Vec<usize>, Vec<String>) {
    let (mut actions, mut changed) = (Vec::new(), Vec::new());
    while let Ok(event) = events.try_recv() {
        match event {
            HostEvent::EncodedAction(encoded) => {
                if let StateAction::SessionServerToolsChanged(a) = encoded.0.envelope().action {
                    actions.push(a.tools.len());
                }
            }
            HostEvent::ToolsChanged { server_id, .. } => changed.push(server_id),
            _ => {}
        }
    }
    (actions, changed)
}

/// A publisher of `session/serverToolsChanged` and the events it sends.
fn publisher() -> (SessionPublisher, UnboundedReceiver<HostEvent>) {
    let (sink, events) = unbounded_channel();
    let publishing = Publishing {
        server_tools: true,
        mcp_apps: false,
    };
    let store = SessionStore::new("ahp-session:/t");
    (
        SessionPublisher::new(store, Arc::new(sink), publishing),
        events,
    )
}

#[test]
fn a_catalogue_generation_is_published_once_however_many_servers_changed_it() {
    let (publisher, mut events) = publisher();
    // Two servers become ready together: both change the catalogue before
    // either publishes it.
    publisher.update_tools("a", listing("a", &["one", "two"]));
    publisher.update_tools("b", listing("b", &["three"]));
    publisher.publish_tools("a", ToolsChangeReason::Ready);
    publisher.publish_tools("b", ToolsChangeReason::Ready);
    let (actions, changed) = sent(&mut events);
    assert_eq!(actions, [3], "one action carries both servers' tools");
    assert_eq!(changed, ["a", "b"], "each server's change is still told");
    let state = publisher.read_store(SessionStore::read).state();
    assert_eq!(state.server_tools.map(|t| t.len()), Some(3));
    // A later change is published again, and so is a change back.
    publisher.set_tools("b", None, ToolsChangeReason::Stopped);
    publisher.set_tools("b", listing("b", &["three"]), ToolsChangeReason::Ready);
    assert_eq!(
        sent(&mut events),
        (vec![2, 3], vec!["b".into(), "b".into()])
    );
}

#[test]
fn tools_are_pending_from_the_catalogue_update_to_their_publication() {
    // Red team of issue 28, F5: a server is `ready` in the state before its
    // tools are; `whenReady` reads these pending ids to wait for both.
    let (publisher, _events) = publisher();
    let pending = || publisher.read_store_with_pending(|_, pending| pending.clone());
    assert!(publisher.update_tools("a", listing("a", &["one"])));
    assert!(publisher.update_tools("b", listing("b", &["two"])));
    assert_eq!(pending().into_iter().collect::<Vec<_>>(), ["a", "b"]);
    // b's publication carries a's tools too, but a is told (and cleared) by its own.
    publisher.publish_tools("b", ToolsChangeReason::Ready);
    assert_eq!(pending().into_iter().collect::<Vec<_>>(), ["a"]);
    publisher.publish_tools("a", ToolsChangeReason::Ready);
    assert!(pending().is_empty());
    // An update that changes nothing, and a removal, leave nothing pending.
    assert!(!publisher.update_tools("a", listing("a", &["one"])));
    assert!(publisher.update_tools("a", None));
    assert!(pending().is_empty());
}
