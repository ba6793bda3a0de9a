//! Roots (MCP 2025-11-25 "Client Features › Roots"; still functional,
//! though deprecated by SEP-2577, in 2026-07-28): what a root is and how a
//! root the app gives is checked and percent-encoded.
//!
//! Every root the host hands a server is a `file://` URI (the spec's MUST),
//! percent-encoded (RFC 3986 § 2.1, RFC 8089): `file:///home/user/My
//! Project/ü` and the path `/home/user/My Project/ü` both become
//! `file:///home/user/My%20Project/%C3%BC`. Dot segments are resolved
//! (`file:///a/../b` is `file:///b`), so no root climbs out of its path.
//! Anything else (`https://…`, a relative path, a URI with a query or
//! fragment) is refused: by [`parse_roots`] with `invalid_argument`, and in
//! a `roots` handler's answer by [`check_handler_answer`], which drops it.

use serde::Serialize;
use serde_json::{Map, Value};
use url::Url;

use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{MAX_ECHOED_ROOT_BYTES, MAX_ROOTS, MAX_ROOT_NAME_BYTES, MAX_ROOT_URI_BYTES};

/// One root as sent in a `roots/list` result: `{uri, name?, _meta?}`. Its
/// `uri` is always a percent-encoded `file://` URI (see [`file_uri`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Root {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Map<String, Value>>,
}

impl Root {
    /// A root at `uri` (a `file:` URI or an absolute path, encoded by
    /// [`file_uri`]) with an optional display `name`.
    ///
    /// # Errors
    ///
    /// Why it is refused, as a phrase about the value: see [`file_uri`]; a
    /// `name` longer than [`MAX_ROOT_NAME_BYTES`].
    pub fn new(uri: &str, name: Option<String>) -> Result<Self, String> {
        if name.as_ref().is_some_and(|n| n.len() > MAX_ROOT_NAME_BYTES) {
            return Err(format!("name is longer than {MAX_ROOT_NAME_BYTES} bytes"));
        }
        Ok(Self {
            uri: file_uri(uri)?,
            name,
            meta: None,
        })
    }

    /// The percent-encoded `file://` URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The display name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// A root from its JSON object `{uri, name?, _meta?}`; the error names
    /// the field (`uri: …`, `name: …`) and quotes the refused value.
    fn from_value(value: &Value) -> Result<Self, String> {
        let Value::Object(object) = value else {
            return Err("must be an object {uri, name?}".to_owned());
        };
        if let Some(key) = object
            .keys()
            .find(|k| !matches!(k.as_str(), "uri" | "name" | "_meta"))
        {
            return Err(format!("unknown field `{key}` (expected uri, name, _meta)"));
        }
        let uri = match object.get("uri") {
            Some(Value::String(uri)) => uri,
            Some(_) => return Err("uri: must be a string".to_owned()),
            None => return Err("missing field `uri`".to_owned()),
        };
        let name = match object.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(_) => return Err("name: must be a string".to_owned()),
        };
        let meta = match object.get("_meta") {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => Some(meta.clone()),
            Some(_) => return Err("_meta: must be an object".to_owned()),
        };
        let root = Self::new(uri, name).map_err(|why| {
            if why.starts_with("name") {
                why
            } else {
                format!("uri: {} {why}", echo(uri))
            }
        })?;
        Ok(Self { meta, ..root })
    }
}

/// Parses the app's roots (the JS `roots` option and `setRoots`): an array
/// of `{uri, name?, _meta?}`, each `uri` a `file:` URI or an absolute path,
/// returned percent-encoded.
///
/// # Errors
///
/// `invalid_argument` naming the entry and quoting the value, e.g.
/// `roots[1].uri: "https://example.com/repo" is not a file:// URI (MCP
/// roots must be file:// URIs)`; also for a value that is not an array or
/// has more than [`MAX_ROOTS`] entries.
pub fn parse_roots(value: &Value) -> HostResult<Vec<Root>> {
    let invalid = |what: String| HostError::new(ErrorCode::InvalidArgument, what);
    let Value::Array(items) = value else {
        return Err(invalid(
            "roots: must be an array of {uri, name?}".to_owned(),
        ));
    };
    if items.len() > MAX_ROOTS {
        let what = format!("roots: {} roots, more than {MAX_ROOTS}", items.len());
        return Err(HostError::new(ErrorCode::LimitExceeded, what));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Root::from_value(item).map_err(|why| {
                let sep = if why.starts_with("uri:") || why.starts_with("name:") {
                    "."
                } else {
                    ": "
                };
                invalid(format!("roots[{i}]{sep}{why}"))
            })
        })
        .collect()
}

