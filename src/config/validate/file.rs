//! Stage 1 of `mcp.json` validation: the file (Agent Plugins "MCP runtime",
//! seed 002, *Validate in two stages*). Strict JSON, `$schema`, a required
//! `mcpServers` object, no unknown or duplicate top-level field, no duplicate
//! server name; then stage 2 ([`super::validate_entry_value`]) per member.

use jsonc_parser::ast::{self, ObjectPropName};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde_json::{Map, Value};

use super::{field_msg, literal_placeholders_of, validate_entry_value};
use crate::config::line_index::LineIndex;
use crate::config::model::{McpJson, ServerEntry, SUPPORTED_SCHEMAS};
use crate::config::vars::quote;

/// Top-level fields allowed in `mcp.json`.
const TOP_LEVEL_FIELDS: &[&str] = &["$schema", "mcpServers"];

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

/// jsonc-parser's options for strict JSON (RFC 8259), or with `jsonc` for
/// JSONC as VS Code reads it (comments and trailing commas too).
pub(crate) fn json_parse_options(jsonc: bool) -> ParseOptions {
    ParseOptions {
        allow_comments: jsonc,
        allow_loose_object_property_names: false,
        allow_trailing_commas: jsonc,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses `text` as strict JSON (RFC 8259) into a jsonc-parser AST.
fn parse_strict(text: &str) -> Result<ast::Value<'_>, FileError> {
    let options = json_parse_options(false);
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
    let mut literal_placeholders = Vec::new();
    let config = to_json(&prop.value, "")
        .map_err(|e| format!("server {}: {e}", quote(&name)))
        .and_then(|value| {
            let config = validate_entry_value(&name, &value)?;
            literal_placeholders = literal_placeholders_of(&value);
            Ok(config)
        });
    let range = Some(lines.range(prop.start(), prop.end()));
    ServerEntry {
        name,
        range,
        config,
        literal_placeholders,
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
