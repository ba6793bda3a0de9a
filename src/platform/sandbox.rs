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

use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, NetPort, Ruleset, RulesetAttr, RulesetCreated,
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
    /// Readable (and executable) files and directory trees.
    pub read: &'a [PathBuf],
    /// Readable and writable files and directory trees.
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
        let (opened, missing) = openable(paths);
        skipped.extend(missing);
        created = created
            .add_rules(path_beneath_rules(opened, access))
            .map_err(text)?;
    }
    for port in rules.tcp_connect.unwrap_or_default() {
        created = created
            .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
            .map_err(text)?;
    }
    Ok((LandlockRuleset(created), skipped))
}

/// The paths of `paths` that exist, and the others with the reason.
fn openable(paths: &[PathBuf]) -> (Vec<&Path>, Vec<(PathBuf, String)>) {
    let mut opened = Vec::new();
    let mut missing = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(_) => opened.push(p.as_path()),
            Err(e) => missing.push((p.clone(), e.to_string())),
        }
    }
    (opened, missing)
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
