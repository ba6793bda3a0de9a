//! Which top-level ids (plugins and top-level servers) are taken, what each
//! is doing, and which server actors run: the one place that decides how
//! `addPlugin` / `addServer` and `remove` of one id are ordered.
//!
//! An id goes `Adding` → `Live` → `Removing` → free. The rules (issue 9,
//! "Commands racing on one id"):
//!
//! - an id is held once: [`Registry::reserve`] fails `already_exists` while
//!   the id is being added, is live, or is being removed;
//! - `remove` of an id whose add is in flight marks the add
//!   ([`InFlight::removal`]) and waits until it has ended
//!   ([`InFlight::ended`]); the add, which checks the mark after each
//!   `.await`, publishes nothing further and starts no actor, then ends
//!   (`cancelled`); the removal then removes whatever the add had published,
//!   so the actions a client sees are in call order;
//! - a removed id is never resurrected: only the add that holds the
//!   reservation may make it `Live`, and an id stays `Removing` (taken)
//!   until `session/customizationRemoved` is out.
//!
//! The registry is a leaf lock (`Host::registry`): its methods never await
//! and never take another lock.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use crate::error::{ErrorCode, HostError, HostResult};

/// What a taken top-level id is doing.
#[derive(Debug)]
enum Held {
    /// An `addPlugin` / `addServer` is in flight.
    Adding(InFlight),
    /// Published: a plugin (in `Registry::plugins`) or a top-level server.
    Live,
    /// `remove` is stopping its servers; the id stays taken until
    /// `session/customizationRemoved` has been emitted.
    Removing,
}

/// The two signals between an add in flight and a `remove` of its id.
#[derive(Debug, Clone, Default)]
pub(super) struct InFlight {
    /// Cancelled by `remove`: the add publishes nothing further, starts no
    /// actor and ends with `cancelled`.
    pub removal: CancellationToken,
    /// Cancelled once the add has ended (live, released, or dropped).
    pub ended: CancellationToken,
}

/// The next step of a `remove` ([`Registry::begin_remove`]).
#[derive(Debug)]
pub(super) enum Removal<H> {
    /// No plugin or top-level server has this id (also a plugin's child).
    Absent,
    /// An add of the id is in flight and was told to stop: wait for
    /// `ended`, then ask again.
    WaitForAdd(CancellationToken),
    /// The id is now `Removing`: stop these servers, emit
    /// `session/customizationRemoved`, then [`Registry::end_remove`].
    Stop(Vec<H>),
}

/// Which top-level ids are taken and which actors run (`H`: a server's
/// handle; generic so that the ordering rules are testable without actors).
#[derive(Debug)]
pub(super) struct Registry<H> {
    /// Every taken top-level id and what it is doing.
    ids: BTreeMap<String, Held>,
    /// Server id (`<plugin>/<server>` or a top-level id) → its handle.
    pub servers: BTreeMap<String, H>,
    /// Live plugin id → its server ids.
    pub plugins: BTreeMap<String, Vec<String>>,
}

impl<H> Default for Registry<H> {
    fn default() -> Self {
        Self {
            ids: BTreeMap::new(),
            servers: BTreeMap::new(),
            plugins: BTreeMap::new(),
        }
    }
}

impl<H> Registry<H> {
    /// Takes top-level id `id` for an add (reserving is atomic with the check).
    ///
    /// # Errors
    /// `invalid_argument` (empty, or contains `/`); `already_exists` while
    /// `id` is being added, is live or is being removed (the message names
    /// `id` and which).
    pub fn reserve(&mut self, id: &str) -> HostResult<InFlight> {
        if id.is_empty() || id.contains('/') {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("name {id:?} must be non-empty and contain no '/'"),
            ));
        }
        if let Some(held) = self.ids.get(id) {
            let what = match held {
                Held::Adding(_) => "is being added",
                Held::Live => "already exists",
                Held::Removing => "is being removed",
            };
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("a plugin or server named {id:?} {what}"),
            ));
        }
        let flight = InFlight::default();
        self.ids.insert(id.to_owned(), Held::Adding(flight.clone()));
        Ok(flight)
    }

    /// Ends the add of `id` that published nothing: the id is free again.
    /// Does nothing unless `id` is `Adding`.
    pub fn release(&mut self, id: &str) {
        if matches!(self.ids.get(id), Some(Held::Adding(_))) {
            self.ids.remove(id);
        }
    }

    /// Ends the add of `id` that published its customization: `id` is
    /// live. Unless `remove(id)` was called meanwhile, `start()` runs (under
    /// this lock, so it must take no lock) and the servers it returns
    /// (id, handle) are registered, and a plugin's `children` (its server
    /// ids) are recorded; after a `remove(id)` nothing is started and the id
    /// is live without servers, for the removal to take away.
    ///
    /// Returns whether `start` ran. Does nothing unless `id` is `Adding`.
    pub fn go_live(
        &mut self,
        id: &str,
        children: Option<Vec<String>>,
        start: impl FnOnce() -> Vec<(String, H)>,
    ) -> bool {
        let Some(held) = self.ids.get_mut(id) else {
            return false;
        };
        let Held::Adding(flight) = held else {
            return false;
        };
        let removed = flight.removal.is_cancelled();
        *held = Held::Live;
        let children = if removed {
            children.map(|_| Vec::new())
        } else {
            self.servers.extend(start());
            children
        };
        if let Some(children) = children {
            self.plugins.insert(id.to_owned(), children);
        }
        !removed
    }

    /// The next step of `remove(id)`: wait for the add in flight (which is
    /// told to stop), or take the live id's servers and mark it `Removing`.
    ///
    /// # Errors
    /// `not_found` when `id` is already being removed.
    pub fn begin_remove(&mut self, id: &str) -> HostResult<Removal<H>> {
        match self.ids.get_mut(id) {
            None => Ok(Removal::Absent),
            Some(Held::Removing) => Err(HostError::new(
                ErrorCode::NotFound,
                format!("plugin or top-level server {id:?} is already being removed"),
            )),
            Some(Held::Adding(flight)) => {
                flight.removal.cancel();
                Ok(Removal::WaitForAdd(flight.ended.clone()))
            }
            Some(held @ Held::Live) => {
                *held = Held::Removing;
                let ids = self
                    .plugins
                    .remove(id)
                    .unwrap_or_else(|| vec![id.to_owned()]);
                let handles = ids.iter().filter_map(|i| self.servers.remove(i));
                Ok(Removal::Stop(handles.collect()))
            }
        }
    }

    /// The removal of `id` is complete (`session/customizationRemoved` is
    /// out): the id is free. Does nothing unless `id` is `Removing`.
    pub fn end_remove(&mut self, id: &str) {
        if matches!(self.ids.get(id), Some(Held::Removing)) {
            self.ids.remove(id);
        }
    }

    /// Takes every server handle (host shutdown); ids stay taken.
    pub fn take_servers(&mut self) -> Vec<H> {
        std::mem::take(&mut self.servers).into_values().collect()
    }
}

#[cfg(test)]
mod tests;
