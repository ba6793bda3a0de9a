//! MCP Registry `server.json`, per the registry's format specification
//! (<https://github.com/modelcontextprotocol/registry/blob/main/docs/reference/server-json/generic-server-json.md>).
//! One host entry per usable way to run the server: a stdio package
//! (`npm` → `npx -y <id>@<version>`, `pypi` → `uvx <id>==<version>`, `oci` →
//! `docker run -i --rm [-e NAME]… <image>`, `nuget` → `dnx <id>@<version>
//! --`; the package's `runtimeHint` replaces the runtime, and its own
//! arguments when it names another one; `runtimeArguments` follow the
//! runtime's), then its `packageArguments`, `environmentVariables`; and
//! each `streamable-http` remote with its headers. Inputs without a value (an unset environment
//! variable or header, a positional `valueHint`) and `{name}` references to
//! `variables` become `input:` variables with their description,
//! `isSecret`, `isRequired`, `default` and `choices`.

use serde_json::{Map, Value};

use super::entry::{check_fields, report_field, wrong, Building, Extra, FieldError};
use super::inputs::{arguments, check_input, environment, input_value, named, KEY_VALUE_FIELDS};
use super::located::{Member, Node, Val};
use super::report::{At, Report};
use super::vars::{EntryVars, Syntax};
use crate::config::vars::{quote, quote_cut};

use super::docker;
use crate::limits::import::MAX_DOCKER_CHOICE_CHECKS;
use crate::limits::MAX_ECHOED_VARIABLE_NAME_BYTES;

/// Top-level fields that describe the server and start nothing.
const DESCRIPTIVE: &[&str] = &[
    "$schema",
    "name",
    "title",
    "description",
    "version",
    "repository",
    "websiteUrl",
    "icons",
    "status",
    "_meta",
];

/// Imports a `server.json`.
pub(super) fn import(root: &Node, out: &mut Report<'_>) {
    let Some(top) = out.top_members(root) else {
        return;
    };
    for m in top
        .iter()
        .filter(|m| !DESCRIPTIVE.contains(&m.key.as_str()))
    {
        if m.key != "packages" && m.key != "remotes" {
            let at = At {
                at: m.key_at,
                server: None,
                field: Some(&m.key),
            };
            out.unknown_field(&at);
        }
    }
    let base = base_name(root, out);
    let (packages, remotes) = (
        list_of(root, "packages", out),
        list_of(root, "remotes", out),
    );
    let several = packages.len() + remotes.len() > 1;
    let mut taken: Vec<String> = Vec::new();
    let ways = packages.iter().map(|p| (p, Kind::Package, "packages"));
    let ways = ways.chain(remotes.iter().map(|r| (r, Kind::Remote, "remotes")));
    let mut index = [0usize; 2];
    for (node, kind, key) in ways {
        let i = &mut index[usize::from(matches!(kind, Kind::Remote))];
        let path = format!("{key}[{i}]");
        *i += 1;
        let suffix = match kind {
            Kind::Package => node
                .get("registryType")
                .and_then(Node::str)
                .unwrap_or("package"),
            Kind::Remote => "remote",
        };
        let wanted = match several {
            true => format!("{base}-{}", sanitized(suffix)),
            false => base.clone(),
        };
        let name = unique(&wanted, &taken);
        let renamed = (name != wanted).then(|| {
            let why = format!(
                "another way to run the server is already named {}: this one is named {}",
                quote(&wanted),
                quote(&name)
            );
            (path.clone(), why)
        });
        taken.push(name.clone());
        option(out, (&name, &path), node, kind, renamed);
    }
}

/// The items of top-level list `key` (`packages`, `remotes`); anything but
/// an array is an `invalid_entry` error naming it (nothing of it is taken).
fn list_of(root: &Node, key: &str, out: &mut Report<'_>) -> Vec<Node> {
    match root.get(key) {
        None => Vec::new(),
        Some(Node {
            val: Val::Arr(items),
            ..
        }) => items.clone(),
        Some(other) => {
            let at = At {
                at: other.at,
                server: None,
                field: Some(key),
            };
            out.bad_entry(&at, &format!("must be an array, got {}", other.type_name()));
            Vec::new()
        }
    }
}

/// The servers' base name: the last segment of `name` (`io.github.u/weather`
/// → `weather`), other characters than ASCII letters, digits, `_`, `.` and
/// `-` as `-`; `server` when none is left. A changed name is a warning.
fn base_name(root: &Node, out: &mut Report<'_>) -> String {
    let Some(node) = root.get("name") else {
        return "server".to_owned();
    };
    let full = node.str().unwrap_or("");
    let last = full.rsplit('/').next().unwrap_or(full);
    let base = sanitized(last);
    if base != last {
        let at = At {
            at: node.at,
            server: None,
            field: Some("name"),
        };
        let why = format!(
            "its last segment is not a usable server name: the servers are named after {}",
            quote(&base)
        );
        out.warning(&at, &why);
    }
    base
}

