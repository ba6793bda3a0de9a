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

#[test]
fn a_catalogue_generation_is_published_once_however_many_servers_changed_it() {
    let (sink, mut events) = unbounded_channel();
    let publishing = Publishing {
        server_tools: true,
        mcp_apps: false,
    };
    let publisher = SessionPublisher::new(
        SessionStore::new("ahp-session:/t"),
        Arc::new(sink),
        publishing,
    );
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
