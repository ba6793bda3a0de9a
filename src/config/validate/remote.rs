//! Stage 2 rules of a `type: "streamable-http"` or `type: "sse"` entry (seed
//! 002, *Connect remote servers*; MCP 2025-11-25 "Transports › Streamable
//! HTTP", MCP 2024-11-05 "Transports › HTTP with SSE"): the same fields and
//! rules for both. Messages never echo the URL or a header value: either
//! may carry a secret.

use std::collections::BTreeMap;

use reqwest::header::HeaderName;
use serde_json::{Map, Value};

use super::{check_fields, field_msg, string_field, wrong_type};
use crate::config::model::{HttpConfig, HttpTransport, LiteralPlaceholder};
use crate::config::vars::{literal_placeholders, quote};

/// Fields allowed in a `streamable-http` or `sse` entry.
const HTTP_FIELDS: &[&str] = &["type", "url", "headers"];

/// The fields of a `streamable-http` or `sse` entry (`transport`; see
/// [`super::validate_entry_value`]).
pub(super) fn http(
    obj: &Map<String, Value>,
    transport: HttpTransport,
) -> Result<HttpConfig, String> {
    let kind = transport.type_name();
    check_fields(obj, HTTP_FIELDS, kind)?;
    let url = match obj.get("url") {
        None => return Err(format!("field \"url\" is required for type \"{kind}\"")),
        Some(v) => endpoint_url(&string_field("url", v)?)?,
    };
    let headers = match obj.get("headers") {
        None => BTreeMap::new(),
        Some(v) => headers(v)?,
    };
    Ok(HttpConfig {
        url,
        headers,
        transport,
    })
}

/// The `${…}` placeholders of a valid `streamable-http` or `sse` entry `obj` (its
/// raw `url` text, then its `headers` values in name order): the server
/// gets them literally, since Agent Plugins expands nothing there.
pub(super) fn placeholders_of(obj: &Map<String, Value>) -> Vec<LiteralPlaceholder> {
    let url = obj.get("url").map(|v| ("url".to_owned(), v));
    let headers = obj.get("headers").and_then(Value::as_object);
    let headers = headers.into_iter().flatten();
    let headers = headers.map(|(name, v)| (format!("headers.{name}"), v));
    let mut fields: Vec<(String, &Value)> = url.into_iter().collect();
    fields.extend(headers);
    let mut out = Vec::new();
    for (field, value) in fields {
        for placeholder in literal_placeholders(value.as_str().unwrap_or_default()) {
            out.push(LiteralPlaceholder {
                field: field.clone(),
                placeholder,
            });
        }
    }
    out
}

/// Parses and checks the endpoint URL. Never echoes the URL (it may carry a token).
fn endpoint_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| {
        // `${MCP_URL}` as the whole URL: say why it is not one (issue 30).
        let hint = match literal_placeholders(text).first() {
            Some(p) => format!(" ({p} is not expanded: Agent Plugins expands variables only in args, env values and cwd)"),
            None => String::new(),
        };
        field_msg("url", format!("invalid URL: {e}{hint}"))
    })?;
    let secure = match url.scheme() {
        "https" => true,
        "http" => is_loopback(&url),
        _ => false,
    };
    if !secure {
        let msg = "must use https (http is allowed only for loopback hosts)";
        return Err(match url.scheme() {
            "http" | "https" => field_msg("url", msg),
            other => field_msg("url", format!("{msg}, got scheme {}", quote(other))),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(field_msg(
            "url",
            "must not contain credentials (user:password@)",
        ));
    }
    Ok(url)
}

/// `localhost`, `127.0.0.0/8` or `::1`.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn headers(value: &Value) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(map) = value else {
        return Err(wrong_type("headers", "an object of strings", value));
    };
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, v) in map {
        check_header_name(name)?;
        if let Some(prev) = out.keys().find(|k| k.eq_ignore_ascii_case(name)) {
            let msg = format!(
                "duplicates header {} (names are case-insensitive)",
                quote(prev)
            );
            return Err(field_msg(&format!("headers.{name}"), msg));
        }
        out.insert(name.clone(), header_value(name, v)?);
    }
    Ok(out)
}

/// Headers the Streamable HTTP transport sets itself (MCP 2025-11-25
/// "Transports › Streamable HTTP", the SEP-2243 `Mcp-Method` / `Mcp-Name` /
/// `Mcp-Param-*` headers of MCP 2026-07-28) and HTTP framing (the
/// hop-by-hop headers of RFC 9110 §7.6.1, `Host`); a configured value would
/// conflict with the protocol, so the entry is invalid.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    // The HTTP stack's own: content coding, `100-continue`, the h2c upgrade.
    "accept-encoding",
    "content-encoding",
    "expect",
    "http2-settings",
];

/// Headers that are not an MCP server's to get: a proxy's credentials, and
/// a proxy's challenge (a response header) (a `Cookie` is taken: a server
/// behind a single sign-on proxy may need one).
const REFUSED_HEADERS: &[&str] = &["proxy-authorization", "proxy-authenticate"];

/// RFC 9110 `token` (letters, digits and ``!#$%&'*+-.^_`|~``, at most
/// 64 KiB): exactly what the HTTP stack accepts as a header name
/// (`http::HeaderName`), so a valid entry never fails at connect time; and
/// not a header the transport manages ([`RESERVED_HEADERS`], `Mcp-Param-*`)
/// or one refused ([`REFUSED_HEADERS`]).
fn check_header_name(name: &str) -> Result<(), String> {
    if HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(field_msg(
            "headers",
            format!("invalid header name {}", quote(name)),
        ));
    }
    let is = |list: &[&str]| list.iter().any(|r| r.eq_ignore_ascii_case(name));
    let lower = name.to_ascii_lowercase();
    if is(RESERVED_HEADERS) || lower.starts_with("mcp-param-") {
        return Err(field_msg(
            &format!("headers.{name}"),
            "is set by the MCP transport and cannot be configured",
        ));
    }
    if is(REFUSED_HEADERS) {
        return Err(field_msg(
            &format!("headers.{name}"),
            "is not sent to an MCP server by this host",
        ));
    }
    Ok(())
}

/// Header values are secrets: the message names the header only.
fn header_value(name: &str, value: &Value) -> Result<String, String> {
    let field = format!("headers.{name}");
    let s = string_field(&field, value)?;
    if s.chars().any(|c| c.is_control() && c != '\t') {
        return Err(field_msg(
            &field,
            "value must not contain CR, LF, NUL or other control characters",
        ));
    }
    Ok(s)
}