/// `text` with each character other than ASCII letters, digits, `_`, `.`
/// and `-` as `-`, at most [`MAX_ECHOED_VARIABLE_NAME_BYTES`] bytes,
/// `server` when empty (or only dots).
fn sanitized(text: &str) -> String {
    let name: String = text
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                true => c,
                false => '-',
            },
        )
        .take(MAX_ECHOED_VARIABLE_NAME_BYTES)
        .collect();
    let name = name.trim_matches(|c| c == '.' || c == '-');
    match name.is_empty() {
        true => "server".to_owned(),
        false => name.to_owned(),
    }
}

/// `wanted`, or `wanted-2`, `wanted-3`, … : the first not in `taken`.
fn unique(wanted: &str, taken: &[String]) -> String {
    let mut name = wanted.to_owned();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("{wanted}-{n}");
    }
    name
}

#[derive(Clone, Copy)]
enum Kind {
    Package,
    Remote,
}

/// The fields of a package that are mapped.
const PACKAGE_FIELDS: &[&str] = &[
    "registryType",
    "identifier",
    "version",
    "runtimeHint",
    "transport",
    "runtimeArguments",
    "packageArguments",
    "environmentVariables",
];
/// The fields of a package this host does not take, with why.
const PACKAGE_UNSUPPORTED: &[(&str, &str)] = &[
    (
        "registryBaseUrl",
        " (the runtime's default registry is used)",
    ),
    ("fileSha256", " (the host downloads no package itself)"),
];
/// The fields of a remote that are mapped.
const REMOTE_FIELDS: &[&str] = &["type", "url", "headers", "variables"];

/// One package or remote (at `path`) as host entry `name`; `renamed`: the
/// note saying its name was made unique, reported if it is taken.
fn option(
    out: &mut Report<'_>,
    (name, path): (&str, &str),
    node: &Node,
    kind: Kind,
    renamed: Option<FieldError>,
) {
    let (fields, unsupported) = match kind {
        Kind::Package => (PACKAGE_FIELDS, PACKAGE_UNSUPPORTED),
        Kind::Remote => (REMOTE_FIELDS, &[][..]),
    };
    let Some(members) = node.members() else {
        let why = format!("must be an object, got {}", node.type_name());
        return report_field(out, name, node.at, (path.to_owned(), why));
    };
    check_fields(out, name, members, fields, unsupported);
    let mut b = Building::new(name, node.at, EntryVars::new(Syntax::Literal, &[]));
    let config = match kind {
        Kind::Package => package(&mut b, node),
        Kind::Remote => remote(&mut b, node).map(|config| (config, None)),
    };
    // Field paths from the file's top: `packages[0].runtimeArguments[1]`.
    for (field, _) in b.notes.iter_mut().chain(b.vars.literal.iter_mut()) {
        *field = format!("{path}.{field}");
    }
    b.notes.extend(renamed);
    match config {
        Ok((config, docker_options)) => {
            let extra = Extra {
                docker_options,
                ..Extra::enabled()
            };
            if let Some(server) = b.finish(out, config, extra) {
                out.server(server);
            }
        }
        Err((field, why)) => {
            let field = format!("{path}.{field}");
            report_field(out, name, node.at, (field, why));
        }
    }
}

/// The default runtime and its arguments for a registry type.
fn runtime(registry: &str) -> Option<(&'static str, &'static [&'static str])> {
    match registry {
        "npm" => Some(("npx", &["-y"])),
        "pypi" => Some(("uvx", &[])),
        "oci" => Some(("docker", &["run", "-i", "--rm"])),
        "nuget" => Some(("dnx", &[])),
        _ => None,
    }
}

/// The runtimes a `runtimeHint` may name: those of [`runtime`].
const RUNTIMES: &[&str] = &["npx", "uvx", "docker", "dnx"];

/// String field `key` of `node`, checked by [`Building::text`]; `None`
/// when absent.
///
/// # Errors
/// Not a string, or a control character in it (naming the field).
fn text_field<'n>(
    b: &mut Building<'_>,
    node: &'n Node,
    key: &str,
) -> Result<Option<&'n str>, FieldError> {
    let Some(value) = node.get(key) else {
        return Ok(None);
    };
    let s = value.str().ok_or_else(|| wrong(key, "a string", value))?;
    b.text(key, s)?;
    Ok(Some(s))
}

