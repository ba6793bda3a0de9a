//! Turning a validated stdio entry into a concrete process launch.
//!
//! Agent Plugins "MCP runtime" (seed 002), *Launch stdio servers*: `command`
//! is one executable token, `args` are passed separately, a bare command is
//! resolved through the platform executable search, a `./` command against the
//! plugin root with containment enforced, `cwd` defaults to the plugin root,
//! configured `env` is overlaid on the client-selected base environment and
//! `PLUGIN_ROOT` / `PLUGIN_DATA` are set last. Plugin variables are expanded
//! only in `args`, `env` values and `cwd`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::model::StdioConfig;
use super::validate::{dot_relative, is_separator};
use super::vars::{expand, PluginVars, PLUGIN_DATA, PLUGIN_ROOT};
use crate::error::{ErrorCode, HostError};

/// Everything needed to spawn a stdio server process (no shell involved).
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    /// Absolute path of the executable to run.
    pub program: PathBuf,
    /// Arguments after the program name, with plugin variables expanded.
    pub args: Vec<String>,
    /// The complete environment of the child (the child must not inherit
    /// anything else): base environment filtered by [`EnvPolicy`], then the
    /// configured `env` overlay, then `PLUGIN_ROOT` and `PLUGIN_DATA` (last).
    pub env: Vec<(OsString, OsString)>,
    /// Existing working directory of the child.
    pub cwd: PathBuf,
}

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
/// `base_env` for [`resolve_stdio`].
#[must_use]
pub fn host_base_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

/// Resolves a validated stdio entry into a [`LaunchSpec`], at each start.
///
/// * `cwd`: the configured `cwd` with variables expanded (relative paths
///   resolve against `vars.plugin_root`), else the plugin root. It must be an
///   existing directory, otherwise [`ErrorCode::SpawnFailed`] naming it.
/// * `program`: a bare command is looked up in the `PATH` of `base_env` (the
///   host's environment, never the configured `env`; relative `PATH` entries
///   are ignored) with platform rules (`PATHEXT` on Windows); a `./` command is
///   `plugin_root/<rest>` canonicalized, which must be a file inside the
///   canonical plugin root ([`ErrorCode::CommandOutsideRoot`] otherwise, e.g.
///   via `..` or a symlink); an absolute command must be an existing file.
///   Not found → [`ErrorCode::CommandNotFound`] naming the command.
/// * `args` and `env` values: plugin variables expanded (single pass).
/// * environment: see [`LaunchSpec::env`] and [`EnvPolicy`].
///
/// Does not create `PLUGIN_DATA` (see [`ensure_plugin_data_dir`]).
/// Spec: seed 002, *Launch stdio servers*.
///
/// # Errors
/// [`HostError`] with code [`ErrorCode::SpawnFailed`] (missing `cwd` or
/// unresolvable plugin root), [`ErrorCode::CommandNotFound`] or
/// [`ErrorCode::CommandOutsideRoot`]; the message names the cwd or command.
pub fn resolve_stdio(
    cfg: &StdioConfig,
    vars: &PluginVars,
    base_env: &[(OsString, OsString)],
    policy: EnvPolicy,
) -> Result<LaunchSpec, HostError> {
    let cwd = resolve_cwd(cfg.cwd.as_deref(), vars)?;
    let program = resolve_program(&cfg.command, vars, base_env, &cwd)?;
    let args = cfg.args.iter().map(|a| expand(a, vars)).collect();
    let env = build_env(cfg, vars, base_env, policy);
    Ok(LaunchSpec {
        program,
        args,
        env,
        cwd,
    })
}

fn resolve_cwd(configured: Option<&str>, vars: &PluginVars) -> Result<PathBuf, HostError> {
    let cwd = match configured {
        Some(c) => vars.plugin_root.join(expand(c, vars)),
        None => vars.plugin_root.clone(),
    };
    if cwd.is_dir() {
        return Ok(cwd);
    }
    let msg = format!(
        "working directory {} does not exist or is not a directory",
        cwd.display()
    );
    Err(HostError::new(ErrorCode::SpawnFailed, msg))
}

