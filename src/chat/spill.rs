//! The spill files of the model-facing output budget ([`super::budget`]):
//! the whole result of a chat tool call cut to the budget, kept under
//! `dataDir` for whoever reads the marker's link (the model through a
//! file tool, the app, a person).
//!
//! Layout: `<dataDir>/.tool-results/` (mode `0700`, also when it was
//! there before with a looser mode; one owned by another user, or a link,
//! is not used: nothing is kept, the marker and a `warn` log say why;
//! reserved among plugin data directories, see `ensure_plugin_data_dir`),
//! one file per cut result,
//! `<tool call id, sanitized>-<16 random hex digits>.json` (mode `0600`,
//! created with `O_CREAT | O_EXCL` and `O_NOFOLLOW`: a planted file or
//! symlink of that name makes the write fail, never followed). The file
//! holds the MCP `CallToolResult` JSON after the redaction the chat state
//! gets ([`crate::redact::hidden_in_value`]): a value the host keeps secret
//! is `[redacted]` there too.
//!
//! Bounded: a file holds at most [`MAX_TOOL_RESULT_FILE_BYTES`] (a larger
//! result is not kept); each write then removes the files older than
//! [`TOOL_RESULT_FILE_MAX_AGE_MS`] and, newest first, those beyond
//! [`MAX_TOOL_RESULT_FILES`] files or [`MAX_TOOL_RESULT_FILES_BYTES`] in
//! all (looking at most [`MAX_TOOL_RESULT_DIR_ENTRIES`] entries). Several
//! hosts may share a `dataDir`: a file another host removed first is fine.
//! Blocking; [`keep_whole`] runs it on tokio's blocking pool, waiting at
//! most [`TOOL_RESULT_WRITE_WAIT_MS`].

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::budget::{grouped, Kept};
use crate::config::launch::TOOL_RESULTS_DIR;
use crate::limits::{
    MAX_TOOL_RESULT_DIR_ENTRIES, MAX_TOOL_RESULT_FILES, MAX_TOOL_RESULT_FILES_BYTES,
    MAX_TOOL_RESULT_FILE_BYTES, TOOL_RESULT_FILE_MAX_AGE_MS, TOOL_RESULT_WRITE_WAIT_MS,
};
use crate::platform;

/// Characters of the tool call id kept in a file name.
const MAX_NAME_ID_CHARS: usize = 48;

/// The bounds of a cleanup (the `limits` constants; smaller in tests).
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Files older than this are removed.
    pub max_age: Duration,
    /// Files kept, newest first.
    pub max_files: usize,
    /// Bytes of all files kept, newest first.
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_age: Duration::from_millis(TOOL_RESULT_FILE_MAX_AGE_MS),
            max_files: MAX_TOOL_RESULT_FILES,
            max_bytes: MAX_TOOL_RESULT_FILES_BYTES,
        }
    }
}

/// The spill directory of one host (see the module doc).
#[derive(Debug)]
pub struct ToolResults {
    dir: PathBuf,
    bounds: Bounds,
    /// Serializes this host's cleanups.
    cleaning: Mutex<()>,
}

impl ToolResults {
    /// The spill directory under `data_dir` (created on the first write).
    pub fn in_dir(data_dir: &Path) -> Self {
        Self::with_bounds(data_dir, Bounds::default())
    }

    /// [`ToolResults::in_dir`] with other cleanup bounds.
    pub fn with_bounds(data_dir: &Path, bounds: Bounds) -> Self {
        Self {
            dir: data_dir.join(TOOL_RESULTS_DIR),
            bounds,
            cleaning: Mutex::new(()),
        }
    }

    /// Writes `json` (a whole result) to a new private file named after
    /// `call_id`, then cleans the directory up. Blocking.
    ///
    /// # Errors
    /// Why nothing was kept (too large, a directory or file that cannot be
    /// made), for the marker and a `warn` log.
    pub fn keep(&self, call_id: &str, json: &[u8]) -> Result<Kept, String> {
        if json.len() > MAX_TOOL_RESULT_FILE_BYTES {
            return Err(format!(
                "it is {} bytes, more than the {} a spill file may hold",
                grouped(json.len()),
                grouped(MAX_TOOL_RESULT_FILE_BYTES)
            ));
        }
        self.ensure_dir()?;
        let path = self.dir.join(file_name(call_id)?);
        write_new(&path, json).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        self.clean(&path, SystemTime::now());
        let uri = std::path::absolute(&path)
            .ok()
            .and_then(|p| url::Url::from_file_path(p).ok())
            .ok_or_else(|| format!("{}: no file URI", path.display()))?;
        Ok(Kept::File {
            uri: uri.to_string(),
            bytes: json.len() as u64,
        })
    }

