//! Import of the MCP configurations other hosts keep (issue 30): VS Code
//! `mcp.json`, Claude Code `.mcp.json`, Claude Desktop
//! `claude_desktop_config.json`, Cursor `mcp.json`, Codex `config.toml` and
//! the MCP Registry's `server.json`, turned into this host's own entries
//! (the `addServer` shapes of [`crate::config::validate_entry_value`]).
//!
//! Pure: [`import_config`] takes the text and a label for messages; reading
//! a file is the caller's (the host reads it as it reads `mcp.json`).
//! Nothing is dropped silently: every field a format defines is mapped, or
//! reported by name as not supported ([`ImportDiagnostic`], code
//! `not_supported`); a field the format does not define is reported as
//! unknown (`invalid_entry`); an entry that cannot be taken is reported
//! (`invalid_entry`, severity `error`) and its siblings are still imported;
//! a file that does not parse is one `invalid_config` error. Each
//! diagnostic names the file, line and column (1-based, the column in
//! UTF-16 code units), the server and the field.
//!
//! Variables (`${env:X}`, `${input:id}`, `${VAR:-default}`,
//! `${workspaceFolder}`, the registry's `{name}`) are never resolved here:
//! each becomes a canonical placeholder in the entry (`${env:X}`,
//! `${input:id}` or `${workspaceFolder}`) and an [`ImportVariable`]
//! describing it, for the app to resolve ([`resolve_server`]). Values are
//! never part of a diagnostic.

mod claude;
mod codex;
mod docker;
mod entry;
mod inputs;
mod located;
mod registry;
mod report;
mod resolve;
mod url_head;
mod vars;
mod vscode;

#[cfg(test)]
mod oauth_tests;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

pub use report::{ImportDiagnostic, Severity};
pub use resolve::{resolve_entry, resolve_server, ImportedEntry, Resolved};

/// The formats [`import_config`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    /// VS Code `mcp.json` (user or workspace `.vscode/mcp.json`): `servers`, `inputs`.
    VsCode,
    /// Claude Code project `.mcp.json`: `mcpServers`, `${VAR}` / `${VAR:-default}`.
    ClaudeCode,
    /// Claude Desktop `claude_desktop_config.json`: `mcpServers` (stdio).
    ClaudeDesktop,
    /// Cursor `mcp.json` (`~/.cursor/mcp.json`, `.cursor/mcp.json`): `mcpServers`.
    Cursor,
    /// Codex `config.toml`: `[mcp_servers.<name>]` tables.
    Codex,
    /// MCP Registry `server.json`: `packages` (npm, PyPI, OCI, NuGet) and `remotes`.
    Registry,
}

impl ImportFormat {
    /// Every format, in the order of [`ImportFormat::name`]'s list.
    pub const ALL: [ImportFormat; 6] = [
        Self::VsCode,
        Self::ClaudeCode,
        Self::ClaudeDesktop,
        Self::Cursor,
        Self::Codex,
        Self::Registry,
    ];

    /// The format's name in the JS API: `vscode`, `claude-code`,
    /// `claude-desktop`, `cursor`, `codex`, `registry`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::VsCode => "vscode",
            Self::ClaudeCode => "claude-code",
            Self::ClaudeDesktop => "claude-desktop",
            Self::Cursor => "cursor",
            Self::Codex => "codex",
            Self::Registry => "registry",
        }
    }

    /// The format named `name` (see [`ImportFormat::name`]), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How messages call the format's file, e.g. `Codex config.toml`.
    fn label(self) -> &'static str {
        match self {
            Self::VsCode => "VS Code mcp.json",
            Self::ClaudeCode => "Claude Code .mcp.json",
            Self::ClaudeDesktop => "Claude Desktop claude_desktop_config.json",
            Self::Cursor => "Cursor mcp.json",
            Self::Codex => "Codex config.toml",
            Self::Registry => "MCP Registry server.json",
        }
    }
}

/// What [`import_config`] made of one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    /// One entry per server the file defines that could be taken, in file
    /// order (a registry `server.json` gives one per package and remote).
    pub servers: Vec<ImportedServer>,
    /// Every variable the servers use, once each, in first-use order.
    pub variables: Vec<ImportVariable>,
    /// What could not be taken, or was taken without a field, in file order.
    pub diagnostics: Vec<ImportDiagnostic>,
}

/// An imported server's OAuth settings beside its client id: JS
/// `{scopes?, authServerMetadataUrl?, callbackPort?, resource?}`, as
/// `addServer`'s `oauth` takes them (checked there, not here).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedOAuth {
    /// Scopes to request.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The authorization server's metadata URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_server_metadata_url: Option<String>,
    /// The loopback redirect port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// The RFC 8707 resource indicator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

