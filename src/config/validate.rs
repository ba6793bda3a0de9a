//! Two-stage validation of `mcp.json`.
//!
//! Agent Plugins "MCP runtime" (seed 002), *Validate in two stages*:
//! stage 1 checks the file (strict JSON, `$schema`, required `mcpServers`, no
//! unknown top-level field) and a failure disables MCP for the plugin; stage 2
//! checks each member of `mcpServers` on its own, so an invalid entry never
//! affects its siblings. Both [`parse_mcp_json`] and [`validate_entry_value`]
//! run stage 2 through the same validator on a `serde_json::Value`.
//!
//! Messages never contain header values, URLs or `env` values (possible secrets).

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::Path;

use jsonc_parser::ast::{self, ObjectPropName};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde_json::{Map, Value};

use super::model::{
    HttpConfig, McpJson, ServerConfig, ServerEntry, StdioConfig, TextPosition, TextRange,
    SUPPORTED_SCHEMAS,
};
use super::vars::{check_variables, quote};

/// Top-level fields allowed in `mcp.json`.
const TOP_LEVEL_FIELDS: &[&str] = &["$schema", "mcpServers"];
/// Fields allowed in a `stdio` entry.
const STDIO_FIELDS: &[&str] = &["type", "command", "args", "env", "cwd"];
/// Fields allowed in a `streamable-http` entry.
const HTTP_FIELDS: &[&str] = &["type", "url", "headers"];
/// Transports this host can start, for messages.
const SUPPORTED_TYPES: &str = "stdio, streamable-http";

// ---------------------------------------------------------------------------
// Stage 1: the file
// ---------------------------------------------------------------------------

/// Parses and validates the text of one `mcp.json`.
///
/// `file_label` is used only in messages (normally the file's path).
///
/// # Errors
/// Stage 1 (the whole file) must pass, otherwise `Err(message)` is returned
/// with the form `<file_label>:<line>:<column>: <rule>`, line and column
/// 1-based, the column counted in UTF-16 code units, e.g.
/// `/p/mcp.json:3:5: unknown top-level field "servers" (allowed: $schema, mcpServers)`.
/// Such a failure disables MCP for the plugin. Rules: strict JSON (no
/// comments, trailing commas, single quotes, unquoted keys, raw control
/// characters in strings; a leading UTF-8 BOM is ignored); the top-level value
/// is an object; a present `$schema` is a string listed in
/// [`SUPPORTED_SCHEMAS`]; `mcpServers` is present and an object; no other
/// top-level field; no duplicate top-level field or server name.
///
/// # Result
/// Stage 2 then validates every member of `mcpServers` independently (see
/// [`validate_entry_value`]); the result has one [`ServerEntry`] per member,
/// in file order, whose `config` is `Err` for an invalid entry and whose
/// `range` spans the member from its key to the end of its value (0-based
/// line/character, UTF-16 code units). Spec: seed 002, *Validate in two stages*.
pub fn parse_mcp_json(text: &str, file_label: &str) -> Result<McpJson, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = LineIndex::new(text);
    let fail = |offset: usize, msg: String| {
        let p = lines.position(offset);
        format!("{file_label}:{}:{}: {msg}", p.line + 1, p.character + 1)
    };
    let root = parse_strict(text).map_err(|(offset, msg)| fail(offset, msg))?;
    let servers = top_level_servers(&root).map_err(|(offset, msg)| fail(offset, msg))?;
    check_unique_names(servers).map_err(|(offset, msg)| fail(offset, msg))?;
    let servers = servers
        .properties
        .iter()
        .map(|prop| server_entry(prop, &lines))
        .collect();
    Ok(McpJson { servers })
}

/// A stage-1 failure: byte offset into the text and the rule that failed.
type FileError = (usize, String);

/// Parses `text` as strict JSON (RFC 8259) into a jsonc-parser AST.
fn parse_strict(text: &str) -> Result<ast::Value<'_>, FileError> {
    let options = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options)
        .map_err(|e| (e.range().start, format!("invalid JSON: {}", e.kind())))?;
    let root = parsed
        .value
        .ok_or_else(|| (0, "invalid JSON: no value".to_string()))?;
    check_raw_control_chars(text, &root)?;
    Ok(root)
}

