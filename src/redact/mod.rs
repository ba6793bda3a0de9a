//! What of a URL the host may show: texts (error messages, log records,
//! error states) and a Streamable HTTP server's customization `uri` show an
//! `http(s)` URL without what can carry a secret. Query strings
//! (`?api_key=…`), userinfo (`user:password@`) and fragments are common
//! places for credentials in hosted MCP server URLs, and a library's error
//! text (reqwest's `error sending request for url (…)`, passed on by rmcp)
//! carries the whole URL; so every host-authored text goes through
//! [`shown_urls`] where it is made ([`crate::error::HostError::new`],
//! [`crate::events::log`], the error states of `crate::session`), whatever
//! library text it embeds. Scheme, host, port and path stay: they say which
//! endpoint was tried (texts about a failed exchange, `crate::network`'s
//! error texts, name the origin only).
//!
//! Beside URLs, the secret values the host holds are taken out of every
//! such text, whoever wrote it ([`kept`]: a server echoing a header value
//! or its URL's query); [`shown`] does both.
//!
//! A leaf: uses only the `url` and `serde_json` crates and
//! `crate::limits`.

use std::borrow::Cow;

use url::Url;

mod kept;

pub use kept::{
    generation, header_secrets, hidden, hidden_cut, hidden_cut_start, hidden_in_texts,
    hidden_in_value, kept_since, url_secrets, KeptSecret,
};

#[cfg(test)]
pub(crate) use kept::undisturbed;

/// `text` as the host may show it: every kept secret value replaced
/// ([`hidden`]), then every `http(s)` URL without userinfo, query and
/// fragment ([`shown_urls`]). The values go first: showing a URL rewrites
/// it (a lowercased host, a percent-encoded path), which would hide a
/// value from [`hidden`] but not from a reader. Returned as is (no copy)
/// when nothing changes.
pub fn shown(text: &str) -> Cow<'_, str> {
    match hidden(text) {
        Cow::Borrowed(text) => shown_urls(text),
        Cow::Owned(hidden) => match shown_urls(&hidden) {
            Cow::Borrowed(_) => Cow::Owned(hidden),
            Cow::Owned(both) => Cow::Owned(both),
        },
    }
}

