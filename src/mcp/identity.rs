//! What a server says about itself, from its `initialize` result (MCP
//! 2025-11-25 "Lifecycle › Initialization": `serverInfo`, `capabilities`,
//! `instructions`) or its `server/discover` result (MCP 2026-07-28
//! "Lifecycle › Discovery"), with the negotiated protocol version, bounded in
//! size (see the `MAX_SERVER_*` limits).

use rmcp::model::{ProtocolVersion, ServerPeerInfo};
use serde::Serialize;
use serde_json::Value;

use crate::json::{floor_char_boundary, json_len};
use crate::limits::{
    MAX_SERVER_CAPABILITIES_BYTES, MAX_SERVER_ICONS, MAX_SERVER_ICON_SRC_BYTES,
    MAX_SERVER_INFO_TEXT_BYTES, MAX_SERVER_INSTRUCTIONS_BYTES,
};
use crate::transport::sandbox::SandboxReport;

/// How the host reached a server's protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Handshake {
    /// `server/discover` (MCP 2026-07-28, stateless: every request carries
    /// its protocol version, client info and capabilities in `_meta`).
    Discover,
    /// `initialize` / `notifications/initialized` (2025-era revisions).
    Initialize,
}

/// The transport a connection was made over (JS `serverInfo(id).transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TransportKind {
    /// A local process's stdin and stdout (`"stdio"`).
    #[serde(rename = "stdio")]
    Stdio,
    /// Streamable HTTP (`"streamable-http"`; MCP 2025-11-25 "Transports ›
    /// Streamable HTTP").
    #[serde(rename = "streamable-http")]
    StreamableHttp,
    /// Legacy HTTP+SSE (`"sse"`; MCP 2024-11-05 "Transports › HTTP with
    /// SSE"): named by a `type: "sse"` entry, or fallen back to from a
    /// `streamable-http` one.
    #[serde(rename = "sse")]
    Sse,
}

/// One icon of `serverInfo.icons` (MCP `Icon`), as sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerIcon {
    /// `src`: an `https:` URL or a `data:` URI.
    pub src: String,
    /// `mimeType`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// `sizes` (`"48x48"`, `"any"`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `theme` (`"light"` / `"dark"`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<Value>,
}

/// A connected server's identity (JS `host.serverInfo(id)`; also under the
/// customization's `_meta["ahp-mcp-host/serverInfo"]`). Text fields are cut
/// to [`MAX_SERVER_INFO_TEXT_BYTES`], `instructions` to
/// [`MAX_SERVER_INSTRUCTIONS_BYTES`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerIdentity {
    /// The negotiated MCP revision, e.g. `"2026-07-28"` or `"2025-11-25"`.
    pub protocol_version: String,
    /// How it was negotiated.
    pub handshake: Handshake,
    /// The transport the connection was made over.
    pub transport: TransportKind,
    /// `serverInfo.name` (empty when the server sent none).
    pub name: String,
    /// `serverInfo.title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `serverInfo.version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `serverInfo.description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `serverInfo.websiteUrl`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// `serverInfo.icons` (at most [`MAX_SERVER_ICONS`]; icons whose `src`
    /// is longer than [`MAX_SERVER_ICON_SRC_BYTES`] are dropped).
    pub icons: Vec<ServerIcon>,
    /// `instructions`: guidance for the model about this server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Whether `instructions` was cut.
    pub instructions_truncated: bool,
    /// The declared server capabilities object, as sent (`null` when larger
    /// than [`MAX_SERVER_CAPABILITIES_BYTES`]).
    pub capabilities: Value,
    /// Whether `capabilities` was left out for its size.
    pub capabilities_omitted: bool,
    /// The sandbox the server runs in (stdio servers started with a
    /// `sandbox` profile; see `transport::sandbox`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxReport>,
}

