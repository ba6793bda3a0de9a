//! Landlock (Linux ≥ 5.13), through the Landlock project's `landlock`
//! crate: the ruleset of a sandboxed stdio server is built in the host
//! (paths opened, rules added: allocation and I/O happen here), and only
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self(2)` run in the
//! child between `fork` and `exec` (two system calls, no allocation), so
//! the server and everything it starts are restricted for life
//! (Landlock domains are inherited across `fork` and `execve`).
//!
//! The access rights handled are those of the ABIs this code is tested
//! on: filesystem rights of ABI 6 (ABI 1 to 5 features; `from_all`),
//! TCP bind and connect (ABI 4), scopes (ABI 6: abstract Unix sockets and
//! signals). The crate's best-effort mode drops what the running kernel
//! does not know; [`landlock_abi`] tells the caller which ABI that is.

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, NetPort, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};

/// The errno a sandboxed spawn fails with when the child could not
/// restrict itself (`ENOTRECOVERABLE`: no `execve(2)` error uses it), so
/// the host can tell it from an `execve` refusal.
pub const SANDBOX_SETUP_ERRNO: i32 = libc::ENOTRECOVERABLE;

/// The Landlock ABI version of the running kernel (`0`: Landlock is not
/// built in or not enabled at boot).
pub fn landlock_abi() -> i32 {
    // SAFETY: `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`
    // reads no memory and returns the ABI version or -1.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// What one sandboxed server may do.
#[derive(Debug, Default)]
pub struct LandlockRules<'a> {
    /// Readable (and executable) files and directory trees: link-free
    /// paths (a path through a link is not opened, see [`open_beneath`]).
    pub read: &'a [PathBuf],
    /// Readable and writable files and directory trees (link-free too).
    pub write: &'a [PathBuf],
    /// `None`: TCP is not restricted; `Some(ports)`: no TCP bind, and TCP
    /// connect only to these ports (any address: Landlock filters ports).
    pub tcp_connect: Option<&'a [u16]>,
}

/// A ruleset built in the host, to restrict one child with
/// ([`restrict_child`]).
#[derive(Debug)]
pub struct LandlockRuleset(RulesetCreated);

/// Builds the ruleset of `rules` (best effort: what the kernel does not
/// know is left out). A path that cannot be opened (missing) is skipped
/// and returned with its reason.
///
/// # Errors
/// The crate's message when the ruleset itself cannot be made.
pub fn landlock_ruleset(
    rules: &LandlockRules<'_>,
) -> Result<(LandlockRuleset, Vec<(PathBuf, String)>), String> {
    let text = |e: landlock::RulesetError| e.to_string();
    let abi = ABI::V6;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(text)?
        .scope(Scope::from_all(abi))
        .map_err(text)?;
    if rules.tcp_connect.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(text)?;
    }
    let mut created = ruleset.create().map_err(text)?;
    let mut skipped = Vec::new();
    let (read, write) = (AccessFs::from_read(abi), AccessFs::from_all(abi));
    for (paths, access) in [(rules.read, read), (rules.write, write)] {
        for p in paths {
            match open_beneath(p) {
                Ok((fd, is_dir)) => {
                    let access = match is_dir {
                        true => access,
                        false => access & AccessFs::from_file(abi),
                    };
                    created = created
                        .add_rule(PathBeneath::new(fd, access))
                        .map_err(text)?;
                }
                Err(e) => skipped.push((p.clone(), e.to_string())),
            }
        }
    }
    for port in rules.tcp_connect.unwrap_or_default() {
        created = created
            .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
            .map_err(text)?;
    }
    Ok((LandlockRuleset(created), skipped))
}

/// Opens `path` (`O_PATH`) for a rule, refusing a link anywhere along
/// it (`openat2` `RESOLVE_NO_SYMLINKS`; without `openat2`, `O_NOFOLLOW`
/// on the last component): the caller resolved it, so a link here is one
/// planted since. Returns the descriptor and whether it is a folder.
fn open_beneath(path: &Path) -> io::Result<(OwnedFd, bool)> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    // SAFETY: `open_how` is plain data; zeroed is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `c` is a NUL-terminated path and `how` a valid `open_how`
    // of the size passed; the result is a new descriptor or -1.
    let mut fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    let err = io::Error::last_os_error();
    if fd < 0 && matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) {
        // SAFETY: as above, `open(2)` of a NUL-terminated path.
        fd = unsafe { libc::open(c.as_ptr(), flags) }.into();
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: `fd` is a descriptor just opened and owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let meta = std::fs::File::from(fd.try_clone()?).metadata()?;
    if meta.file_type().is_symlink() {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok((fd, meta.is_dir()))
}

/// Restricts the child `cmd` spawns with `ruleset`, between `fork` and
/// `exec` (sets `no_new_privs`, as Landlock requires of an unprivileged
/// process). A failure fails the spawn with [`SANDBOX_SETUP_ERRNO`].
pub fn restrict_child(cmd: &mut tokio::process::Command, ruleset: LandlockRuleset) {
    let mut ruleset = Some(ruleset.0);
    // SAFETY: the hook runs in the forked child before exec. It only takes
    // the ruleset out of its (copied) slot and calls `restrict_self`,
    // which makes the `prctl` and `landlock_restrict_self` system calls
    // and builds no heap value on success or failure; dropping the
    // ruleset closes its descriptor.
    unsafe {
        cmd.pre_exec(move || match ruleset.take() {
            Some(r) => match r.restrict_self() {
                Ok(_) => Ok(()),
                Err(_) => Err(io::Error::from_raw_os_error(SANDBOX_SETUP_ERRNO)),
            },
            None => Ok(()),
        });
    }
}
