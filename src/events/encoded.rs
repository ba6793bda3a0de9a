//! Action envelopes written as JSON text by whoever emitted them: the
//! host's `session/serverToolsChanged` carries a whole catalogue, written
//! from each tool's checked text (`crate::catalogue`) instead of a tree
//! that is serialized once and dropped.

use std::sync::Arc;

use ahp_types::actions::ActionEnvelope;

/// An action envelope that writes its own JSON.
pub trait EnvelopeText: Send + Sync + std::fmt::Debug {
    /// The envelope's `serverSeq`.
    fn server_seq(&self) -> u64;

    /// Appends the envelope's JSON text to `out`: exactly what
    /// `serde_json` writes for [`EnvelopeText::envelope`].
    fn write_json(&self, out: &mut Vec<u8>);

    /// The typed envelope, made on each call (Rust consumers and tests).
    fn envelope(&self) -> ActionEnvelope;
}

/// A shared [`EnvelopeText`] (see [`crate::events::HostEvent::EncodedAction`]).
#[derive(Clone, Debug)]
pub struct EncodedEnvelope(pub Arc<dyn EnvelopeText>);

impl PartialEq for EncodedEnvelope {
    /// The same envelope, or equal typed envelopes.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.envelope() == other.0.envelope()
    }
}