impl ServerIdentity {
    /// Builds the identity from what rmcp recorded for the connection
    /// ([`ServerIdentity::transport`] is `stdio` until the opener sets it).
    pub fn from_peer(info: &ServerPeerInfo) -> Self {
        let handshake = if info.protocol_version.has_initialize() {
            Handshake::Initialize
        } else {
            Handshake::Discover
        };
        let text = |s: &str| cut(s, MAX_SERVER_INFO_TEXT_BYTES).0;
        let implementation = info.server_info.as_ref();
        let mut capabilities = serde_json::to_value(&info.capabilities).unwrap_or(Value::Null);
        crate::redact::hidden_in_value(&mut capabilities);
        let capabilities_omitted = json_len(&capabilities) > MAX_SERVER_CAPABILITIES_BYTES;
        let (instructions, instructions_truncated) = match &info.instructions {
            Some(s) => {
                let (kept, cut) = cut(s, MAX_SERVER_INSTRUCTIONS_BYTES);
                (Some(kept), cut)
            }
            None => (None, false),
        };
        Self {
            protocol_version: info.protocol_version.to_string(),
            handshake,
            transport: TransportKind::Stdio,
            name: implementation.map(|i| text(&i.name)).unwrap_or_default(),
            title: implementation.and_then(|i| i.title.as_deref()).map(text),
            version: implementation.map(|i| text(&i.version)),
            description: implementation
                .and_then(|i| i.description.as_deref())
                .map(text),
            website_url: implementation
                .and_then(|i| i.website_url.as_deref())
                .map(text),
            icons: implementation.map(icons_of).unwrap_or_default(),
            instructions,
            instructions_truncated,
            capabilities: if capabilities_omitted {
                Value::Null
            } else {
                capabilities
            },
            capabilities_omitted,
            sandbox: None,
        }
    }

    /// The identity of a connection rmcp recorded nothing for (not expected
    /// after a completed handshake): empty, with no protocol version.
    pub fn unknown() -> Self {
        Self {
            protocol_version: String::new(),
            handshake: Handshake::Initialize,
            transport: TransportKind::Stdio,
            name: String::new(),
            title: None,
            version: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
            instructions: None,
            instructions_truncated: false,
            capabilities: Value::Null,
            capabilities_omitted: false,
            sandbox: None,
        }
    }

    /// Resolves relative icon `src`s (MCP `Icon.src` is a URI; servers send
    /// paths such as `/static/icon.png`) against `base`, the Streamable HTTP
    /// endpoint; without a base (stdio) or when the result is longer than
    /// [`MAX_SERVER_ICON_SRC_BYTES`], the icon is dropped. Returns each
    /// dropped `src` (cut to 200 bytes), for a diagnostic.
    pub fn resolve_icons(&mut self, base: Option<&url::Url>) -> Vec<String> {
        let mut dropped = Vec::new();
        self.icons.retain_mut(|icon| {
            if url::Url::parse(&icon.src).is_ok() {
                return true;
            }
            let joined = base.and_then(|b| b.join(&icon.src).ok());
            match joined.filter(|u| u.as_str().len() <= MAX_SERVER_ICON_SRC_BYTES) {
                Some(url) => {
                    icon.src = url.into();
                    true
                }
                None => {
                    dropped.push(cut(&icon.src, 200).0);
                    false
                }
            }
        });
        dropped
    }

    /// The identity as a JSON object (for `_meta` and JS).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The icons as AHP `Icon`s (`mimeType` becomes `contentType`), or
    /// `None` when the server sent none.
    pub fn ahp_icons(&self) -> Option<Vec<ahp_types::state::Icon>> {
        if self.icons.is_empty() {
            return None;
        }
        let icons = self.icons.iter().filter_map(|icon| {
            let mut ahp = serde_json::json!({ "src": icon.src });
            if let Some(t) = &icon.mime_type {
                ahp["contentType"] = Value::String(t.clone());
            }
            if let Some(sizes) = &icon.sizes {
                ahp["sizes"] = serde_json::json!(sizes);
            }
            if let Some(theme) = icon.theme.as_ref().filter(|t| t.is_string()) {
                ahp["theme"] = theme.clone();
            }
            serde_json::from_value(ahp).ok()
        });
        Some(icons.collect())
    }
}

fn icons_of(implementation: &rmcp::model::Implementation) -> Vec<ServerIcon> {
    let all = implementation.icons.iter().flatten();
    all.filter(|icon| icon.src.len() <= MAX_SERVER_ICON_SRC_BYTES)
        .take(MAX_SERVER_ICONS)
        .map(|icon| ServerIcon {
            src: crate::redact::hidden(&icon.src).into_owned(),
            mime_type: icon.mime_type.clone(),
            sizes: icon.sizes.clone(),
            theme: icon
                .theme
                .as_ref()
                .and_then(|t| serde_json::to_value(t).ok()),
        })
        .collect()
}

