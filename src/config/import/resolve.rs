//! Putting the app's values into an imported entry: every canonical
//! placeholder (`${env:X}`, `${input:id}`, `${workspaceFolder}`, a Claude
//! Code use with its own default `${env:X:-default}`) of a variable the
//! entry uses is replaced, in one pass, in `command`, `args`, `env` values,
//! `cwd`, `url` and header values; then the entry is checked by this host's
//! own rules for literal entries (a value is never scanned again, neither
//! here nor at launch). Values come only from the caller (the app's
//! resolver), never from this process's environment.
//!
//! What the values may not do: hold a control character; make the entry's
//! text longer than a bound (a file of many references to one long value
//! would otherwise grow without end); put a secret into the URL's scheme,
//! host or port (a host is shown, lowercased, wherever the server is
//! named); give a registry `docker` entry an option that hands the
//! container the host (its `docker` options are checked again, resolved:
//! `docker`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::docker::check_resolved;
use super::url_head::secret_in_url_head;
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
    /// Bytes of text (every string of `config`, UTF-8) the entry holds,
    /// resolved: what it takes of a bound shared by several entries.
    pub bytes: usize,
}

/// One imported entry as [`resolve_entry`] takes it: the parts of an
/// [`ImportedServer`] that resolving reads.
#[derive(Debug, Clone, Copy)]
pub struct ImportedEntry<'a> {
    /// The server's name (for messages).
    pub name: &'a str,
    /// Its config, variables as placeholders.
    pub config: &'a Value,
    /// The ids of the variables it uses.
    pub variables: &'a [String],
    /// [`ImportedServer::docker_options`].
    pub docker_options: Option<usize>,
}

/// The host entry of `server` with its variables replaced by `values`
/// (variable id → value; `secret`: ids of secret variables):
/// [`resolve_entry`] of its parts, within the default
/// `limits.maxConfigFileBytes` (8 MiB).
///
/// # Errors
/// As [`resolve_entry`].
pub fn resolve_server(
    server: &ImportedServer,
    values: &BTreeMap<String, String>,
    secret: &[String],
) -> Result<Resolved, String> {
    let entry = ImportedEntry {
        name: &server.name,
        config: &server.config,
        variables: &server.variables,
        docker_options: server.docker_options,
    };
    let max_bytes = crate::limits::Limits::default().max_config_file_bytes;
    resolve_entry(entry, values, secret, max_bytes)
}

/// `entry`'s config with the placeholders of its variables replaced by
/// `values` (variable id → value) in one pass; a use with its own default
/// (`${env:X:-d}`) takes it when `X` has no value. Then checked by
/// `validate_literal_entry_value`. `secret` lists the ids of secret
/// variables: their values are [`Resolved::secrets`]. `max_bytes`: the
/// most text (bytes, every string of the config) the resolved entry may
/// hold.
///
/// # Errors
/// A variable without a value that a use needs (naming it, e.g. `server
/// "github": variable ${env:GITHUB_TOKEN} has no value`), a value holding
/// a control character other than tab, CR and LF (naming the variable), a
/// secret variable in the URL's scheme, host or port (naming it), the
/// resolved entry over `max_bytes` (naming the bound), a registry
/// `docker` entry's resolved options refused (naming the field, `args`,
/// and the option), or the resolved entry breaking a rule (naming the
/// field). Messages never contain a value.
pub fn resolve_entry(
    entry: ImportedEntry<'_>,
    values: &BTreeMap<String, String>,
    secret: &[String],
    max_bytes: usize,
) -> Result<Resolved, String> {
    let server = quote(entry.name);
    let variables = entry.variables;
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
    if let Some(id) = secret_in_url_head(entry.config, (variables, values, secret), replaced_all) {
        return Err(format!(
            "server {server}: field \"url\": secret variable ${{{id}}} is in the URL's \
             scheme, host or port: only its path or query may hold a secret"
        ));
    }
    let ids: Vec<&str> = variables.iter().map(String::as_str).collect();
    let mut config = entry.config.clone();
    let mut pass = Pass::new(&ids, values, max_bytes);
    pass.substitute(&mut config);
    if pass.over {
        return Err(format!(
            "server {server}: resolved, the servers of this import would hold more text than \
             limits.maxConfigFileBytes (for all the servers of one import)"
        ));
    }
    if let Some(id) = pass.missing.first() {
        return Err(format!("server {server}: variable ${{{id}}} has no value"));
    }
    if let Some(n) = entry.docker_options {
        let options = |c: &Value| match c.get("args") {
            Some(Value::Array(args)) => args[..n.min(args.len())].to_vec(),
            _ => Vec::new(),
        };
        check_resolved(&options(entry.config), &options(&config))
            .map_err(|why| format!("server {server}: field \"args\": {why}"))?;
    }
    validate_literal_entry_value(entry.name, &config)?;
    let mut secrets: Vec<String> = Vec::new();
    for id in variables.iter().filter(|id| secret.contains(id)) {
        if let Some(v) = values
            .get(id)
            .filter(|v| !v.is_empty() && !secrets.contains(v))
        {
            secrets.push(v.clone());
        }
    }
    let bytes = max_bytes - pass.left;
    Ok(Resolved {
        config,
        secrets,
        bytes,
    })
}

