//! The Windows implementation of [`crate::platform`]: each stdio server in
//! its own Job Object (process-wrap's `JobObject` with `KillOnDrop`, so the
//! job is kill-on-close) started without a console window, and config reads
//! that never wait on a device or a pipe.
//!
//! The only direct Win32 call is `GetFileType` (which process-wrap does not
//! wrap): it tells a disk file from a console, `NUL` or a pipe on an opened
//! handle.

use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use ::windows::Win32::Foundation::HANDLE;
use ::windows::Win32::Storage::FileSystem::{
    GetFileType, FILE_TYPE_CHAR, FILE_TYPE_DISK, FILE_TYPE_PIPE,
};
use ::windows::Win32::System::Threading::CREATE_NO_WINDOW;
use process_wrap::tokio::{CommandWrap, CreationFlags, JobObject, KillOnDrop};

/// Puts the process `wrap` starts in a new Job Object that ends every
/// process in it when its last handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`,
/// process-wrap's `KillOnDrop`): dropping the child wrapper, or the host
/// process ending by any means (crash, `TerminateProcess`), ends the server
/// and every descendant, detached ones included (a process started from
/// inside a job stays in it unless the job allows breakaway, which this one
/// does not). `CREATE_NO_WINDOW`: a server started from a GUI app opens no
/// console window.
pub fn wrap_in_job(wrap: &mut CommandWrap) {
    wrap.wrap(JobObject)
        .wrap(KillOnDrop)
        .wrap(CreationFlags(CREATE_NO_WINDOW));
}

/// Nothing to add on Windows: opening a file never waits (a pipe without a
/// free instance fails with `ERROR_PIPE_BUSY`), and a console is never
/// attached by opening it. What must not be *read* is refused by
/// [`device_path_kind`] (before opening) and [`opened_kind`] (after).
pub fn open_without_blocking(options: &mut OpenOptions) {
    let _ = options;
}

/// What a special file is, in words; `None` on Windows, where a device or
/// pipe looks like a file to `FileType` ([`opened_kind`] tells them apart).
pub fn special_file_kind(kind: FileType) -> Option<&'static str> {
    let _ = kind;
    None
}