/// `s` (a text the server wrote about itself) cut to at most `max` bytes at
/// a character boundary, and whether it was cut; every kept secret value
/// in what is kept is `[redacted]` (a server may echo a header value, a
/// URL's query or an env value into its name or instructions), and so is
/// a tail that begins one when it was cut (`crate::redact::hidden_cut`).
/// Redaction may lengthen the text by the marker's length per value.
fn cut(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (crate::redact::hidden(s).into_owned(), false);
    }
    let kept = &s[..floor_char_boundary(s, max)];
    (crate::redact::hidden_cut(kept).into_owned(), true)
}

/// Whether the host speaks MCP revision `version`: one rmcp knows
/// (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28).
pub fn supported(version: &str) -> bool {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .any(|v| v.as_str() == version)
}

/// The revisions [`supported`] accepts, for messages (`"2024-11-05, …"`).
pub fn supported_list() -> String {
    let all: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    all.join(", ")
}

#[cfg(test)]
mod tests {
    use rmcp::model::{Icon, Implementation, ServerCapabilities};

    use super::*;

    fn peer(version: ProtocolVersion) -> ServerPeerInfo {
        let mut implementation = Implementation::new("everything", "2.1.0");
        implementation.title = Some("Everything".into());
        implementation.icons = Some(vec![
            Icon::new("https://example.test/icon.png"),
            Icon::new(format!("data:image/png;base64,{}", "A".repeat(20_000))),
        ]);
        ServerPeerInfo::new(version, ServerCapabilities::default())
            .with_server_info(implementation)
            .with_instructions("é".repeat(10_000))
    }

    #[test]
    fn identity_keeps_what_the_server_said_within_bounds() {
        let id = ServerIdentity::from_peer(&peer(ProtocolVersion::V_2025_11_25));
        assert_eq!(id.handshake, Handshake::Initialize);
        assert_eq!(id.protocol_version, "2025-11-25");
        assert_eq!(
            (id.name.as_str(), id.title.as_deref()),
            ("everything", Some("Everything"))
        );
        assert_eq!(id.version.as_deref(), Some("2.1.0"));
        assert_eq!(id.icons.len(), 1, "the 20 KB data: icon is dropped");
        let ahp = id.ahp_icons().unwrap_or_default();
        assert_eq!(
            ahp.first().map(|i| i.src.as_str()),
            Some("https://example.test/icon.png")
        );
        let instructions = id.instructions.unwrap_or_default();
        assert!(id.instructions_truncated);
        assert!(instructions.len() <= MAX_SERVER_INSTRUCTIONS_BYTES);
        assert!(
            instructions.chars().all(|c| c == 'é'),
            "cut at a character boundary"
        );
        assert!(id.capabilities.is_object() && !id.capabilities_omitted);
    }

    #[test]
    fn a_discovered_server_is_stateless() {
        let id = ServerIdentity::from_peer(&peer(ProtocolVersion::V_2026_07_28));
        assert_eq!(id.handshake, Handshake::Discover);
        assert_eq!(id.to_json()["handshake"], "discover");
    }

    #[test]
    fn only_known_revisions_are_supported() {
        assert!(supported("2025-06-18") && supported("2026-07-28"));
        assert!(!supported("1999-01-01") && !supported(""));
        assert!(supported_list().contains("2025-11-25, 2026-07-28"));
    }

    #[test]
    fn relative_icons_resolve_against_the_endpoint_or_are_dropped() {
        let mut implementation = Implementation::new("s", "1");
        implementation.icons = Some(vec![
            Icon::new("/static/icon.png"),
            Icon::new("https://cdn.example.test/a.png"),
            Icon::new("data:image/png;base64,AAAA"),
        ]);
        let mut info = peer(ProtocolVersion::V_2025_11_25);
        info.server_info = Some(implementation);
        let base: url::Url = "http://127.0.0.1:9/mcp?k=v".parse().unwrap();
        let mut http = ServerIdentity::from_peer(&info);
        assert!(http.resolve_icons(Some(&base)).is_empty());
        let srcs: Vec<_> = http.icons.iter().map(|i| i.src.as_str()).collect();
        assert_eq!(
            srcs,
            [
                "http://127.0.0.1:9/static/icon.png",
                "https://cdn.example.test/a.png",
                "data:image/png;base64,AAAA"
            ]
        );
        let mut stdio = ServerIdentity::from_peer(&info);
        assert_eq!(stdio.resolve_icons(None), ["/static/icon.png"]);
        assert_eq!(stdio.icons.len(), 2);
    }
}