/// A `roots` handler's answer made safe to send: `result` is the answer
/// with every root's `uri` percent-encoded and the roots that are not
/// `file://` URIs (or not `{uri, name?}` objects, or past [`MAX_ROOTS`])
/// left out; `dropped` says, for each left out, which and why (for a `warn`
/// log). An answer without a `roots` array is returned unchanged (the caller
/// refuses it).
pub fn check_handler_answer(mut answer: Value) -> (Value, Vec<String>) {
    let mut dropped = Vec::new();
    let Some(Value::Array(items)) = answer.get_mut("roots") else {
        return (answer, dropped);
    };
    let mut kept = Vec::with_capacity(items.len().min(MAX_ROOTS));
    for (i, item) in std::mem::take(items).into_iter().enumerate() {
        if kept.len() == MAX_ROOTS {
            dropped.push(format!("roots[{i}] and after: more than {MAX_ROOTS} roots"));
            break;
        }
        match Root::from_value(&item) {
            Ok(root) => kept.push(serde_json::to_value(root).unwrap_or(Value::Null)),
            Err(why) => dropped.push(format!("roots[{i}]: {why}")),
        }
    }
    *items = kept;
    (answer, dropped)
}

/// The percent-encoded `file://` URI of `input`: an absolute path
/// (`/home/user/My Project`) or a `file:` URI (`file:///home/user/My
/// Project`, `file://server/share`, already-encoded `%XX` kept). Spaces,
/// non-ASCII and every other character RFC 3986 does not allow in a path are
/// percent-encoded (UTF-8), a lone `%` becomes `%25`, dot segments are
/// resolved.
///
/// # Errors
///
/// A phrase about the value: not a `file:` URI or absolute path (e.g.
/// `https://…`, `relative/dir`), a query or fragment, a control character in
/// a URI, longer than [`MAX_ROOT_URI_BYTES`].
pub fn file_uri(input: &str) -> Result<String, String> {
    if input.len() > MAX_ROOT_URI_BYTES {
        return Err(format!("is longer than {MAX_ROOT_URI_BYTES} bytes"));
    }
    let url = if input.starts_with('/') {
        // A path: every byte of it is data (`#`, `?`, `%` included).
        let url = Url::from_file_path(input).map_err(|()| "is not an absolute path".to_owned())?;
        // Parsing the serialized form resolves `.` and `..` segments.
        Url::parse(url.as_str()).map_err(|e| format!("is not a valid path: {e}"))?
    } else {
        let scheme = input.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("file") => {}
            Some(_) => {
                return Err("is not a file:// URI (MCP roots must be file:// URIs)".to_owned())
            }
            None => return Err("is neither a file:// URI nor an absolute path".to_owned()),
        }
        if !input[5..].starts_with('/') {
            return Err("is not a file:// URI (expected file:///path)".to_owned());
        }
        if input.chars().any(char::is_control) {
            return Err("contains a control character".to_owned());
        }
        // WHATWG parsing would read `\` as `/`; in a file name it is data.
        let url = Url::parse(&input.replace('\\', "%5C"))
            .map_err(|e| format!("is not a valid file:// URI ({e})"))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(
                "has a query or fragment (encode `?` as %3F and `#` as %23, or pass the path)"
                    .to_owned(),
            );
        }
        url
    };
    Ok(strict_encode(url.as_str()))
}

