//! What an import collects while it walks a file: the servers, the
//! variables and the diagnostics, each diagnostic with its file, line and
//! column. Messages name servers, fields and variables, never a value.

use serde::{Serialize, Serializer};

use super::located::{Member, Node};
use super::{ImportFormat, ImportVariable, Imported, ImportedServer};
use crate::config::line_index::LineIndex;
use crate::config::vars::{quote, shown_cut};
use crate::error::ErrorCode;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    /// The file, or the entry named by `server`, is not imported.
    Error,
    /// The entry is imported without the field named by `field`.
    Warning,
}

/// One thing an import could not take, or took without a field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportDiagnostic {
    /// `invalid_config` (the file does not parse, or its top level is
    /// wrong: nothing imported), `invalid_entry` (an entry that cannot be
    /// taken, or a field the format does not define) or `not_supported`
    /// (a field the format defines that this host does not take yet).
    #[serde(serialize_with = "code_str")]
    pub code: ErrorCode,
    /// Whether the entry (or file) was left out, or only the field.
    pub severity: Severity,
    /// What and why, naming the server and field, e.g. `server "figma":
    /// field "enabled_tools": not supported yet (tool filters); ignored`.
    pub message: String,
    /// The file label given to the import.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in UTF-16 code units.
    pub column: u32,
    /// The server's name in the file, when the diagnostic is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The field's path in the entry (`headers.Authorization`, `args[2]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

fn code_str<S: Serializer>(code: &ErrorCode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.as_str())
}

/// The collector of one import.
pub(super) struct Report<'t> {
    pub format: ImportFormat,
    file: String,
    lines: LineIndex<'t>,
    servers: Vec<ImportedServer>,
    variables: Vec<ImportVariable>,
    diagnostics: Vec<ImportDiagnostic>,
}

/// Where a diagnostic points and what it is about.
pub(super) struct At<'a> {
    /// Byte offset in the text.
    pub at: usize,
    /// The server, if any.
    pub server: Option<&'a str>,
    /// The field path, if any.
    pub field: Option<&'a str>,
}

impl<'t> Report<'t> {
    pub(super) fn new(format: ImportFormat, text: &'t str, file: &str) -> Self {
        Self {
            format,
            file: file.to_owned(),
            lines: LineIndex::new(text),
            servers: Vec::new(),
            variables: Vec::new(),
            diagnostics: Vec::new(),
        }
    }

    /// 1-based line and column of byte `at`.
    pub(super) fn line_column(&self, at: usize) -> (u32, u32) {
        let p = self.lines.position(at);
        let one = |n: i64| u32::try_from(n + 1).unwrap_or(u32::MAX);
        (one(p.line), one(p.character))
    }

    /// Adds a diagnostic; `message` is prefixed with the server and field.
    pub(super) fn add(&mut self, code: ErrorCode, severity: Severity, at: &At<'_>, message: &str) {
        let mut text = String::new();
        if let Some(server) = at.server {
            text.push_str(&format!("server {}: ", quote(server)));
        }
        // A field is, or ends with, a key of the file: cut and escaped.
        let field = at.field.map(shown_cut);
        if let Some(field) = &field {
            text.push_str(&format!("field {}: ", quote(field)));
        }
        text.push_str(message);
        let (line, column) = self.line_column(at.at);
        self.diagnostics.push(ImportDiagnostic {
            code,
            severity,
            message: text,
            file: self.file.clone(),
            line,
            column,
            server: at.server.map(str::to_owned),
            field,
        });
    }

    /// The file cannot be imported at all (`invalid_config`).
    pub(super) fn file_error(&mut self, at: usize, message: &str) {
        let at = At {
            at,
            server: None,
            field: None,
        };
        self.add(ErrorCode::InvalidConfig, Severity::Error, &at, message);
    }

    /// The members of the file's top-level object, or an `invalid_config`
    /// error when it is not one.
    pub(super) fn top_members<'n>(&mut self, root: &'n Node) -> Option<&'n [Member]> {
        if root.members().is_none() {
            let message = format!(
                "top-level value must be an object, got {}",
                root.type_name()
            );
            self.file_error(root.at, &message);
        }
        root.members()
    }

    /// The fields of server entry `member`, or an `invalid_entry` error
    /// when it is not `expected` (`an object`, `a table`).
    pub(super) fn entry_members<'n>(
        &mut self,
        member: &'n Member,
        expected: &str,
    ) -> Option<&'n [Member]> {
        let fields = member.value.members();
        if fields.is_none() {
            let at = At {
                at: member.value.at,
                server: Some(&member.key),
                field: None,
            };
            let message = format!("entry must be {expected}, got {}", member.value.type_name());
            self.bad_entry(&at, &message);
        }
        fields
    }

    /// A field the format defines and this host does not take (`not_supported`, warning).
    pub(super) fn not_supported(&mut self, at: &At<'_>, why: &str) {
        let message = format!("not supported by this host{why}; ignored");
        self.add(ErrorCode::NotSupported, Severity::Warning, at, &message);
    }

    /// A field the format does not define (`invalid_entry`, warning).
    pub(super) fn unknown_field(&mut self, at: &At<'_>) {
        let message = format!("unknown field for {}; ignored", self.format.label());
        self.add(ErrorCode::InvalidEntry, Severity::Warning, at, &message);
    }

    /// An entry taken as it is, with a remark on a field (`invalid_entry`,
    /// warning): text passed verbatim, a reference with nothing to refer to.
    pub(super) fn warning(&mut self, at: &At<'_>, message: &str) {
        self.add(ErrorCode::InvalidEntry, Severity::Warning, at, message);
    }

    /// An entry that cannot be taken (`invalid_entry`, error).
    pub(super) fn bad_entry(&mut self, at: &At<'_>, message: &str) {
        self.add(ErrorCode::InvalidEntry, Severity::Error, at, message);
    }

    /// Adds a server.
    pub(super) fn server(&mut self, server: ImportedServer) {
        self.servers.push(server);
    }

    /// Adds `variable` unless one with its id is known; a later use adds
    /// what the first did not say (secret, description, default).
    pub(super) fn variable(&mut self, variable: ImportVariable) {
        match self.variables.iter_mut().find(|v| v.id == variable.id) {
            None => self.variables.push(variable),
            Some(known) => {
                known.secret |= variable.secret;
                known.description = known.description.take().or(variable.description);
                known.default = known.default.take().or(variable.default);
                known.required = (known.required || variable.required) && known.default.is_none();
            }
        }
    }

    /// The import's result.
    pub(super) fn finish(self) -> Imported {
        Imported {
            servers: self.servers,
            variables: self.variables,
            diagnostics: self.diagnostics,
        }
    }
}
