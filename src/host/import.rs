//! `importConfig`: another host's MCP configuration (a text, or a file read
//! as `mcp.json` is: a regular file within `maxConfigFileBytes` and
//! `configReadTimeoutMs`) through the pure `config::import`.

use std::path::PathBuf;
use std::time::Duration;

use super::Host;
use crate::config::import::{import_config, ImportFormat, Imported};
use crate::config::{read_config_file, ReadBounds};
use crate::error::{ErrorCode, HostError, HostResult};

/// Where the configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    /// The file's text; `file` labels the diagnostics.
    Text {
        /// The text.
        text: String,
        /// The label (a path, or `<text>`).
        file: String,
    },
    /// A file to read.
    Path(PathBuf),
}

impl Host {
    /// How long all the answers of the app's resolver for one import may
    /// take together (ms): `limits.importResolveTimeoutMs`. The resolver
    /// runs in JS (the binding's `lib/host/import.js`), which bounds its
    /// calls by it.
    #[must_use]
    pub fn import_resolve_timeout_ms(&self) -> u64 {
        self.shared.limits().import_resolve_timeout_ms
    }

    /// How much text (bytes) the resolved servers of one import may hold
    /// together, and one answer of the resolver: `limits.maxConfigFileBytes`
    /// (no more than a configuration file may hold). See
    /// `config::import::resolve_entry`.
    #[must_use]
    pub fn import_resolved_max_bytes(&self) -> usize {
        self.shared.limits().max_config_file_bytes
    }

    /// Imports `source`, a configuration of `format` (see
    /// `config::import::import_config`): the servers as this host's
    /// entries, their variables, and diagnostics naming file, line and
    /// column. Never starts anything.
    ///
    /// # Errors
    /// `invalid_config` when the file cannot be read (missing, not a
    /// regular file, over `maxConfigFileBytes`, not UTF-8, not read within
    /// `configReadTimeoutMs`; the message names the file and why),
    /// `limit_exceeded` when a text is over `maxConfigFileBytes`,
    /// `disposed` (also while the text is being read: the reading runs on
    /// the blocking pool, never on the host's async worker). What the file
    /// holds is never an error: it is in the diagnostics.
    pub async fn import_config(
        &self,
        format: ImportFormat,
        source: ImportSource,
    ) -> HostResult<Imported> {
        self.check_live()?;
        let max_bytes = self.shared.limits().max_config_file_bytes;
        let (text, file) = match source {
            ImportSource::Text { text, .. } if text.len() > max_bytes => {
                let message = format!(
                    "options.text: {} bytes, more than maxConfigFileBytes ({max_bytes})",
                    text.len()
                );
                return Err(HostError::new(ErrorCode::LimitExceeded, message));
            }
            ImportSource::Text { text, file } => (text, file),
            ImportSource::Path(path) => {
                let limits = self.shared.limits();
                let bounds = ReadBounds {
                    max_bytes: limits.max_config_file_bytes,
                    timeout: Duration::from_millis(limits.config_read_timeout_ms),
                    limit_name: "maxConfigFileBytes",
                    timeout_name: "configReadTimeoutMs",
                };
                let text = self
                    .until_disposed(async { Ok(read_config_file(&path, bounds).await) })
                    .await?;
                let text = text.map_err(|m| HostError::new(ErrorCode::InvalidConfig, m))?;
                (text, path.display().to_string())
            }
        };
        let reading = tokio::task::spawn_blocking(move || import_config(format, &text, &file));
        let imported = self.until_disposed(async { Ok(reading.await) }).await?;
        imported.map_err(|e| HostError::new(ErrorCode::Internal, format!("importConfig: {e}")))
    }
}
