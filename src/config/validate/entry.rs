//! Stage 2 of `mcp.json` validation: one member of `mcpServers`, checked on
//! its own (seed 002, *Validate in two stages*, *Launch stdio servers*). The
//! entry's `type` picks the rules; `stdio` fields are checked here,
//! `streamable-http` and `sse` fields in [`super::remote`].

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{check_fields, field_msg, remote, string_field, wrong_type};
use crate::config::command::{dot_relative, is_separator};
use crate::config::model::{HttpTransport, LiteralPlaceholder, ServerConfig, StdioConfig};
use crate::config::vars::{check_variables, quote};
use crate::json::type_name;

/// Fields allowed in a `stdio` entry.
const STDIO_FIELDS: &[&str] = &["type", "command", "args", "env", "cwd"];
/// Transports this host can start, for messages.
const SUPPORTED_TYPES: &str = "stdio, streamable-http, sse";

/// Validates one server entry (a member of `mcpServers`) given as JSON.
///
/// Used for every member of a parsed `mcp.json` and for `addServer({name,
/// config})` from JavaScript.
///
/// # Errors
/// When a rule below fails, returns a message that starts with
/// `server "<name>": ` and names the field, e.g.
/// `server "web": field "url": must use https (http is allowed only for loopback hosts)`.
/// Messages never include URL, header or `env` values.
///
/// Rules (seed 002, *Validate in two stages*, *Launch stdio servers*,
/// *Connect remote servers*):
/// * the name is non-empty; the entry is an object with a string `type`;
/// * `type: "stdio"`: fields `type`, `command` (required), `args`, `env`, `cwd`.
///   `command` is one non-empty token without `${` (variables are not
///   expanded in it); if it contains a path separator it is absolute or starts
///   with `./`. `args` is an array of strings, `env` an object of string values
///   whose names are non-empty and contain no `=`, `cwd` a non-empty string.
///   In `args`, `env` values and `cwd` only `${PLUGIN_ROOT}` / `${PLUGIN_DATA}`
///   may appear (see [`check_variables`]). No string may contain NUL.
/// * `type: "streamable-http"`: fields `type`, `url` (required), `headers`.
///   `url` parses, uses `https` (or `http` with a loopback host: `localhost`,
///   `127.0.0.0/8`, `[::1]`) and has no `user:password@`. `headers` is an
///   object of strings; names are HTTP tokens (unique ignoring case), values
///   contain no CR, LF, NUL or other control character except tab. `${…}` is
///   literal text here.
/// * `type: "sse"` (legacy HTTP+SSE, MCP 2024-11-05): the fields and rules
///   of `streamable-http`.
/// * Any other type is unknown (`"http"` and other spellings of a supported
///   one get a "did you mean"). Unknown fields make the entry invalid.
pub fn validate_entry_value(name: &str, value: &Value) -> Result<ServerConfig, String> {
    checked_entry(name, value, false)
}

/// [`validate_entry_value`] for an entry whose values are literal text (an
/// imported entry, its variables resolved by the app: `addServer({literal:
/// true})`): no `${…}` is refused in `command`, `args`, `env` values or
/// `cwd` (nor expanded at launch, [`StdioConfig::literal`]), and no message
/// holds a value of the entry (`command` is named, never shown).
///
/// # Errors
/// As [`validate_entry_value`], without the variable rules.
pub fn validate_literal_entry_value(name: &str, value: &Value) -> Result<ServerConfig, String> {
    checked_entry(name, value, true)
}

fn checked_entry(name: &str, value: &Value, literal: bool) -> Result<ServerConfig, String> {
    if name.is_empty() {
        return Err("server \"\": server name must not be empty".to_string());
    }
    entry(value, literal).map_err(|e| format!("server {}: {e}", quote(name)))
}

/// The `${…}` placeholders that a valid entry `value` (one
/// [`validate_entry_value`] accepted) sends literally: in the `url` and
/// `headers` of a `streamable-http` or `sse` entry, where Agent Plugins
/// expands no variable (seed 002). Empty for a `stdio` entry, whose `args`, `env` and
/// `cwd` only hold the two plugin variables, which are expanded.
#[must_use]
pub fn literal_placeholders_of(value: &Value) -> Vec<LiteralPlaceholder> {
    match value {
        Value::Object(obj)
            if matches!(
                obj.get("type").and_then(Value::as_str),
                Some("streamable-http" | "sse")
            ) =>
        {
            remote::placeholders_of(obj)
        }
        _ => Vec::new(),
    }
}

fn entry(value: &Value, literal: bool) -> Result<ServerConfig, String> {
    let Value::Object(obj) = value else {
        return Err(format!("entry must be an object, got {}", type_name(value)));
    };
    match transport_type(obj)? {
        "stdio" => stdio(obj, literal).map(ServerConfig::Stdio),
        "streamable-http" => {
            remote::http(obj, HttpTransport::StreamableHttp).map(ServerConfig::StreamableHttp)
        }
        "sse" => remote::http(obj, HttpTransport::Sse).map(ServerConfig::StreamableHttp),
        other => Err(field_msg(
            "type",
            format!(
                "unknown transport {} (supported: {SUPPORTED_TYPES}){}",
                quote(other),
                suggestion(other)
            ),
        )),
    }
}

