//! The persisted tool cache of lazy servers (issue 29 item 2): the last
//! `tools/list` of a server configuration, so a lazy server publishes its
//! tools at once, without starting, in a later host.
//!
//! One file per configuration in `<dataDir>/.tool-cache/` (the folder mode
//! `0700`, each file `0600`), named by its key ([`ToolCache::key`]: hex
//! SHA-256 of the configuration digest of [`super::eras::digest`], the
//! server id, the `protocol` setting and the client capabilities the host
//! declares). The key covers names only: the command, arguments, working
//! directory, plugin root, environment variable names, the URL without its
//! query and header names, never an environment or header value. A cache
//! written under one key is never read under another.
//!
//! The file holds the server's raw tool entries with every kept secret
//! (among them the server's own, `ServerSpec::secrets`: env and header
//! values, the URL's query, …) replaced by `[redacted]`, so a server that echoes its
//! token into a description leaves no trace of it on disk. A tool whose
//! cached entry was redacted differs from the live one, so a call validated
//! against it fails closed (`stale_tool`) after the start.
//!
//! Bounds ([`crate::limits`]): a file of at most
//! [`MAX_TOOL_CACHE_FILE_BYTES`] (a larger listing is not cached), used for
//! [`TOOL_CACHE_TTL_MS`], read within [`TOOL_CACHE_READ_TIMEOUT_MS`]; the
//! folder keeps at most [`MAX_TOOL_CACHE_FILES`] files and
//! [`MAX_TOOL_CACHE_TOTAL_BYTES`], the least recently written going first.
//! Written whole to a new temporary file and renamed over the old one
//! (`super::eras::write_atomic`); a failed write or an unreadable file is
//! a missing cache.
//!
//! Trusted only when private (Unix; `crate::platform::own_private_dir`):
//! a folder that already exists must be the user's own (group or other
//! permission bits, as in a folder made `0777`, are taken away: mode
//! `0700`); one owned by another user, or a link, is not used at all (the
//! read says why, for a `warn` log, and every cache is missing; nothing is
//! written). A file owned by another user, with group or other permission
//! bits, or a link, is a missing cache: another user cannot plant the tool
//! descriptions a lazy server publishes without starting.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ServerSpec;
use crate::config::launch::TOOL_CACHE_DIR;
use crate::config::{read_regular_file, ReadBounds};
use crate::limits::{
    MAX_TOOL_CACHE_FILES, MAX_TOOL_CACHE_FILE_BYTES, MAX_TOOL_CACHE_TOTAL_BYTES,
    TOOL_CACHE_READ_TIMEOUT_MS, TOOL_CACHE_TTL_MS,
};

/// The version of the file format (part of every key).
const FORMAT: &str = "ahp-mcp-host tool cache v1";

/// One cache file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    /// The key it was written under (checked on read).
    key: String,
    /// When it was written (ms since the Unix epoch).
    written_ms: u64,
    /// The raw tool entries of the listing, secrets redacted.
    tools: Vec<Value>,
}

/// The tool cache of one host (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ToolCache {
    /// `<dataDir>/.tool-cache`; `None`: nothing is kept.
    dir: Option<PathBuf>,
    /// The writes in flight ([`ToolCache::store_later`]), waited for by
    /// [`ToolCache::flushed`].
    writes: tokio_util::task::TaskTracker,
}

impl ToolCache {
    /// The cache kept in `data_dir`.
    pub fn in_dir(data_dir: &Path) -> Self {
        Self {
            dir: Some(data_dir.join(TOOL_CACHE_DIR)),
            writes: tokio_util::task::TaskTracker::new(),
        }
    }

    /// [`ToolCache::store`] in a task of its own (a slow disk never holds
    /// back the listing), which [`ToolCache::flushed`] waits for.
    pub fn store_later(&self, key: String, tools: Vec<Value>, secrets: Vec<String>) {
        let cache = self.clone();
        self.writes
            .spawn(async move { cache.store(&key, tools, secrets).await });
    }

    /// Waits (at most `within`) for the writes in flight, so a host's
    /// shutdown leaves the cache a later host reads complete.
    pub async fn flushed(&self, within: Duration) {
        self.writes.close();
        let _ = tokio::time::timeout(within, self.writes.wait()).await;
        self.writes.reopen();
    }

