//! Each [`HostEvent`] as the outbox item JS reads (`{event, payload}`
//! JSON, serialized straight from the Rust values), and the outbox class
//! it counts in.

use ahp_mcp_host::events::{DeviceCodePrompt, EncodedEnvelope, HostEvent, OutboxKind};
use ahp_types::actions::ActionEnvelope;
use serde::Serialize;
use serde_json::json;

/// `{event, payload}`.
#[derive(Serialize)]
struct Out<'a, T: Serialize> {
    event: &'static str,
    payload: &'a T,
}

fn out<T: Serialize>(event: &'static str, payload: &T) -> serde_json::Result<String> {
    serde_json::to_string(&Out { event, payload })
}

/// `{event: "action", serverSeq, payload}`: the envelope's `serverSeq`
/// also leads the item, so JS can note it without parsing an envelope no
/// listener wants (index.js `#deliver`).
#[derive(Serialize)]
struct ActionOut<'a> {
    event: &'static str,
    #[serde(rename = "serverSeq")]
    server_seq: u64,
    payload: &'a ActionEnvelope,
}

/// The outbox class of `event` (logs and coalesced notices are bounded
/// apart from what is kept).
pub(crate) fn kind_of(event: &HostEvent) -> OutboxKind {
    match event {
        HostEvent::Log(_) => OutboxKind::Log,
        HostEvent::ListChanged { .. } | HostEvent::ResourceUpdated { .. } => OutboxKind::Coalesced,
        _ => OutboxKind::Kept,
    }
}

/// `event` as its outbox item.
pub(crate) fn encoded(event: &HostEvent) -> serde_json::Result<String> {
    match event {
        HostEvent::Action(envelope) => serde_json::to_string(&ActionOut {
            event: "action",
            server_seq: envelope.server_seq,
            payload: envelope,
        }),
        HostEvent::EncodedAction(encoded) => Ok(envelope_item(encoded)),
        HostEvent::Log(record) => out("log", record),
        HostEvent::AuthorizationUrl {
            server_id,
            url,
            device_code,
        } => {
            let mut payload = json!({ "serverId": server_id, "url": url });
            if let Some(device) = device_code {
                payload["deviceCode"] = device_code_json(device);
            }
            out("authorizationUrl", &payload)
        }
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

/// JS `DeviceCodePrompt`: `{userCode, verificationUri,
/// verificationUriComplete?, expiresInMs}`.
fn device_code_json(device: &DeviceCodePrompt) -> serde_json::Value {
    let mut shown = json!({
        "userCode": device.user_code,
        "verificationUri": device.verification_uri,
        "expiresInMs": device.expires_in_ms,
    });
    if let Some(complete) = &device.verification_uri_complete {
        shown["verificationUriComplete"] = json!(complete);
    }
    shown
}

/// `{"event":"action","serverSeq":N,"payload":…}` of an envelope written
/// as text (the outbox writes it when it is drained).
pub(crate) fn envelope_item(encoded: &EncodedEnvelope) -> String {
    let mut text = Vec::new();
    let seq = encoded.0.server_seq();
    text.extend_from_slice(
        format!("{{\"event\":\"action\",\"serverSeq\":{seq},\"payload\":").as_bytes(),
    );
    encoded.0.write_json(&mut text);
    text.push(b'}');
    // Only JSON writers wrote it.
    String::from_utf8(text).unwrap_or_default()
}