/// Strict JSON forbids unescaped U+0000–U+001F inside strings; jsonc-parser
/// accepts them, so check every string literal's source text.
fn check_raw_control_chars(text: &str, value: &ast::Value<'_>) -> Result<(), FileError> {
    let check = |range: jsonc_parser::common::Range| {
        let raw = &text[range.start..range.end];
        match raw.char_indices().find(|(_, c)| (*c as u32) < 0x20) {
            Some((i, _)) => Err((
                range.start + i,
                "invalid JSON: unescaped control character in string".to_string(),
            )),
            None => Ok(()),
        }
    };
    match value {
        ast::Value::StringLit(s) => check(s.range),
        ast::Value::Array(a) => a
            .elements
            .iter()
            .try_for_each(|v| check_raw_control_chars(text, v)),
        ast::Value::Object(o) => o.properties.iter().try_for_each(|p| {
            check(p.name.range())?;
            check_raw_control_chars(text, &p.value)
        }),
        _ => Ok(()),
    }
}

/// Applies the top-level rules and returns the `mcpServers` object.
fn top_level_servers<'a, 'b>(root: &'b ast::Value<'a>) -> Result<&'b ast::Object<'a>, FileError> {
    let ast::Value::Object(obj) = root else {
        let got = ast_type_name(root);
        return Err((
            root.start(),
            format!("top-level value must be an object, got {got}"),
        ));
    };
    let mut servers = None;
    for (i, prop) in obj.properties.iter().enumerate() {
        let name = prop.name.as_str();
        if obj.properties[..i].iter().any(|p| p.name.as_str() == name) {
            return Err((
                prop.start(),
                format!("duplicate top-level field {}", quote(name)),
            ));
        }
        match name {
            "$schema" => check_schema(&prop.value)?,
            "mcpServers" => servers = Some(servers_object(&prop.value)?),
            other => {
                let allowed = TOP_LEVEL_FIELDS.join(", ");
                let msg = format!(
                    "unknown top-level field {} (allowed: {allowed})",
                    quote(other)
                );
                return Err((prop.start(), msg));
            }
        }
    }
    servers.ok_or_else(|| (obj.start(), "\"mcpServers\" is required".to_string()))
}

/// `$schema`, when present, must be a supported schema URI.
fn check_schema(value: &ast::Value<'_>) -> Result<(), FileError> {
    let ast::Value::StringLit(s) = value else {
        let got = ast_type_name(value);
        return Err((
            value.start(),
            format!("\"$schema\" must be a string, got {got}"),
        ));
    };
    if SUPPORTED_SCHEMAS.contains(&s.value.as_ref()) {
        return Ok(());
    }
    let supported = SUPPORTED_SCHEMAS.join(", ");
    let msg = format!(
        "unsupported \"$schema\" {} (supported: {supported})",
        quote(&s.value)
    );
    Err((value.start(), msg))
}

fn servers_object<'a, 'b>(value: &'b ast::Value<'a>) -> Result<&'b ast::Object<'a>, FileError> {
    match value {
        ast::Value::Object(obj) => Ok(obj),
        other => {
            let got = ast_type_name(other);
            Err((
                other.start(),
                format!("\"mcpServers\" must be an object, got {got}"),
            ))
        }
    }
}

/// Two members of `mcpServers` with one name would make the server id ambiguous.
fn check_unique_names(servers: &ast::Object<'_>) -> Result<(), FileError> {
    for (i, prop) in servers.properties.iter().enumerate() {
        let name = prop.name.as_str();
        if servers.properties[..i]
            .iter()
            .any(|p| p.name.as_str() == name)
        {
            let msg = format!("duplicate server name {} in \"mcpServers\"", quote(name));
            return Err((prop.start(), msg));
        }
    }
    Ok(())
}

/// Stage 2 for one member of `mcpServers`.
fn server_entry(prop: &ast::ObjectProp<'_>, lines: &LineIndex<'_>) -> ServerEntry {
    let name = prop.name.as_str().to_string();
    let config = to_json(&prop.value, "")
        .map_err(|e| format!("server {}: {e}", quote(&name)))
        .and_then(|value| validate_entry_value(&name, &value));
    let range = Some(lines.range(prop.start(), prop.end()));
    ServerEntry {
        name,
        range,
        config,
    }
}

