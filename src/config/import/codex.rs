//! Codex `config.toml` `[mcp_servers.<name>]` tables, per
//! <https://github.com/openai/codex/blob/main/docs/config.md> ("MCP
//! integration"). Codex refuses unknown keys in a server table, so an
//! unknown key makes the entry invalid here too. Values are literal (Codex
//! expands no `${…}`); environment references are fields: `env_vars`,
//! `bearer_token_env_var`, `env_http_headers`, each an `env:` variable.
//! Other top-level settings (`model`, `[features]`, …) are not MCP's.

use serde_json::{Map, Value};

use super::claude::field_at;
use super::entry::{
    oauth_client, report_field, scopes, string, wrong, Building, Extra, FieldError, OAuthKeys,
};
use super::located::{Member, Node, Val};
use super::report::{At, Report};
use super::vars::{env_variable, EntryVars, Syntax};
use crate::limits::MAX_ECHOED_VARIABLE_NAME_BYTES;

/// Keys of a server table that are mapped.
const MAPPED: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "enabled",
    "oauth",
    "scopes",
    "oauth_resource",
    "enabled_tools",
    "disabled_tools",
    "tool_timeout_sec",
    "required",
];

/// Keys Codex defines that this host does not take, with why.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("tools", " yet (per-tool approval)"),
    (
        "http_headers_helper",
        " (dynamic headers come from the app's header provider)",
    ),
];

/// Imports the `mcp_servers` table of a Codex `config.toml`.
pub(super) fn import(root: &Node, out: &mut Report<'_>) {
    let Some(servers) = root.get("mcp_servers") else {
        return;
    };
    let Some(members) = servers.members() else {
        let message = format!(
            "\"mcp_servers\" must be a table, got {}",
            servers.type_name()
        );
        return out.file_error(servers.at, &message);
    };
    for member in members {
        entry(out, member);
    }
}

fn entry(out: &mut Report<'_>, member: &Member) {
    let name = member.key.as_str();
    let Some(fields) = out.entry_members(member, "a table") else {
        return;
    };
    if let Some(bad) = fields.iter().find(|m| refused(&m.key)) {
        let at = At {
            at: bad.key_at,
            server: Some(name),
            field: Some(&bad.key),
        };
        let why = match bad.key.as_str() {
            "bearer_token" => {
                "a literal token is refused (as Codex does): use bearer_token_env_var"
            }
            _ => "unknown key (Codex refuses the server too)",
        };
        return out.bad_entry(&at, why);
    }
    for m in fields {
        if let Some((_, why)) = UNSUPPORTED.iter().find(|(k, _)| *k == m.key) {
            let at = At {
                at: m.key_at,
                server: Some(name),
                field: Some(&m.key),
            };
            out.not_supported(&at, why);
        }
    }
    report_ignored(out, name, member);
    let mut b = Building::new(name, member.key_at, EntryVars::new(Syntax::Literal, &[]));
    let built = host_config(&mut b, &member.value).and_then(|config| {
        let extra = extra(out, name, &member.value)?;
        Ok((config, extra))
    });
    match built {
        Err(e) => report_field(out, name, field_at(&member.value, &e.0), e),
        Ok((config, extra)) => {
            if let Some(server) = b.finish(out, config, extra) {
                out.server(server);
            }
        }
    }
}

/// A key Codex would refuse (not mapped, not listed as unsupported).
fn refused(key: &str) -> bool {
    !MAPPED.contains(&key) && !UNSUPPORTED.iter().any(|(k, _)| *k == key)
}

fn host_config(b: &mut Building<'_>, entry: &Node) -> Result<Value, FieldError> {
    match (entry.get("command"), entry.get("url")) {
        (Some(_), Some(_)) => Err((
            "url".into(),
            "a server has \"command\" or \"url\", not both".into(),
        )),
        (None, None) => Err((
            "command".into(),
            "a server needs \"command\" or \"url\"".into(),
        )),
        (Some(_), None) => stdio(b, entry),
        (None, Some(_)) => http(b, entry),
    }
}

/// `Err` naming the first of `keys` that `entry` has: they apply to `kind` servers only.
fn refuse_any(entry: &Node, keys: &[&str], kind: &str) -> Result<(), FieldError> {
    match keys.iter().find(|k| entry.get(k).is_some()) {
        Some(k) => Err(((*k).to_owned(), format!("applies to {kind} server only"))),
        None => Ok(()),
    }
}

