//! Building one host entry from a source entry: typed reads of the
//! source's fields (each failure naming the field), variables rewritten to
//! canonical placeholders, the finished entry checked by this host's own
//! rules (`validate_entry_value`) once it has no variable left to resolve.

use serde_json::{Map, Value};

use super::located::{Member, Node, Val};
use super::report::{At, Report};
use super::vars::{EntryVars, Syntax};
use super::{ImportedOAuth, ImportedServer};
use crate::config::validate_literal_entry_value;
use crate::config::vars::{quote, quote_cut};
use crate::limits::import::MAX_IMPORTED_SERVER_NAME_BYTES;

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
    /// Warnings about its fields (field, why), reported if it is taken.
    pub notes: Vec<FieldError>,
}

impl<'a> Building<'a> {
    /// Server `name` whose key is at byte `at`, its variables read by `vars`.
    pub(super) fn new(name: &str, at: usize, vars: EntryVars<'a>) -> Self {
        Self {
            name: name.to_owned(),
            at,
            vars,
            notes: Vec::new(),
        }
    }

    /// A string field, variables rewritten (`secret`: a header value).
    pub(super) fn string(
        &mut self,
        field: &str,
        node: &Node,
        secret: bool,
    ) -> Result<String, FieldError> {
        let s = node.str().ok_or_else(|| wrong(field, "a string", node))?;
        self.text(field, s)?;
        self.vars
            .rewrite(s, secret)
            .map_err(|why| (field.to_owned(), why))
    }

    /// Checks the source text `s` of `field`: no control character but
    /// tab, CR and LF; in a format without variables, a `${` is noted (see
    /// [`EntryVars::literal`]).
    ///
    /// # Errors
    /// A control character, naming the field (never the text).
    pub(super) fn text(&mut self, field: &str, s: &str) -> Result<(), FieldError> {
        if s.chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        {
            let why = "must not contain control characters (other than tab, CR and LF)";
            return Err((field.to_owned(), why.to_owned()));
        }
        if self.vars.syntax == Syntax::Literal && s.contains("${") {
            self.vars.literal.push((field.to_owned(), s.to_owned()));
        }
        Ok(())
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

    /// An object of strings (`env`, `headers`), variables rewritten
    /// (`secret`: its values are the host's secrets, so are its variables).
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
        if let Some(why) = unusable_name(&self.name) {
            let at = At {
                at: self.at,
                server: None,
                field: None,
            };
            out.bad_entry(&at, &format!("the server name {why}"));
            return None;
        }
        if let Some(field) = self.taken_for_placeholder() {
            let why = "holds \"${\" text that would be taken for one of the entry's variables";
            out.bad_entry(&self.at(None), &format!("field {}: {why}", quote(field)));
            return None;
        }
        if self.vars.used.is_empty() {
            if let Err(message) = validate_literal_entry_value(&self.name, &config) {
                let prefix = format!("server {}: ", quote(&self.name));
                let message = message.strip_prefix(&prefix).unwrap_or(&message);
                out.bad_entry(&self.at(None), message);
                return None;
            }
        }
        let label = out.format.label();
        let verbatim = self.vars.literal.iter().map(|(field, _)| {
            let why = format!("\"${{\" is not a variable in {label}: passed verbatim");
            (field.clone(), why)
        });
        let notes: Vec<FieldError> = verbatim.chain(self.notes.iter().cloned()).collect();
        for (field, why) in &notes {
            out.warning(&self.at(Some(field)), why);
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
            oauth: extra.oauth,
            include_tools: extra.include_tools,
            exclude_tools: extra.exclude_tools,
            call_timeout_ms: extra.call_timeout_ms,
            call_max_total_ms: extra.call_max_total_ms,
            required: extra.required,
            line,
            column,
            resolved: ids.is_empty(),
            variables: ids,
            secrets: Vec::new(),
            docker_options: extra.docker_options,
        })
    }

    /// Where the server's diagnostics point: its key, and `field`.
    fn at<'s>(&'s self, field: Option<&'s str>) -> At<'s> {
        At {
            at: self.at,
            server: Some(&self.name),
            field,
        }
    }

    /// The first field noted in [`EntryVars::literal`] whose text holds a
    /// placeholder of one of the entry's variables (`${env:X}` beside
    /// Codex's `env_vars = ["X"]`): resolving would replace it.
    fn taken_for_placeholder(&self) -> Option<&str> {
        let ids: Vec<String> = self
            .vars
            .used
            .iter()
            .map(|v| format!("${{{}", v.id))
            .collect();
        let taken = |text: &str| {
            ids.iter().any(|id| {
                text.match_indices(id.as_str())
                    .any(|(i, _)| matches!(text[i + id.len()..].chars().next(), Some('}' | ':')))
            })
        };
        self.vars
            .literal
            .iter()
            .find(|(_, text)| taken(text))
            .map(|(field, _)| field.as_str())
    }
}