/// `s` with each `${id}` / `${id:-default}` of `ids` that has a value in
/// `values` (or a default of its own) replaced, once: the registry's check
/// of the defaults a file gives its inputs.
pub(super) fn replaced(s: &str, ids: &[&str], values: &BTreeMap<String, String>) -> String {
    Pass::new(ids, values, usize::MAX).replaced(s)
}

/// [`replaced`], or `None` when an id used in `s` has neither a value nor
/// a default of its own.
pub(super) fn replaced_all(
    s: &str,
    ids: &[&str],
    values: &BTreeMap<String, String>,
) -> Option<String> {
    let mut pass = Pass::new(ids, values, usize::MAX);
    let text = pass.replaced(s);
    pass.missing.is_empty().then_some(text)
}

/// One pass of replacement over an entry.
struct Pass<'a> {
    ids: &'a [&'a str],
    values: &'a BTreeMap<String, String>,
    /// Ids used without a value or a default of their own.
    missing: Vec<String>,
    /// Bytes of text the resolved strings may still take.
    left: usize,
    /// The bound was passed: the pass stopped.
    over: bool,
}

impl<'a> Pass<'a> {
    fn new(ids: &'a [&'a str], values: &'a BTreeMap<String, String>, max_bytes: usize) -> Self {
        Self {
            ids,
            values,
            missing: Vec::new(),
            left: max_bytes,
            over: false,
        }
    }

    /// Replaces placeholders in every string of `value` (object keys
    /// excepted), counting the text against [`Pass::left`].
    fn substitute(&mut self, value: &mut Value) {
        if self.over {
            return;
        }
        match value {
            Value::String(s) => {
                *s = self.replaced(s);
                match self.left.checked_sub(s.len()) {
                    Some(left) if !self.over => self.left = left,
                    _ => self.over = true,
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.substitute(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.substitute(v)),
            _ => {}
        }
    }

    /// `s` with each `${id}` / `${id:-default}` of the ids replaced, left
    /// to right, once: a value is never scanned again. An id without a
    /// value and without a default of its own is added to `missing`.
    /// Stops (setting `over`) once the text would pass [`Pass::left`].
    fn replaced(&mut self, s: &str) -> String {
        let mut out = String::with_capacity(s.len().min(self.left));
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
            if !self.ids.contains(&id) {
                out.push_str("${");
                rest = after;
                continue;
            }
            let text = match (self.values.get(id), default) {
                (Some(value), _) => value.as_str(),
                (None, Some(default)) => default,
                (None, None) => {
                    self.missing.push(id.to_owned());
                    &rest[start..start + 3 + end]
                }
            };
            if out.len().saturating_add(text.len()) > self.left {
                self.over = true;
                return out;
            }
            out.push_str(text);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
}