/// A hint for a transport name other configuration formats use: VS Code
/// and Claude Code write `"http"` (also `"streamableHttp"`,
/// `"streamable_http"`) for Streamable HTTP; `"SSE"` or `"http+sse"` for
/// the legacy transport.
fn suggestion(name: &str) -> &'static str {
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect::<String>()
        .to_ascii_lowercase();
    match folded.as_str() {
        "http" | "https" | "streamablehttp" | "streamable" => {
            "; did you mean \"streamable-http\"? (VS Code and Claude Code call it \"http\")"
        }
        "stdio" | "local" | "command" => "; did you mean \"stdio\"?",
        "sse" | "httpsse" | "legacysse" | "serversentevents" => "; did you mean \"sse\"?",
        _ => "",
    }
}

fn transport_type(obj: &Map<String, Value>) -> Result<&str, String> {
    match obj.get("type") {
        None => Err(format!(
            "field \"type\" is required (supported: {SUPPORTED_TYPES})"
        )),
        Some(Value::String(t)) => Ok(t),
        Some(other) => Err(wrong_type("type", "a string", other)),
    }
}

// --- stdio -----------------------------------------------------------------

fn stdio(obj: &Map<String, Value>, literal: bool) -> Result<StdioConfig, String> {
    check_fields(obj, STDIO_FIELDS, "stdio")?;
    let command = match obj.get("command") {
        None => return Err("field \"command\" is required for type \"stdio\"".to_string()),
        Some(v) => string_field("command", v)?,
    };
    check_command(&command, literal)?;
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(v) => args(v, literal)?,
    };
    let env = match obj.get("env") {
        None => BTreeMap::new(),
        Some(v) => env(v, literal)?,
    };
    let cwd = obj.get("cwd").map(|v| cwd(v, literal)).transpose()?;
    Ok(StdioConfig {
        command,
        args,
        env,
        cwd,
        literal,
    })
}

/// `command`: one executable token (seed 002, *Launch stdio servers*);
/// `literal`: `${` is text, and no message shows the command.
fn check_command(command: &str, literal: bool) -> Result<(), String> {
    let fail = |msg: String| Err(field_msg("command", msg));
    let shown = |command: &str| match literal {
        true => "the command".to_owned(),
        false => quote(command),
    };
    if command.is_empty() {
        return fail("must not be empty".into());
    }
    if command.contains('\0') {
        return fail("must not contain NUL".into());
    }
    if !literal && command.contains("${") {
        return fail(
            "plugin variables are not expanded in \"command\" (only in args, env values and cwd)"
                .into(),
        );
    }
    if command == "." || command == ".." {
        return fail(format!("{} does not name an executable", shown(command)));
    }
    if let Some(rest) = dot_relative(command) {
        if rest.is_empty() || rest.ends_with(is_separator) {
            return fail(format!("{} does not name a file", shown(command)));
        }
        return Ok(());
    }
    if command.contains(is_separator) && !Path::new(command).is_absolute() {
        return fail(match literal {
            true => "relative command must start with ./".to_owned(),
            false => format!(
                "relative command must start with ./ (got {})",
                quote(command)
            ),
        });
    }
    Ok(())
}

fn args(value: &Value, literal: bool) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err(wrong_type("args", "an array of strings", value));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| expandable_string(&format!("args[{i}]"), item, literal))
        .collect()
}

fn env(value: &Value, literal: bool) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(vars) = value else {
        return Err(wrong_type("env", "an object of strings", value));
    };
    vars.iter()
        .map(|(name, v)| {
            check_env_name(name)?;
            let value = expandable_string(&format!("env.{name}"), v, literal)?;
            Ok((name.clone(), value))
        })
        .collect()
}

fn check_env_name(name: &str) -> Result<(), String> {
    let problem = if name.is_empty() {
        "must not be empty"
    } else if name.contains('=') {
        "must not contain \"=\""
    } else if name.contains('\0') {
        "must not contain NUL"
    } else {
        return Ok(());
    };
    Err(field_msg(
        "env",
        format!("variable name {} {problem}", quote(name)),
    ))
}

fn cwd(value: &Value, literal: bool) -> Result<String, String> {
    let cwd = expandable_string("cwd", value, literal)?;
    if cwd.is_empty() {
        return Err(field_msg("cwd", "must not be empty"));
    }
    Ok(cwd)
}

/// A string in which plugin variables are expanded (`args[i]`, `env.X`,
/// `cwd`), unless the entry is `literal`.
fn expandable_string(field: &str, value: &Value, literal: bool) -> Result<String, String> {
    let s = string_field(field, value)?;
    if s.contains('\0') {
        return Err(field_msg(field, "must not contain NUL"));
    }
    if !literal {
        check_variables(field, &s)?;
    }
    Ok(s)
}