/// Refuses, by its name alone (nothing is opened), a path that names a
/// device or a pipe rather than a file: the device namespace (`\\.\…` and
/// `\\?\…`, with `\` or `/`, other than a path on a drive `\\?\C:\x` or a
/// share `\\?\UNC\…`; a whole volume `\\.\C:` is refused) and the
/// reserved DOS device names (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`,
/// `LPT1`–`LPT9`, `CONIN$`, `CONOUT$`), which name the device in any folder
/// and with any extension (`C:\x\nul.json`). Returns what it is, in words.
pub fn device_path_kind(path: &Path) -> Option<&'static str> {
    let text = path.as_os_str().to_string_lossy().replace('/', "\\");
    if let Some(rest) = text
        .strip_prefix(r"\\.\")
        .or_else(|| text.strip_prefix(r"\\?\"))
    {
        let drive = rest.len() >= 4 && rest.as_bytes()[1] == b':' && rest.as_bytes()[2] == b'\\';
        let unc = rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(r"UNC\");
        if !(drive || unc) {
            return Some(
                if rest.len() >= 5 && rest[..5].eq_ignore_ascii_case(r"pipe\") {
                    "a named pipe (\\\\.\\pipe\\…)"
                } else {
                    "a device path (\\\\.\\…)"
                },
            );
        }
    }
    let name = path.file_name()?.to_string_lossy();
    reserved_device_name(&name).then_some("a DOS device name (CON, NUL, COM1, …)")
}

/// Whether `name` (a file name) is a reserved DOS device name: its part
/// before the first `.` (trailing spaces ignored) is `CON`, `NUL`, … in any case.
fn reserved_device_name(name: &str) -> bool {
    const NAMES: &[&str] = &["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"];
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    let numbered = (upper.starts_with("COM") || upper.starts_with("LPT"))
        && matches!(upper.as_bytes().get(3), Some(b'1'..=b'9'))
        && upper.len() == 4;
    NAMES.contains(&upper.as_str()) || numbered
}

/// What an opened handle is when it is not a disk file (`GetFileType`: a
/// console or `NUL` is a character device, a pipe or socket a pipe), in
/// words; `None` for a disk file.
pub fn opened_kind(file: &File) -> Option<&'static str> {
    // SAFETY: the handle is valid for the lifetime of `file`; GetFileType only reads it.
    let kind = unsafe { GetFileType(HANDLE(file.as_raw_handle())) };
    match kind {
        FILE_TYPE_DISK => None,
        FILE_TYPE_CHAR => Some("a character device (a console or NUL)"),
        FILE_TYPE_PIPE => Some("a named pipe"),
        _ => Some("not a disk file"),
    }
}

/// `options` open a link (symlink, junction) itself, never what it points
/// to (`FILE_FLAG_OPEN_REPARSE_POINT`: Windows' counterpart of Unix
/// `O_NOFOLLOW`), so a planted link in `dataDir` is never followed.
pub fn open_no_follow(options: &mut OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt as _;
    options.custom_flags(windows::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT.0);
}

/// Takes an exclusive lock on `file` without waiting (`LockFileEx` through
/// std's `File::try_lock`): true when this process now holds it; it is
/// released when the file is closed (as `flock(2)` is on Unix).
#[allow(clippy::incompatible_msrv)] // File::try_lock: Rust 1.89; the Windows build uses a current toolchain
pub fn lock_exclusive(file: &std::fs::File) -> bool {
    file.try_lock().is_ok()
}

/// Files `options` creates take the ACL inherited from their folder. The
/// default `dataDir` is under `%LOCALAPPDATA%`, whose inherited ACL grants
/// only the user, `SYSTEM` and Administrators; no ACL is set here.
pub fn private_file(options: &mut OpenOptions) {
    let _ = options;
}

/// Directories `builder` creates take the ACL inherited from their parent
/// (see [`private_file`]).
pub fn private_dir(builder: &mut DirBuilder) {
    let _ = builder;
}

/// Windows: the host's own folders (`<dataDir>/.tool-cache`,
/// `<dataDir>/.tool-results`) take the ACL inherited from `dataDir`
/// (see [`private_file`]); only a missing folder is an error here, a link
/// is refused where the folder is used.
///
/// # Errors
/// The folder cannot be read (`NotFound` when it does not exist).
pub fn own_private_dir(dir: &std::path::Path) -> Result<(), std::io::Error> {
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.file_type().is_dir() {
        return Err(std::io::Error::other("not a directory (a link or a file)"));
    }
    Ok(())
}

/// Windows: a file is trusted when it is a regular file (no owner or mode
/// bits to check; the folder's ACL decides who may write it).
pub fn own_private_file(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_file()
}

/// Whether an error of [`own_private_dir`] only says the folder does not
/// exist (yet).
pub fn is_missing(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_paths_are_named() {
        for (path, kind) in [
            (r"\\.\pipe\config", "a named pipe"),
            ("//./pipe/config", "a named pipe"),
            (r"\\?\pipe\config", "a named pipe"),
            (r"\\.\PhysicalDrive0", "a device path"),
            (r"\\.\C:", "a device path"),
            ("NUL", "a DOS device name"),
            (r"C:\work\con.json", "a DOS device name"),
            ("com1", "a DOS device name"),
            ("CONOUT$", "a DOS device name"),
            ("nul .txt", "a DOS device name"),
        ] {
            let got = device_path_kind(Path::new(path)).unwrap_or("none");
            assert!(got.starts_with(kind), "{path}: {got}");
        }
        for path in [
            r"C:\work\mcp.json",
            r"\\?\C:\work\mcp.json",
            r"\\.\C:\work\mcp.json",
            r"\\?\UNC\server\share\mcp.json",
            r"\\server\share\mcp.json",
            r"C:\work\console.json",
            r"C:\work\com10.json",
            r"C:\work\com0",
        ] {
            assert_eq!(device_path_kind(Path::new(path)), None, "{path}");
        }
    }
}