/// Why `name` cannot be an imported server's name, if it cannot: empty,
/// `.` or `..` (a path's parts), longer than
/// [`MAX_IMPORTED_SERVER_NAME_BYTES`], or holding a control character or
/// a bidirectional-text control (U+202E would make it read as another
/// name wherever it is shown). The reason never shows the name.
fn unusable_name(name: &str) -> Option<String> {
    let bidi = |c: char| matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if name.is_empty() || name == "." || name == ".." {
        Some("must not be empty, \".\" or \"..\"".to_owned())
    } else if name.len() > MAX_IMPORTED_SERVER_NAME_BYTES {
        Some(format!(
            "is longer than {MAX_IMPORTED_SERVER_NAME_BYTES} bytes"
        ))
    } else if name.chars().any(|c| c.is_control() || bidi(c)) {
        Some("must not hold a control character or a bidirectional-text control".to_owned())
    } else {
        None
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
    /// The other OAuth settings.
    pub oauth: ImportedOAuth,
    /// Only these tools (`includeTools`).
    pub include_tools: Option<Vec<String>>,
    /// Not these tools (`excludeTools`).
    pub exclude_tools: Vec<String>,
    /// The server's call inactivity limit, ms (`callTimeoutMs`).
    pub call_timeout_ms: Option<u64>,
    /// The server's absolute call limit, ms (`callMaxTotalMs`).
    pub call_max_total_ms: Option<u64>,
    /// The start blocks until decided (`required`).
    pub required: bool,
    /// A registry `docker` entry: how many args are `docker`'s options.
    pub docker_options: Option<usize>,
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

/// The host transport a source `type` names: `stdio`, `streamable-http`
/// for `http` / `streamable-http` / `streamableHttp`, or `sse` (legacy
/// HTTP+SSE, MCP 2024-11-05).
///
/// # Errors
/// Unknown types.
pub(super) fn transport(name: &str) -> Result<&'static str, String> {
    match name {
        "stdio" => Ok("stdio"),
        "http" | "streamable-http" | "streamableHttp" | "streamable_http" => Ok("streamable-http"),
        "sse" => Ok("sse"),
        other => Err(format!("unknown transport {}", quote_cut(other))),
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

/// Where a format keeps a server's OAuth settings: the object (`oauth`,
/// Cursor `auth`) and its members' keys; a member without a key here is
/// reported as not supported.
#[derive(Debug, Clone, Copy)]
pub(super) struct OAuthKeys<'a> {
    /// The object's key.
    pub object: &'a str,
    /// The client id's (`clientId`, `CLIENT_ID`, `client_id`).
    pub client_id: &'a str,
    /// The loopback redirect port's (`callbackPort`, `callback_port`).
    pub callback_port: Option<&'a str>,
    /// The authorization server metadata URL's (`authServerMetadataUrl`).
    pub metadata_url: Option<&'a str>,
    /// The scopes' (`scopes`).
    pub scopes: Option<&'a str>,
}

impl<'a> OAuthKeys<'a> {
    /// An object with a client id only.
    pub(super) const fn client_only(object: &'a str, client_id: &'a str) -> Self {
        Self {
            object,
            client_id,
            callback_port: None,
            metadata_url: None,
            scopes: None,
        }
    }
}

/// The OAuth client id and settings in the `keys.object` of `entry`
/// (`oauth.clientId`, Cursor `auth.CLIENT_ID`, Codex `oauth.client_id`;
/// Claude Code's `callbackPort`, `authServerMetadataUrl`, `scopes`); the
/// object's other members are reported as not supported.
///
/// # Errors
/// `object` is not an object, or a member is not of its type (naming the
/// field).
pub(super) fn oauth_client(
    out: &mut Report<'_>,
    server: &str,
    entry: &Node,
    keys: OAuthKeys<'_>,
) -> Result<(Option<String>, ImportedOAuth), FieldError> {
    let mut oauth = ImportedOAuth::default();
    let Some(node) = entry.get(keys.object) else {
        return Ok((None, oauth));
    };
    let members = node
        .members()
        .ok_or_else(|| wrong(keys.object, "an object", node))?;
    let mut id = None;
    for m in members {
        let field = format!("{}.{}", keys.object, m.key);
        let key = Some(m.key.as_str());
        if m.key == keys.client_id {
            id = Some(string(&field, &m.value)?);
        } else if key == keys.metadata_url {
            oauth.auth_server_metadata_url = Some(string(&field, &m.value)?);
        } else if key == keys.callback_port {
            oauth.callback_port = Some(port(&field, &m.value)?);
        } else if key == keys.scopes {
            oauth.scopes = scopes(&field, &m.value)?;
        } else {
            let at = At {
                at: m.key_at,
                server: Some(server),
                field: Some(&field),
            };
            out.not_supported(&at, "");
        }
    }
    Ok((id, oauth))
}

/// A string member.
pub(super) fn string(field: &str, n: &Node) -> Result<String, FieldError> {
    n.str()
        .map(str::to_owned)
        .ok_or_else(|| wrong(field, "a string", n))
}

/// A port number: a whole number from 1 to 65535.
fn port(field: &str, n: &Node) -> Result<u16, FieldError> {
    match n.val {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Val::Num(v) if v.fract() == 0.0 && (1.0..=65535.0).contains(&v) => Ok(v as u16),
        _ => Err(wrong(field, "a port number (1 to 65535)", n)),
    }
}

/// Scopes: an array of strings, or one space-separated string.
pub(super) fn scopes(field: &str, n: &Node) -> Result<Vec<String>, FieldError> {
    if let Some(s) = n.str() {
        return Ok(s.split_whitespace().map(str::to_owned).collect());
    }
    let Val::Arr(items) = &n.val else {
        return Err(wrong(field, "an array of strings or a string", n));
    };
    let scope = |(i, item): (usize, &Node)| string(&format!("{field}[{i}]"), item);
    items.iter().enumerate().map(scope).collect()
}