/// Percent-encodes what WHATWG URL serialization leaves as is but RFC 3986
/// does not allow in a path (`|`, `^`, …) and a `%` that starts no `%XX`.
/// `uri` is ASCII (non-ASCII was encoded already).
fn strict_encode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = String::with_capacity(uri.len());
    for (i, &b) in bytes.iter().enumerate() {
        let allowed = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b);
        let escape = b == b'%'
            && bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        if allowed || escape {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `value` quoted for a message, cut to [`MAX_ECHOED_ROOT_BYTES`] (then `…`).
fn echo(value: &str) -> String {
    if value.len() <= MAX_ECHOED_ROOT_BYTES {
        return format!("{value:?}");
    }
    let mut end = MAX_ECHOED_ROOT_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}…", &value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_file_uris_are_percent_encoded() {
        let cases = [
            (
                "/home/user/My Project/ü",
                "file:///home/user/My%20Project/%C3%BC",
            ),
            (
                "file:///home/user/My Project/ü",
                "file:///home/user/My%20Project/%C3%BC",
            ),
            (
                "file:///home/user/My%20Project",
                "file:///home/user/My%20Project",
            ),
            ("/a%b/c#d?e", "file:///a%25b/c%23d%3Fe"),
            ("file:///a%zz", "file:///a%25zz"),
            ("file:///a|b^c", "file:///a%7Cb%5Ec"),
            ("file:///a\\b", "file:///a%5Cb"),
            ("/a/./b/../c", "file:///a/c"),
            ("file:///a/../../b", "file:///b"),
            ("FILE:///X", "file:///X"),
            ("file://localhost/x", "file:///x"),
            ("file://server/share/x", "file://server/share/x"),
            ("file:/x y", "file:///x%20y"),
        ];
        for (input, want) in cases {
            assert_eq!(file_uri(input).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn other_schemes_relative_paths_queries_are_refused() {
        for input in [
            "https://example.com/repo",
            "ftp://x/y",
            "relative/dir",
            "file:relative",
            "file:///c?q",
            "file:///c#frag",
            "file:///tab\there",
            "",
        ] {
            assert!(file_uri(input).is_err(), "{input:?} accepted");
        }
        assert!(file_uri(&format!("/{}", "a".repeat(MAX_ROOT_URI_BYTES))).is_err());
    }

    #[test]
    fn parse_names_the_index_and_quotes_the_value() {
        let err = |v: Value| parse_roots(&v).err().map(|e| (e.code, e.message));
        assert_eq!(
            err(json!([{ "uri": "file:///ok" }, { "uri": "https://example.com/repo" }])),
            Some((
                ErrorCode::InvalidArgument,
                "roots[1].uri: \"https://example.com/repo\" is not a file:// URI (MCP roots must be file:// URIs)"
                    .to_owned()
            ))
        );
        assert_eq!(
            err(json!([{ "name": "x" }])).map(|e| e.1),
            Some("roots[0]: missing field `uri`".to_owned())
        );
        assert_eq!(
            err(json!([{ "uri": "/x", "extra": 1 }])).map(|e| e.1),
            Some("roots[0]: unknown field `extra` (expected uri, name, _meta)".to_owned())
        );
        assert_eq!(
            err(json!("file:///x")).map(|e| e.0),
            Some(ErrorCode::InvalidArgument)
        );
        let many = Value::Array(vec![json!({ "uri": "/x" }); MAX_ROOTS + 1]);
        assert_eq!(err(many).map(|e| e.0), Some(ErrorCode::LimitExceeded));
        let long = "h".repeat(3 * MAX_ECHOED_ROOT_BYTES);
        let message = err(json!([{ "uri": format!("https://{long}") }])).map(|e| e.1);
        assert!(message.is_some_and(|m| m.len() < 2 * MAX_ECHOED_ROOT_BYTES && m.contains('…')));
    }

    #[test]
    fn parse_encodes_and_keeps_name_and_meta() {
        let roots = parse_roots(&json!([
            { "uri": "/home/user/My Project", "name": "p", "_meta": { "k": 1 } },
            { "uri": "file:///srv" }
        ]));
        let value = roots.map(|r| serde_json::to_value(r).unwrap_or_default());
        assert_eq!(
            value,
            Ok(json!([
                { "uri": "file:///home/user/My%20Project", "name": "p", "_meta": { "k": 1 } },
                { "uri": "file:///srv" }
            ]))
        );
    }

    #[test]
    fn handler_answers_are_encoded_and_non_file_roots_dropped() {
        let (answer, dropped) = check_handler_answer(json!({ "roots": [
            { "uri": "file:///home/user/My Project" },
            { "uri": "https://example.com/x", "name": "web" },
            "nope"
        ], "_meta": { "m": true } }));
        assert_eq!(
            answer,
            json!({ "roots": [{ "uri": "file:///home/user/My%20Project" }], "_meta": { "m": true } })
        );
        assert_eq!(dropped.len(), 2);
        assert!(
            dropped[0].starts_with("roots[1]: uri: \"https://example.com/x\""),
            "{dropped:?}"
        );
        assert!(
            dropped[1].starts_with("roots[2]: must be an object"),
            "{dropped:?}"
        );
        let (unchanged, none) = check_handler_answer(json!({ "nothing": [] }));
        assert_eq!((unchanged, none.len()), (json!({ "nothing": [] }), 0));
    }
}
