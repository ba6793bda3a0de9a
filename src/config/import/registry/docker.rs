//! The `docker run` options a registry package's `runtimeArguments` may not
//! give: those that hand the container the host (its devices, capabilities,
//! namespaces, files read into the environment, a host path the publisher
//! chose). A `server.json` is published by anyone; starting its server must
//! not give it more than a container. A bind mount whose host path is an
//! input (the registry's filesystem sample: `--mount
//! type=bind,src={source_path},…`) is the user's choice, so it is kept.

use serde_json::Value;

/// Options refused whatever their value.
const REFUSED: &[&str] = &[
    "--privileged",
    "--volumes-from",
    "--cap-add",
    "--device",
    "--device-cgroup-rule",
    "--security-opt",
    "--env-file",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
    "--cgroup-parent",
];

/// Options refused when their value is `host` or comes from a variable
/// (then it cannot be checked here).
const NAMESPACES: &[&str] = &["--network", "--net"];

/// Options that mount something: refused when the host side is a path
/// written in the file (not an input the user gives).
const MOUNTS: &[&str] = &["--volume", "--mount"];

/// Short options of `docker run` that take a value (the rest of a cluster
/// such as `-itv` is then that value).
const SHORT_WITH_VALUE: &str = "acehlmpuvw";

/// Checks `args` (the runtime arguments, before the image).
///
/// # Errors
/// Naming the refused option (from the lists above, never the argument's
/// text) and why.
pub(super) fn check(args: &[Value]) -> Result<(), String> {
    let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
    for (i, arg) in args.iter().enumerate() {
        let next = || args.get(i + 1).copied().unwrap_or("");
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (format!("--{name}"), Some(value)),
                None => (format!("--{long}"), None),
            };
            let value = || inline.unwrap_or_else(next);
            if let Some(known) = REFUSED.iter().find(|r| **r == name) {
                return Err(refused(known));
            }
            if let Some(known) = NAMESPACES.iter().find(|r| **r == name) {
                if value() == "host" || value().contains("${") {
                    return Err(format!(
                        "docker option {known} with the host's network (or a value from a \
                         variable) is refused: it would give the container the host's network"
                    ));
                }
            }
            if let Some(known) = MOUNTS.iter().find(|r| **r == name) {
                check_mount(known, value())?;
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            for (at, c) in cluster.char_indices() {
                if c == 'v' {
                    let rest = &cluster[at + 1..];
                    check_mount("-v", if rest.is_empty() { next() } else { rest })?;
                }
                if SHORT_WITH_VALUE.contains(c) || !c.is_ascii_alphabetic() {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// A mount (`-v src:dst[:opts]`, `--mount type=bind,src=…,dst=…`) whose
/// host side is a path written in the file is refused; a named volume, or
/// a host path that is exactly one input (`${input:x}`), is kept.
fn check_mount(option: &str, spec: &str) -> Result<(), String> {
    let source = match option {
        "--mount" => spec
            .split(',')
            .find_map(|part| {
                part.strip_prefix("src=")
                    .or_else(|| part.strip_prefix("source="))
            })
            .unwrap_or(""),
        _ => volume_source(spec),
    };
    let input = source.starts_with("${input:") && source.find('}') == Some(source.len() - 1);
    let host_path =
        source.contains(['/', '\\', '~']) || source.starts_with('.') || source.contains("${");
    match input || !host_path {
        true => Ok(()),
        false => Err(format!(
            "docker option {option} with a host path written in the file is refused: only \
             a path the user gives (an input) may be mounted"
        )),
    }
}

/// The host side of `-v src:dst[:opts]`: up to the first `:` outside a
/// `${…}` placeholder (whose own `:` is not the separator).
fn volume_source(spec: &str) -> &str {
    let mut inside = false;
    for (at, c) in spec.char_indices() {
        match c {
            '{' if spec[..at].ends_with('$') => inside = true,
            '}' => inside = false,
            ':' if !inside => return &spec[..at],
            _ => {}
        }
    }
    spec
}

fn refused(option: &str) -> String {
    format!(
        "docker option {option} is refused: it would give the container part of the host \
         (devices, privileges, namespaces or files)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<Value> {
        list.iter().map(|a| Value::from(*a)).collect()
    }

    #[test]
    fn host_giving_options_are_refused_others_pass() {
        for bad in [
            &["--privileged"][..],
            &["-v", "/:/host"],
            &["-itv/:/host"],
            &["--volume=/:/host"],
            &["--network", "host"],
            &["--net=host"],
            &["--network", "${input:net}"],
            &["--pid=host"],
            &["--cap-add", "SYS_ADMIN"],
            &["--env-file", "/etc/shadow"],
            &["--mount", "type=bind,src=/,dst=/host"],
            &["--mount=type=bind,source=${input:a}x,dst=/h"],
            &["-v", "${input:dir}/../..:/h"],
        ] {
            assert!(check(&args(bad)).is_err(), "{bad:?}");
        }
        for good in [
            &["-i", "--rm"][..],
            &["--network", "bridge"],
            &["-e", "VALUE=v"],
            &["-evar=1"],
            &["-p", "8080:80"],
            &["--memory=1g"],
            &[
                "--mount",
                "type=bind,src=${input:source_path},dst=${input:target_path}",
            ],
            &["-v", "${input:dir}:/project"],
            &["-v", "cache:/cache"],
        ] {
            assert_eq!(check(&args(good)), Ok(()), "{good:?}");
        }
        let err = check(&args(&["--privileged"])).unwrap_err();
        assert!(err.contains("--privileged"), "{err}");
    }
}
