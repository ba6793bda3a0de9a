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

mod entry;
mod file;
mod remote;

use std::fmt::Display;

use serde_json::{Map, Value};

use super::vars::quote;
use crate::json::type_name;

pub use entry::{literal_placeholders_of, validate_entry_value, validate_literal_entry_value};
pub(crate) use file::json_parse_options;
pub use file::parse_mcp_json;

// --- messages shared by the rules ----------------------------------------------

fn string_field(field: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(wrong_type(field, "a string", other)),
    }
}

/// `Err` naming the first member of `obj` that `allowed` does not list
/// (the transport `transport`'s fields).
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

fn field_msg(field: &str, msg: impl Display) -> String {
    format!("field {}: {msg}", quote(field))
}

fn wrong_type(field: &str, expected: &str, got: &Value) -> String {
    field_msg(field, format!("must be {expected}, got {}", type_name(got)))
}

#[cfg(test)]
mod tests;