fn stdio(b: &mut Building<'_>, entry: &Node) -> Result<Value, FieldError> {
    refuse_any(
        entry,
        &["bearer_token_env_var", "http_headers", "env_http_headers"],
        "a url",
    )?;
    let mut config = Map::new();
    config.insert("type".into(), "stdio".into());
    let command = entry
        .get("command")
        .map(|n| b.string("command", n, false))
        .transpose()?;
    config.insert("command".into(), command.unwrap_or_default().into());
    if let Some(args) = entry.get("args") {
        config.insert("args".into(), Value::Array(b.strings("args", args)?));
    }
    let mut env = match entry.get("env") {
        Some(n) => b.string_map("env", n, true)?,
        None => Map::new(),
    };
    for name in env_vars(entry)? {
        // An env value is the host's secret: so is the variable.
        let mut variable = env_variable(&name, None);
        variable.secret = true;
        b.vars.note(variable);
        env.entry(name.clone())
            .or_insert_with(|| format!("${{env:{name}}}").into());
    }
    if !env.is_empty() {
        config.insert("env".into(), Value::Object(env));
    }
    if let Some(cwd) = entry.get("cwd") {
        config.insert("cwd".into(), b.string("cwd", cwd, false)?.into());
    }
    Ok(Value::Object(config))
}

/// What an entry has that the import leaves aside without refusing it: a
/// key of an `env_vars` table other than `name` (Codex's `source`: the
/// variable is resolved through the app either way), and
/// `startup_timeout_sec` beside `startup_timeout_ms` (the `_ms` one is used).
fn report_ignored(out: &mut Report<'_>, server: &str, member: &Member) {
    let tables = member.value.get("env_vars").and_then(|n| match &n.val {
        Val::Arr(items) => Some(items),
        _ => None,
    });
    for (i, item) in tables.into_iter().flatten().enumerate() {
        for key in item
            .members()
            .into_iter()
            .flatten()
            .filter(|k| k.key != "name")
        {
            let field = format!("env_vars[{i}].{}", key.key);
            let at = At {
                at: key.key_at,
                server: Some(server),
                field: Some(&field),
            };
            out.not_supported(&at, "; the variable is resolved through the app's resolve");
        }
    }
    let timeouts = ["startup_timeout_ms", "startup_timeout_sec"].map(|k| member.value.get(k));
    if let [Some(_), Some(sec)] = timeouts {
        let field = "startup_timeout_sec";
        let at = At {
            at: sec.at,
            server: Some(server),
            field: Some(field),
        };
        out.not_supported(&at, " beside startup_timeout_ms, which is used");
    }
}

/// `env_vars`: names (`"X"`) or tables (`{name = "X", source = …}`).
fn env_vars(entry: &Node) -> Result<Vec<String>, FieldError> {
    let Some(node) = entry.get("env_vars") else {
        return Ok(Vec::new());
    };
    let Val::Arr(items) = &node.val else {
        return Err(wrong("env_vars", "an array", node));
    };
    let name = |(i, item): (usize, &Node)| {
        let field = format!("env_vars[{i}]");
        let named = item.str().or_else(|| item.get("name").and_then(Node::str));
        let named = named.ok_or_else(|| wrong(&field, "a name or {name = …}", item))?;
        env_name(&field, named).map(str::to_owned)
    };
    items.iter().enumerate().map(name).collect()
}

fn http(b: &mut Building<'_>, entry: &Node) -> Result<Value, FieldError> {
    refuse_any(entry, &["args", "env", "env_vars", "cwd"], "a command")?;
    let mut config = Map::new();
    config.insert("type".into(), "streamable-http".into());
    let url = entry
        .get("url")
        .map(|n| b.string("url", n, false))
        .transpose()?;
    config.insert("url".into(), url.unwrap_or_default().into());
    let mut headers = match entry.get("http_headers") {
        Some(n) => b.string_map("http_headers", n, true)?,
        None => Map::new(),
    };
    if let Some(n) = entry.get("env_http_headers") {
        for (header, var) in b.string_map("env_http_headers", n, false)? {
            let var = var.as_str().unwrap_or_default().to_owned();
            let var = env_name(&format!("env_http_headers.{header}"), &var)?;
            headers.insert(header, env_reference(b, var));
        }
    }
    if let Some(n) = entry.get("bearer_token_env_var") {
        let field = "bearer_token_env_var";
        let var = n.str().ok_or_else(|| wrong(field, "a string", n))?;
        let token = env_reference(b, env_name(field, var)?);
        headers.insert(
            "Authorization".into(),
            format!("Bearer {}", token.as_str().unwrap_or_default()).into(),
        );
    }
    if !headers.is_empty() {
        config.insert("headers".into(), Value::Object(headers));
    }
    Ok(Value::Object(config))
}