/// `text` with every `http://` / `https://` URL in it shown without
/// userinfo, query and fragment ([`shown_server_url`]). A URL runs to the
/// first whitespace, quote, `)`, `>`, `]` or `,` / `;` followed by a space;
/// one that does not parse is shown as `<url>`. Text without a URL is
/// returned as is (no copy).
pub fn shown_urls(text: &str) -> Cow<'_, str> {
    if !text.contains("http://") && !text.contains("https://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = next_url(rest) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = url_end(tail);
        out.push_str(&shown_url(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A server URL as its customization `uri`: the URL without userinfo,
/// query and fragment (scheme, host, port and path kept: the path names
/// the endpoint).
pub fn shown_server_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// Each of `values` and, when they differ, the forms a URL gives it: as
/// a path (percent-encoded, as `url::Url` writes it), and as the URL text
/// it was put into reads (a `?` starts the query, a `#` the fragment, a
/// `\` is a `/`): that path part, query and fragment each. The texts in
/// which a secret put into a server's URL can appear.
#[must_use]
pub fn with_url_forms(values: &[String]) -> Vec<String> {
    let mut all = values.to_vec();
    let Ok(mut url) = Url::parse("http://h/") else {
        return all;
    };
    for value in values {
        url.set_path(value);
        let encoded = url.path().trim_start_matches('/');
        if encoded != value.trim_start_matches('/') && !encoded.is_empty() {
            all.push(encoded.to_owned());
        }
        let Ok(read) = Url::parse(&format!("http://h/p/{value}")) else {
            continue;
        };
        let path = read.path();
        let path = path.strip_prefix("/p/").unwrap_or(path);
        for part in [Some(path), read.query(), read.fragment()]
            .into_iter()
            .flatten()
        {
            if !part.is_empty() && part != value && !all.iter().any(|v| v == part) {
                all.push(part.to_owned());
            }
        }
    }
    all
}

/// `text` with every one of `values` at least
/// [`crate::limits::MIN_KEPT_SECRET_BYTES`] long, in any of its
/// [`with_url_forms`], replaced by `[redacted]` (longest first): a
/// customization `uri` built from a URL whose path holds a secret.
#[must_use]
pub fn without(text: &str, values: &[String]) -> String {
    let mut all = with_url_forms(values);
    all.retain(|v| v.len() >= crate::limits::MIN_KEPT_SECRET_BYTES);
    all.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut out = text.to_owned();
    for value in &all {
        out = out.replace(value.as_str(), "[redacted]");
    }
    out
}

/// The origin of `url` (scheme, host, port; never path, query or
/// credentials), as texts about a failed exchange name it.
pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Byte offset of the next `http://` or `https://` in `text`.
fn next_url(text: &str) -> Option<usize> {
    let http = text.find("http://");
    let https = text.find("https://");
    match (http, https) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Where the URL at the start of `text` ends.
fn url_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let next_is_space = bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        match b {
            b if b.is_ascii_whitespace() => return i,
            b'"' | b'\'' | b'`' | b')' | b'>' | b']' | b'<' => return i,
            b',' | b';' if next_is_space => return i,
            _ => {}
        }
    }
    text.len()
}

/// `raw` without userinfo, query and fragment, or `<url>`. A text may end
/// a URL with a full stop or colon; it is kept outside.
fn shown_url(raw: &str) -> String {
    let trimmed = raw.trim_end_matches(['.', ':']);
    match Url::parse(trimmed) {
        Ok(url) if url.has_host() => {
            let mut out = shown_server_url(&url);
            // `Url` adds `/` to a bare origin; the text did not have it.
            if !trimmed.ends_with('/') && url.path() == "/" && out.ends_with('/') {
                out.pop();
            }
            out + &raw[trimmed.len()..]
        }
        _ => "<url>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_takes_out_each_value_also_as_a_url_path_writes_it() {
        let url = Url::parse("https://mcp.example/v1/tok-12345/a b c!/mcp").unwrap();
        let shown = shown_server_url(&url);
        let values = ["tok-12345".to_owned(), "a b c!".to_owned(), "ab".to_owned()];
        assert_eq!(
            without(&shown, &values),
            "https://mcp.example/v1/[redacted]/[redacted]/mcp"
        );
        assert!(with_url_forms(&values).contains(&"a%20b%20c!".to_owned()));
    }

    #[test]
    fn a_value_that_a_url_splits_is_hidden_in_each_part() {
        let value = "SplitSecret1?q=SplitQuery2#SplitFrag3".to_owned();
        let url = Url::parse(&format!("https://mcp.example/mcp/{value}")).unwrap();
        let shown = shown_server_url(&url);
        assert_eq!(shown, "https://mcp.example/mcp/SplitSecret1");
        let values = [value];
        assert_eq!(
            without(&shown, &values),
            "https://mcp.example/mcp/[redacted]"
        );
        let forms = with_url_forms(&values);
        for part in ["SplitSecret1", "q=SplitQuery2", "SplitFrag3"] {
            assert!(forms.iter().any(|f| f == part), "{part}: {forms:?}");
        }
        let back = with_url_forms(&["Back\\Slash9".to_owned()]);
        assert!(back.iter().any(|f| f == "Back/Slash9"), "{back:?}");
    }

    #[test]
    fn every_url_in_a_text_loses_userinfo_query_and_fragment() {
        let text = "error sending request for url (http://127.0.0.1:1/mcp?token=CANARY123), \
                    when send discover request; see https://user:pw@example.com/a?b=c#d.";
        let shown = shown_urls(text);
        assert!(
            !shown.contains("CANARY123") && !shown.contains("token="),
            "{shown}"
        );
        assert!(!shown.contains("pw@") && !shown.contains("b=c"), "{shown}");
        assert!(shown.contains("(http://127.0.0.1:1/mcp)"), "{shown}");
        assert!(shown.contains("see https://example.com/a."), "{shown}");
        assert_eq!(
            shown_urls("at http://127.0.0.1:9, then"),
            "at http://127.0.0.1:9, then"
        );
    }

    #[test]
    fn text_without_urls_is_unchanged_and_broken_urls_are_hidden() {
        assert!(matches!(shown_urls("no url here"), Cow::Borrowed(_)));
        assert_eq!(shown_urls("at http://[::1 x"), "at <url> x");
        let other = "file:///a?b and mcp://c";
        assert_eq!(shown_urls(other), other);
    }

    #[test]
    fn a_server_url_keeps_its_path_only() {
        let url = Url::parse("https://u:p@mcp.example.com:8443/v1/mcp?api_key=CANARY#x").unwrap();
        assert_eq!(
            shown_server_url(&url),
            "https://mcp.example.com:8443/v1/mcp"
        );
    }
}
