//! A bounded read of a regular file that never waits on a special one: a
//! path that is not a regular file after following symlinks (a named pipe,
//! a device such as `/dev/zero`, a directory, a socket) is refused before
//! it is opened, and again on the opened handle (a file swapped between
//! the check and the open is refused too); on Windows a device or pipe name
//! (`NUL`, `CON`, `\\.\pipe\…`) is refused by name and a handle that is no
//! disk file by its type ([`super::device_path_kind`],
//! [`super::opened_kind`]). The file is opened with
//! [`super::open_without_blocking`]: opening a named pipe never waits for
//! a writer. At most `max_bytes + 1` bytes are read, so a larger (or
//! growing) file is refused without being held in memory.

use std::fs::{FileType, OpenOptions};
use std::io::Read;
use std::path::Path;

/// Why [`read_regular_bytes`] refused a file.
#[derive(Debug)]
pub enum RegularReadError {
    /// It could not be opened or read.
    Io(std::io::Error),
    /// It is not a regular file: what it is, in words (`a directory`, `a
    /// named pipe (FIFO)`, …).
    NotRegular(&'static str),
    /// It holds more than the bound.
    TooLarge,
}

impl std::fmt::Display for RegularReadError {
    /// `it is <kind>, not a regular file`, the I/O error, or `it is too large`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            Self::TooLarge => write!(f, "it is too large"),
        }
    }
}

/// The bytes of the regular file at `path`, at most `max_bytes` of them.
///
/// # Errors
/// [`RegularReadError`]: unreadable, not a regular file, or larger than
/// `max_bytes`.
pub fn read_regular_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>, RegularReadError> {
    if let Some(kind) = super::device_path_kind(path) {
        return Err(RegularReadError::NotRegular(kind));
    }
    let metadata = std::fs::metadata(path).map_err(RegularReadError::Io)?;
    regular(metadata.file_type())?;
    if metadata.len() > max_bytes {
        return Err(RegularReadError::TooLarge);
    }
    let mut options = OpenOptions::new();
    options.read(true);
    super::open_without_blocking(&mut options);
    let file = options.open(path).map_err(RegularReadError::Io)?;
    regular(file.metadata().map_err(RegularReadError::Io)?.file_type())?;
    if let Some(kind) = super::opened_kind(&file) {
        return Err(RegularReadError::NotRegular(kind));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(RegularReadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(RegularReadError::TooLarge);
    }
    Ok(bytes)
}

/// `Ok` for a regular file; else what it is.
fn regular(kind: FileType) -> Result<(), RegularReadError> {
    if kind.is_file() {
        return Ok(());
    }
    let name = if kind.is_dir() {
        "a directory"
    } else {
        super::special_file_kind(kind).unwrap_or("not a regular file")
    };
    Err(RegularReadError::NotRegular(name))
}
