//! The sandbox of a stdio server (issue 32): from its profile
//! ([`SandboxProfile`]) and launch, at each start, the folders it may read
//! and write, its proxy, its environment and the OS mechanism that
//! enforces them ([`prepare`]); what is in effect ([`SandboxReport`], JS
//! `serverInfo(id).sandbox`); and whether a failed start was the sandbox's
//! doing ([`looks_denied`]).
//!
//! | platform | filesystem | network | mechanism |
//! | --- | --- | --- | --- |
//! | Linux | read / write allow-lists (Landlock ABI ≥ 1; truncate ABI 3, device ioctl ABI 5) | TCP connect only to the host's proxy port, no TCP bind (ABI ≥ 4); UDP (DNS) and pathname Unix sockets not filtered; abstract Unix sockets and signals scoped (ABI 6) | Landlock in the child before `exec` |
//! | macOS | read / write allow-lists | outbound TCP only to the proxy on `localhost`; UDP and Unix sockets denied | `sandbox-exec` (Seatbelt) profile, untested here |
//! | Windows | not enforced | not enforced | none: `enforce: 'required'` fails `sandbox_unavailable` |
//!
//! Always readable: the system folders ([`system_reads`]), the plugin root,
//! the program's and its interpreter's install prefix
//! and a package manager's cache (`runtime`). Always writable:
//! `PLUGIN_DATA` and the server's temp folder `PLUGIN_DATA/.tmp` (`TMPDIR`,
//! `TMP`, `TEMP`), `/dev/null`. Nothing else, in the home folder or
//! anywhere, unless the profile lists it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::config::launch::LaunchSpec;
use crate::config::sandbox::{expand_path, Enforcement, SandboxNetwork, SandboxProfile};
use crate::config::PluginVars;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, EventSink, LogLevel};

mod enforce;
mod paths;
pub mod proxy;
mod runtime;
// Generated and unit-tested on every platform, used only on macOS.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub mod seatbelt;

#[cfg(unix)]
pub use enforce::Applied;
pub use enforce::ChildSandbox;

/// How the message of a failure the sandbox caused starts (a start
/// failed `sandbox_denied`, or the reason of a crash after `ready`, which
/// the phase machine publishes as `sandbox_denied`).
pub const DENIED_PREFIX: &str = "sandbox denied: ";

/// The name of the server's temp folder inside its `PLUGIN_DATA`.
pub const SANDBOX_TMP_DIR: &str = ".tmp";

/// The sandbox in effect for one start of a server (JS
/// `serverInfo(id).sandbox`, `_meta["ahp-mcp-host/serverInfo"].sandbox`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReport {
    /// `"landlock"` (Linux), `"seatbelt"` (macOS) or `"none"` (Windows, or
    /// a Linux kernel without Landlock).
    pub mechanism: &'static str,
    /// The Landlock ABI of the running kernel (Linux only; `0`: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abi: Option<i32>,
    /// `"full"`, `"partial"` (see `unenforced`) or `"none"`.
    pub enforced: &'static str,
    /// The parts of the profile this platform does not enforce, each
    /// naming what is missing (`"tcp: Landlock ABI 4 (Linux 6.7)"`).
    pub unenforced: Vec<String>,
    /// The folders and files it may read, and those it may also write.
    pub filesystem: FsReport,
    /// The network policy.
    pub network: SandboxNetwork,
    /// `http://127.0.0.1:<port>`: the host's proxy given to the server
    /// (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`), when its network is not
    /// `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
    /// `best-effort` or `required`.
    pub enforce: Enforcement,
    /// Listed paths that do not exist (left out of the rules).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// The path lists of a [`SandboxReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsReport {
    /// Readable (and executable).
    pub read: Vec<String>,
    /// Readable and writable.
    pub write: Vec<String>,
}

impl SandboxReport {
    /// The `host.sandbox` log line of a start.
    pub fn summary(&self) -> String {
        let network = match &self.network {
            SandboxNetwork::None => "none".to_owned(),
            SandboxNetwork::Loopback => "loopback".to_owned(),
            SandboxNetwork::Hosts(h) => {
                let names: Vec<&str> = h.iter().map(|r| r.text.as_str()).collect();
                format!("allowHosts [{}]", names.join(", "))
            }
        };
        let mechanism = match self.abi {
            Some(abi) => format!("{} (ABI {abi})", self.mechanism),
            None => self.mechanism.to_owned(),
        };
        let mut text = format!(
            "sandbox {mechanism}, enforced {}: read [{}]; write [{}]; network {network}",
            self.enforced,
            self.filesystem.read.join(", "),
            self.filesystem.write.join(", "),
        );
        if let Some(proxy) = &self.proxy {
            text.push_str(&format!(" via proxy {proxy}"));
        }
        if !self.unenforced.is_empty() {
            text.push_str(&format!("; not enforced: {}", self.unenforced.join("; ")));
        }
        text
    }
}