/// `name` when it is an environment variable name: ASCII letters, digits
/// and `_`, not starting with a digit, at most
/// [`MAX_ECHOED_VARIABLE_NAME_BYTES`].
///
/// # Errors
/// Naming `field`, never the text.
fn env_name<'n>(field: &str, name: &'n str) -> Result<&'n str, FieldError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match valid {
        true => Ok(name),
        false => Err((
            field.to_owned(),
            "must be an environment variable name (ASCII letters, digits and _, not starting \
             with a digit)"
                .to_owned(),
        )),
    }
}

/// `${env:<var>}`, noted as a secret variable (it goes into a header).
fn env_reference(b: &mut Building<'_>, var: &str) -> Value {
    let mut variable = env_variable(var, None);
    variable.secret = true;
    b.vars.note(variable);
    format!("${{env:{var}}}").into()
}

/// `enabled`, the startup timeout, `oauth.client_id`, the tool filter
/// (`enabled_tools`, `disabled_tools`), the call timeout (`tool_timeout_sec`)
/// and `required`.
fn extra(out: &mut Report<'_>, server: &str, entry: &Node) -> Result<Extra, FieldError> {
    let mut extra = Extra::enabled();
    if let Some(n) = entry.get("enabled") {
        let Val::Bool(enabled) = n.val else {
            return Err(wrong("enabled", "a boolean", n));
        };
        extra.enabled = enabled;
    }
    extra.startup_timeout_ms = match (
        entry.get("startup_timeout_ms"),
        entry.get("startup_timeout_sec"),
    ) {
        (Some(n), _) => Some(millis("startup_timeout_ms", n, 1.0)?),
        (None, Some(n)) => Some(millis("startup_timeout_sec", n, 1000.0)?),
        (None, None) => None,
    };
    let keys = OAuthKeys {
        callback_port: Some("callback_port"),
        ..OAuthKeys::client_only("oauth", "client_id")
    };
    (extra.oauth_client_id, extra.oauth) = oauth_client(out, server, entry, keys)?;
    if let Some(n) = entry.get("scopes") {
        extra.oauth.scopes = scopes("scopes", n)?;
    }
    if let Some(n) = entry.get("oauth_resource") {
        extra.oauth.resource = Some(string("oauth_resource", n)?);
    }
    extra.include_tools = entry
        .get("enabled_tools")
        .map(|n| tool_names("enabled_tools", n))
        .transpose()?;
    if let Some(n) = entry.get("disabled_tools") {
        extra.exclude_tools = tool_names("disabled_tools", n)?;
    }
    // Codex bounds the whole call: both of this host's limits.
    let call = entry
        .get("tool_timeout_sec")
        .map(|n| millis("tool_timeout_sec", n, 1000.0));
    extra.call_timeout_ms = call.transpose()?;
    extra.call_max_total_ms = extra.call_timeout_ms;
    // Codex fails its start when a required server fails: here the start
    // blocks until decided, and the app sees each outcome (`whenReady`).
    if let Some(n) = entry.get("required") {
        let Val::Bool(required) = n.val else {
            return Err(wrong("required", "a boolean", n));
        };
        extra.required = required;
    }
    Ok(extra)
}

/// `enabled_tools` / `disabled_tools`: an array of tool names, each
/// non-empty (this host's `includeTools` / `excludeTools`).
fn tool_names(field: &str, n: &Node) -> Result<Vec<String>, FieldError> {
    let Val::Arr(items) = &n.val else {
        return Err(wrong(field, "an array of tool names", n));
    };
    let name = |(i, item): (usize, &Node)| match item.str() {
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err(wrong(&format!("{field}[{i}]"), "a non-empty string", item)),
    };
    items.iter().enumerate().map(name).collect()
}

/// A non-negative number of `unit` ms, as whole ms.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn millis(field: &str, n: &Node, unit: f64) -> Result<u64, FieldError> {
    match n.val {
        Val::Num(v) if v.is_finite() && v >= 0.0 => {
            Ok((v * unit).round().min(u64::MAX as f64) as u64)
        }
        _ => Err(wrong(field, "a non-negative number", n)),
    }
}
