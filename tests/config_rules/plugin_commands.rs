//! Stdio launch resolution inside a plugin: commands, PATH, plugin variables, env allow-list, cwd and PLUGIN_DATA (the tests of `config_rules.rs` that did not fit in one file).

use super::*;

struct Plugin {
    tmp: tempfile::TempDir,
    vars: PluginVars,
}

/// `<tmp>/root/bin/server` (executable), `<tmp>/data`, `<tmp>/outside/tool`.
fn plugin() -> Plugin {
    plugin_at("root")
}

fn plugin_at(root_name: &str) -> Plugin {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(root_name);
    let data = tmp.path().join("data");
    for dir in [
        root.join("bin"),
        root.join("work"),
        data.clone(),
        tmp.path().join("outside"),
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    for file in [root.join("bin/server"), tmp.path().join("outside/tool")] {
        std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap();
        make_executable(&file);
    }
    Plugin {
        vars: PluginVars {
            plugin_root: root,
            plugin_data: data,
        },
        tmp,
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

fn stdio(command: &str) -> StdioConfig {
    StdioConfig {
        command: command.into(),
        args: vec![],
        env: BTreeMap::new(),
        cwd: None,
        literal: false,
    }
}

fn resolve(cfg: &StdioConfig, p: &Plugin) -> Result<LaunchSpec, ahp_mcp_host::error::HostError> {
    resolve_stdio(cfg, &p.vars, &host_base_env(), EnvPolicy::AllowList)
}

fn env_value<'a>(spec: &'a LaunchSpec, name: &str) -> Option<&'a OsStr> {
    spec.env
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

#[test]
fn dot_command_resolves_inside_root() {
    let p = plugin();
    let spec = resolve(&stdio("./bin/server"), &p).unwrap();
    let expected = p
        .vars
        .plugin_root
        .join("bin/server")
        .canonicalize()
        .unwrap();
    assert_eq!(spec.program, expected);
}

#[test]
fn dot_command_escaping_with_dotdot_is_refused() {
    let p = plugin();
    let err = resolve(&stdio("./../outside/tool"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
    assert!(err.message.contains("./../outside/tool"), "{}", err.message);
    let err = resolve(&stdio("./bin/../../outside/tool"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
}

#[cfg(unix)]
#[test]
fn dot_command_escaping_through_symlink_is_refused() {
    let p = plugin();
    let link = p.vars.plugin_root.join("bin/linked");
    std::os::unix::fs::symlink(p.tmp.path().join("outside/tool"), &link).unwrap();
    let err = resolve(&stdio("./bin/linked"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
    // A symlinked directory pointing outside is refused as well.
    std::os::unix::fs::symlink(p.tmp.path().join("outside"), p.vars.plugin_root.join("ext"))
        .unwrap();
    assert_eq!(
        resolve(&stdio("./ext/tool"), &p).unwrap_err().code,
        ErrorCode::CommandOutsideRoot
    );
    // A symlink that stays inside the root is fine.
    std::os::unix::fs::symlink(
        p.vars.plugin_root.join("bin/server"),
        p.vars.plugin_root.join("s"),
    )
    .unwrap();
    assert!(resolve(&stdio("./s"), &p).is_ok());
}

#[test]
fn missing_dot_command_is_not_found() {
    let p = plugin();
    let err = resolve(&stdio("./bin/nope"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("./bin/nope"), "{}", err.message);
}

#[cfg(unix)]
#[test]
fn bare_command_resolves_through_host_path() {
    let p = plugin();
    let spec = resolve(&stdio("sh"), &p).unwrap();
    assert!(
        spec.program.is_absolute() && spec.program.is_file(),
        "{:?}",
        spec.program
    );
    assert_eq!(spec.program.file_name(), Some(OsStr::new("sh")));
}

#[cfg(unix)]
#[test]
fn configured_path_does_not_affect_bare_resolution() {
    let p = plugin();
    let mut cfg = stdio("server");
    // The plugin points PATH at its own bin/: resolution must ignore it.
    cfg.env.insert(
        "PATH".into(),
        p.vars.plugin_root.join("bin").to_string_lossy().into(),
    );
    let err = resolve(&cfg, &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("\"server\""), "{}", err.message);
    // …but the child still receives the configured PATH.
    let mut cfg = stdio("sh");
    cfg.env.insert("PATH".into(), "/nowhere".into());
    let spec = resolve(&cfg, &p).unwrap();
    assert_eq!(env_value(&spec, "PATH"), Some(OsStr::new("/nowhere")));
}

#[test]
fn bare_command_not_found() {
    let p = plugin();
    let err = resolve(&stdio("definitely-not-a-real-command-4f1c"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("definitely-not-a-real-command-4f1c"));
}

#[test]
fn absolute_command_must_exist() {
    let p = plugin();
    let abs = p.tmp.path().join("outside/tool");
    assert_eq!(
        resolve(&stdio(abs.to_str().unwrap()), &p).unwrap().program,
        abs
    );
    let missing = p.tmp.path().join("outside/missing");
    assert_eq!(
        resolve(&stdio(missing.to_str().unwrap()), &p)
            .unwrap_err()
            .code,
        ErrorCode::CommandNotFound
    );
}

#[test]
fn plugin_variables_cannot_be_spoofed() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.env.insert("PLUGIN_ROOT".into(), "/evil/root".into());
    cfg.env.insert("PLUGIN_DATA".into(), "/evil/data".into());
    let base = vec![(OsString::from("PLUGIN_DATA"), OsString::from("/ambient"))];
    for policy in [EnvPolicy::Inherit, EnvPolicy::AllowList] {
        let spec = resolve_stdio(&cfg, &p.vars, &base, policy).unwrap();
        assert_eq!(
            env_value(&spec, "PLUGIN_ROOT"),
            Some(p.vars.plugin_root.as_os_str())
        );
        assert_eq!(
            env_value(&spec, "PLUGIN_DATA"),
            Some(p.vars.plugin_data.as_os_str())
        );
        let count = |n: &str| spec.env.iter().filter(|(k, _)| k == n).count();
        assert_eq!((count("PLUGIN_ROOT"), count("PLUGIN_DATA")), (1, 1));
        let last: Vec<&OsString> = spec.env.iter().rev().take(2).map(|(k, _)| k).collect();
        assert_eq!(last, ["PLUGIN_DATA", "PLUGIN_ROOT"]);
    }
}

#[test]
fn allow_list_drops_ambient_secrets_inherit_keeps_them() {
    let p = plugin();
    let base: Vec<(OsString, OsString)> = [
        ("HOME", "/home/u"),
        ("OPENAI_API_KEY", "sk-x"),
        ("LC_ALL", "C"),
    ]
    .iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    let spec = resolve_stdio(&stdio("./bin/server"), &p.vars, &base, EnvPolicy::AllowList).unwrap();
    assert_eq!(env_value(&spec, "OPENAI_API_KEY"), None);
    assert_eq!(env_value(&spec, "HOME"), Some(OsStr::new("/home/u")));
    assert_eq!(env_value(&spec, "LC_ALL"), Some(OsStr::new("C")));
    let spec = resolve_stdio(&stdio("./bin/server"), &p.vars, &base, EnvPolicy::Inherit).unwrap();
    assert_eq!(env_value(&spec, "OPENAI_API_KEY"), Some(OsStr::new("sk-x")));
}

#[test]
fn args_env_cwd_are_expanded_command_is_not() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.args = vec![
        "--root=${PLUGIN_ROOT}".into(),
        "${PLUGIN_DATA}/db".into(),
        "$HOME".into(),
    ];
    cfg.env.insert("DB".into(), "${PLUGIN_DATA}/db".into());
    cfg.cwd = Some("${PLUGIN_ROOT}/work".into());
    let spec = resolve(&cfg, &p).unwrap();
    let root = p.vars.plugin_root.to_str().unwrap();
    let data = p.vars.plugin_data.to_str().unwrap();
    assert_eq!(
        spec.args,
        [
            format!("--root={root}"),
            format!("{data}/db"),
            "$HOME".into()
        ]
    );
    assert_eq!(
        env_value(&spec, "DB"),
        Some(OsStr::new(&format!("{data}/db")))
    );
    assert_eq!(spec.cwd, PathBuf::from(format!("{root}/work")));
}

#[cfg(unix)]
#[test]
fn expansion_is_single_pass() {
    // The plugin root's own path contains the text "${PLUGIN_DATA}".
    let p = plugin_at("${PLUGIN_DATA}");
    let mut cfg = stdio("./bin/server");
    cfg.args = vec!["${PLUGIN_ROOT}".into()];
    let spec = resolve(&cfg, &p).unwrap();
    assert_eq!(spec.args, [p.vars.plugin_root.to_str().unwrap()]);
    assert!(spec.args[0].ends_with("/${PLUGIN_DATA}"));
}

#[test]
fn cwd_defaults_to_plugin_root() {
    let p = plugin();
    let spec = resolve(&stdio("./bin/server"), &p).unwrap();
    assert_eq!(spec.cwd, p.vars.plugin_root);
}

#[test]
fn relative_cwd_resolves_against_root_and_missing_cwd_fails() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.cwd = Some("work".into());
    assert_eq!(
        resolve(&cfg, &p).unwrap().cwd,
        p.vars.plugin_root.join("work")
    );
    cfg.cwd = Some("${PLUGIN_DATA}/not-created".into());
    let err = resolve(&cfg, &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::SpawnFailed);
    assert!(err.message.contains("not-created"), "{}", err.message);
}

#[test]
fn plugin_data_dir_is_created_sanitized_and_survives() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("plugin-data");
    let dir = ensure_plugin_data_dir(&base, "acme.tools").unwrap();
    assert_eq!(dir, base.join("acme.tools"));
    assert!(dir.is_dir());
    std::fs::write(dir.join("state.db"), "keep").unwrap();
    assert_eq!(ensure_plugin_data_dir(&base, "acme.tools").unwrap(), dir);
    assert_eq!(
        std::fs::read_to_string(dir.join("state.db")).unwrap(),
        "keep"
    );

    let slash = ensure_plugin_data_dir(&base, "acme/tools").unwrap();
    let colon = ensure_plugin_data_dir(&base, "acme:tools").unwrap();
    assert_eq!(
        slash.parent(),
        Some(base.as_path()),
        "no nested directory from '/'"
    );
    assert_ne!(slash, colon);
    assert!(slash
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("acme_tools-"));
    let up = ensure_plugin_data_dir(&base, "..").unwrap();
    assert_eq!(
        up.parent(),
        Some(base.as_path()),
        "'..' stays inside data_dir"
    );
}
