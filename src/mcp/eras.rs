//! Which MCP era a server configuration spoke when it was last started, so
//! `protocol: "auto"` probes with `server/discover` (MCP 2026-07-28
//! "Lifecycle › Discovery") once per configuration, not at every start.
//!
//! A 2025-era server answers the probe with a JSON-RPC error before the
//! `initialize` fallback; servers on the Python SDK 1.x (most PyPI servers)
//! also print a 94-line validation dump to stderr each time. When an `auto`
//! start ends on the 2025 era, its configuration's digest ([`digest`]) is
//! remembered in `<dataDir>/protocol-eras.json`, and the next start of the
//! same configuration goes straight to `initialize`. A remembered start that
//! fails with `protocol_error` (the server may have moved to 2026-07-28)
//! forgets the digest, so the next start probes again; so does an entry
//! older than [`ERA_MEMORY_TTL_MS`].
//!
//! The file is read the way `mcp.json` is ([`read_config_file`]: a regular
//! file only, at most [`MAX_ERA_MEMORY_FILE_BYTES`], without blocking, within
//! [`ERA_MEMORY_READ_TIMEOUT_MS`]); it holds at most [`MAX_ERA_MEMORY_ENTRIES`]
//! digests (the oldest go first). It is written whole to a new temporary file
//! (`create_new`, never following a planted link; mode `0600`) and renamed
//! over the old one, merged with what another host on the same `dataDir`
//! wrote since. A file that cannot be read or parsed counts as empty; a
//! failed write is left for the next one. The digest covers the command,
//! arguments, working directory, plugin root, environment variable names,
//! and the URL without its query, and header names: never a value that may
//! be a secret.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::identity::Handshake;
use super::TransportSpec;
use crate::config::{read_config_file, ReadBounds};
use crate::error::ErrorCode;
use crate::limits::{
    ERA_MEMORY_READ_TIMEOUT_MS, ERA_MEMORY_TTL_MS, MAX_ERA_MEMORY_ENTRIES,
    MAX_ERA_MEMORY_FILE_BYTES,
};

/// The file's name in `dataDir`.
pub const ERA_MEMORY_FILE: &str = "protocol-eras.json";

/// The file's content: digests of configurations that spoke the 2025 era,
/// each with when it was last seen (ms since the Unix epoch).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    /// Digest → last seen (ms since the Unix epoch).
    legacy: BTreeMap<String, u64>,
}

/// The remembered eras of one host (see the module documentation).
#[derive(Default)]
pub struct EraMemory {
    /// `<dataDir>/protocol-eras.json`; `None`: in memory only.
    path: Option<PathBuf>,
    /// Loaded on first use.
    records: tokio::sync::Mutex<Option<Records>>,
}

impl EraMemory {
    /// The memory kept in `data_dir`.
    pub fn in_dir(data_dir: &Path) -> Self {
        Self {
            path: Some(data_dir.join(ERA_MEMORY_FILE)),
            records: Default::default(),
        }
    }

    /// Whether configuration `digest` last spoke the 2025 era (within
    /// [`ERA_MEMORY_TTL_MS`]).
    pub async fn is_legacy(&self, digest: &str) -> bool {
        let mut records = self.records.lock().await;
        let now = now_ms();
        self.loaded(&mut records)
            .await
            .legacy
            .get(digest)
            .is_some_and(|seen| now.saturating_sub(*seen) < ERA_MEMORY_TTL_MS)
    }

    /// Remembers that configuration `digest` spoke the 2025 era (`true`) or
    /// forgets it (`false`), and writes the file.
    pub async fn set_legacy(&self, digest: &str, legacy: bool) {
        let mut records = self.records.lock().await;
        let mine = self.loaded(&mut records).await;
        let Some(path) = self.path.clone() else {
            apply(mine, digest, legacy);
            return;
        };
        // Merged with what another host wrote since this one loaded.
        let mut merged = read(&path).await;
        for (d, seen) in &mine.legacy {
            merged.legacy.entry(d.clone()).or_insert(*seen);
        }
        apply(&mut merged, digest, legacy);
        let bytes = serde_json::to_vec(&merged).unwrap_or_default();
        *mine = merged;
        let _ = tokio::task::spawn_blocking(move || write_atomic(&path, &bytes)).await;
    }