/// A prepared sandbox: the report, the environment to add, and what the
/// spawn applies ([`ChildSandbox`]).
pub struct Prepared {
    /// What is in effect.
    pub report: SandboxReport,
    /// The variables laid over the launch environment (`TMPDIR`, proxy).
    pub env: Vec<(OsString, OsString)>,
    /// What the spawn applies, and the proxy it keeps running.
    pub child: ChildSandbox,
}

/// Prepares the sandbox of one start of server `server_id`: expands the
/// profile's paths for `vars` and the user's home, adds what the runtime
/// needs, creates the temp folder, starts the proxy when the network is
/// not `none`, and builds the OS rules (Linux: the Landlock ruleset).
///
/// # Errors
/// `sandbox_unavailable`: `enforce: 'required'` and a part of the profile
/// is not enforced here (the message lists it), the rules cannot be
/// built, or the proxy cannot listen.
pub fn prepare(
    profile: &SandboxProfile,
    launch: &LaunchSpec,
    vars: &PluginVars,
    (server_id, sink): (&str, &Arc<dyn EventSink>),
) -> HostResult<Prepared> {
    let tmp = vars.plugin_data.join(SANDBOX_TMP_DIR);
    if let Err(e) = paths::reset_tmp(&tmp) {
        let text = format!("sandbox temp folder {}: {e}", tmp.display());
        sink.send(log(LogLevel::Warn, "host.sandbox", Some(server_id), text));
    }
    let (read, write) = rule_paths(profile, launch, vars, &tmp);
    let checked = paths::check_rules(&read, &write);
    for (path, link) in &checked.refused {
        let text = format!(
            "sandbox left out {}: it passes through the link {}, in a folder the server may write",
            path.display(),
            link.display()
        );
        sink.send(log(LogLevel::Warn, "host.sandbox", Some(server_id), text));
    }
    let unavailable = |msg: String| HostError::new(ErrorCode::SandboxUnavailable, msg);
    let (mechanism, abi, unenforced) = enforce::coverage();
    if profile.enforce == Enforcement::Required && !unenforced.is_empty() {
        let msg = format!(
            "the sandbox is required (enforce: 'required') but {mechanism} cannot enforce: {}",
            unenforced.join("; ")
        );
        return Err(unavailable(msg));
    }
    let proxy = match profile.network.uses_proxy() && mechanism != "none" {
        true => Some(
            proxy::start(profile.network.clone(), server_id, sink.clone())
                .map_err(|e| unavailable(format!("the sandbox proxy cannot listen: {e}")))?,
        ),
        false => None,
    };
    let port = proxy.as_ref().map(|p| p.port);
    let mut env = vec![tmp_vars(&tmp)];
    env.extend(port.map(proxy_vars));
    let env = env.into_iter().flatten().collect();
    let real = |paths: &[(PathBuf, PathBuf)]| paths.iter().map(|(_, r)| r.clone()).collect();
    let (real_read, real_write): (Vec<_>, Vec<_>) = (real(&checked.read), real(&checked.write));
    let (child, mut missing) = enforce::build(&real_read, &real_write, port)
        .map_err(|e| unavailable(format!("the sandbox rules cannot be built: {e}")))?;
    missing.extend(checked.refused.iter().map(|(p, _)| p.display().to_string()));
    let child = child.with_proxy(proxy);
    let shown = |paths: &[(PathBuf, PathBuf)]| {
        let listed = paths.iter().map(|(p, _)| p.display().to_string());
        listed.collect()
    };
    let report = SandboxReport {
        mechanism,
        abi,
        enforced: match (mechanism, unenforced.is_empty()) {
            ("none", _) => "none",
            (_, true) => "full",
            (_, false) => "partial",
        },
        unenforced,
        filesystem: FsReport {
            read: shown(&checked.read),
            write: shown(&checked.write),
        },
        network: profile.network.clone(),
        proxy: port.map(|p| format!("http://127.0.0.1:{p}")),
        enforce: profile.enforce,
        missing,
    };
    Ok(Prepared { report, env, child })
}

