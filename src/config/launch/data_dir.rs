//! The plugin's persistent data directory, `${PLUGIN_DATA}` (Agent Plugins
//! "MCP runtime", seed 002, *Launch stdio servers*).

use std::path::{Path, PathBuf};

use crate::limits::MAX_DATA_DIR_NAME_BYTES;

/// The directory under `dataDir` where the host records outstanding tasks
/// (`src/host/tasks/store.rs`): no plugin data directory takes its name
/// (a plugin named so gets the hash suffix).
pub const TASK_RECORDS_DIR: &str = ".tasks";

/// The directory under `dataDir` where the host keeps the whole results of
/// chat tool calls cut to the model-facing output budget
/// (`src/chat/spill.rs`): no plugin data directory takes its name either.
pub const TOOL_RESULTS_DIR: &str = ".tool-results";

/// The directory under `dataDir` of the tool cache of lazy servers
/// (`src/mcp/tool_cache.rs`: one private file per server configuration):
/// no plugin data directory takes its name either.
pub const TOOL_CACHE_DIR: &str = ".tool-cache";

/// Creates (if needed) and returns the plugin's data directory
/// `<data_dir>/<sanitized plugin_id>`.
///
/// The id is reduced to `[A-Za-z0-9._-]` (other characters become `_`, at
/// most [`MAX_DATA_DIR_NAME_BYTES`] of them kept); if anything was changed,
/// or the result would be a special name (`""`, `.`, `..`, a trailing `.`, a
/// Windows device name such as `CON`, the host's own [`TASK_RECORDS_DIR`],
/// [`TOOL_RESULTS_DIR`] or [`TOOL_CACHE_DIR`] in any letter case), `-<8 hex digits>` of a stable FNV-1a
/// hash of the original id is appended so that distinct ids do not share a
/// directory. Uses `create_dir_all` (mode `0700` for created directories on
/// Unix); an existing directory and its contents are left untouched, so data
/// survives restarts and plugin updates (seed 002, *Launch stdio servers*).
///
/// # Errors
/// Any I/O error from creating the directories.
pub fn ensure_plugin_data_dir(data_dir: &Path, plugin_id: &str) -> std::io::Result<PathBuf> {
    let dir = data_dir.join(data_dir_name(plugin_id));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    crate::platform::private_dir(&mut builder);
    builder.create(&dir)?;
    Ok(dir)
}

/// Directory name for `plugin_id` (see [`ensure_plugin_data_dir`]).
fn data_dir_name(plugin_id: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let mut name: String = plugin_id
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    let mut changed = name != plugin_id;
    if name.len() > MAX_DATA_DIR_NAME_BYTES {
        name.truncate(MAX_DATA_DIR_NAME_BYTES);
        changed = true;
    }
    if changed || is_special_name(&name) {
        let hash = fnv1a(plugin_id.as_bytes()) & 0xffff_ffff;
        name = format!("{name}-{hash:08x}");
    }
    name
}

fn is_special_name(name: &str) -> bool {
    const DEVICES: &[&str] = &["CON", "PRN", "AUX", "NUL"];
    let stem = name.split('.').next().unwrap_or("").to_ascii_uppercase();
    let numbered = (stem.starts_with("COM") || stem.starts_with("LPT"))
        && stem.len() == 4
        && stem.as_bytes()[3].is_ascii_digit();
    name.is_empty()
        || name.ends_with('.')
        || DEVICES.contains(&stem.as_str())
        || numbered
        || name.eq_ignore_ascii_case(TASK_RECORDS_DIR)
        || name.eq_ignore_ascii_case(TOOL_RESULTS_DIR)
        || name.eq_ignore_ascii_case(TOOL_CACHE_DIR)
}

/// 64-bit FNV-1a: stable across platforms and Rust versions. Not SHA-256
/// like the catalogue's short ids: these suffixes name existing data
/// directories on disk, so changing the function would orphan them.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_names() {
        assert_eq!(data_dir_name("my-plugin_1.0"), "my-plugin_1.0");
        let a = data_dir_name("acme/tools");
        let b = data_dir_name("acme:tools");
        assert!(
            a.starts_with("acme_tools-") && a.len() == "acme_tools-".len() + 8,
            "{a}"
        );
        assert_ne!(
            a, b,
            "ids differing only in replaced chars must not collide"
        );
        assert_eq!(a, data_dir_name("acme/tools"), "stable");
        for special in [
            "",
            ".",
            "..",
            "CON",
            "nul.txt",
            "com1",
            "x.",
            ".tasks",
            ".TASKS",
            ".tool-results",
            ".Tool-Results",
            ".tool-cache",
            ".TOOL-CACHE",
        ] {
            let name = data_dir_name(special);
            assert!(
                name.len() >= 9 && name.as_bytes()[name.len() - 9] == b'-',
                "{special:?} -> {name}"
            );
        }
        assert!(data_dir_name(&"a".repeat(200)).len() <= 64 + 9);
    }

    #[test]
    fn fnv_is_the_reference_function() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[cfg(unix)]
    #[test]
    fn data_dir_is_private_and_survives() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = ensure_plugin_data_dir(&tmp.path().join("nested"), "p").unwrap();
        std::fs::write(dir.join("keep"), "1").unwrap();
        assert_eq!(
            ensure_plugin_data_dir(&tmp.path().join("nested"), "p").unwrap(),
            dir
        );
        assert!(dir.join("keep").exists());
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
}
