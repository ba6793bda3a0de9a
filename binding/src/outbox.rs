//! The event outbox: items queued by the host's threads, drained by the JS
//! thread ("drain on wake": at most one queued JS call; the callback takes
//! what is pending).
//!
//! A `session/serverToolsChanged` carries the whole catalogue (hundreds of
//! KB for a thousand tools). While JS has an `action` listener
//! ([`Outbox::set_action_payloads`], kept by `index.js`) it is written
//! when it is queued, as before; without one it waits in the outbox
//! unwritten ([`Item::Envelope`]) and is written when it is drained if a
//! listener came by then, else drained as `{"event":"action",
//! "serverSeq":N}`, which is all `whenReady` reads of it. Neither the
//! worker nor the JS thread then writes, copies or parses a catalogue
//! nobody reads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use ahp_mcp_host::events::{EncodedEnvelope, OutboxBound};
use serde_json::json;

/// An item at least this long (bytes; a large catalogue's
/// `session/serverToolsChanged`, hundreds of KB) travels in a drain of its
/// own, after the items queued before it: parsing it in JS never holds
/// back the delivery of a small item such as a `ready` state. An
/// [`Item::Envelope`] always travels alone ([`Item::own`]).
const OWN_BATCH_BYTES: usize = 64 * 1024;

/// One pending item.
pub(crate) enum Item {
    /// Its JSON text (`{"event": …, "payload": …}` or a `response` item).
    Text(String),
    /// An action envelope written when drained (see the module docs).
    Envelope(EncodedEnvelope),
}

impl Item {
    /// Whether it travels in a drain of its own. An envelope always does:
    /// whether it is written with its payload is then decided by the
    /// listeners JS has after every item queued before it was delivered
    /// (one registered by a listener of those items included).
    fn own(&self) -> bool {
        match self {
            Self::Text(text) => text.len() >= OWN_BATCH_BYTES,
            Self::Envelope(_) => true,
        }
    }

    /// Its JSON text: an envelope with its payload when `payloads`, else
    /// only its `serverSeq`.
    fn into_text(self, payloads: bool) -> String {
        match self {
            Self::Text(text) => text,
            Self::Envelope(encoded) => {
                let seq = encoded.0.server_seq();
                let text = if payloads {
                    crate::events::envelope_item(&encoded)
                } else {
                    format!("{{\"event\":\"action\",\"serverSeq\":{seq}}}")
                };
                // A whole catalogue's generation may be freed off this thread.
                ahp_mcp_host::drop_later(encoded);
                text
            }
        }
    }
}

/// Pending items, drained by the JS thread.
pub(crate) struct Outbox {
    pending: Mutex<Vec<Item>>,
    scheduled: AtomicBool,
    /// Whether an [`Item::Envelope`] is drained with its payload (JS has
    /// an `action` listener); true until JS says otherwise.
    payloads: AtomicBool,
    /// Log records and coalescible events held back (`OutboxBound`).
    bound: OutboxBound,
}

impl Default for Outbox {
    fn default() -> Self {
        Self {
            pending: Mutex::default(),
            scheduled: AtomicBool::new(false),
            payloads: AtomicBool::new(true),
            bound: OutboxBound::default(),
        }
    }
}

/// A log record as an outbox item: `{"event": "log", "payload": …}`.
fn log_item(record: &ahp_mcp_host::events::LogRecord) -> String {
    json!({ "event": "log", "payload": record }).to_string()
}

impl Outbox {
    /// The bound of log records and coalescible events.
    pub(crate) fn bound(&self) -> &OutboxBound {
        &self.bound
    }

    /// Whether JS has an `action` listener (see the module docs).
    pub(crate) fn set_action_payloads(&self, wanted: bool) {
        self.payloads.store(wanted, Ordering::Release);
    }

    /// Queues `item` (an envelope written now while JS has an `action`
    /// listener, see the module docs); true when JS must be woken for it
    /// (no drain is scheduled yet).
    pub(crate) fn push(&self, item: Item) -> bool {
        let item = match item {
            Item::Envelope(_) if self.payloads.load(Ordering::Acquire) => {
                Item::Text(item.into_text(true))
            }
            item => item,
        };
        self.lock().push(item);
        self.schedule()
    }

    /// Marks a drain scheduled; true when none was.
    pub(crate) fn schedule(&self) -> bool {
        !self.scheduled.swap(true, Ordering::AcqRel)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Item>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every pending item, as one JSON array; envelopes with their
    /// payloads (the last batch, at dispose: a listener its items add
    /// still gets every action).
    pub(crate) fn take_batch(&self) -> String {
        self.scheduled.store(false, Ordering::Release);
        let batch = std::mem::take(&mut *self.lock());
        json_array(&self.texts(batch, true))
    }

    /// `batch`'s texts ([`Item::into_text`]), then the log records held back.
    fn texts(&self, batch: Vec<Item>, payloads: bool) -> Vec<String> {
        let mut texts: Vec<String> = batch.into_iter().map(|i| i.into_text(payloads)).collect();
        texts.extend(self.bound.drained().map(|record| log_item(&record)));
        texts
    }

    /// One drain woken by the threadsafe function: the pending items up to
    /// the first one that travels on its own (that one alone when it is
    /// first), and whether items are left for another drain.
    pub(crate) fn take_drain(&self) -> (String, bool) {
        self.scheduled.store(false, Ordering::Release);
        let payloads = self.payloads.load(Ordering::Acquire);
        let mut pending = self.lock();
        let cut = match pending.iter().position(Item::own) {
            Some(0) => 1,
            Some(i) => i,
            None => pending.len(),
        };
        let rest = pending.split_off(cut);
        let batch = std::mem::replace(&mut *pending, rest);
        let more = !pending.is_empty();
        drop(pending);
        (batch_text(self.texts(batch, payloads)), more)
    }
}

/// A drain's items as the text `onEvents` receives: the item itself when
/// there is one (a `callTool` answer's text is not copied again), else one
/// JSON array ([`json_array`]).
fn batch_text(mut items: Vec<String>) -> String {
    match items.len() {
        1 => items.pop().unwrap_or_default(),
        _ => json_array(&items),
    }
}

/// `items` (each a JSON text) as one JSON array text, built in one allocation.
pub(crate) fn json_array(items: &[String]) -> String {
    let mut out = String::with_capacity(items.iter().map(|i| i.len() + 1).sum::<usize>() + 2);
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push(']');
    out
}