/// The package's `transport`: absent or `{type: "stdio"}`.
///
/// # Errors
/// Not an object, `type` not a string, or another transport.
fn stdio_transport(node: &Node) -> Result<(), FieldError> {
    let Some(transport) = node.get("transport") else {
        return Ok(());
    };
    if transport.members().is_none() {
        return Err(wrong("transport", "an object", transport));
    }
    match transport.get("type") {
        None => Ok(()),
        Some(t) => match t.str() {
            None => Err(wrong("transport.type", "a string", t)),
            Some("stdio") => Ok(()),
            Some(_) => Err((
                "transport.type".into(),
                "only stdio packages can be started by this host".into(),
            )),
        },
    }
}

/// A package's host entry, and for a `docker` one the number of its args
/// that are `docker`'s own options (before the image: checked again once
/// resolved, `ImportedServer::docker_options`).
fn package(b: &mut Building<'_>, node: &Node) -> Result<(Value, Option<usize>), FieldError> {
    let registry = text_field(b, node, "registryType")?
        .ok_or(("registryType".to_owned(), "is required".to_owned()))?;
    let identifier = text_field(b, node, "identifier")?
        .ok_or(("identifier".to_owned(), "is required".to_owned()))?;
    let hint = text_field(b, node, "runtimeHint")?;
    let version = text_field(b, node, "version")?;
    // Put after the runtime's options (`npx -y <id>`), an identifier such as
    // `--registry=…` would be read as one more option of the runtime.
    if identifier.is_empty() || identifier.starts_with('-') {
        let why = "must be a package name, not empty and not starting with \"-\" (the runtime \
                   would read it as an option)";
        return Err(("identifier".to_owned(), why.to_owned()));
    }
    stdio_transport(node)?;
    if hint.is_some_and(|h| !RUNTIMES.contains(&h)) {
        let why = format!("must name a known runtime ({})", RUNTIMES.join(", "));
        return Err(("runtimeHint".to_owned(), why));
    }
    oci_checks(registry, hint, identifier)?;
    let (default_command, default_args) = runtime(registry).ok_or_else(|| {
        (
            "registryType".to_owned(),
            format!(
                "{} packages are not supported by this host",
                quote_cut(registry)
            ),
        )
    })?;
    // The default runtime's own arguments (`npx -y`, `docker run -i
    // --rm`), then `runtimeArguments` (options of that runtime, e.g.
    // docker's `--network host`), then, for docker, one `-e NAME` per
    // environment variable (a container sees no other).
    let command = hint.unwrap_or(default_command);
    let mut args: Vec<Value> = match command == default_command {
        true => default_args.iter().map(|a| Value::from(*a)).collect(),
        false => Vec::new(),
    };
    if let Some(list) = node.get("runtimeArguments") {
        let runtime_args = arguments(b, "runtimeArguments", list)?;
        if command == "docker" {
            check_docker(b, &runtime_args).map_err(|why| ("runtimeArguments".to_owned(), why))?;
        }
        args.extend(runtime_args);
    }
    let env = environment(b, node)?;
    if command == "docker" {
        for name in env.keys() {
            args.extend([Value::from("-e"), Value::from(name.as_str())]);
        }
    }
    let docker_options = (command == "docker").then_some(args.len());
    args.push(match (registry, version) {
        ("npm" | "nuget", Some(v)) => format!("{identifier}@{v}").into(),
        ("pypi", Some(v)) => format!("{identifier}=={v}").into(),
        _ => identifier.into(),
    });
    if let Some(list) = node.get("packageArguments") {
        if registry == "nuget" {
            args.push("--".into());
        }
        args.extend(arguments(b, "packageArguments", list)?);
    }
    let mut config = Map::new();
    config.insert("type".into(), "stdio".into());
    config.insert("command".into(), command.into());
    config.insert("args".into(), Value::Array(args));
    if !env.is_empty() {
        config.insert("env".into(), Value::Object(env));
    }
    Ok((Value::Object(config), docker_options))
}

/// `docker` runs only `oci` packages: another package's identifier would
/// be `docker`'s subcommand (`run`) and its `packageArguments` unchecked
/// `docker run` options. An `oci` identifier must be an image reference
/// ([`image_reference`]), whatever the runtime.
///
/// # Errors
/// `runtimeHint: docker` for another registry type, or an `oci` identifier
/// that is no image reference.
fn oci_checks(registry: &str, hint: Option<&str>, identifier: &str) -> Result<(), FieldError> {
    if hint == Some("docker") && registry != "oci" {
        let why = "names docker, which runs only oci packages (their identifier is an image)";
        return Err(("runtimeHint".to_owned(), why.to_owned()));
    }
    if registry == "oci" && !image_reference(identifier) {
        let why = "must be an image reference: a lowercase ASCII letter or digit, then those \
                   and \".\", \"_\", \"/\", \":\", \"@\", \"-\" (a tag or digest allowed), at \
                   most 255 bytes";
        return Err(("identifier".to_owned(), why.to_owned()));
    }
    Ok(())
}