/// The readable and writable paths of a start, as listed (system
/// folders, the runtime's, the plugin root, the profile's; `PLUGIN_DATA`
/// and `tmp`), each once; the defaults that do not exist are left out.
fn rule_paths(
    profile: &SandboxProfile,
    launch: &LaunchSpec,
    vars: &PluginVars,
    tmp: &Path,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let home = dirs::home_dir();
    let home = home.as_deref();
    let path_var = crate::config::launch::env_var(&launch.env, "PATH");
    // The defaults that do not exist here are left out silently; a
    // listed path that does not is reported (`missing`).
    let exists = |p: &PathBuf| p.exists();
    let mut read: Vec<PathBuf> = system_reads().into_iter().filter(exists).collect();
    let runtime = runtime::runtime_reads(&launch.program, path_var, home);
    read.extend(runtime.into_iter().filter(exists));
    // Not the working folder: an `mcp.json` `cwd` (the plugin's word, not
    // the app's) must not open a folder; the child starts in it anyway.
    read.push(vars.plugin_root.clone());
    let expand = |list: &[String]| -> Vec<PathBuf> {
        list.iter()
            .filter_map(|e| expand_path(e, vars, home))
            .collect()
    };
    read.extend(expand(&profile.read));
    let mut write = vec![vars.plugin_data.clone(), tmp.to_path_buf()];
    write.extend(system_writes().into_iter().filter(exists));
    write.extend(expand(&profile.write));
    (dedup(read), dedup(write))
}

/// The paths of `paths`, each once, in first-seen order.
fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for p in paths {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn tmp_vars(tmp: &Path) -> Vec<(OsString, OsString)> {
    ["TMPDIR", "TMP", "TEMP"]
        .into_iter()
        .map(|k| (k.into(), tmp.as_os_str().to_owned()))
        .collect()
}

/// The proxy variables every common client reads (upper and lower case),
/// `NODE_USE_ENV_PROXY=1` (Node ≥ 22.21 / 24.5: `fetch` and `http` honour
/// them), and an empty `NO_PROXY` (a direct connection is refused anyway).
fn proxy_vars(port: u16) -> Vec<(OsString, OsString)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut vars: Vec<(OsString, OsString)> = Vec::new();
    for k in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        vars.push((k.into(), url.clone().into()));
        vars.push((k.to_ascii_lowercase().into(), url.clone().into()));
    }
    vars.push(("NO_PROXY".into(), "".into()));
    vars.push(("no_proxy".into(), "".into()));
    vars.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
    vars
}

/// The system folders every sandboxed server may read: libraries,
/// programs, configuration (`/etc`: resolver, certificates), `/proc` and
/// `/sys`, the random devices (Linux); the macOS equivalents.
fn system_reads() -> Vec<PathBuf> {
    let list: &[&str] = if cfg!(target_os = "macos") {
        &[
            "/usr",
            "/bin",
            "/sbin",
            "/System",
            "/Library",
            "/private/etc",
            "/etc",
            "/private/var/db/timezone",
            "/opt/homebrew",
            "/dev",
        ]
    } else {
        &[
            "/usr",
            "/bin",
            "/sbin",
            "/lib",
            "/lib32",
            "/lib64",
            "/libx32",
            "/etc",
            "/proc",
            "/sys",
            "/run/systemd/resolve",
            "/nix/store",
            "/dev/urandom",
            "/dev/random",
        ]
    };
    list.iter().map(PathBuf::from).collect()
}

/// The device files every sandboxed server may write.
fn system_writes() -> Vec<PathBuf> {
    ["/dev/null", "/dev/zero", "/dev/full"]
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

/// Whether the stderr text of a sandboxed server that failed looks like
/// a sandbox refusal: `EACCES` / `EPERM` (Node's `code`), "Permission
/// denied", "Operation not permitted" (libc's and Python's texts).
pub fn looks_denied(stderr: &str) -> bool {
    let lower = stderr.to_ascii_lowercase();
    [
        "eacces",
        "eperm",
        "permission denied",
        "operation not permitted",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_read_from_common_error_texts() {
        assert!(looks_denied(
            "Error: EACCES: permission denied, open '/root/x'"
        ));
        assert!(looks_denied(
            "PermissionError: [Errno 13] Permission denied: '/x'"
        ));
        assert!(looks_denied("connect EPERM 1.2.3.4:443"));
        assert!(!looks_denied("Error: Cannot find module 'x'"));
    }

    #[test]
    fn proxy_variables_name_the_port_and_clear_no_proxy() {
        let vars = proxy_vars(4242);
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("HTTPS_PROXY"), Some("http://127.0.0.1:4242".into()));
        assert_eq!(get("all_proxy"), Some("http://127.0.0.1:4242".into()));
        assert_eq!(get("NO_PROXY"), Some("".into()));
    }
}
