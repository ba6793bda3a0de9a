//! The child's environment (Agent Plugins "MCP runtime", seed 002, *Launch
//! stdio servers*): the client-selected base environment filtered by
//! [`EnvPolicy`], the configured `env` overlaid, `PLUGIN_ROOT` and
//! `PLUGIN_DATA` set last.

use std::ffi::{OsStr, OsString};

use crate::config::model::StdioConfig;
use crate::config::vars::{expand, PluginVars, PLUGIN_DATA, PLUGIN_ROOT};

/// Which variables of the base environment a server inherits.
///
/// In both cases the configured `env` is overlaid afterwards and
/// `PLUGIN_ROOT` / `PLUGIN_DATA` are set last, so a plugin can neither remove
/// nor spoof them. The seed allows a client to "inherit, omit, or sanitize
/// ambient environment variables".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvPolicy {
    /// Pass the whole base environment through.
    Inherit,
    /// Pass only `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TMPDIR`, `TMP`,
    /// `TEMP`, `LANG`, `LC_*`, `TZ` and `TERM`, plus on Windows `SYSTEMROOT`,
    /// `SYSTEMDRIVE`, `WINDIR`, `COMSPEC`, `PATHEXT`, `APPDATA`,
    /// `LOCALAPPDATA`, `USERPROFILE`, `PROGRAMFILES` and `PROGRAMDATA`
    /// (names compared case-insensitively on Windows, exactly elsewhere).
    /// Keeps host secrets (API keys, tokens) out of plugin processes.
    #[default]
    AllowList,
}

/// Base variables kept by [`EnvPolicy::AllowList`] on every platform (plus `LC_*`).
const ALLOWED_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG", "TZ", "TERM",
];
/// Additional base variables kept by [`EnvPolicy::AllowList`] on Windows.
const ALLOWED_WINDOWS_VARS: &[&str] = &[
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "PROGRAMFILES",
    "PROGRAMDATA",
];

/// The host process's own environment (`std::env::vars_os()`), the usual
/// `base_env` for [`super::resolve_stdio`].
#[must_use]
pub fn host_base_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

/// The child's complete environment: see [`super::LaunchSpec::env`].
pub(super) fn build_env(
    cfg: &StdioConfig,
    vars: &PluginVars,
    base_env: &[(OsString, OsString)],
    policy: EnvPolicy,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = base_env
        .iter()
        .filter(|(name, _)| policy == EnvPolicy::Inherit || is_allowed(name, cfg!(windows)))
        .cloned()
        .collect();
    for (name, value) in &cfg.env {
        let value = match cfg.literal {
            true => value.clone(),
            false => expand(value, vars),
        };
        set_var(&mut env, OsStr::new(name), value.into());
    }
    for (name, value) in [
        (PLUGIN_ROOT, &vars.plugin_root),
        (PLUGIN_DATA, &vars.plugin_data),
    ] {
        env.retain(|(n, _)| !same_name(n, OsStr::new(name)));
        env.push((name.into(), value.as_os_str().to_os_string()));
    }
    env
}

/// Whether [`EnvPolicy::AllowList`] keeps the base variable `name`.
fn is_allowed(name: &OsStr, windows: bool) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let upper;
    let name = if windows {
        upper = name.to_ascii_uppercase();
        upper.as_str()
    } else {
        name
    };
    ALLOWED_VARS.contains(&name)
        || name.starts_with("LC_")
        || (windows && ALLOWED_WINDOWS_VARS.contains(&name))
}

/// Replaces the value of `name` (keeping its position) or appends it.
fn set_var(env: &mut Vec<(OsString, OsString)>, name: &OsStr, value: OsString) {
    env.retain(|(n, _)| !same_name(n, name) || n == name);
    match env.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = value,
        None => env.push((name.to_os_string(), value)),
    }
}

/// The value of `name` in `env` (the last one wins; names compare as on the platform).
pub(super) fn env_lookup<'a>(env: &'a [(OsString, OsString)], name: &OsStr) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(n, _)| same_name(n, name))
        .map(|(_, v)| v.as_os_str())
}

/// Environment names are case-insensitive on Windows.
fn same_name(a: &OsStr, b: &OsStr) -> bool {
    if cfg!(windows) {
        a.to_string_lossy()
            .eq_ignore_ascii_case(&b.to_string_lossy())
    } else {
        a == b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_names() {
        for name in ["PATH", "HOME", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR"] {
            assert!(is_allowed(OsStr::new(name), false), "{name}");
        }
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "path",
            "LANGUAGE",
            "SYSTEMROOT",
            "GITHUB_TOKEN",
        ] {
            assert!(!is_allowed(OsStr::new(name), false), "{name}");
        }
        assert!(is_allowed(OsStr::new("SystemRoot"), true));
        assert!(is_allowed(OsStr::new("Path"), true));
        assert!(!is_allowed(OsStr::new("OPENAI_API_KEY"), true));
    }
}