/// Whether `text` is an image reference, read conservatively (a subset of
/// the OCI distribution reference grammar, `[domain/]path[:tag][@digest]`):
/// it starts with a lowercase ASCII letter or digit, then only those and
/// `.`, `_`, `/`, `:`, `@`, `-`; at most 255 bytes, no empty path
/// component, at most one `@`. So no option (`-…`), no whitespace, no
/// variable: it is the image `docker run` starts, never one of its options.
pub(super) fn image_reference(text: &str) -> bool {
    let allowed = |c: char| {
        c.is_ascii_lowercase()
            || c.is_ascii_digit()
            || matches!(c, '.' | '_' | '/' | ':' | '@' | '-')
    };
    let first = text.chars().next();
    first.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && text.len() <= 255
        && text.chars().all(allowed)
        && !text.contains("//")
        && !text.ends_with(['/', ':', '@'])
        && text.matches('@').count() <= 1
}

/// Checks a `docker` entry's runtime arguments (`docker::check`) as the
/// file writes them, with the defaults the file gives its inputs, and with
/// each of an input's `choices` in turn (the others at their defaults): a
/// value the publisher wrote is not the user's choice, even when the user
/// picks it.
///
/// # Errors
/// The refused option and why, or more choices than
/// [`MAX_DOCKER_CHOICE_CHECKS`] to check.
fn check_docker(b: &Building<'_>, args: &[Value]) -> Result<(), String> {
    docker::check(args)?;
    docker::check(&with_defaults(b, args, None))?;
    let choices = b.vars.used.iter().map(|v| v.choices.len()).sum::<usize>();
    if choices.saturating_mul(args.len().max(1)) > MAX_DOCKER_CHOICE_CHECKS {
        return Err(format!(
            "its inputs' choices are too many to check ({MAX_DOCKER_CHOICE_CHECKS} choices × \
             arguments at most)"
        ));
    }
    for v in &b.vars.used {
        for choice in &v.choices {
            docker::check(&with_defaults(b, args, Some((&v.id, choice))))?;
        }
    }
    Ok(())
}

/// `args` with each placeholder of an input that has a default replaced
/// by it, and `choice`'s input (id, value) by that value: what starts when
/// the app takes the defaults (or that choice) the file gives.
fn with_defaults(b: &Building<'_>, args: &[Value], choice: Option<(&str, &str)>) -> Vec<Value> {
    let mut defaults: std::collections::BTreeMap<String, String> = (b.vars.used.iter())
        .filter_map(|v| Some((v.id.clone(), v.default.clone()?)))
        .collect();
    if let Some((id, value)) = choice {
        defaults.insert(id.to_owned(), value.to_owned());
    }
    let ids: Vec<&str> = defaults.keys().map(String::as_str).collect();
    let text = |a: &Value| super::resolve::replaced(a.as_str().unwrap_or(""), &ids, &defaults);
    args.iter().map(|a| Value::from(text(a))).collect()
}

fn remote(b: &mut Building<'_>, node: &Node) -> Result<Value, FieldError> {
    let kind = match node.get("type") {
        None => "",
        Some(t) => t.str().ok_or_else(|| wrong("type", "a string", t))?,
    };
    if kind != "streamable-http" && kind != "sse" {
        return Err((
            "type".into(),
            format!(
                "{} remotes are not supported by this host (streamable-http and sse only)",
                quote_cut(kind)
            ),
        ));
    }
    let url_node = node
        .get("url")
        .ok_or(("url".to_owned(), "is required".to_owned()))?;
    let url_item = Node {
        val: Val::Obj(
            vec![
                member("value", url_node),
                member_opt("variables", node.get("variables")),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ),
        at: node.at,
    };
    let url = input_value(b, "url", &url_item, "url", false)?;
    let mut headers = Map::new();
    for (field, name, item) in named(node, "headers")? {
        check_input(b, &field, item, KEY_VALUE_FIELDS);
        headers.insert(
            name.to_owned(),
            input_value(b, &field, item, name, true)?.into(),
        );
    }
    let mut config = Map::new();
    config.insert("type".into(), kind.into());
    config.insert("url".into(), url.into());
    if !headers.is_empty() {
        config.insert("headers".into(), Value::Object(headers));
    }
    Ok(Value::Object(config))
}

fn member(key: &str, value: &Node) -> Option<Member> {
    Some(Member {
        key: key.to_owned(),
        key_at: value.at,
        value: value.clone(),
    })
}

fn member_opt(key: &str, value: Option<&Node>) -> Option<Member> {
    value.and_then(|v| member(key, v))
}
