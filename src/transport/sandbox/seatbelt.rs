//! macOS: the Seatbelt (SBPL) profile of a sandboxed server, run as
//! `/usr/bin/sandbox-exec -p <profile> <program> <args…>`. Built from the
//! same path lists and network policy as the Linux Landlock ruleset;
//! generated on every platform (and unit-tested here), used only on macOS,
//! where nothing in this project's CI runs: the profile is configured and
//! documented, not tested against a real `sandbox-exec`.
//!
//! The profile denies by default and allows: process fork/exec and
//! signals within the sandbox, `sysctl` reads, Mach service look-ups and
//! POSIX shared memory (the runtime of Node and Python needs them), file
//! metadata reads everywhere (no content), file reads under the read list,
//! reads and writes under the write list, and outbound TCP only to the
//! host's proxy on `localhost` (network `'loopback'` / `{allowHosts}`) or
//! nowhere (`'none'`). Unlike Landlock, Seatbelt also filters UDP (so DNS
//! is closed) and Unix socket connections.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The program that runs a command under a Seatbelt profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The SBPL profile of `read` and `write` (canonical paths: Seatbelt
/// matches resolved paths, `/private/tmp`, not `/tmp`) and `proxy_port`.
pub fn profile(read: &[PathBuf], write: &[PathBuf], proxy_port: Option<u16>) -> String {
    let mut p = String::from(
        "(version 1)\n(deny default)\n(allow process-fork)\n(allow process-exec)\n\
         (allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n\
         (allow ipc-posix-shm)\n(allow file-read-metadata)\n",
    );
    let list = |paths: &[PathBuf]| {
        let mut out = String::new();
        for path in paths {
            let _ = write!(out, " (subpath {})", quoted(&path.to_string_lossy()));
        }
        out
    };
    if !read.is_empty() || !write.is_empty() {
        let _ = writeln!(p, "(allow file-read*{}{})", list(read), list(write));
    }
    if !write.is_empty() {
        let _ = writeln!(p, "(allow file-write*{})", list(write));
    }
    if let Some(port) = proxy_port {
        let _ = writeln!(
            p,
            "(allow network-outbound (remote tcp \"localhost:{port}\"))"
        );
    }
    p
}

/// An SBPL string literal: `"` and `\` escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_lists_paths_and_the_proxy_port_only() {
        let p = profile(
            &[PathBuf::from("/usr"), PathBuf::from("/a \"b\"")],
            &[PathBuf::from("/data")],
            Some(4242),
        );
        assert!(p.starts_with("(version 1)\n(deny default)\n"), "{p}");
        assert!(p.contains("(allow file-read* (subpath \"/usr\") (subpath \"/a \\\"b\\\"\") (subpath \"/data\"))"), "{p}");
        assert!(p.contains("(allow file-write* (subpath \"/data\"))"), "{p}");
        assert!(p.contains("(remote tcp \"localhost:4242\")"), "{p}");
        let closed = profile(&[PathBuf::from("/usr")], &[], None);
        assert!(
            !closed.contains("network-outbound") && !closed.contains("file-write*"),
            "{closed}"
        );
    }
}
