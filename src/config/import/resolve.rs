//! Putting the app's values into an imported entry: every canonical
//! placeholder (`${env:X}`, `${input:id}`, `${workspaceFolder}`, a Claude
//! Code use with its own default `${env:X:-default}`) of a variable the
//! entry uses is replaced, in one pass, in `command`, `args`, `env` values,
//! `cwd`, `url` and header values; then the entry is checked by this host's
//! own rules for literal entries (a value is never scanned again, neither
//! here nor at launch). Values come only from the caller (the app's
//! resolver), never from this process's environment.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::ImportedServer;
use crate::config::validate_literal_entry_value;
use crate::config::vars::quote;

/// A resolved entry and the values it must keep secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    /// The host entry, every placeholder replaced: literal text for
    /// `addServer({literal: true})`.
    pub config: Value,
    /// The values of the entry's secret variables that were put into it
    /// (for `addServer`'s `secrets`), once each.
    pub secrets: Vec<String>,
}

/// The host entry of `server` with its variables replaced by `values`
/// (variable id → value; `secret`: ids of secret variables):
/// [`resolve_entry`] of its parts.
///
/// # Errors
/// As [`resolve_entry`].
pub fn resolve_server(
    server: &ImportedServer,
    values: &BTreeMap<String, String>,
    secret: &[String],
) -> Result<Resolved, String> {
    resolve_entry(
        &server.name,
        &server.config,
        &server.variables,
        values,
        secret,
    )
}

/// Entry `config` of server `name` with the placeholders of `variables`
/// (ids) replaced by `values` (variable id → value) in one pass; a use
/// with its own default (`${env:X:-d}`) takes it when `X` has no value.
/// Then checked by `validate_literal_entry_value`. `secret` lists the ids
/// of secret variables: their values are [`Resolved::secrets`].
///
/// # Errors
/// A variable without a value that a use needs (naming it, e.g. `server
/// "github": variable ${env:GITHUB_TOKEN} has no value`), a value holding
/// a control character other than tab, CR and LF (naming the variable), or
/// the resolved entry breaking a rule (naming the field). Messages never
/// contain a value.
pub fn resolve_entry(
    name: &str,
    config: &Value,
    variables: &[String],
    values: &BTreeMap<String, String>,
    secret: &[String],
) -> Result<Resolved, String> {
    let server = quote(name);
    if let Some((id, _)) = values
        .iter()
        .filter(|(id, _)| variables.contains(id))
        .find(|(_, v)| {
            v.chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        })
    {
        return Err(format!(
            "server {server}: the value of variable ${{{id}}} holds a control character"
        ));
    }
    let ids: Vec<&str> = variables.iter().map(String::as_str).collect();
    let mut config = config.clone();
    let mut missing = Vec::new();
    substitute(&mut config, &ids, values, &mut missing);
    if let Some(id) = missing.first() {
        return Err(format!("server {server}: variable ${{{id}}} has no value"));
    }
    validate_literal_entry_value(name, &config)?;
    let mut secrets: Vec<String> = Vec::new();
    for id in variables.iter().filter(|id| secret.contains(id)) {
        if let Some(v) = values
            .get(id)
            .filter(|v| !v.is_empty() && !secrets.contains(v))
        {
            secrets.push(v.clone());
        }
    }
    Ok(Resolved { config, secrets })
}

/// Replaces placeholders in every string of `value` (object keys excepted).
fn substitute(
    value: &mut Value,
    ids: &[&str],
    values: &BTreeMap<String, String>,
    missing: &mut Vec<String>,
) {
    match value {
        Value::String(s) => *s = replaced(s, ids, values, missing),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| substitute(v, ids, values, missing)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| substitute(v, ids, values, missing)),
        _ => {}
    }
}

/// `s` with each `${id}` / `${id:-default}` of `ids` replaced, left to
/// right, once: a value is never scanned again. An id without a value and
/// without a default of its own is added to `missing`.
fn replaced(
    s: &str,
    ids: &[&str],
    values: &BTreeMap<String, String>,
    missing: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        let inner = &after[..end];
        let (id, default) = match inner.split_once(":-") {
            Some((id, default)) => (id, Some(default)),
            None => (inner, None),
        };
        out.push_str(&rest[..start]);
        if !ids.contains(&id) {
            out.push_str("${");
            rest = after;
            continue;
        }
        match (values.get(id), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                missing.push(id.to_owned());
                out.push_str(&rest[start..start + 3 + end]);
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}