/// Converts a jsonc AST value to `serde_json::Value`, rejecting duplicate
/// object keys (which a `Map` would silently collapse). `path` is the field
/// path of `value` inside the entry (`""` for the entry itself).
fn to_json(value: &ast::Value<'_>, path: &str) -> Result<Value, String> {
    Ok(match value {
        ast::Value::StringLit(s) => Value::String(s.value.to_string()),
        ast::Value::NumberLit(n) => serde_json::from_str(n.value).unwrap_or(Value::Null),
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(a) => Value::Array(
            a.elements
                .iter()
                .enumerate()
                .map(|(i, v)| to_json(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        ast::Value::Object(o) => Value::Object(object_to_json(o, path)?),
    })
}

fn object_to_json(obj: &ast::Object<'_>, path: &str) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    for prop in &obj.properties {
        let key = prop_name(&prop.name);
        let child = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let value = to_json(&prop.value, &child)?;
        if map.insert(key.clone(), value).is_some() {
            return Err(match path {
                "" => format!("duplicate field {}", quote(&key)),
                _ => field_msg(path, format!("duplicate key {}", quote(&key))),
            });
        }
    }
    Ok(map)
}

fn prop_name(name: &ObjectPropName<'_>) -> String {
    name.as_str().to_string()
}

fn ast_type_name(value: &ast::Value<'_>) -> &'static str {
    match value {
        ast::Value::StringLit(_) => "string",
        ast::Value::NumberLit(_) => "number",
        ast::Value::BooleanLit(_) => "boolean",
        ast::Value::Object(_) => "object",
        ast::Value::Array(_) => "array",
        ast::Value::NullKeyword(_) => "null",
    }
}

// ---------------------------------------------------------------------------
// Positions
// ---------------------------------------------------------------------------

/// Maps byte offsets to 0-based line / UTF-16 character positions.
/// Line breaks are `\n`, `\r\n` and a lone `\r` (as in LSP).
struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            let crlf_first_half = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
            if (b == b'\n' || b == b'\r') && !crlf_first_half {
                starts.push(i + 1);
            }
        }
        Self { text, starts }
    }

    /// Position of byte `offset` (clamped to the text, on a char boundary).
    fn position(&self, offset: usize) -> TextPosition {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        let to_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        TextPosition {
            line: to_i64(line),
            character: to_i64(character),
        }
    }

    fn range(&self, start: usize, end: usize) -> TextRange {
        TextRange {
            start: self.position(start),
            end: self.position(end),
        }
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

// ---------------------------------------------------------------------------
// Stage 2: one entry
// ---------------------------------------------------------------------------

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
/// * `type: "sse"` (legacy HTTP+SSE) is not supported by this host; any other
///   type is unknown. Unknown fields make the entry invalid.
pub fn validate_entry_value(name: &str, value: &Value) -> Result<ServerConfig, String> {
    if name.is_empty() {
        return Err("server \"\": server name must not be empty".to_string());
    }
    entry(value).map_err(|e| format!("server {}: {e}", quote(name)))
}

fn entry(value: &Value) -> Result<ServerConfig, String> {
    let Value::Object(obj) = value else {
        return Err(format!("entry must be an object, got {}", type_name(value)));
    };
    match transport_type(obj)? {
        "stdio" => stdio(obj).map(ServerConfig::Stdio),
        "streamable-http" => http(obj).map(ServerConfig::StreamableHttp),
        "sse" => Err(field_msg(
            "type",
            "legacy HTTP+SSE (\"sse\") is not supported by this host; use \"streamable-http\"",
        )),
        other => Err(field_msg(
            "type",
            format!(
                "unknown transport {} (supported: {SUPPORTED_TYPES})",
                quote(other)
            ),
        )),
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

fn check_fields(obj: &Map<String, Value>, allowed: &[&str], transport: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(field_msg(
            k,
            format!(
                "unknown field for type {} (allowed: {})",
                quote(transport),
                allowed.join(", ")
            ),
        )),
    }
}

// --- stdio -----------------------------------------------------------------

fn stdio(obj: &Map<String, Value>) -> Result<StdioConfig, String> {
    check_fields(obj, STDIO_FIELDS, "stdio")?;
    let command = match obj.get("command") {
        None => return Err("field \"command\" is required for type \"stdio\"".to_string()),
        Some(v) => string_field("command", v)?,
    };
    check_command(&command)?;
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(v) => args(v)?,
    };
    let env = match obj.get("env") {
        None => BTreeMap::new(),
        Some(v) => env(v)?,
    };
    let cwd = obj.get("cwd").map(cwd).transpose()?;
    Ok(StdioConfig {
        command,
        args,
        env,
        cwd,
    })
}

/// `command`: one executable token (seed 002, *Launch stdio servers*).
fn check_command(command: &str) -> Result<(), String> {
    let fail = |msg: String| Err(field_msg("command", msg));
    if command.is_empty() {
        return fail("must not be empty".into());
    }
    if command.contains('\0') {
        return fail("must not contain NUL".into());
    }
    if command.contains("${") {
        return fail(
            "plugin variables are not expanded in \"command\" (only in args, env values and cwd)"
                .into(),
        );
    }
    if command == "." || command == ".." {
        return fail(format!("{} does not name an executable", quote(command)));
    }
    if let Some(rest) = dot_relative(command) {
        if rest.is_empty() || rest.ends_with(is_separator) {
            return fail(format!("{} does not name a file", quote(command)));
        }
        return Ok(());
    }
    if command.contains(is_separator) && !Path::new(command).is_absolute() {
        return fail(format!(
            "relative command must start with ./ (got {})",
            quote(command)
        ));
    }
    Ok(())
}

/// Path separators in `command`: `/`, and also `\` on Windows.
pub(crate) fn is_separator(c: char) -> bool {
    c == '/' || (cfg!(windows) && c == '\\')
}

/// For a `./x` command (also `.\x` on Windows) returns `x`.
pub(crate) fn dot_relative(command: &str) -> Option<&str> {
    let rest = command.strip_prefix('.')?;
    let mut chars = rest.chars();
    match chars.next() {
        Some(c) if is_separator(c) => Some(chars.as_str()),
        _ => None,
    }
}

fn args(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err(wrong_type("args", "an array of strings", value));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| expandable_string(&format!("args[{i}]"), item))
        .collect()
}

fn env(value: &Value) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(vars) = value else {
        return Err(wrong_type("env", "an object of strings", value));
    };
    vars.iter()
        .map(|(name, v)| {
            check_env_name(name)?;
            Ok((name.clone(), expandable_string(&format!("env.{name}"), v)?))
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

fn cwd(value: &Value) -> Result<String, String> {
    let cwd = expandable_string("cwd", value)?;
    if cwd.is_empty() {
        return Err(field_msg("cwd", "must not be empty"));
    }
    Ok(cwd)
}

/// A string in which plugin variables are expanded (`args[i]`, `env.X`, `cwd`).
fn expandable_string(field: &str, value: &Value) -> Result<String, String> {
    let s = string_field(field, value)?;
    if s.contains('\0') {
        return Err(field_msg(field, "must not contain NUL"));
    }
    check_variables(field, &s)?;
    Ok(s)
}

// --- streamable-http ---------------------------------------------------------

fn http(obj: &Map<String, Value>) -> Result<HttpConfig, String> {
    check_fields(obj, HTTP_FIELDS, "streamable-http")?;
    let url = match obj.get("url") {
        None => return Err("field \"url\" is required for type \"streamable-http\"".to_string()),
        Some(v) => endpoint_url(&string_field("url", v)?)?,
    };
    let headers = match obj.get("headers") {
        None => BTreeMap::new(),
        Some(v) => headers(v)?,
    };
    Ok(HttpConfig { url, headers })
}

/// Parses and checks the endpoint URL. Never echoes the URL (it may carry a token).
fn endpoint_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| field_msg("url", format!("invalid URL: {e}")))?;
    let secure = match url.scheme() {
        "https" => true,
        "http" => is_loopback(&url),
        _ => false,
    };
    if !secure {
        let msg = "must use https (http is allowed only for loopback hosts)";
        return Err(match url.scheme() {
            "http" | "https" => field_msg("url", msg),
            other => field_msg("url", format!("{msg}, got scheme {}", quote(other))),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(field_msg(
            "url",
            "must not contain credentials (user:password@)",
        ));
    }
    Ok(url)
}

/// `localhost`, `127.0.0.0/8` or `::1`.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn headers(value: &Value) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(map) = value else {
        return Err(wrong_type("headers", "an object of strings", value));
    };
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, v) in map {
        check_header_name(name)?;
        if let Some(prev) = out.keys().find(|k| k.eq_ignore_ascii_case(name)) {
            let msg = format!(
                "duplicates header {} (names are case-insensitive)",
                quote(prev)
            );
            return Err(field_msg(&format!("headers.{name}"), msg));
        }
        out.insert(name.clone(), header_value(name, v)?);
    }
    Ok(out)
}

