//! The remembered trust decisions ([`TrustStore`]): which configuration
//! digests (`super::subject::config_digest`) of which server the app's
//! `trust` callback trusted or refused, in `<dataDir>/mcp-trust.json`, so a
//! new host on the same `dataDir` does not ask again. An answer given
//! with `remember: false` is held by this host only.
//!
//! The file holds `{version, entries: [{serverId, digest, trusted,
//! decidedMs}]}`: ids, digests and times, never a configuration value. It
//! is read the way the tool cache is: a regular file of the user's own
//! without group or other permission bits (Unix; another user's file, a
//! link or a loose mode is not used: every server is asked again, and the
//! host says why in a `warn` log), at most [`MAX_TRUST_FILE_BYTES`], within
//! [`TRUST_STORE_READ_TIMEOUT_MS`]; a file that cannot be read or parsed
//! counts as empty. It is written whole to a new temporary file (mode
//! `0600`, never following a planted link) and renamed over the old one:
//! a change (a decision, a forget) is applied to the file as it is read
//! again just before, so what another host on the same `dataDir` wrote or
//! forgot since is kept as it is (a forgotten decision is never written
//! back from this host's copy); at most [`MAX_TRUST_ENTRIES`] decisions
//! are kept (the oldest go first).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::subject::is_digest;
use crate::config::{read_regular_file, ReadBounds};
use crate::limits::{
    MAX_TRUST_ENTRIES, MAX_TRUST_FILE_BYTES, MAX_TRUST_SERVER_ID_BYTES, TRUST_STORE_READ_TIMEOUT_MS,
};
use crate::mcp::eras::now_ms;

/// The file's name in `dataDir`.
pub const TRUST_FILE: &str = "mcp-trust.json";

/// The file's format version.
const VERSION: u32 = 1;

/// One remembered decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    server_id: String,
    digest: String,
    trusted: bool,
    decided_ms: u64,
}

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    entries: Vec<Entry>,
}

/// What the store knows of a server's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// A decision about this very configuration: trusted or not.
    Decided(bool),
    /// Decisions about other configurations of this server only: it changed.
    Changed,
    /// Nothing about this server.
    New,
}

/// The remembered trust decisions of one host (see the module documentation).
#[derive(Default)]
pub struct TrustStore {
    /// `<dataDir>/mcp-trust.json`; `None`: in memory only.
    path: Option<PathBuf>,
    /// The file's decisions, read on first use (with why it was not used).
    file: tokio::sync::Mutex<Option<Vec<Entry>>>,
    /// The decisions held by this host only (`remember: false`, or an id
    /// over [`MAX_TRUST_SERVER_ID_BYTES`]).
    session: std::sync::Mutex<Vec<Entry>>,
}

impl TrustStore {
    /// The store kept in `data_dir`.
    pub fn in_dir(data_dir: &Path) -> Self {
        Self {
            path: Some(data_dir.join(TRUST_FILE)),
            ..Self::default()
        }
    }

    /// What is known of configuration `digest` of server `server_id`; with
    /// it, on the first read only, why the file was not used (for a `warn`).
    pub async fn known(&self, server_id: &str, digest: &str) -> (Known, Option<String>) {
        let session = self.session_entries();
        let mut file = self.file.lock().await;
        let mut warning = None;
        if file.is_none() {
            let (entries, why) = self.read().await;
            (*file, warning) = (Some(entries), why);
        }
        let all = session.iter().chain(file.iter().flatten());
        let mine: Vec<&Entry> = all.filter(|e| e.server_id == server_id).collect();
        let decided = mine.iter().find(|e| e.digest == digest).map(|e| e.trusted);
        let known = match (decided, mine.is_empty()) {
            (Some(trusted), _) => Known::Decided(trusted),
            (None, false) => Known::Changed,
            (None, true) => Known::New,
        };
        (known, warning)
    }

