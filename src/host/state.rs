//! Reading the AHP session state: whole, with the `serverSeq` it
//! reflects, or as JSON text for the binding.

use ahp_types::state::SessionState;

use super::Host;
use crate::session::SessionStore;

impl Host {
    /// The session state: exactly what the `ahp` reducer made from the emitted envelopes.
    pub fn state(&self) -> SessionState {
        self.shared
            .publisher()
            .read_store(SessionStore::read)
            .state()
    }

    /// The session state with the `serverSeq` of the last envelope it
    /// reflects, read together (AHP `Snapshot`'s `fromSeq`): an observer of
    /// the envelopes has seen that state once it has seen that `serverSeq`.
    pub fn state_at(&self) -> (u64, SessionState) {
        let read = self.shared.publisher().read_store(SessionStore::read);
        (read.server_seq, read.state())
    }

    /// [`Host::state_at`] as JSON text, `{"serverSeq":…,"state":…,
    /// "toolsPending":[…]}`, written after the session lock is released (see
    /// `crate::session::SessionRead`). `toolsPending`: the ids of the
    /// servers whose tools the catalogue has and the state does not yet (a
    /// server is published `ready` before its tools; `whenReady` waits for
    /// both, so that `getState().serverTools` has them when it settles).
    pub fn state_at_json(&self) -> String {
        let (read, pending) = self
            .shared
            .publisher()
            .read_store_with_pending(|store, pending| (store.read(), pending.clone()));
        let pending = serde_json::to_string(&pending).unwrap_or_else(|_| "[]".to_owned());
        format!(
            "{{\"serverSeq\":{},\"state\":{},\"toolsPending\":{pending}}}",
            read.server_seq,
            read.json()
        )
    }

    /// [`Host::state`] as JSON text (see [`Host::state_at_json`]).
    pub fn state_json(&self) -> String {
        self.shared
            .publisher()
            .read_store(SessionStore::read)
            .json()
    }
}