    /// The key of `spec` when the host declares `capabilities` (the JSON of
    /// its MCP `ClientCapabilities`): 64 hex digits.
    pub fn key(spec: &ServerSpec, capabilities: &Value) -> String {
        let mut hash = Sha256::new();
        let protocol = format!("{:?}", spec.protocol);
        let parts = [
            FORMAT.to_owned(),
            super::eras::digest(&spec.transport),
            spec.id.clone(),
            protocol,
            capabilities.to_string(),
        ];
        for part in parts {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The cached raw tool entries of `key`, if a file written under it
    /// within [`TOOL_CACHE_TTL_MS`] can be read (one key of
    /// [`ToolCache::load_all`]).
    #[cfg(test)]
    pub async fn load(&self, key: &str) -> Option<Vec<Value>> {
        let keys = vec![key.to_owned()];
        self.load_all(keys, |_, raw| Some(raw))
            .await
            .0
            .pop()
            .flatten()
    }

    /// [`ToolCache::load`] of every key of `keys`, in order, each listing
    /// handed to `build` (e.g. checked into a server's tools), all on one
    /// blocking thread, one file after another: a plugin of a hundred lazy
    /// servers costs one thread (and its allocator arena), not a hundred.
    /// Within [`TOOL_CACHE_READ_TIMEOUT_MS`] in all; what is not read by
    /// then counts as missing. With the listings, why the folder was not
    /// used (see the module documentation; for a `warn` log), if it was not.
    pub async fn load_all<T: Send + 'static>(
        &self,
        keys: Vec<String>,
        build: impl Fn(usize, Vec<Value>) -> Option<T> + Send + 'static,
    ) -> (Vec<Option<T>>, Option<String>) {
        let n = keys.len();
        let paths: Vec<Option<PathBuf>> = keys.iter().map(|k| self.path(k)).collect();
        let dir = self.dir.clone();
        let read = tokio::task::spawn_blocking(move || {
            let deadline =
                std::time::Instant::now() + Duration::from_millis(TOOL_CACHE_READ_TIMEOUT_MS);
            if let Some(why) = dir.as_deref().and_then(refusal) {
                return ((0..n).map(|_| None).collect(), Some(why));
            }
            let one = |(i, (key, path)): (usize, (String, Option<PathBuf>))| {
                let path = path.filter(|_| std::time::Instant::now() < deadline)?;
                build(i, read_file(&key, &path)?)
            };
            let all = keys.into_iter().zip(paths).enumerate().map(one);
            (all.collect::<Vec<_>>(), None)
        });
        let timeout = Duration::from_millis(TOOL_CACHE_READ_TIMEOUT_MS);
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(read)) => read,
            _ => ((0..n).map(|_| None).collect(), None),
        }
    }

    /// Writes `tools` (a server's raw tool entries) under `key`, every
    /// kept secret redacted in texts, keys and numbers
    /// (`crate::redact::hidden_in_value`: the secrets
    /// of every configured server) and each of `secrets` (the server's own,
    /// `ServerSpec::secrets`, given here so a remove racing the write
    /// cannot let one through), and trims the
    /// folder (see the module documentation). Runs on a blocking thread;
    /// errors are dropped (a missing cache).
    pub async fn store(&self, key: &str, mut tools: Vec<Value>, secrets: Vec<String>) {
        let Some(path) = self.path(key) else {
            return;
        };
        // A folder that is a link (planted to write elsewhere), or another
        // user's, is not used; a loose one of ours is made private first.
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let key = key.to_owned();
        let _ = tokio::task::spawn_blocking(move || {
            if refusal(&dir).is_some() {
                return;
            }
            for tool in &mut tools {
                crate::redact::hidden_in_value(tool);
                without_in_value(tool, &secrets);
            }
            let file = CacheFile {
                key,
                written_ms: now_ms(),
                tools,
            };
            let bytes = serde_json::to_vec(&file).unwrap_or_default();
            if bytes.len() > MAX_TOOL_CACHE_FILE_BYTES {
                let _ = std::fs::remove_file(&path);
                return;
            }
            if super::eras::write_atomic(&path, &bytes).is_ok() {
                trim(path.parent().unwrap_or(Path::new(".")), &path);
            }
        })
        .await;
    }

    /// The file of `key` (only a 64-hex-digit key names a file).
    fn path(&self, key: &str) -> Option<PathBuf> {
        let hex = key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit());
        Some(self.dir.as_ref()?.join(format!("{key}.json"))).filter(|_| hex)
    }
}