fn resolve_program(
    command: &str,
    vars: &PluginVars,
    base_env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<PathBuf, HostError> {
    if let Some(rest) = dot_relative(command) {
        return resolve_in_root(command, rest, &vars.plugin_root);
    }
    if Path::new(command).is_absolute() {
        return existing_file(command, PathBuf::from(command));
    }
    if command.is_empty() || command.contains(is_separator) {
        let msg = format!("command {command:?} must be a bare name, start with ./ or be absolute");
        return Err(HostError::new(ErrorCode::CommandNotFound, msg));
    }
    search_path(command, base_env, cwd)
}

/// A bare command, searched in the host `PATH` (absolute entries only, so a
/// bare name can never resolve into the plugin's own directory).
fn search_path(
    command: &str,
    base_env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<PathBuf, HostError> {
    let path = env_lookup(base_env, OsStr::new("PATH")).map(absolute_path_entries);
    which::which_in(command, path.filter(|p| !p.is_empty()), cwd).map_err(|_| {
        let msg = format!("command {command:?} not found in PATH");
        HostError::new(ErrorCode::CommandNotFound, msg)
    })
}

fn absolute_path_entries(path: &OsStr) -> OsString {
    let entries = std::env::split_paths(path).filter(|p| p.is_absolute());
    std::env::join_paths(entries).unwrap_or_default()
}

/// A `./` command: `root/rest`, canonical, inside the canonical root.
fn resolve_in_root(command: &str, rest: &str, root: &Path) -> Result<PathBuf, HostError> {
    let not_found = || {
        let msg = format!("command {command:?} not found under the plugin root");
        HostError::new(ErrorCode::CommandNotFound, msg)
    };
    let root = root.canonicalize().map_err(|e| {
        let msg = format!("plugin root {} cannot be resolved: {e}", root.display());
        HostError::new(ErrorCode::SpawnFailed, msg)
    })?;
    let joined = root.join(rest);
    let program = canonical_with_pathext(&joined).ok_or_else(not_found)?;
    if !program.starts_with(&root) || program == root {
        let msg = format!("command {command:?} resolves outside the plugin root");
        return Err(HostError::new(ErrorCode::CommandOutsideRoot, msg));
    }
    existing_file(command, program)
}

/// Canonicalizes `path`; on Windows also tries the `PATHEXT` extensions
/// (`./bin/server` → `bin\server.exe`) when the exact name does not exist.
fn canonical_with_pathext(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    if !cfg!(windows) {
        return None;
    }
    let pathext = std::env::var_os("PATHEXT").unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".into());
    let pathext = pathext.to_string_lossy();
    let found = with_extensions(path, &pathext).find_map(|p| p.canonicalize().ok());
    found
}

/// `path` with each `;`-separated extension of `pathext` appended.
fn with_extensions<'a>(path: &'a Path, pathext: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    pathext
        .split(';')
        .filter(|e| !e.is_empty())
        .map(move |ext| {
            let mut s = path.as_os_str().to_os_string();
            s.push(ext);
            PathBuf::from(s)
        })
}

fn existing_file(command: &str, path: PathBuf) -> Result<PathBuf, HostError> {
    if path.is_file() {
        return Ok(path);
    }
    let msg = format!("command {command:?} not found or not a file");
    Err(HostError::new(ErrorCode::CommandNotFound, msg))
}

// --- environment -------------------------------------------------------------

fn build_env(
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
        set_var(&mut env, OsStr::new(name), expand(value, vars).into());
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

fn env_lookup<'a>(env: &'a [(OsString, OsString)], name: &OsStr) -> Option<&'a OsStr> {
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

// --- PLUGIN_DATA -------------------------------------------------------------

/// Creates (if needed) and returns the plugin's data directory
/// `<data_dir>/<sanitized plugin_id>`.
///
/// The id is reduced to `[A-Za-z0-9._-]` (other characters become `_`, at
/// most 64 of them kept); if anything was changed, or the result would be a
/// special name (`""`, `.`, `..`, a trailing `.`, a Windows device name such
/// as `CON`), `-<8 hex digits>` of a stable FNV-1a hash of the original id is
/// appended so that distinct ids do not share a directory. Uses
/// `create_dir_all` (mode `0700` for created directories on Unix); an existing
/// directory and its contents are left untouched, so data survives restarts
/// and plugin updates (seed 002, *Launch stdio servers*).
///
/// # Errors
/// Any I/O error from creating the directories.
pub fn ensure_plugin_data_dir(data_dir: &Path, plugin_id: &str) -> std::io::Result<PathBuf> {
    let dir = data_dir.join(data_dir_name(plugin_id));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    Ok(dir)
}

/// Directory name for `plugin_id` (see [`ensure_plugin_data_dir`]).
fn data_dir_name(plugin_id: &str) -> String {
    const MAX_LEN: usize = 64;
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let mut name: String = plugin_id
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    let mut changed = name != plugin_id;
    if name.len() > MAX_LEN {
        name.truncate(MAX_LEN);
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
    name.is_empty() || name.ends_with('.') || DEVICES.contains(&stem.as_str()) || numbered
}

/// 64-bit FNV-1a: stable across platforms and Rust versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn stdio(command: &str) -> StdioConfig {
        StdioConfig {
            command: command.into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    fn os_env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn get<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a str> {
        env_lookup(env, OsStr::new(name)).and_then(OsStr::to_str)
    }

    struct Fixture {
        _tmp: tempfile::TempDir,
        vars: PluginVars,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let data = tmp.path().join("data");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(root.join("bin/server"), "#!/bin/sh\n").unwrap();
        std::fs::write(tmp.path().join("outside"), "#!/bin/sh\n").unwrap();
        Fixture {
            vars: PluginVars {
                plugin_root: root,
                plugin_data: data,
            },
            _tmp: tmp,
        }
    }

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

    #[test]
    fn allow_list_filters_base_env() {
        let f = fixture();
        let base = os_env(&[
            ("PATH", "/usr/bin:/bin"),
            ("SECRET_TOKEN", "x"),
            ("LC_ALL", "C"),
        ]);
        let spec =
            resolve_stdio(&stdio("./bin/server"), &f.vars, &base, EnvPolicy::AllowList).unwrap();
        assert_eq!(get(&spec.env, "PATH"), Some("/usr/bin:/bin"));
        assert_eq!(get(&spec.env, "LC_ALL"), Some("C"));
        assert_eq!(get(&spec.env, "SECRET_TOKEN"), None);
        let spec =
            resolve_stdio(&stdio("./bin/server"), &f.vars, &base, EnvPolicy::Inherit).unwrap();
        assert_eq!(get(&spec.env, "SECRET_TOKEN"), Some("x"));
    }

    #[test]
    fn overlay_then_plugin_vars_last() {
        let f = fixture();
        let mut cfg = stdio("./bin/server");
        cfg.env.insert("PATH".into(), "/custom".into());
        cfg.env.insert("DATA".into(), "${PLUGIN_DATA}/x".into());
        cfg.env.insert("PLUGIN_ROOT".into(), "/spoofed".into());
        let base = os_env(&[("PATH", "/usr/bin"), ("PLUGIN_DATA", "/ambient")]);
        let spec = resolve_stdio(&cfg, &f.vars, &base, EnvPolicy::Inherit).unwrap();
        assert_eq!(get(&spec.env, "PATH"), Some("/custom"));
        let data = f.vars.plugin_data.to_str().unwrap();
        assert_eq!(get(&spec.env, "DATA"), Some(format!("{data}/x").as_str()));
        let n = spec.env.len();
        assert_eq!(spec.env[n - 2].0, "PLUGIN_ROOT");
        assert_eq!(spec.env[n - 2].1, f.vars.plugin_root.as_os_str());
        assert_eq!(
            spec.env[n - 1],
            ("PLUGIN_DATA".into(), f.vars.plugin_data.clone().into())
        );
        assert_eq!(
            spec.env.iter().filter(|(k, _)| k == "PLUGIN_ROOT").count(),
            1
        );
    }

    #[test]
    fn relative_cwd_resolves_against_root_and_must_exist() {
        let f = fixture();
        let mut cfg = stdio("./bin/server");
        cfg.cwd = Some("bin".into());
        let spec = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap();
        assert_eq!(spec.cwd, f.vars.plugin_root.join("bin"));
        cfg.cwd = Some("missing".into());
        let err = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::SpawnFailed);
        assert!(err.message.contains("missing"), "{}", err.message);
        cfg.cwd = Some("bin/server".into());
        let err = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::SpawnFailed, "a file is not a cwd");
    }

    #[test]
    fn absolute_command_must_exist() {
        let f = fixture();
        let abs = f.vars.plugin_root.join("bin/server");
        let spec = resolve_stdio(
            &stdio(abs.to_str().unwrap()),
            &f.vars,
            &[],
            EnvPolicy::Inherit,
        )
        .unwrap();
        assert_eq!(spec.program, abs);
        let err = resolve_stdio(
            &stdio("/definitely/not/here"),
            &f.vars,
            &[],
            EnvPolicy::Inherit,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotFound);
        assert!(err.message.contains("/definitely/not/here"));
    }

    #[test]
    fn dot_command_must_be_a_file() {
        let f = fixture();
        let err = resolve_stdio(&stdio("./bin"), &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotFound);
        let err = resolve_stdio(&stdio("./."), &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::CommandOutsideRoot,
            "the root itself is not inside"
        );
    }

    #[test]
    fn relative_path_entries_are_ignored() {
        let f = fixture();
        // "bin" (relative) would find <cwd=root>/bin/server if honoured.
        let base = os_env(&[("PATH", "bin")]);
        let err = resolve_stdio(&stdio("server"), &f.vars, &base, EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotFound);
        assert_eq!(absolute_path_entries(OsStr::new("")), OsString::new());
    }

    #[cfg(unix)]
    #[test]
    fn bare_command_uses_base_env_path() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        let bin = f.vars.plugin_root.join("bin");
        let server = bin.join("server");
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        let base = vec![(OsString::from("PATH"), bin.clone().into_os_string())];
        let spec = resolve_stdio(&stdio("server"), &f.vars, &base, EnvPolicy::Inherit).unwrap();
        assert_eq!(spec.program, server);
        let err = resolve_stdio(&stdio("server"), &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotFound, "no PATH in base env");
    }

    #[test]
    fn pathext_candidates() {
        let got: Vec<PathBuf> = with_extensions(Path::new("r/bin/server"), ".EXE;;.CMD").collect();
        assert_eq!(
            got,
            vec![
                PathBuf::from("r/bin/server.EXE"),
                PathBuf::from("r/bin/server.CMD")
            ]
        );
    }

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
        for special in ["", ".", "..", "CON", "nul.txt", "com1", "x."] {
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
