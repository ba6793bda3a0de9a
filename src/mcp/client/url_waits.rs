//! The URL-mode elicitations of one connection whose completion the host
//! watches (MCP 2025-11-25 "Elicitation › Completion Notifications for URL
//! Mode Elicitation"): `notifications/elicitation/complete` with a known
//! `elicitationId` ends its wait ([`UrlWaits::complete`], from the
//! connection's in-order notification path); an unknown or already
//! completed id is ignored, as the spec requires. The notification counts
//! only on the connection that sent the elicitation ("MUST only send the
//! notification to the client that initiated").

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::limits::MAX_AWAITED_URL_ELICITATIONS;

/// Watched elicitations by `elicitationId` (at most
/// [`MAX_AWAITED_URL_ELICITATIONS`]).
#[derive(Clone, Default)]
pub struct UrlWaits(Arc<Mutex<Watched>>);

#[derive(Default)]
struct Watched {
    next: u64,
    by_id: HashMap<String, (u64, CancellationToken)>,
}

impl UrlWaits {
    fn lock(&self) -> MutexGuard<'_, Watched> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches `elicitation_id` until the returned guard is dropped; `None`
    /// for an empty id (2026-07-28 has none) or past
    /// [`MAX_AWAITED_URL_ELICITATIONS`]. A second watch of the same id
    /// takes over (the newer elicitation is the one shown).
    pub fn watch(&self, elicitation_id: &str) -> Option<UrlWait> {
        if elicitation_id.is_empty() {
            return None;
        }
        let mut watched = self.lock();
        if watched.by_id.len() >= MAX_AWAITED_URL_ELICITATIONS
            && !watched.by_id.contains_key(elicitation_id)
        {
            return None;
        }
        watched.next += 1;
        let key = watched.next;
        let done = CancellationToken::new();
        watched
            .by_id
            .insert(elicitation_id.to_owned(), (key, done.clone()));
        Some(UrlWait {
            waits: self.clone(),
            id: elicitation_id.to_owned(),
            key,
            done,
        })
    }

    /// `notifications/elicitation/complete` for `elicitation_id`: its wait
    /// ends; `false` (ignored) when no wait has that id.
    pub fn complete(&self, elicitation_id: &str) -> bool {
        match self.lock().by_id.remove(elicitation_id) {
            Some((_, done)) => {
                done.cancel();
                true
            }
            None => false,
        }
    }
}

/// One watched elicitation (see [`UrlWaits::watch`]).
pub struct UrlWait {
    waits: UrlWaits,
    id: String,
    key: u64,
    done: CancellationToken,
}

impl UrlWait {
    /// Cancelled once the server said the elicitation is complete.
    pub fn done(&self) -> CancellationToken {
        self.done.clone()
    }
}

impl Drop for UrlWait {
    fn drop(&mut self) {
        let mut watched = self.waits.lock();
        if watched
            .by_id
            .get(&self.id)
            .is_some_and(|(k, _)| *k == self.key)
        {
            watched.by_id.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_ends_only_its_own_wait_once() {
        let waits = UrlWaits::default();
        let a = waits.watch("a").unwrap_or_else(|| panic!("watched"));
        let b = waits.watch("b").unwrap_or_else(|| panic!("watched"));
        assert!(!waits.complete("unknown"));
        assert!(waits.complete("a"));
        assert!(a.done().is_cancelled());
        assert!(!b.done().is_cancelled());
        assert!(!waits.complete("a"), "an already completed id is ignored");
        drop(b);
        assert!(!waits.complete("b"), "a dropped wait is forgotten");
        assert!(waits.watch("").is_none());
    }

    #[test]
    fn the_watch_count_is_bounded_and_a_newer_watch_takes_over() {
        let waits = UrlWaits::default();
        let held: Vec<_> = (0..MAX_AWAITED_URL_ELICITATIONS)
            .filter_map(|i| waits.watch(&i.to_string()))
            .collect();
        assert_eq!(held.len(), MAX_AWAITED_URL_ELICITATIONS);
        assert!(waits.watch("one more").is_none());
        let again = waits.watch("0").unwrap_or_else(|| panic!("same id"));
        drop(held);
        assert!(
            waits.complete("0"),
            "the newer watch stays when the older one is dropped"
        );
        assert!(again.done().is_cancelled());
    }
}