/// Why the cache folder `dir` must not be used (another user's, a link),
/// after making a loose one of the user's own private
/// (`crate::platform::own_private_dir`); `None` when it may be used or
/// does not exist yet (a write creates it, mode `0700`). Blocking.
fn refusal(dir: &Path) -> Option<String> {
    match crate::platform::own_private_dir(dir) {
        Ok(()) => None,
        Err(e) if crate::platform::is_missing(&e) => None,
        Err(e) => Some(format!(
            "the tool cache folder {} is not used: {e}; lazy servers start to list their tools",
            dir.display()
        )),
    }
}

/// The raw tool entries in cache file `path` written under `key` within
/// [`TOOL_CACHE_TTL_MS`], when the file is the user's own and private
/// (`crate::platform::own_private_file`); blocking.
fn read_file(key: &str, path: &Path) -> Option<Vec<Value>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !crate::platform::own_private_file(&meta) {
        return None;
    }
    let bounds = ReadBounds {
        max_bytes: MAX_TOOL_CACHE_FILE_BYTES,
        timeout: Duration::from_millis(TOOL_CACHE_READ_TIMEOUT_MS),
        limit_name: "MAX_TOOL_CACHE_FILE_BYTES",
        timeout_name: "TOOL_CACHE_READ_TIMEOUT_MS",
    };
    let text = read_regular_file(path, bounds).ok()?;
    let file: CacheFile = serde_json::from_str(&text).ok()?;
    let now = now_ms();
    // A write time ahead of the clock (more than the TTL) never counts as fresh.
    let fresh = now.saturating_sub(file.written_ms) < TOOL_CACHE_TTL_MS
        && file.written_ms.saturating_sub(now) < TOOL_CACHE_TTL_MS;
    (file.key == key && fresh).then_some(file.tools)
}

/// `value` with each of `secrets` replaced by `[redacted]` in every string
/// and object key, and a number whose digits hold one made the string
/// `"[redacted]"` (see `crate::redact::without`).
fn without_in_value(value: &mut Value, secrets: &[String]) {
    let hidden = |text: &str| crate::redact::without(text, secrets);
    match value {
        Value::String(text) => {
            let shown = hidden(text);
            if shown != *text {
                *text = shown;
            }
        }
        Value::Number(number) => {
            let digits = number.to_string();
            if hidden(&digits) != digits {
                *value = Value::String(hidden(&digits));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| without_in_value(v, secrets)),
        Value::Object(members) => {
            members
                .values_mut()
                .for_each(|v| without_in_value(v, secrets));
            if members.keys().any(|key| hidden(key) != *key) {
                let shown = std::mem::take(members).into_iter();
                *members = shown.map(|(key, v)| (hidden(&key), v)).collect();
            }
        }
        _ => {}
    }
}

/// Removes the least recently written cache files of `dir` beyond
/// [`MAX_TOOL_CACHE_FILES`] and [`MAX_TOOL_CACHE_TOTAL_BYTES`], never
/// `keep` (the file just written), and temporary files of writes that
/// never finished (older than a minute). Looks at the first
/// `4 × MAX_TOOL_CACHE_FILES` entries only (a bounded walk).
fn trim(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let stale_tmp = |e: &std::fs::DirEntry| {
        let tmp = e.path().extension().is_some_and(|x| x == "tmp");
        let modified = e.metadata().and_then(|m| m.modified()).ok();
        let age = modified.and_then(|t| t.elapsed().ok()).unwrap_or_default();
        tmp && age > Duration::from_millis(TOOL_CACHE_READ_TIMEOUT_MS * 12)
    };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
        .flatten()
        .take(MAX_TOOL_CACHE_FILES * 4)
        // A temporary file a killed write left (a minute old) goes too.
        .filter(|e| !(stale_tmp(e) && std::fs::remove_file(e.path()).is_ok()))
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut total = 0u64;
    for (i, (_, len, path)) in files.iter().enumerate() {
        total = total.saturating_add(*len);
        let over = i >= MAX_TOOL_CACHE_FILES || total > MAX_TOOL_CACHE_TOTAL_BYTES;
        if over && path != keep {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
#[path = "tool_cache_tests.rs"]
mod tests;