/// Headers the Streamable HTTP transport sets itself (MCP 2025-11-25
/// "Transports › Streamable HTTP" and HTTP framing); a configured value would
/// conflict with the protocol, so the entry is invalid.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// RFC 9110 `token`: letters, digits and ``!#$%&'*+-.^_`|~``; not a header
/// the transport manages ([`RESERVED_HEADERS`]).
fn check_header_name(name: &str) -> Result<(), String> {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(tchar) {
        return Err(field_msg(
            "headers",
            format!("invalid header name {}", quote(name)),
        ));
    }
    if RESERVED_HEADERS
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
    {
        return Err(field_msg(
            &format!("headers.{name}"),
            "is set by the MCP transport and cannot be configured",
        ));
    }
    Ok(())
}

/// Header values are secrets: the message names the header only.
fn header_value(name: &str, value: &Value) -> Result<String, String> {
    let field = format!("headers.{name}");
    let s = string_field(&field, value)?;
    if s.chars().any(|c| c.is_control() && c != '\t') {
        return Err(field_msg(
            &field,
            "value must not contain CR, LF, NUL or other control characters",
        ));
    }
    Ok(s)
}

// --- shared ------------------------------------------------------------------

fn string_field(field: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(wrong_type(field, "a string", other)),
    }
}