    /// Updates the memory after an `auto` start of configuration `digest`
    /// (`known_legacy`: it went straight to `initialize`): a start that
    /// ended on the 2025 era is remembered; one that ended on 2026-07-28, or
    /// a remembered one that failed with `protocol_error` (the server may
    /// speak only 2026-07-28 now), is forgotten; other failures change nothing.
    /// `opened` is the handshake of the connection, or the code of the
    /// failure (`None`: an authorization challenge).
    pub async fn after_start(
        &self,
        digest: &str,
        known_legacy: bool,
        opened: Result<&Handshake, Option<ErrorCode>>,
    ) {
        let legacy = match opened {
            Ok(handshake) => *handshake == Handshake::Initialize,
            Err(Some(ErrorCode::ProtocolError)) => false,
            Err(_) => return,
        };
        if legacy != known_legacy {
            self.set_legacy(digest, legacy).await;
        }
    }

    /// The records, read from the file on first use.
    async fn loaded<'a>(&self, records: &'a mut Option<Records>) -> &'a mut Records {
        if records.is_none() {
            let read = match &self.path {
                Some(path) => read(path).await,
                None => Records::default(),
            };
            *records = Some(read);
        }
        records.get_or_insert_with(Records::default)
    }
}

/// Sets or removes `digest` in `records`, keeping at most
/// [`MAX_ERA_MEMORY_ENTRIES`] (the least recently seen go first).
fn apply(records: &mut Records, digest: &str, legacy: bool) {
    if !legacy {
        records.legacy.remove(digest);
        return;
    }
    records.legacy.insert(digest.to_owned(), now_ms());
    while records.legacy.len() > MAX_ERA_MEMORY_ENTRIES {
        let oldest = records
            .legacy
            .iter()
            .min_by_key(|(_, seen)| **seen)
            .map(|(d, _)| d.clone());
        match oldest {
            Some(d) => records.legacy.remove(&d),
            None => break,
        };
    }
}

/// The records in the file at `path`; empty when it is missing, not a
/// regular file, too large, slow, or not the expected JSON.
async fn read(path: &Path) -> Records {
    let bounds = ReadBounds {
        max_bytes: MAX_ERA_MEMORY_FILE_BYTES,
        timeout: Duration::from_millis(ERA_MEMORY_READ_TIMEOUT_MS),
        limit_name: "MAX_ERA_MEMORY_FILE_BYTES",
        timeout_name: "ERA_MEMORY_READ_TIMEOUT_MS",
    };
    let Ok(text) = read_config_file(path, bounds).await else {
        return Records::default();
    };
    let mut records: Records = serde_json::from_str(&text).unwrap_or_default();
    records.legacy.retain(|d, _| is_digest(d));
    records
}