    /// Remembers that configuration `digest` of server `server_id` is
    /// `trusted` (or refused): in the file when `persist`, else for this
    /// host only. Replaces an earlier decision about the same configuration.
    pub async fn remember(&self, server_id: &str, digest: &str, trusted: bool, persist: bool) {
        let entry = Entry {
            server_id: server_id.to_owned(),
            digest: digest.to_owned(),
            trusted,
            decided_ms: now_ms(),
        };
        let same = |e: &Entry| e.server_id == entry.server_id && e.digest == entry.digest;
        let persist =
            persist && self.path.is_some() && server_id.len() <= MAX_TRUST_SERVER_ID_BYTES;
        {
            let mut session = self
                .session
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            session.retain(|e| !same(e));
            if !persist {
                session.push(entry.clone());
                bound(&mut session);
            }
        }
        self.change(|entries| {
            entries.retain(|e| !same(e));
            if persist {
                entries.push(entry.clone());
            }
        })
        .await;
    }

    /// Forgets every decision about server `server_id` (`None`: about every
    /// server); the count forgotten (file and host together).
    pub async fn forget(&self, server_id: Option<&str>) -> usize {
        let gone = |e: &Entry| server_id.is_none_or(|id| e.server_id == id);
        let mut count = {
            let mut session = self
                .session
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let before = session.len();
            session.retain(|e| !gone(e));
            before - session.len()
        };
        self.change(|entries| {
            let before = entries.len();
            entries.retain(|e| !gone(e));
            count += before - entries.len();
        })
        .await;
        count
    }

    fn session_entries(&self) -> Vec<Entry> {
        let session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        session.clone()
    }

    /// Applies `change` to the decisions in the file as it is now (read
    /// again, never this host's copy of it: a decision another host forgot
    /// since stays forgotten), and writes them (nothing is written without
    /// a file, or when nothing changed); this host's copy becomes the result.
    async fn change(&self, change: impl FnOnce(&mut Vec<Entry>)) {
        let mut file = self.file.lock().await;
        let Some(path) = self.path.clone() else {
            return;
        };
        let (mut merged, _) = self.read().await;
        let before = merged.clone();
        change(&mut merged);
        bound(&mut merged);
        let changed = merged != before;
        *file = Some(merged.clone());
        if !changed {
            return;
        }
        let content = TrustFile {
            version: VERSION,
            entries: merged,
        };
        let bytes = serde_json::to_vec(&content).unwrap_or_default();
        let write = move || crate::mcp::eras::write_atomic(&path, &bytes);
        let _ = tokio::task::spawn_blocking(write).await;
    }

    /// The decisions in the file, or none with why it was not used (a
    /// file that exists but is not the user's own and private).
    async fn read(&self) -> (Vec<Entry>, Option<String>) {
        let Some(path) = self.path.clone() else {
            return (Vec::new(), None);
        };
        let read = tokio::task::spawn_blocking(move || read_file(&path));
        let timeout = Duration::from_millis(TRUST_STORE_READ_TIMEOUT_MS);
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(read)) => read,
            _ => (Vec::new(), None),
        }
    }
}

/// Keeps at most [`MAX_TRUST_ENTRIES`] decisions, the newest.
fn bound(entries: &mut Vec<Entry>) {
    if entries.len() > MAX_TRUST_ENTRIES {
        entries.sort_by_key(|e| std::cmp::Reverse(e.decided_ms));
        entries.truncate(MAX_TRUST_ENTRIES);
    }
}

/// The decisions in `path` (blocking; see the module documentation).
fn read_file(path: &Path) -> (Vec<Entry>, Option<String>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (Vec::new(), None);
    };
    if !crate::platform::own_private_file(&meta) {
        let why = format!(
            "the trust store {} is not used (not a regular file of this user's without group or other permissions): every server is asked again",
            path.display()
        );
        return (Vec::new(), Some(why));
    }
    let bounds = ReadBounds {
        max_bytes: MAX_TRUST_FILE_BYTES,
        timeout: Duration::from_millis(TRUST_STORE_READ_TIMEOUT_MS),
        limit_name: "MAX_TRUST_FILE_BYTES",
        timeout_name: "TRUST_STORE_READ_TIMEOUT_MS",
    };
    let Ok(text) = read_regular_file(path, bounds) else {
        return (Vec::new(), None);
    };
    let file: TrustFile = serde_json::from_str(&text).unwrap_or_default();
    if file.version != VERSION {
        return (Vec::new(), None);
    }
    let mut entries = file.entries;
    entries.retain(|e| is_digest(&e.digest) && e.server_id.len() <= MAX_TRUST_SERVER_ID_BYTES);
    bound(&mut entries);
    (entries, None)
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
