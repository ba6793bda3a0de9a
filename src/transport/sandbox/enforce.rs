//! The OS side of a prepared sandbox, per platform: what the running
//! system can enforce ([`coverage`]), the rules built before the spawn
//! ([`build`]) and applied by it ([`ChildSandbox`]), and what stays alive
//! with the process ([`Applied`]: the proxy).

// A Windows spawn drops the sandbox (nothing is enforced there, and no
// proxy is started), so the spawn-side parts are unused on Windows.
#![cfg_attr(windows, allow(dead_code))]

use std::path::{Path, PathBuf};

use super::proxy::SandboxProxy;

/// What the spawn of a sandboxed server applies.
pub struct ChildSandbox {
    #[cfg(target_os = "linux")]
    ruleset: Option<crate::platform::LandlockRuleset>,
    #[cfg(target_os = "macos")]
    profile: String,
    proxy: Option<SandboxProxy>,
}

/// What stays alive with a sandboxed process: its proxy.
pub struct Applied {
    _proxy: Option<SandboxProxy>,
}

impl ChildSandbox {
    /// This sandbox, keeping `proxy` running while the process lives.
    pub fn with_proxy(self, proxy: Option<SandboxProxy>) -> Self {
        Self { proxy, ..self }
    }

    /// The program and arguments to spawn: on macOS `sandbox-exec -p
    /// <profile> <program> <args…>`, elsewhere unchanged.
    pub fn command(&self, program: &Path, args: &[String]) -> (PathBuf, Vec<String>) {
        #[cfg(target_os = "macos")]
        {
            let mut all = vec!["-p".to_owned(), self.profile.clone()];
            all.push(program.to_string_lossy().into_owned());
            all.extend(args.iter().cloned());
            (PathBuf::from(super::seatbelt::SANDBOX_EXEC), all)
        }
        #[cfg(not(target_os = "macos"))]
        (program.to_path_buf(), args.to_vec())
    }

    /// Sets up `cmd` so its child is restricted before `exec` (Linux:
    /// Landlock; elsewhere nothing to add).
    pub fn apply(&mut self, cmd: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        if let Some(ruleset) = self.ruleset.take() {
            crate::platform::restrict_child(cmd, ruleset);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = cmd;
    }

    /// What must live as long as the process.
    pub fn into_applied(self) -> Applied {
        Applied { _proxy: self.proxy }
    }
}

/// The mechanism of this system, the Landlock ABI (Linux) and the parts
/// of a profile it cannot enforce.
pub fn coverage() -> (&'static str, Option<i32>, Vec<String>) {
    #[cfg(target_os = "linux")]
    {
        let abi = crate::platform::landlock_abi();
        if abi == 0 {
            let why = "Landlock is not available (Linux 5.13 or later with Landlock enabled)";
            let all = [format!("filesystem: {why}"), format!("network: {why}")];
            return ("none", Some(0), all.into());
        }
        ("landlock", Some(abi), landlock_gaps(abi))
    }
    #[cfg(target_os = "macos")]
    {
        match Path::new(super::seatbelt::SANDBOX_EXEC).is_file() {
            true => ("seatbelt", None, Vec::new()),
            false => {
                let why = "/usr/bin/sandbox-exec is missing";
                (
                    "none",
                    None,
                    vec![format!("filesystem: {why}"), format!("network: {why}")],
                )
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let why = "not enforced on this platform (Windows has no sandbox here)";
        (
            "none",
            None,
            vec![format!("filesystem: {why}"), format!("network: {why}")],
        )
    }
}

/// What a kernel of Landlock ABI `abi` (≥ 1) cannot enforce of a profile.
#[cfg(any(target_os = "linux", test))]
fn landlock_gaps(abi: i32) -> Vec<String> {
    let needs = [
        (3, "truncate: Landlock ABI 3 (Linux 6.2)"),
        (
            4,
            "network (TCP connect and bind): Landlock ABI 4 (Linux 6.7)",
        ),
        (5, "device ioctl: Landlock ABI 5 (Linux 6.10)"),
        (
            6,
            "abstract Unix sockets and signals: Landlock ABI 6 (Linux 6.12)",
        ),
    ];
    let missing = needs.iter().filter(|(v, _)| abi < *v);
    missing.map(|(_, t)| (*t).to_owned()).collect()
}

/// Builds the rules of `read`, `write` (resolved, link-free paths) and
/// the proxy `port` (TCP connect only there; none without a proxy).
/// Returns the sandbox and the paths that do not exist (or, on Linux,
/// cannot be opened without following a link).
///
/// # Errors
/// The OS rules cannot be built (the message says why).
pub fn build(
    read: &[PathBuf],
    write: &[PathBuf],
    port: Option<u16>,
) -> Result<(ChildSandbox, Vec<String>), String> {
    let missing = |paths: &[PathBuf]| -> Vec<String> {
        let gone = paths.iter().filter(|p| std::fs::metadata(p).is_err());
        gone.map(|p| p.display().to_string()).collect()
    };
    let mut absent = missing(read);
    absent.extend(missing(write));
    #[cfg(target_os = "linux")]
    {
        let ports: Vec<u16> = port.into_iter().collect();
        let ruleset = match crate::platform::landlock_abi() {
            0 => None,
            _ => {
                let rules = crate::platform::LandlockRules {
                    read,
                    write,
                    tcp_connect: Some(&ports),
                };
                let (ruleset, skipped) = crate::platform::landlock_ruleset(&rules)?;
                for (p, _) in skipped {
                    let p = p.display().to_string();
                    if !absent.contains(&p) {
                        absent.push(p);
                    }
                }
                Some(ruleset)
            }
        };
        let child = ChildSandbox {
            ruleset,
            proxy: None,
        };
        Ok((child, absent))
    }
    #[cfg(target_os = "macos")]
    {
        let real = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
        };
        let profile = super::seatbelt::profile(&real(read), &real(write), port);
        Ok((
            ChildSandbox {
                profile,
                proxy: None,
            },
            absent,
        ))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (read, write, port);
        Ok((ChildSandbox { proxy: None }, absent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_kernels_name_what_they_cannot_enforce() {
        assert!(landlock_gaps(6).is_empty() && landlock_gaps(7).is_empty());
        let gaps = landlock_gaps(3);
        assert_eq!(gaps.len(), 3, "{gaps:?}");
        assert!(gaps[0].starts_with("network (TCP"), "{gaps:?}");
        assert_eq!(landlock_gaps(1).len(), 4);
    }
}
