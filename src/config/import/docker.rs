//! The `docker run` options a registry package's `runtimeArguments` may not
//! give: those that hand the container the host (its devices, capabilities,
//! namespaces, files read into the environment, a host path the publisher
//! chose). A `server.json` is published by anyone; starting its server must
//! not give it more than a container. A bind mount whose host path is an
//! input (the registry's filesystem sample: `--mount
//! type=bind,src={source_path},…`) is the user's choice, so it is kept.
//!
//! Checked three times: the file's text at import ([`check`]: a variable
//! is a placeholder), the same text with every input that has a default
//! replaced by it (the default is written in the file too), and the
//! resolved `docker` argv ([`check_resolved`]: what `docker` will read,
//! whatever the values were). Values are read as `docker` reads them: a
//! `--mount` value as CSV with keys trimmed and lowercased and quotes
//! taken off, a `--network` value in its long form (`name=host,alias=x`)
//! too, and names compared without case.

use serde_json::Value;

/// Options refused whatever their value.
const REFUSED: &[&str] = &[
    "--privileged",
    "--volumes-from",
    "--volume-driver",
    "--cap-add",
    "--device",
    "--device-cgroup-rule",
    "--gpus",
    "--security-opt",
    "--env-file",
    "--label-file",
    "--cidfile",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
    "--cgroup-parent",
];

/// Options refused when their network is the host's or another
/// container's, or comes from a variable (then it cannot be checked).
const NETWORKS: &[&str] = &["--network", "--net"];

/// Options that mount something: refused when the host side is a path
/// written in the file (not an input the user gives).
const MOUNTS: &[&str] = &["--volume", "--mount"];

/// Short options of `docker run` that take a value (the rest of a cluster
/// such as `-itv` is then that value).
const SHORT_WITH_VALUE: &str = "acehlmpuvw";

/// A mount option found in an argv: the argument that holds its value,
/// the byte offset of the value in it (0: the whole argument), the option.
struct Mount {
    arg: usize,
    at: usize,
    option: &'static str,
}

/// Checks `args` (the runtime arguments, before the image, as the file
/// writes them: a variable is a `${…}` placeholder).
///
/// # Errors
/// Naming the refused option (from the lists above, never the argument's
/// text) and why.
pub(super) fn check(args: &[Value]) -> Result<(), String> {
    let args = strings(args);
    for mount in scan(&args)? {
        let value = &args[mount.arg][mount.at..];
        for source in sources(mount.option, value)? {
            if !chosen_by_user(&source) && host_path(&source) {
                return Err(written_path(mount.option));
            }
        }
    }
    Ok(())
}

/// Checks `resolved`, the `docker` options of a resolved entry (its args
/// before the image), against `file`, the same args before resolution
/// (as long: a value never adds an argument). A mount's host path is kept
/// only where the file's argument gives exactly one input there.
///
/// # Errors
/// As [`check`].
pub(super) fn check_resolved(file: &[Value], resolved: &[Value]) -> Result<(), String> {
    let (file, resolved) = (strings(file), strings(resolved));
    for mount in scan(&resolved)? {
        let arg = resolved[mount.arg];
        let prefix = &arg[..mount.at];
        let from_file = file
            .get(mount.arg)
            .and_then(|f| f.strip_prefix(prefix))
            .and_then(|value| sources(mount.option, value).ok())
            .is_some_and(|s| !s.is_empty() && s.iter().all(|s| chosen_by_user(s)));
        for source in sources(mount.option, &arg[mount.at..])? {
            if !from_file && host_path(&source) {
                return Err(written_path(mount.option));
            }
        }
    }
    Ok(())
}

fn strings(args: &[Value]) -> Vec<&str> {
    args.iter().map(|a| a.as_str().unwrap_or("")).collect()
}

/// Refuses the options of [`REFUSED`] and a host network, and lists the
/// mounts for the caller to judge.
fn scan(args: &[&str]) -> Result<Vec<Mount>, String> {
    let mut mounts = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let found = match (arg.strip_prefix("--"), arg.strip_prefix('-')) {
            (Some(long), _) => long_option(args, i, long)?,
            (None, Some(cluster)) => short_mount(i, cluster),
            (None, None) => None,
        };
        mounts.extend(found.filter(|m| m.arg < args.len()));
    }
    Ok(mounts)
}

/// Long option `--<long>` at `args[i]`: refused, its network checked, or
/// the mount it is.
fn long_option(args: &[&str], i: usize, long: &str) -> Result<Option<Mount>, String> {
    let (name, (arg, at)) = match long.split_once('=') {
        Some((name, _)) => (format!("--{name}"), (i, name.len() + 3)),
        None => (format!("--{long}"), (i + 1, 0)),
    };
    if let Some(known) = REFUSED.iter().find(|r| **r == name) {
        return Err(refused(known));
    }
    if let Some(known) = NETWORKS.iter().find(|r| **r == name) {
        check_network(known, args.get(arg).map_or("", |a| &a[at..]))?;
    }
    let mount = MOUNTS.iter().find(|r| **r == name);
    Ok(mount.map(|option| Mount { arg, at, option }))
}

