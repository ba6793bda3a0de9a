//! Typed model of a validated `mcp.json`.

use std::collections::BTreeMap;

use super::vars::quote;

pub use ahp_types::state::{TextPosition, TextRange};

/// The `$schema` values this host accepts for `mcp.json` (Agent Plugins 1.0.0).
pub const SUPPORTED_SCHEMAS: &[&str] = &["https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"];

/// A whole `mcp.json` after stage 1 (file) validation succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct McpJson {
    /// One entry per member of `mcpServers`, in file order. Invalid entries are
    /// kept (with their error) so they can be reported; they are never started.
    pub servers: Vec<ServerEntry>,
}

/// One member of `mcpServers`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    /// The member name (the key in `mcpServers`).
    pub name: String,
    /// Span of the member (key through value) in the file, 0-based line and
    /// character (UTF-16 code units, as in LSP / AHP `TextPosition`).
    pub range: Option<TextRange>,
    /// The validated configuration, or why this entry is invalid. The message
    /// names the server and the offending field, e.g.
    /// `server "web": field "url": must use https (http is allowed only for loopback hosts)`.
    pub config: Result<ServerConfig, String>,
    /// The `${…}` placeholders of a valid entry that reach the server as
    /// literal text (in `url` and `headers`, where Agent Plugins expands
    /// nothing), in field order; empty for an invalid entry.
    pub literal_placeholders: Vec<LiteralPlaceholder>,
}

/// A `${…}` placeholder in a field where Agent Plugins expands no variable
/// (`url`, a `headers` value): the server gets it as literal text, as the
/// spec says, and the host says so (seed 002, *Launch stdio servers*;
/// a `Bearer ${TOKEN}` header is the classic silent 401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralPlaceholder {
    /// The field: `url` or `headers.<name>`.
    pub field: String,
    /// The placeholder as shown: `${TOKEN}`, `${env:TOKEN}`, `${TOKEN:-…}`,
    /// or `${…}` for one that does not look like a name (see
    /// `config::literal_placeholders`). Never the field's value.
    pub placeholder: String,
}

impl LiteralPlaceholder {
    /// The diagnostic for server `server`, e.g.
    /// `server "api": field "headers.Authorization": ${TOKEN} is sent
    /// literally (Agent Plugins expands variables only in args, env values
    /// and cwd)`.
    #[must_use]
    pub fn message(&self, server: &str) -> String {
        format!(
            "server {}: field {}: {} is sent literally (Agent Plugins expands variables only in args, env values and cwd)",
            quote(server),
            quote(&self.field),
            self.placeholder
        )
    }
}

/// A validated server entry, by transport (`type`).
#[derive(Debug, Clone, PartialEq)]
pub enum ServerConfig {
    /// `type: "stdio"`.
    Stdio(StdioConfig),
    /// `type: "streamable-http"` or `type: "sse"` (which one: [`HttpConfig::transport`]).
    StreamableHttp(HttpConfig),
}

/// `type: "stdio"`: launch a local process and speak MCP over its stdin/stdout.
#[derive(Debug, Clone, PartialEq)]
pub struct StdioConfig {
    /// One executable token: a bare name (resolved through `PATH`), a `./`
    /// path (resolved against the plugin root, must stay inside it) or an
    /// absolute path. Never passed to a shell.
    pub command: String,
    /// Arguments, passed separately. May contain `${PLUGIN_ROOT}` / `${PLUGIN_DATA}`.
    pub args: Vec<String>,
    /// Environment overlay. Values may contain `${PLUGIN_ROOT}` / `${PLUGIN_DATA}`.
    pub env: BTreeMap<String, String>,
    /// Working directory; defaults to the plugin root. May contain plugin variables.
    pub cwd: Option<String>,
    /// Every value is literal text (an imported entry, whose variables the
    /// app resolved: `addServer({literal: true})`): no `${…}` is expanded
    /// or refused, and launch errors name the field, never its value.
    pub literal: bool,
}

/// `type: "streamable-http"` or `type: "sse"`: connect to a remote MCP endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    /// The endpoint: `https`, or `http` only for a loopback host
    /// (`localhost`, `127.0.0.0/8`, `::1`).
    pub url: url::Url,
    /// Literal headers sent on every request to the endpoint's origin only.
    /// Names are valid HTTP tokens; values contain no CR, LF or NUL.
    /// Values are secrets: never log or emit them.
    pub headers: BTreeMap<String, String>,
    /// The transport the entry names.
    pub transport: HttpTransport,
}

/// The HTTP transport an entry names by its `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpTransport {
    /// `type: "streamable-http"`: Streamable HTTP (MCP 2025-11-25
    /// "Transports › Streamable HTTP"), falling back to legacy HTTP+SSE when
    /// the POST of the first request is answered 400, 404 or 405 without a
    /// JSON-RPC error ("Transports › Backwards Compatibility").
    #[default]
    StreamableHttp,
    /// `type: "sse"`: the legacy HTTP+SSE transport only (MCP 2024-11-05
    /// "Transports › HTTP with SSE"): a GET opens the event stream, whose
    /// `endpoint` event names the URL every message is POSTed to.
    Sse,
}

impl HttpTransport {
    /// The entry's `type` for this transport (`"streamable-http"`, `"sse"`).
    pub fn type_name(self) -> &'static str {
        match self {
            Self::StreamableHttp => "streamable-http",
            Self::Sse => "sse",
        }
    }
}
