//! Reading a configuration file (`mcp.json`) with bounds: a regular file
//! only, at most a number of bytes, within a time.
//!
//! A path that is not a regular file after following symlinks (a named
//! pipe, a device such as `/dev/zero` or `/dev/urandom`, a directory, a
//! socket) is refused before it is opened, and again on the opened handle
//! (so a file swapped between the check and the open is refused too); on
//! Windows a device or pipe name (`NUL`, `CON`, `\\.\pipe\…`) is refused by
//! name before anything is opened, and a handle that is no disk file by its
//! `GetFileType` (`crate::platform`). The
//! file is opened with `O_NONBLOCK | O_NOCTTY`: opening a named pipe never
//! waits for a writer, and opening a terminal never makes it the process's
//! controlling terminal. At most `max_bytes + 1` bytes are read, so a
//! larger (or growing) file is an error naming the limit without being
//! held in memory. The blocking work runs on the async runtime's blocking
//! pool, bounded by `timeout`; every failure is a message that names the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a configuration file read is bounded.
#[derive(Debug, Clone, Copy)]
pub struct ReadBounds {
    /// Largest file accepted (bytes); a larger one is an error naming
    /// `limit_name` and this number.
    pub max_bytes: usize,
    /// Time the read may take; then it is an error naming `timeout_name`.
    pub timeout: Duration,
    /// The JS name of the byte limit, for messages (e.g. `maxConfigFileBytes`).
    pub limit_name: &'static str,
    /// The JS name of the time limit, for messages (e.g. `configReadTimeoutMs`).
    pub timeout_name: &'static str,
}

/// Reads the UTF-8 text of the regular file at `path` within `bounds`.
///
/// # Errors
/// A message starting `<path>: cannot read: ` saying why: the file is
/// missing or unreadable, is not a regular file (naming what it is), is
/// larger than `bounds.max_bytes`, is not UTF-8, or took longer than
/// `bounds.timeout`.
pub async fn read_config_file(path: &Path, bounds: ReadBounds) -> Result<String, String> {
    let shown = path.display().to_string();
    let owned: PathBuf = path.to_path_buf();
    let read = tokio::task::spawn_blocking(move || read_regular(&owned, bounds));
    match tokio::time::timeout(bounds.timeout, read).await {
        Ok(Ok(read)) => read.map_err(|why| format!("{shown}: cannot read: {why}")),
        Ok(Err(join)) => Err(format!("{shown}: cannot read: {join}")),
        Err(_) => Err(format!(
            "{shown}: cannot read: it took longer than {} ms ({})",
            bounds.timeout.as_millis(),
            bounds.timeout_name
        )),
    }
}

/// The blocking half of [`read_config_file`], for a caller already off the
/// async runtime (`bounds.timeout` is then the caller's to enforce).
///
/// # Errors
/// Why the file cannot be read (without the path).
pub fn read_regular_file(path: &Path, bounds: ReadBounds) -> Result<String, String> {
    read_regular(path, bounds)
}

/// The blocking half of [`read_config_file`]
/// ([`crate::platform::read_regular_bytes`], then UTF-8).
///
/// # Errors
/// Why the file cannot be read (without the path).
fn read_regular(path: &Path, bounds: ReadBounds) -> Result<String, String> {
    use crate::platform::RegularReadError;
    let bytes = crate::platform::read_regular_bytes(path, bounds.max_bytes as u64).map_err(
        |e| match e {
            RegularReadError::TooLarge => format!(
                "it is larger than {} ({} bytes)",
                bounds.limit_name, bounds.max_bytes
            ),
            other => other.to_string(),
        },
    )?;
    String::from_utf8(bytes).map_err(|e| format!("it is not UTF-8 text ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(max_bytes: usize) -> ReadBounds {
        ReadBounds {
            max_bytes,
            timeout: Duration::from_secs(30),
            limit_name: "maxConfigFileBytes",
            timeout_name: "configReadTimeoutMs",
        }
    }

    #[tokio::test]
    async fn devices_and_directories_are_refused_naming_what_they_are() {
        let zero = read_config_file(Path::new("/dev/zero"), bounds(1024)).await;
        assert_eq!(
            zero.unwrap_err(),
            "/dev/zero: cannot read: it is a character device, not a regular file"
        );
        let dir = read_config_file(Path::new("/"), bounds(1024)).await;
        assert_eq!(
            dir.unwrap_err(),
            "/: cannot read: it is a directory, not a regular file"
        );
    }

    #[tokio::test]
    async fn a_file_over_the_limit_is_refused_naming_the_limit() {
        let dir = std::env::temp_dir().join(format!("ahp-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mcp.json");
        std::fs::write(&file, "{\"mcpServers\": {}}").unwrap();
        let exact = read_config_file(&file, bounds(18)).await;
        assert_eq!(exact.unwrap(), "{\"mcpServers\": {}}");
        let over = read_config_file(&file, bounds(17)).await.unwrap_err();
        assert!(
            over.ends_with("it is larger than maxConfigFileBytes (17 bytes)"),
            "{over}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