/// The `-v` in short-option cluster `-<cluster>` at `args[i]`, if any:
/// its value is the rest of the cluster (after one `=`), or the next
/// argument.
fn short_mount(i: usize, cluster: &str) -> Option<Mount> {
    for (at, c) in cluster.char_indices() {
        if c == 'v' {
            // `-v=x` gives `x`, as docker's flag parser reads it.
            let skip = usize::from(cluster[at + 1..].starts_with('='));
            let rest = at + 1 + skip < cluster.len();
            return Some(Mount {
                arg: if rest { i } else { i + 1 },
                at: if rest { at + 2 + skip } else { 0 },
                option: "-v",
            });
        }
        if SHORT_WITH_VALUE.contains(c) || !c.is_ascii_alphabetic() {
            break;
        }
    }
    None
}

/// The fields of a CSV value as `docker` reads `--mount` and the long
/// `--network` form: split at commas outside double quotes, quotes taken
/// off, each `(key, value)` trimmed, the key's ASCII letters lowercased
/// (a field without `=` is a key with an empty value; a key with another
/// character than ASCII is refused by the callers: `docker` lowercases
/// with Go's Unicode rules, `volume-drİver` reads as `volume-driver`).
fn fields(value: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    for c in value.chars().chain(std::iter::once(',')) {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                let (key, value) = field.split_once('=').unwrap_or((&field, ""));
                out.push((key.trim().to_ascii_lowercase(), value.trim().to_owned()));
                field.clear();
            }
            c => field.push(c),
        }
    }
    out
}