impl ImportedOAuth {
    /// Whether it holds no setting.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// One imported server: this host's entry plus what `addServer` takes beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedServer {
    /// The server's name in the source (a registry entry: the last segment
    /// of its `name`, with `-<registryType>` or `-remote` when it has more
    /// than one way to run).
    pub name: String,
    /// The host's entry (`{type: "stdio", command, args?, env?, cwd?}` or
    /// `{type: "streamable-http", url, headers?}`), variables as canonical
    /// placeholders (`${env:X}`, `${input:id}`, `${workspaceFolder}`).
    pub config: Value,
    /// `false` when the source disables it (Codex `enabled = false`).
    pub enabled: bool,
    /// Startup timeout from the source (Codex `startup_timeout_sec` / `_ms`), in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// OAuth client id from the source (VS Code / Claude Code `oauth.clientId`,
    /// Cursor `auth.CLIENT_ID`, Codex `oauth.client_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth_client_id: Option<String>,
    /// The server's other OAuth settings from the source, for `addServer`'s
    /// `oauth` (Claude Code `oauth.scopes`, `oauth.authServerMetadataUrl`,
    /// `oauth.callbackPort`; Codex `scopes`, `oauth_resource`,
    /// `oauth.callback_port`). Left out when it has none.
    #[serde(skip_serializing_if = "ImportedOAuth::is_empty")]
    pub oauth: ImportedOAuth,
    /// Only the tools matching these, for `addServer`'s `includeTools`
    /// (Codex `enabled_tools`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// Not the tools matching these, for `addServer`'s `excludeTools`
    /// (Codex `disabled_tools`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
    /// The server's call inactivity limit in ms, for `addServer`'s
    /// `callTimeoutMs` (Codex `tool_timeout_sec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
    /// The server's absolute call limit in ms, for `addServer`'s
    /// `callMaxTotalMs` (Codex `tool_timeout_sec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_max_total_ms: Option<u64>,
    /// `addServer`'s `required` (Codex `required`): the start blocks until
    /// decided. Left out when `false`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Where the entry starts in the file: 1-based line.
    pub line: u32,
    /// Where the entry starts in the file: 1-based column (UTF-16 code units).
    pub column: u32,
    /// Ids of the variables this entry uses (see [`ImportVariable::id`]).
    pub variables: Vec<String>,
    /// `config` holds no placeholder (no variables, or they were resolved):
    /// it can be given to `addServer` as it is, with `literal: true`.
    pub resolved: bool,
    /// Once resolved: the values of its secret variables, wherever they
    /// were put (`command`, `args`, `cwd`, the URL path, …), for
    /// `addServer`'s `secrets`. Empty (and left out) before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// A registry package run by `docker`: how many of `config.args` are
    /// `docker`'s own options (`run -i --rm`, `runtimeArguments`, `-e
    /// NAME`), before the image. Resolving checks them again, values in
    /// ([`resolve_entry`]). `None` (left out) for every other entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docker_options: Option<usize>,
}

/// What a variable is, for the app's resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum VariableKind {
    /// An environment variable of the source host's process (`${env:X}`,
    /// Claude Code `${X}`, Codex `env_vars` / `bearer_token_env_var` /
    /// `env_http_headers`).
    Env,
    /// A value the user types or picks (VS Code `${input:id}`, a registry
    /// input: an environment variable, header, argument or `{variable}`).
    Input,
    /// A value the source host knows (`${workspaceFolder}`, `${userHome}`, …).
    Predefined,
}

/// One variable of an import: everything an app needs to ask for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportVariable {
    /// The placeholder's text between `${` and `}` in the entries:
    /// `env:GITHUB_TOKEN`, `input:api-key`, `workspaceFolder`.
    pub id: String,
    /// The name without its kind: `GITHUB_TOKEN`, `api-key`, `workspaceFolder`.
    pub name: String,
    /// What it is.
    pub kind: VariableKind,
    /// A secret (VS Code `password: true`, registry `isSecret`, a header
    /// value, a bearer token): its value must never be shown or stored.
    pub secret: bool,
    /// The entry cannot start without a value (no default).
    pub required: bool,
    /// What the source says about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The source's default (`${VAR:-default}`, an input's `default`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// The values to pick from (VS Code `pickString` options, registry `choices`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// Reads `text`, a file of format `format`, into this host's entries.
///
/// `file` labels the diagnostics (normally the file's path). Never fails:
/// a file that does not parse gives no servers and one `invalid_config`
/// error diagnostic with the line and column of the problem.
#[must_use]
pub fn import_config(format: ImportFormat, text: &str, file: &str) -> Imported {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = report::Report::new(format, text, file);
    let parsed = match format {
        ImportFormat::Codex => located::parse_toml(text),
        _ => located::parse_json(text, format == ImportFormat::VsCode),
    };
    match parsed {
        Err((at, message)) => out.file_error(at, &message),
        Ok(root) => match format {
            ImportFormat::VsCode => vscode::import(&root, &mut out),
            ImportFormat::ClaudeCode | ImportFormat::ClaudeDesktop | ImportFormat::Cursor => {
                claude::import(&root, &mut out);
            }
            ImportFormat::Codex => codex::import(&root, &mut out),
            ImportFormat::Registry => registry::import(&root, &mut out),
        },
    }
    out.finish()
}