fn field_msg(field: &str, msg: impl Display) -> String {
    format!("field {}: {msg}", quote(field))
}

fn wrong_type(field: &str, expected: &str, got: &Value) -> String {
    field_msg(field, format!("must be {expected}, got {}", type_name(got)))
}

/// The JSON type of `value` as a word for messages (`"object"`, `"array"`, …).
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SCHEMA: &str = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";

    fn one(entry: Value) -> Result<ServerConfig, String> {
        validate_entry_value("s", &entry)
    }

    fn file_err(text: &str) -> String {
        parse_mcp_json(text, "/p/mcp.json").unwrap_err()
    }

    #[test]
    fn parses_the_seed_example() {
        let text = format!(
            r#"{{
  "$schema": "{SCHEMA}",
  "mcpServers": {{
    "local-tools": {{ "type": "stdio", "command": "./bin/server", "args": ["--data", "${{PLUGIN_DATA}}"] }},
    "remote-tools": {{ "type": "streamable-http", "url": "https://tools.example.com/mcp" }}
  }}
}}"#
        );
        let cfg = parse_mcp_json(&text, "mcp.json").unwrap();
        assert_eq!(cfg.servers.len(), 2);
        let ServerConfig::Stdio(s) = cfg.servers[0].config.clone().unwrap() else {
            panic!()
        };
        assert_eq!(s.command, "./bin/server");
        assert_eq!(s.args, vec!["--data", "${PLUGIN_DATA}"]);
        let ServerConfig::StreamableHttp(h) = cfg.servers[1].config.clone().unwrap() else {
            panic!()
        };
        assert_eq!(h.url.as_str(), "https://tools.example.com/mcp");
    }

    #[test]
    fn file_errors_carry_label_line_and_column() {
        let text = "{\n  \"mcpServers\": {},\n  \"servers\": {}\n}";
        assert_eq!(
            file_err(text),
            "/p/mcp.json:3:3: unknown top-level field \"servers\" (allowed: $schema, mcpServers)"
        );
        assert_eq!(
            file_err("{}"),
            "/p/mcp.json:1:1: \"mcpServers\" is required"
        );
    }

    #[test]
    fn strict_json_only() {
        assert!(file_err("{\"mcpServers\": {},}")
            .starts_with("/p/mcp.json:1:18: invalid JSON: Trailing commas"));
        assert!(file_err("// c\n{\"mcpServers\": {}}").contains("Comments are not allowed"));
        assert!(file_err("{mcpServers: {}}").starts_with("/p/mcp.json:1:2: invalid JSON"));
        assert!(file_err("{'mcpServers': {}}").contains("invalid JSON"));
        assert!(file_err("").starts_with("/p/mcp.json:1:1: invalid JSON"));
        assert!(file_err("{\"mcpServers\": {\"a\": 0x1}}").contains("invalid JSON"));
        assert!(file_err("{\"mcpServers\": {}} {}").contains("invalid JSON"));
    }

    #[test]
    fn raw_control_character_in_string_is_invalid_json() {
        let err = file_err("{\"mcpServers\": {\"a\": {\"type\": \"x\ty\"}}}");
        assert!(
            err.starts_with("/p/mcp.json:1:33: invalid JSON: unescaped control"),
            "{err}"
        );
    }

    #[test]
    fn bom_is_ignored() {
        assert!(parse_mcp_json("\u{feff}{\"mcpServers\": {}}", "f").is_ok());
    }

    #[test]
    fn schema_rules() {
        assert!(parse_mcp_json(
            &format!("{{\"$schema\": \"{SCHEMA}\", \"mcpServers\": {{}}}}"),
            "f"
        )
        .is_ok());
        let err = file_err("{\"$schema\": \"https://x/0.9.json\", \"mcpServers\": {}}");
        assert!(
            err.starts_with("/p/mcp.json:1:13: unsupported \"$schema\""),
            "{err}"
        );
        let err = file_err("{\"$schema\": 1, \"mcpServers\": {}}");
        assert_eq!(
            err,
            "/p/mcp.json:1:13: \"$schema\" must be a string, got number"
        );
    }

    #[test]
    fn top_level_shape_rules() {
        assert_eq!(
            file_err("[]"),
            "/p/mcp.json:1:1: top-level value must be an object, got array"
        );
        assert_eq!(
            file_err("{\"mcpServers\": []}"),
            "/p/mcp.json:1:16: \"mcpServers\" must be an object, got array"
        );
        assert!(file_err("{\"mcpServers\": {}, \"mcpServers\": {}}")
            .contains("duplicate top-level field"));
        let err = file_err("{\"mcpServers\": {\"a\": 1, \"a\": 2}}");
        assert_eq!(
            err,
            "/p/mcp.json:1:25: duplicate server name \"a\" in \"mcpServers\""
        );
    }

    #[test]
    fn range_uses_utf16_and_crlf() {
        // "😀" is 2 UTF-16 code units, "é" is 1.
        let text = "{\"$schema\": \"\",\r\n \"mcpServers\": {\"😀é\": {\"type\": \"x\"}}}";
        let text = text.replace("\"$schema\": \"\",", &format!("\"$schema\": \"{SCHEMA}\","));
        let cfg = parse_mcp_json(&text, "f").unwrap();
        let r = cfg.servers[0].range.clone().unwrap();
        assert_eq!(
            r.start,
            TextPosition {
                line: 1,
                character: 16
            }
        );
        // key "😀é" = 1 + 2 + 1 + 1 = 5 units, then `: {"type": "x"}` = 15.
        assert_eq!(
            r.end,
            TextPosition {
                line: 1,
                character: 16 + 5 + 15
            }
        );
    }

    #[test]
    fn line_index_handles_lone_cr() {
        let idx = LineIndex::new("a\rb\nc\r\nd");
        assert_eq!(
            idx.position(2),
            TextPosition {
                line: 1,
                character: 0
            }
        );
        assert_eq!(
            idx.position(4),
            TextPosition {
                line: 2,
                character: 0
            }
        );
        assert_eq!(
            idx.position(7),
            TextPosition {
                line: 3,
                character: 0
            }
        );
    }

    #[test]
    fn duplicate_field_inside_entry_is_entry_level() {
        let text = r#"{"mcpServers": {"a": {"type": "stdio", "command": "x", "command": "y"}, "b": {"type": "stdio", "command": "z", "env": {"K": "1", "K": "2"}}, "c": {"type": "stdio", "command": "ok"}}}"#;
        let cfg = parse_mcp_json(text, "f").unwrap();
        assert_eq!(
            cfg.servers[0].config,
            Err("server \"a\": duplicate field \"command\"".into())
        );
        assert_eq!(
            cfg.servers[1].config,
            Err("server \"b\": field \"env\": duplicate key \"K\"".into())
        );
        assert!(cfg.servers[2].config.is_ok());
    }

    #[test]
    fn type_rules() {
        assert_eq!(
            one(json!([])),
            Err("server \"s\": entry must be an object, got array".into())
        );
        assert_eq!(
            one(json!({})),
            Err(
                "server \"s\": field \"type\" is required (supported: stdio, streamable-http)"
                    .into()
            )
        );
        assert!(one(json!({"type": 1}))
            .unwrap_err()
            .contains("field \"type\": must be a string"));
        assert!(one(json!({"type": "sse", "url": "https://a"}))
            .unwrap_err()
            .contains("legacy HTTP+SSE"));
        assert_eq!(
            one(json!({"type": "ws"})),
            Err("server \"s\": field \"type\": unknown transport \"ws\" (supported: stdio, streamable-http)".into())
        );
    }

    #[test]
    fn unknown_field_is_named() {
        let err = one(json!({"type": "stdio", "command": "x", "url": "https://a"})).unwrap_err();
        assert!(
            err.starts_with("server \"s\": field \"url\": unknown field for type \"stdio\""),
            "{err}"
        );
        let err = one(json!({"type": "streamable-http", "url": "https://a", "command": "x"}))
            .unwrap_err();
        assert!(err.contains("field \"command\": unknown field"), "{err}");
    }

    #[test]
    fn stdio_full_entry() {
        let cfg = one(json!({
            "type": "stdio", "command": "node", "args": ["${PLUGIN_ROOT}/a.js"],
            "env": {"A": "${PLUGIN_DATA}"}, "cwd": "${PLUGIN_ROOT}/w"
        }))
        .unwrap();
        let ServerConfig::Stdio(s) = cfg else {
            panic!()
        };
        assert_eq!(s.env.get("A").map(String::as_str), Some("${PLUGIN_DATA}"));
        assert_eq!(s.cwd.as_deref(), Some("${PLUGIN_ROOT}/w"));
    }

    #[test]
    fn command_rules() {
        let cmd = |c: &str| one(json!({"type": "stdio", "command": c}));
        assert!(cmd("node").is_ok());
        assert!(cmd("my server").is_ok(), "whitespace stays one token");
        assert!(cmd("./bin/server").is_ok());
        assert!(cmd("/usr/bin/env").is_ok());
        assert!(cmd("")
            .unwrap_err()
            .contains("field \"command\": must not be empty"));
        assert!(cmd("bin/x")
            .unwrap_err()
            .contains("relative command must start with ./"));
        assert!(cmd("../x")
            .unwrap_err()
            .contains("relative command must start with ./"));
        assert!(cmd("${PLUGIN_ROOT}/x")
            .unwrap_err()
            .contains("not expanded in \"command\""));
        assert!(cmd("./").unwrap_err().contains("does not name a file"));
        assert!(cmd("..")
            .unwrap_err()
            .contains("does not name an executable"));
        assert!(cmd("a\0b").unwrap_err().contains("NUL"));
        assert!(one(json!({"type": "stdio"}))
            .unwrap_err()
            .contains("field \"command\" is required"));
        assert!(one(json!({"type": "stdio", "command": 3}))
            .unwrap_err()
            .contains("must be a string, got number"));
    }

    #[test]
    fn args_env_cwd_rules() {
        let with = |k: &str, v: Value| one(json!({"type": "stdio", "command": "x", k: v}));
        assert!(with("args", json!("a"))
            .unwrap_err()
            .contains("field \"args\": must be an array of strings"));
        assert!(with("args", json!(["a", 1]))
            .unwrap_err()
            .contains("field \"args[1]\": must be a string"));
        assert!(with("args", json!(["a", "${HOME}"]))
            .unwrap_err()
            .contains("field \"args[1]\": unknown variable ${HOME}"));
        assert!(with("args", json!(["$HOME"])).is_ok());
        assert!(with("env", json!([]))
            .unwrap_err()
            .contains("field \"env\": must be an object"));
        assert!(with("env", json!({"A": 1}))
            .unwrap_err()
            .contains("field \"env.A\": must be a string"));
        assert!(with("env", json!({"": "v"}))
            .unwrap_err()
            .contains("variable name \"\" must not be empty"));
        assert!(with("env", json!({"A=B": "v"}))
            .unwrap_err()
            .contains("must not contain \"=\""));
        assert!(with("env", json!({"A": "${X"}))
            .unwrap_err()
            .contains("field \"env.A\": unterminated"));
        assert!(with("cwd", json!(1))
            .unwrap_err()
            .contains("field \"cwd\": must be a string"));
        assert!(with("cwd", json!(""))
            .unwrap_err()
            .contains("field \"cwd\": must not be empty"));
        assert!(with("cwd", json!("${TMP}"))
            .unwrap_err()
            .contains("field \"cwd\": unknown variable"));
    }

    #[test]
    fn url_rules() {
        let url = |u: &str| one(json!({"type": "streamable-http", "url": u}));
        assert!(url("https://example.com/mcp").is_ok());
        assert!(url("http://localhost:3000/mcp").is_ok());
        assert!(url("http://LOCALHOST/mcp").is_ok());
        assert!(url("http://127.0.0.1/mcp").is_ok());
        assert!(url("http://127.9.8.7/mcp").is_ok());
        assert!(url("http://[::1]:8080/mcp").is_ok());
        assert!(
            url("https://example.com/${X}").is_ok(),
            "${{}} is literal in url"
        );
        let err = url("http://example.com/mcp").unwrap_err();
        assert_eq!(
            err,
            "server \"s\": field \"url\": must use https (http is allowed only for loopback hosts)"
        );
        assert!(url("http://128.0.0.1/").is_err());
        assert!(url("http://localhost.evil.com/").is_err());
        assert!(url("ftp://example.com/")
            .unwrap_err()
            .contains("got scheme \"ftp\""));
        assert!(url("not a url")
            .unwrap_err()
            .contains("field \"url\": invalid URL"));
        assert!(url("${MCP_URL}")
            .unwrap_err()
            .contains("field \"url\": invalid URL"));
        let err = url("https://user:hunter2@example.com/").unwrap_err();
        assert!(
            err.contains("must not contain credentials") && !err.contains("hunter2"),
            "{err}"
        );
        assert!(url("https://user@example.com/").is_err());
        assert!(one(json!({"type": "streamable-http"}))
            .unwrap_err()
            .contains("field \"url\" is required"));
    }

    #[test]
    fn header_rules_never_echo_values() {
        let h =
            |v: Value| one(json!({"type": "streamable-http", "url": "https://a", "headers": v}));
        let ok = h(json!({"Authorization": "Bearer ${TOKEN}", "X-A": "a\tb"})).unwrap();
        let ServerConfig::StreamableHttp(cfg) = ok else {
            panic!()
        };
        assert_eq!(cfg.headers["Authorization"], "Bearer ${TOKEN}");
        for bad in ["s3cret\r\nX: y", "s3cret\n", "s3cret\0"] {
            let err = h(json!({ "X-Key": bad })).unwrap_err();
            assert!(
                err.contains("field \"headers.X-Key\": value must not contain CR, LF, NUL"),
                "{err}"
            );
            assert!(!err.contains("s3cret"), "{err}");
        }
        assert!(h(json!({"Bad Name": "v"}))
            .unwrap_err()
            .contains("invalid header name \"Bad Name\""));
        assert!(h(json!({"Mcp-Session-Id": "v"}))
            .unwrap_err()
            .contains("set by the MCP transport"));
        assert!(h(json!({"content-type": "v"}))
            .unwrap_err()
            .contains("field \"headers.content-type\""));
        assert!(h(json!({"": "v"}))
            .unwrap_err()
            .contains("invalid header name"));
        assert!(h(json!({"X": 1}))
            .unwrap_err()
            .contains("field \"headers.X\": must be a string"));
        assert!(h(json!([]))
            .unwrap_err()
            .contains("field \"headers\": must be an object"));
        assert!(h(json!({"X-A": "1", "x-a": "2"}))
            .unwrap_err()
            .contains("case-insensitive"));
    }

    #[test]
    fn empty_server_name_is_invalid() {
        assert!(validate_entry_value("", &json!({"type": "stdio", "command": "x"})).is_err());
    }

    #[test]
    fn dot_relative_forms() {
        assert_eq!(dot_relative("./a/b"), Some("a/b"));
        assert_eq!(dot_relative("../a"), None);
        assert_eq!(dot_relative(".a"), None);
        assert_eq!(dot_relative("a"), None);
    }
}