    /// Creates the directory (mode `0700`) and checks it is one itself, not
    /// a symlink to one, and the user's own: a loose one (group or other
    /// permission bits) is made `0700`, another user's is not used
    /// (`platform::own_private_dir`).
    fn ensure_dir(&self) -> Result<(), String> {
        let mut builder = DirBuilder::new();
        builder.recursive(true);
        platform::private_dir(&mut builder);
        let shown = self.dir.display();
        builder
            .create(&self.dir)
            .map_err(|e| format!("{shown}: cannot create: {e}"))?;
        platform::own_private_dir(&self.dir).map_err(|e| format!("{shown}: not used: {e}"))
    }

    /// Removes the files older than the age bound, then, newest first, those
    /// past the count or size bound; never `written`.
    pub fn clean(&self, written: &Path, now: SystemTime) {
        let _one = self.cleaning.lock().unwrap_or_else(PoisonError::into_inner);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for entry in entries.flatten().take(MAX_TOOL_RESULT_DIR_ENTRIES) {
            let path = entry.path();
            let is_ours = path.extension().is_some_and(|e| e == "json") && path != written;
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !is_ours || !meta.file_type().is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let old = now.duration_since(modified).unwrap_or_default() > self.bounds.max_age;
            if old {
                remove(&path);
            } else {
                files.push((modified, meta.len(), path));
            }
        }
        files.sort_by_key(|(modified, ..)| std::cmp::Reverse(*modified));
        let mut count = 1;
        let mut bytes = std::fs::metadata(written).map_or(0, |m| m.len());
        for (_, len, path) in files {
            count += 1;
            bytes = bytes.saturating_add(len);
            if count > self.bounds.max_files || bytes > self.bounds.max_bytes {
                remove(&path);
            }
        }
    }
}

fn remove(path: &Path) {
    // Gone already (another host cleaned first): nothing to do.
    let _ = std::fs::remove_file(path);
}

/// `<call id, [A-Za-z0-9_-] only, at most 48>-<16 random hex>.json`.
fn file_name(call_id: &str) -> Result<String, String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let id: String = call_id
        .chars()
        .take(MAX_NAME_ID_CHARS)
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|_| "no random source".to_owned())?;
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{id}-{hex}.json"))
}

/// Writes a new private file at `path` (never an existing one, never
/// through a symlink); a failed write leaves no file.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    platform::private_file(&mut options);
    platform::open_no_follow(&mut options);
    let mut file = options.open(path)?;
    let written = file.write_all(bytes).and_then(|()| file.flush());
    if written.is_err() {
        remove(path);
    }
    written
}

/// Keeps `result` (the redacted whole result) in `store` on tokio's blocking
/// pool, waiting at most [`TOOL_RESULT_WRITE_WAIT_MS`]: where it is, or why
/// it is not (also the text of the `warn` the caller logs).
pub async fn keep_whole(store: Arc<ToolResults>, call_id: String, result: Value) -> Kept {
    let write = tokio::task::spawn_blocking(move || {
        let json = serde_json::to_vec(&result).map_err(|e| e.to_string())?;
        drop(result);
        store.keep(&call_id, &json)
    });
    let wait = Duration::from_millis(TOOL_RESULT_WRITE_WAIT_MS);
    match tokio::time::timeout(wait, write).await {
        Ok(Ok(Ok(kept))) => kept,
        Ok(Ok(Err(why))) => Kept::Not(why),
        Ok(Err(e)) => Kept::Not(format!("the write failed: {e}")),
        Err(_) => Kept::Not(format!(
            "it was not written within {} ms",
            grouped(TOOL_RESULT_WRITE_WAIT_MS as usize)
        )),
    }
}