/// The host sides of a mount value (`-v src:dst[:opts]`, `--mount
/// type=bind,src=…,dst=…`; every `src` / `source` field).
///
/// # Errors
/// A `--mount` with `volume-opt` (a volume driver's options can bind a
/// host path: `o=bind,device=/`) or a `volume-driver` other than `local`.
fn sources(option: &str, value: &str) -> Result<Vec<String>, String> {
    if option != "--mount" {
        return Ok(vec![volume_source(value).to_owned()]);
    }
    let mut found = Vec::new();
    for (key, value) in fields(value) {
        if !key.is_ascii() {
            return Err(non_ascii_key(option));
        }
        match key.as_str() {
            "src" | "source" => found.push(value),
            "volume-opt" => {
                return Err(format!(
                    "docker option {option} with volume-opt is refused: a volume driver's \
                     options can mount a host path"
                ))
            }
            "volume-driver" if !value.eq_ignore_ascii_case("local") => {
                return Err(format!(
                    "docker option {option} with a volume driver other than local is refused"
                ))
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Refuses a network that is the host's (`host`, any case) or another
/// container's (`container:…`), or one from a variable; in the short form
/// or the long one (`name=host,alias=x`).
fn check_network(option: &str, value: &str) -> Result<(), String> {
    if value.contains('=') && fields(value).iter().any(|(key, _)| !key.is_ascii()) {
        return Err(non_ascii_key(option));
    }
    let names: Vec<String> = match value.contains('=') {
        true => fields(value)
            .into_iter()
            .filter(|(key, _)| key == "name")
            .map(|(_, name)| name)
            .collect(),
        false => vec![value.replace('"', "").trim().to_owned()],
    };
    let bad = |name: &String| {
        let name = name.to_lowercase();
        name == "host" || name.starts_with("container:") || name.contains("${")
    };
    match value.contains("${") || names.iter().any(bad) {
        true => Err(format!(
            "docker option {option} with the host's network or another container's (or a \
             value from a variable) is refused: it would give the container the host's \
             network"
        )),
        false => Ok(()),
    }
}

/// A host side that is exactly one input (`${input:x}`): the user's choice.
fn chosen_by_user(source: &str) -> bool {
    source.starts_with("${input:") && source.find('}') == Some(source.len() - 1)
}

/// A host side that names a host path (not a named volume), or may: a
/// path (`/`, `\`, UNC `\\…`, `~`, `.`), a Windows drive (`C:`, `c:/…`,
/// `C:\…`), a single letter (never a volume name: those have two
/// characters or more; it is a drive cut at its colon), or a variable.
fn host_path(source: &str) -> bool {
    let b = source.as_bytes();
    let drive =
        b.first().is_some_and(u8::is_ascii_alphabetic) && matches!(b.get(1), None | Some(b':'));
    drive || source.contains(['/', '\\', '~']) || source.starts_with('.') || source.contains("${")
}

fn written_path(option: &str) -> String {
    format!(
        "docker option {option} with a host path written in the file (or its default) is \
         refused: only a path the user gives (an input) may be mounted"
    )
}

/// The host side of `-v src:dst[:opts]`: up to the first `:` outside a
/// `${…}` placeholder (whose own `:` is not the separator) and past a
/// Windows drive (`C:\…`, `c:/…`: docker on Windows reads the drive's
/// colon as part of the path).
fn volume_source(spec: &str) -> &str {
    let mut inside = false;
    let b = spec.as_bytes();
    let drive = b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.get(1) == Some(&b':')
        && matches!(b.get(2), Some(b'/' | b'\\'));
    let start = if drive { 2 } else { 0 };
    for (at, c) in spec.char_indices().skip(start) {
        match c {
            '{' if spec[..at].ends_with('$') => inside = true,
            '}' => inside = false,
            ':' if !inside => return &spec[..at],
            _ => {}
        }
    }
    spec
}

fn non_ascii_key(option: &str) -> String {
    format!(
        "docker option {option} with a key of other characters than ASCII is refused: docker \
         reads its keys with other case rules"
    )
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
            &["--privileged=true"],
            &["-v", "/:/host"],
            &["-itv/:/host"],
            &["-v=/:/x"],
            &["--volume=/:/host"],
            &["--network", "host"],
            &["--net=host"],
            &["--net=HOST"],
            &["--network", "name=host"],
            &["--network=name=host,alias=x"],
            &["--network", "NAME = Host"],
            &["--network=container:other"],
            &["--network", "${input:net}"],
            &["--pid=host"],
            &["--cap-add", "SYS_ADMIN"],
            &["--gpus", "all"],
            &["--volume-driver=x"],
            &["--env-file", "/etc/shadow"],
            &["--mount", "type=bind,src=/,dst=/host"],
            &["--mount", "type=bind,SRC=/,dst=/x"],
            &["--mount", "type=bind,Source=/,dst=/x"],
            &["--mount", "type=bind,\"source=/\",dst=/x"],
            &["--mount", "type=bind, src=/,dst=/x"],
            &["--mount", "type=bind,src=v,src=/etc,dst=/x"],
            &[
                "--mount",
                "type=volume,src=v,dst=/x,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/",
            ],
            &["--mount", "type=volume,dst=/x,volume-driver=evil"],
            &["--mount=type=bind,source=${input:a}x,dst=/h"],
            &["-v", "${input:dir}/../..:/h"],
            &["-v", "C:\\Users\\me\\.ssh:/ssh:ro"],
            &["-v", "c:/Users:/host"],
            &["-v", "C:/:/host"],
            &["-v=C:\\:/host"],
            &["-v", "C::/host"],
            &["-v", "\\\\server\\share:/host"],
            &["--mount", "type=bind,src=C:,dst=/host"],
            &["--mount", "type=bind,src=c:\\,dst=/host"],
            &["--mount", "type=volume,dst=/x,volume-dr\u{130}ver=evil"],
            &["--mount", "type=volume,src=v,dst=/x,\u{212a}ey=v"],
            &["--network", "n\u{130}me=host"],
            &["--cidfile", "/etc/x"],
            &["--cidfile=/etc/x"],
            &["--label-file", "/etc/shadow"],
        ] {
            assert!(check(&args(bad)).is_err(), "{bad:?}");
        }
        for good in [
            &["-i", "--rm"][..],
            &["--network", "bridge"],
            &["--network=name=mynet,alias=x"],
            &["-e", "VALUE=v"],
            &["-evar=1"],
            &["-p", "8080:80"],
            &["--memory=1g"],
            &[
                "--mount",
                "type=bind,src=${input:source_path},dst=${input:target_path}",
            ],
            &[
                "--mount",
                "type=volume,src=cache,dst=/c,volume-driver=local",
            ],
            &["-v", "${input:dir}:/project"],
            &["-v", "cache:/cache"],
        ] {
            assert_eq!(check(&args(good)), Ok(()), "{good:?}");
        }
        let err = check(&args(&["--privileged"])).unwrap_err();
        assert!(err.contains("--privileged"), "{err}");
    }

    #[test]
    fn resolved_options_are_checked_again_inputs_keep_their_path() {
        let file = args(&["run", "-v", "${input:dir}:/p", "${input:flags}"]);
        let ok = args(&["run", "-v", "/home/me:/p", "--read-only"]);
        assert_eq!(check_resolved(&file, &ok), Ok(()));
        for bad in [
            &["run", "-v", "/home/me:/p", "--privileged"][..],
            &["run", "-v", "/home/me:/p", "--network=host"],
            &["run", "-v", "/home/me:/p", "-v/:/h"],
            &["run", "-v", "/home/me:/p", "--mount=type=bind,src=/,dst=/h"],
        ] {
            assert!(check_resolved(&file, &args(bad)).is_err(), "{bad:?}");
        }
        // The mount's value given whole by an input is the user's; the
        // same path written beside an input's text is not.
        let file = args(&[
            "run",
            "--mount=type=bind,src=${input:s},dst=/h",
            "-v",
            "x${input:d}",
        ]);
        let ok = args(&[
            "run",
            "--mount=type=bind,src=/data,dst=/h",
            "-v",
            "xcache:/c",
        ]);
        assert_eq!(check_resolved(&file, &ok), Ok(()));
        let bad = args(&["run", "--mount=type=bind,src=/data,dst=/h", "-v", "x/:/c"]);
        assert!(check_resolved(&file, &bad).is_err());
    }
}
