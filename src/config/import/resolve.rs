//! Putting the app's values into an imported entry: every canonical
//! placeholder (`${env:X}`, `${input:id}`, `${workspaceFolder}`) of a
//! variable the entry uses is replaced, in one pass, in `command`, `args`,
//! `env` values, `cwd`, `url` and header values; then the entry is checked
//! by this host's own rules. Values come only from the caller (the app's
//! resolver), never from this process's environment.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ImportedServer;
use crate::config::validate_entry_value;
use crate::config::vars::quote;

/// The host entry of `server` with its variables replaced by `values`
/// (variable id → value): [`resolve_entry`] of its parts.
///
/// # Errors
/// As [`resolve_entry`].
pub fn resolve_server(
    server: &ImportedServer,
    values: &BTreeMap<String, String>,
) -> Result<Value, String> {
    resolve_entry(&server.name, &server.config, &server.variables, values)
}

/// Entry `config` of server `name` with the placeholders of `variables`
/// (ids) replaced by `values` (variable id → value), in one pass, then
/// checked by `validate_entry_value`.
///
/// # Errors
/// A variable without a value (naming it, e.g. `server "github": variable
/// ${env:GITHUB_TOKEN} has no value`), or the resolved entry breaking a
/// rule of `validate_entry_value` (naming the field). Messages never
/// contain a value.
pub fn resolve_entry(
    name: &str,
    config: &Value,
    variables: &[String],
    values: &BTreeMap<String, String>,
) -> Result<Value, String> {
    if let Some(missing) = variables.iter().find(|id| !values.contains_key(*id)) {
        return Err(format!(
            "server {}: variable ${{{missing}}} has no value",
            quote(name)
        ));
    }
    let ids: Vec<&str> = variables.iter().map(String::as_str).collect();
    let mut config = config.clone();
    substitute(&mut config, &ids, values);
    validate_entry_value(name, &config)?;
    Ok(config)
}

/// Replaces placeholders in every string of `value` (object keys excepted).
fn substitute(value: &mut Value, ids: &[&str], values: &BTreeMap<String, String>) {
    match value {
        Value::String(s) => *s = replaced(s, ids, values),
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, ids, values)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, ids, values)),
        _ => {}
    }
}

/// `s` with each `${id}` of `ids` replaced, left to right, once: a value
/// is never scanned again.
fn replaced(s: &str, ids: &[&str], values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let known = after
            .find('}')
            .map(|end| &after[..end])
            .filter(|id| ids.contains(id));
        match known.and_then(|id| values.get(id).map(|v| (id, v))) {
            Some((id, value)) => {
                out.push_str(&rest[..start]);
                out.push_str(value);
                rest = &after[id.len() + 1..];
            }
            None => {
                out.push_str(&rest[..start + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
