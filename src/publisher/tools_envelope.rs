//! The `session/serverToolsChanged` the publisher emits, held as the
//! catalogue generation it publishes: its envelope is written as JSON text
//! from each entry's checked definition text
//! ([`CatalogueEntry::write_definition_json`]), and the session keeps the
//! same generation as its `serverTools`; no definition tree is built on the
//! way (they are made only when a typed state or envelope is asked for).

use std::io::Write;
use std::sync::Arc;

use ahp_types::actions::{ActionEnvelope, SessionServerToolsChangedAction, StateAction};
use ahp_types::state::ToolDefinition;

use crate::catalogue::CatalogueEntry;
use crate::events::EnvelopeText;
use crate::session::PublishedTools;

/// The catalogue's entries of one generation (shared with the catalogue).
pub(super) type Entries = Arc<Vec<Arc<CatalogueEntry>>>;

/// The session's `serverTools` as the catalogue generation they were
/// published from: the definitions are made again (as the action's were)
/// when a full state is read, instead of kept twice.
#[derive(Debug)]
pub(super) struct CatalogueTools(Entries);

impl CatalogueTools {
    pub(super) fn new(entries: Entries) -> Self {
        Self(entries)
    }
}

impl PublishedTools for CatalogueTools {
    fn definitions(&self) -> Vec<ToolDefinition> {
        self.0.iter().map(|e| e.definition()).collect()
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, entry) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            entry.write_definition_json(out);
        }
        out.push(b']');
    }
}

/// The envelope of one `session/serverToolsChanged` of a catalogue
/// generation.
#[derive(Debug)]
pub(super) struct ToolsEnvelope {
    channel: String,
    server_seq: u64,
    tools: Arc<CatalogueTools>,
}

impl ToolsEnvelope {
    pub(super) fn new(channel: &str, server_seq: u64, tools: Arc<CatalogueTools>) -> Self {
        Self {
            channel: channel.to_owned(),
            server_seq,
            tools,
        }
    }
}

impl EnvelopeText for ToolsEnvelope {
    fn server_seq(&self) -> u64 {
        self.server_seq
    }

    /// `{"channel":…,"action":{"type":"session/serverToolsChanged","tools":[…]},"serverSeq":…}`:
    /// the member order serde writes an `ActionEnvelope` in.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"channel\":");
        // Writing to a `Vec` does not fail.
        let _ = serde_json::to_writer(&mut *out, &self.channel);
        out.extend_from_slice(b",\"action\":{\"type\":\"session/serverToolsChanged\",\"tools\":");
        self.tools.write_json(out);
        let _ = write!(out, "}},\"serverSeq\":{}}}", self.server_seq);
    }

    fn envelope(&self) -> ActionEnvelope {
        let tools = self.tools.definitions();
        ActionEnvelope {
            channel: self.channel.clone(),
            action: StateAction::SessionServerToolsChanged(SessionServerToolsChangedAction {
                tools,
            }),
            server_seq: self.server_seq,
            origin: None,
            rejection_reason: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalogue::{Catalogue, ServerTools};
    use crate::limits::Limits;

    #[test]
    fn the_envelope_text_is_what_serde_writes_for_the_envelope() {
        let raw = vec![
            json!({"name": "a", "title": "A", "inputSchema": {"type": "object"}, "_meta": {"k": "v"}}),
            json!({"name": "b", "description": "quote \" and \u{2028}", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        ];
        let mut c = Catalogue::default();
        let tools = ServerTools::build("s", raw, &Limits::default()).unwrap();
        c.set_server("s", Some(Arc::new(tools)));
        let envelope = ToolsEnvelope::new(
            "ahp-session:/\"x\"",
            42,
            Arc::new(CatalogueTools::new(c.entries())),
        );
        let mut text = Vec::new();
        envelope.write_json(&mut text);
        let typed = envelope.envelope();
        assert_eq!(typed.server_seq, 42);
        let StateAction::SessionServerToolsChanged(a) = &typed.action else {
            panic!("not a tools action")
        };
        assert_eq!(a.tools.len(), 2);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            serde_json::to_string(&typed).unwrap()
        );
    }
}
