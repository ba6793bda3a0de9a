//! Building one host entry from a source entry: typed reads of the
//! source's fields (each failure naming the field), variables rewritten to
//! canonical placeholders, the finished entry checked by this host's own
//! rules (`validate_entry_value`) once it has no variable left to resolve.

use serde_json::{Map, Value};

use super::located::{Member, Node, Val};
use super::report::{At, Report};
use super::vars::EntryVars;
use super::ImportedServer;
use crate::config::validate_entry_value;
use crate::config::vars::quote;

/// What a field read failed on: the field's path and why.
pub(super) type FieldError = (String, String);

/// The server being built: its name, where it starts, its variables.
pub(super) struct Building<'a> {
    /// The server's name.
    pub name: String,
    /// Byte offset of its key.
    pub at: usize,
    /// Its variables.
    pub vars: EntryVars<'a>,
}

impl Building<'_> {
    /// A string field, variables rewritten (`secret`: a header value).
    pub(super) fn string(
        &mut self,
        field: &str,
        node: &Node,
        secret: bool,
    ) -> Result<String, FieldError> {
        let s = node.str().ok_or_else(|| wrong(field, "a string", node))?;
        self.vars
            .rewrite(s, secret)
            .map_err(|why| (field.to_owned(), why))
    }

    /// An array of strings (`args`), variables rewritten.
    pub(super) fn strings(&mut self, field: &str, node: &Node) -> Result<Vec<Value>, FieldError> {
        let Val::Arr(items) = &node.val else {
            return Err(wrong(field, "an array of strings", node));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let s = self.string(&format!("{field}[{i}]"), item, false)?;
                Ok(Value::String(s))
            })
            .collect()
    }

    /// An object of strings (`env`, `headers`), variables rewritten.
    pub(super) fn string_map(
        &mut self,
        field: &str,
        node: &Node,
        secret: bool,
    ) -> Result<Map<String, Value>, FieldError> {
        let members = node
            .members()
            .ok_or_else(|| wrong(field, "an object of strings", node))?;
        let mut out = Map::new();
        for m in members {
            let value = self.string(&format!("{field}.{}", m.key), &m.value, secret)?;
            out.insert(m.key.clone(), Value::String(value));
        }
        Ok(out)
    }

    /// The finished server: checked by this host's rules when it holds no
    /// variable (else when its variables are resolved), reported under its
    /// name and position. `None` (and an error diagnostic) when invalid.
    pub(super) fn finish(
        self,
        out: &mut Report<'_>,
        config: Value,
        extra: Extra,
    ) -> Option<ImportedServer> {
        if self.vars.used.is_empty() {
            if let Err(message) = validate_entry_value(&self.name, &config) {
                let prefix = format!("server {}: ", quote(&self.name));
                let message = message.strip_prefix(&prefix).unwrap_or(&message);
                let at = At {
                    at: self.at,
                    server: Some(&self.name),
                    field: None,
                };
                out.bad_entry(&at, message);
                return None;
            }
        }
        let (line, column) = out.line_column(self.at);
        let ids: Vec<String> = self.vars.used.iter().map(|v| v.id.clone()).collect();
        for variable in self.vars.used {
            out.variable(variable);
        }
        Some(ImportedServer {
            name: self.name,
            config,
            enabled: extra.enabled,
            startup_timeout_ms: extra.startup_timeout_ms,
            oauth_client_id: extra.oauth_client_id,
            line,
            column,
            resolved: ids.is_empty(),
            variables: ids,
        })
    }
}

/// What an entry has beside its host config.
#[derive(Debug, Default)]
pub(super) struct Extra {
    /// Disabled in the source when `false`.
    pub enabled: bool,
    /// Startup timeout, ms.
    pub startup_timeout_ms: Option<u64>,
    /// OAuth client id.
    pub oauth_client_id: Option<String>,
}

impl Extra {
    /// An enabled entry with nothing else.
    pub(super) fn enabled() -> Self {
        Self {
            enabled: true,
            ..Self::default()
        }
    }
}

/// `(field, "must be <expected>, got <type>")`.
pub(super) fn wrong(field: &str, expected: &str, got: &Node) -> FieldError {
    let why = format!("must be {expected}, got {}", got.type_name());
    (field.to_owned(), why)
}

/// A field read failure as an entry error of `server`.
pub(super) fn report_field(
    out: &mut Report<'_>,
    server: &str,
    node_at: usize,
    (field, why): FieldError,
) {
    let at = At {
        at: node_at,
        server: Some(server),
        field: Some(&field),
    };
    out.bad_entry(&at, &why);
}

/// The host transport a source `type` names: `stdio`, or `streamable-http`
/// for `http` / `streamable-http` / `streamableHttp`.
///
/// # Errors
/// `sse` (legacy HTTP+SSE, which this host does not speak) and unknown types.
pub(super) fn transport(name: &str) -> Result<&'static str, String> {
    match name {
        "stdio" => Ok("stdio"),
        "http" | "streamable-http" | "streamableHttp" | "streamable_http" => Ok("streamable-http"),
        "sse" => Err("legacy HTTP+SSE (\"sse\") is not supported by this host".to_owned()),
        other => Err(format!("unknown transport {other:?}")),
    }
}

/// Walks `entry`'s members: each one `handle` takes is done; the rest are
/// reported as `not_supported` (named in `unsupported`, with why) or as
/// unknown fields of the format.
pub(super) fn check_fields(
    out: &mut Report<'_>,
    server: &str,
    entry: &[Member],
    handled: &[&str],
    unsupported: &[(&str, &str)],
) {
    for m in entry {
        if handled.contains(&m.key.as_str()) {
            continue;
        }
        let at = At {
            at: m.key_at,
            server: Some(server),
            field: Some(&m.key),
        };
        match unsupported.iter().find(|(name, _)| *name == m.key) {
            Some((_, why)) => out.not_supported(&at, why),
            None => out.unknown_field(&at),
        }
    }
}

/// The OAuth client id at `object.id_key` of `entry` (`oauth.clientId`,
/// Cursor `auth.CLIENT_ID`, Codex `oauth.client_id`); the object's other
/// members are reported as not supported.
pub(super) fn oauth_client(
    out: &mut Report<'_>,
    server: &str,
    entry: &Node,
    (object, id_key): (&str, &str),
) -> Option<String> {
    let node = entry.get(object)?;
    let Some(members) = node.members() else {
        let at = At {
            at: node.at,
            server: Some(server),
            field: Some(object),
        };
        out.not_supported(&at, " (not an object)");
        return None;
    };
    let mut id = None;
    for m in members {
        match (m.key == id_key, m.value.str()) {
            (true, Some(s)) => id = Some(s.to_owned()),
            _ => {
                let field = format!("{object}.{}", m.key);
                let at = At {
                    at: m.key_at,
                    server: Some(server),
                    field: Some(&field),
                };
                out.not_supported(&at, "");
            }
        }
    }
    id
}