/// Writes `bytes` to a new temporary file beside `path` (never an existing
/// file or link; mode `0600`, the folder created `0700`), then renames it
/// over `path` (also for `super::tool_cache`).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    crate::platform::private_dir(&mut builder);
    builder.create(dir)?;
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_else(|| ERA_MEMORY_FILE.to_owned());
    let tmp = dir.join(format!(".{name}.{}.{nonce}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    crate::platform::private_file(&mut options);
    let written = options
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The digest of a server configuration (hex SHA-256; see the module
/// documentation for what it covers).
pub fn digest(spec: &TransportSpec) -> String {
    let mut parts: Vec<String> = Vec::new();
    match spec {
        TransportSpec::Stdio(cfg, vars) => {
            parts.push("stdio".into());
            parts.push(cfg.command.clone());
            parts.push(cfg.args.len().to_string());
            parts.extend(cfg.args.iter().cloned());
            parts.push(cfg.cwd.clone().unwrap_or_default());
            parts.push(vars.plugin_root.display().to_string());
            parts.extend(cfg.env.keys().map(|k| format!("env:{k}")));
        }
        TransportSpec::StreamableHttp(cfg) => {
            let mut url = cfg.url.clone();
            url.set_query(None);
            url.set_fragment(None);
            parts.push(cfg.transport.type_name().into());
            parts.push(url.to_string());
            parts.extend(cfg.headers.keys().map(|k| format!("header:{k}")));
        }
    }
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `text` looks like a [`digest`] (64 lowercase hex digits).
fn is_digest(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Milliseconds since the Unix epoch (also the trust store's, `crate::policy`).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{HttpConfig, PluginVars, StdioConfig};

    /// `python3 <args>` with `env`, in plugin root `/plugins/a` (also the
    /// policy digest's tests).
    pub(crate) fn stdio(args: &[&str], env: &[(&str, &str)]) -> TransportSpec {
        let cfg = StdioConfig {
            command: "python3".into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            cwd: None,
            literal: false,
        };
        let vars = PluginVars {
            plugin_root: "/plugins/a".into(),
            plugin_data: "/data/a".into(),
        };
        TransportSpec::Stdio(cfg, vars)
    }

    #[test]
    fn the_digest_follows_the_launch_but_never_a_secret_value() {
        let base = digest(&stdio(&["server.py"], &[("API_KEY", "CANARY1")]));
        assert!(is_digest(&base));
        assert_eq!(
            base,
            digest(&stdio(&["server.py"], &[("API_KEY", "other")]))
        );
        assert_ne!(
            base,
            digest(&stdio(&["server.py", "-v"], &[("API_KEY", "x")]))
        );
        assert_ne!(base, digest(&stdio(&["server.py"], &[])));
        let http = |url: &str| {
            TransportSpec::StreamableHttp(HttpConfig {
                url: url.parse().unwrap(),
                headers: [("Authorization".to_owned(), "Bearer CANARY2".to_owned())].into(),
                transport: Default::default(),
            })
        };
        assert_eq!(
            digest(&http("https://a.test/mcp?key=CANARY3")),
            digest(&http("https://a.test/mcp?key=other"))
        );
        assert_ne!(
            digest(&http("https://a.test/mcp")),
            digest(&http("https://a.test/other"))
        );
    }

    #[tokio::test]
    async fn remembered_in_the_file_bounded_and_forgotten_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let memory = EraMemory::in_dir(dir.path());
        let d = digest(&stdio(&["a"], &[]));
        assert!(!memory.is_legacy(&d).await);
        memory.set_legacy(&d, true).await;
        assert!(EraMemory::in_dir(dir.path()).is_legacy(&d).await);
        for i in 0..MAX_ERA_MEMORY_ENTRIES + 5 {
            let other = digest(&stdio(&[&i.to_string()], &[]));
            memory.set_legacy(&other, true).await;
        }
        let text = std::fs::read_to_string(dir.path().join(ERA_MEMORY_FILE)).unwrap();
        let records: Records = serde_json::from_str(&text).unwrap();
        assert_eq!(records.legacy.len(), MAX_ERA_MEMORY_ENTRIES);
        let last = digest(&stdio(&[&(MAX_ERA_MEMORY_ENTRIES + 4).to_string()], &[]));
        assert!(memory.is_legacy(&last).await);
        memory.set_legacy(&last, false).await;
        assert!(!EraMemory::in_dir(dir.path()).is_legacy(&last).await);
    }

    #[tokio::test]
    async fn a_planted_link_or_a_device_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::os::unix::fs::symlink("/dev/zero", data.join(ERA_MEMORY_FILE)).unwrap();
        let memory = EraMemory::in_dir(&data);
        let d = digest(&stdio(&["a"], &[]));
        assert!(!memory.is_legacy(&d).await, "/dev/zero reads as empty");
        memory.set_legacy(&d, true).await;
        // The link was replaced by a regular file; nothing outside changed.
        let meta = std::fs::symlink_metadata(data.join(ERA_MEMORY_FILE)).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert!(EraMemory::in_dir(&data).is_legacy(&d).await);
    }
}
