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

mod data_dir;
mod env;

pub use data_dir::{ensure_plugin_data_dir, TASK_RECORDS_DIR, TOOL_CACHE_DIR, TOOL_RESULTS_DIR};
pub use env::{host_base_env, EnvPolicy};

use super::command::{dot_relative, is_separator};
use super::model::StdioConfig;
use super::vars::{expand, PluginVars};
use crate::error::{ErrorCode, HostError};
use env::{build_env, env_lookup};

/// The value of variable `name` in a launch environment (the last one
/// wins; names compare as on the platform).
pub fn env_var<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env_lookup(env, OsStr::new(name))
}

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
    /// From a literal entry ([`StdioConfig::literal`]): a failed spawn names
    /// no path.
    pub literal: bool,
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
/// * a `literal` entry (an imported one) expands nothing, and its errors
///   name the field (`cwd`, `command`), never its value.
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
    let literal = cfg.literal;
    let cwd = resolve_cwd(cfg.cwd.as_deref(), vars, literal)?;
    let program =
        resolve_program(&cfg.command, vars, base_env, &cwd).map_err(|e| match literal {
            true => HostError::new(e.code, quiet_command_error(e.code)),
            false => e,
        })?;
    let args = match literal {
        true => cfg.args.clone(),
        false => cfg.args.iter().map(|a| expand(a, vars)).collect(),
    };
    let env = build_env(cfg, vars, base_env, policy);
    Ok(LaunchSpec {
        program,
        args,
        env,
        cwd,
        literal,
    })
}

fn resolve_cwd(
    configured: Option<&str>,
    vars: &PluginVars,
    literal: bool,
) -> Result<PathBuf, HostError> {
    let cwd = match configured {
        Some(c) if literal => vars.plugin_root.join(c),
        Some(c) => vars.plugin_root.join(expand(c, vars)),
        None => vars.plugin_root.clone(),
    };
    if cwd.is_dir() {
        return Ok(cwd);
    }
    let msg = match literal {
        true => {
            "field \"cwd\": the working directory does not exist or is not a directory".to_owned()
        }
        false => format!(
            "working directory {} does not exist or is not a directory",
            cwd.display()
        ),
    };
    Err(HostError::new(ErrorCode::SpawnFailed, msg))
}

/// The message of a `command` that cannot be run, for a literal entry: the
/// field, never its value.
fn quiet_command_error(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::CommandOutsideRoot => "field \"command\": resolves outside the root",
        ErrorCode::CommandNotFound => "field \"command\": the command was not found",
        _ => "field \"command\": the command cannot be started",
    }
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

/// Canonicalizes `path`; on Windows a name without a `PATHEXT` extension
/// tries the `PATHEXT` extensions first, as `cmd.exe` does (`./bin/server`
/// → `bin\server.cmd`, not npm's POSIX shell twin `bin\server`, which
/// Windows cannot run), then the exact name.
fn canonical_with_pathext(path: &Path) -> Option<PathBuf> {
    if !cfg!(windows) {
        return path.canonicalize().ok();
    }
    let pathext = std::env::var_os("PATHEXT").unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".into());
    let pathext = pathext.to_string_lossy();
    let executable = path.extension().is_some_and(|ext| {
        let ext = format!(".{}", ext.to_string_lossy());
        pathext.split(';').any(|e| e.eq_ignore_ascii_case(&ext))
    });
    if executable {
        return path.canonicalize().ok();
    }
    let found = with_extensions(path, &pathext).find_map(|p| p.canonicalize().ok());
    found.or_else(|| path.canonicalize().ok())
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
            literal: false,
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
    fn a_literal_entry_expands_nothing_and_its_errors_show_no_value() {
        let f = fixture();
        let mut cfg = stdio("./bin/server");
        cfg.literal = true;
        cfg.args = vec!["${PLUGIN_DATA}".into()];
        cfg.env = [("V".to_owned(), "${PLUGIN_ROOT}".to_owned())].into();
        let spec = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap();
        assert_eq!(spec.args, ["${PLUGIN_DATA}"]);
        assert_eq!(get(&spec.env, "V"), Some("${PLUGIN_ROOT}"));
        cfg.cwd = Some("missing-s3cr3t-dir".into());
        let err = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::SpawnFailed);
        assert!(err.message.contains("\"cwd\""), "{}", err.message);
        assert!(!err.message.contains("s3cr3t"), "{}", err.message);
        cfg.cwd = None;
        cfg.command = "./bin/s3cr3t-missing".into();
        let err = resolve_stdio(&cfg, &f.vars, &[], EnvPolicy::Inherit).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotFound);
        assert!(!err.message.contains("s3cr3t"), "{}", err.message);
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
}
