//! A host event as the JSON item the JS outbox carries: `{event, payload}`,
//! and for an action `{event: "action", serverSeq, payload}` (index.js
//! `#deliver` notes the leading `serverSeq` without parsing an envelope no
//! listener wants).

use ahp_mcp_host::events::{HostEvent, OutboxKind};
use ahp_types::actions::ActionEnvelope;
use serde::Serialize;
use serde_json::json;

/// How the outbox bounds the event's item.
pub(crate) fn kind(event: &HostEvent) -> OutboxKind {
    match event {
        HostEvent::Log(_) => OutboxKind::Log,
        HostEvent::ListChanged { .. } | HostEvent::ResourceUpdated { .. } => OutboxKind::Coalesced,
        _ => OutboxKind::Kept,
    }
}

/// The event's JSON item.
///
/// # Errors
/// serde's, when a value cannot be encoded (the event is then dropped).
pub(crate) fn encode(event: &HostEvent) -> serde_json::Result<String> {
    match event {
        HostEvent::Action(envelope) => serde_json::to_string(&ActionOut {
            event: "action",
            server_seq: envelope.server_seq,
            payload: envelope,
        }),
        HostEvent::EncodedAction(encoded) => {
            let mut text = Vec::new();
            let seq = encoded.0.server_seq();
            text.extend_from_slice(
                format!("{{\"event\":\"action\",\"serverSeq\":{seq},\"payload\":").as_bytes(),
            );
            encoded.0.write_json(&mut text);
            text.push(b'}');
            // Only JSON writers wrote it.
            Ok(String::from_utf8(text).unwrap_or_default())
        }
        HostEvent::Log(record) => out("log", record),
        HostEvent::AuthorizationUrl { server_id, url } => out(
            "authorizationUrl",
            &json!({ "serverId": server_id, "url": url }),
        ),
        HostEvent::ToolsChanged {
            server_id,
            reason,
            tools,
        } => out(
            "toolsChanged",
            &json!({ "serverId": server_id, "reason": reason, "tools": tools }),
        ),
        HostEvent::ListChanged { server_id, list } => out(
            "listChanged",
            &json!({ "serverId": server_id, "list": list }),
        ),
        HostEvent::ResourceUpdated { server_id, uri } => out(
            "resourceUpdated",
            &json!({ "serverId": server_id, "uri": uri }),
        ),
        HostEvent::ChannelMessage(message) => out("channelMessage", message),
    }
}

/// `{event, payload}` serialized straight from the Rust values.
#[derive(Serialize)]
struct Out<'a, T: Serialize> {
    event: &'static str,
    payload: &'a T,
}

fn out<T: Serialize>(event: &'static str, payload: &T) -> serde_json::Result<String> {
    serde_json::to_string(&Out { event, payload })
}

/// `{event: "action", serverSeq, payload}`.
#[derive(Serialize)]
struct ActionOut<'a> {
    event: &'static str,
    #[serde(rename = "serverSeq")]
    server_seq: u64,
    payload: &'a ActionEnvelope,
}
