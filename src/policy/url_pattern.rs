//! The `url` matcher of a policy rule ([`UrlPattern`]):
//! `scheme://host[:port][/path]`, each part matched on its own against
//! the server's URL, both normalised alike, so a glob of one part never
//! reaches into another (`http://*.mcp.example.com` does not match
//! `http://127.0.0.1/x.mcp.example.com`).
//!
//! - scheme: a glob, any case;
//! - host: a glob over the host alone (no `/`, `:` or `@` in it), any case;
//!   normalised as a parsed URL has it (percent-escapes decoded, IPv4 in
//!   dotted decimal, IPv6 compressed, international names in ASCII), and a
//!   domain without its trailing `.`;
//! - port: a number (the scheme's default port written or not, on either
//!   side, is the same port), `*`, or a glob over its digits; a pattern
//!   without a port matches the scheme's default port only;
//! - path: a pattern without one matches every path of the origin; else a
//!   glob (`*` any run of characters, `/` included) over the path, both
//!   normalised: dot segments resolved, escapes of unreserved characters
//!   decoded (`%6d` is `m`), other escapes in upper case, `//` collapsed, a
//!   trailing `/` dropped. A `deny` rule's path ignores case (`/MCP` is
//!   denied by `/mcp`, whatever the server makes of case); an `allow`
//!   rule's is case-sensitive (it never allows more than it names).

use url::{Host, Url};

use crate::catalogue::filter::Pattern as Glob;

/// A compiled `url` pattern (see the module documentation).
#[derive(Debug, Clone)]
pub(super) struct UrlPattern {
    scheme: Glob,
    host: Glob,
    /// `None`: the scheme's default port only.
    port: Option<Glob>,
    /// `None`: every path.
    path: Option<Glob>,
    /// Whether the path is matched in lower case (`deny` rules).
    fold: bool,
}

impl UrlPattern {
    /// Compiles `text`; `fold`: match the path without regard to case.
    ///
    /// # Errors
    /// Why `text` is not a `scheme://host[:port][/path]` pattern.
    pub(super) fn new(text: &str, fold: bool) -> Result<Self, String> {
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err("must be `scheme://host[:port][/path]` (each part may hold `*`)".into());
        };
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.*".contains(c))
        {
            return Err(format!("the scheme {scheme:?} is not a scheme pattern"));
        }
        let end = rest.find(['/', '\\']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if authority.contains('@') {
            return Err(
                "must not hold user info (`@`): a server's URL is matched without it".into(),
            );
        }
        let (host, port) = split_port(authority)?;
        let host = pattern_host(host)?;
        let port = match port {
            Some(p) if p.contains('*') && p.chars().all(|c| c.is_ascii_digit() || c == '*') => {
                Some(Glob::new(p.to_owned()))
            }
            Some(p) => match p.parse::<u16>() {
                Ok(n) if p.bytes().all(|b| b.is_ascii_digit()) => Some(Glob::new(n.to_string())),
                _ => return Err(format!("the port {p:?} is not a port (digits or `*`)")),
            },
            None => None,
        };
        let path = match path {
            "" => None,
            path => {
                let parsed = Url::parse(&format!("http://h{path}"))
                    .map_err(|e| format!("the path {path:?} is not a path: {e}"))?;
                Some(Glob::new(normal_path(parsed.path(), fold)))
            }
        };
        Ok(Self {
            scheme: Glob::new(scheme.to_ascii_lowercase()),
            host: Glob::new(host),
            port,
            path,
            fold,
        })
    }

    /// Whether server URL `url` (without user info, query and fragment)
    /// matches; a URL that does not parse never does.
    pub(super) fn matches(&self, url: &str) -> bool {
        let Ok(url) = Url::parse(url) else {
            return false;
        };
        let Some(host) = url.host() else {
            return false;
        };
        let port = match &self.port {
            None => url.port().is_none(),
            Some(glob) => {
                (url.port_or_known_default()).is_some_and(|p| glob.matches(&p.to_string()))
            }
        };
        let path =
            (self.path.as_ref()).is_none_or(|g| g.matches(&normal_path(url.path(), self.fold)));
        self.scheme.matches(url.scheme()) && self.host.matches(&normal_host(&host)) && port && path
    }
}

/// The host and port of an authority pattern (`[v6]:port`, `host:port`).
fn split_port(authority: &str) -> Result<(&str, Option<&str>), String> {
    if authority.starts_with('[') {
        let Some(close) = authority.find(']') else {
            return Err("an IPv6 host is missing its `]`".into());
        };
        let (host, rest) = authority.split_at(close + 1);
        return match rest {
            "" => Ok((host, None)),
            _ => match rest.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(format!("{rest:?} after the host is not a port")),
            },
        };
    }
    Ok(match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

/// A host pattern as a parsed URL has the host (see the module documentation).
fn pattern_host(host: &str) -> Result<String, String> {
    if host.is_empty() {
        return Err("the host is missing".into());
    }
    let parsed = Url::parse(&format!("http://{host}/"))
        .map_err(|e| format!("the host {host:?} is not a host pattern: {e}"))?;
    match parsed.host() {
        Some(h) => Ok(normal_host(&h)),
        None => Err(format!("the host {host:?} is not a host pattern")),
    }
}

/// A parsed host as it is matched: a domain without its trailing `.`.
fn normal_host(host: &Host<&str>) -> String {
    match host {
        Host::Domain(d) => d.strip_suffix('.').unwrap_or(d).to_ascii_lowercase(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => format!("[{ip}]"),
    }
}

/// A URL path as it is matched (see the module documentation); in lower
/// case when `fold`.
fn normal_path(path: &str, fold: bool) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |k: usize| bytes.get(k).and_then(|b| char::from(*b).to_digit(16));
        let escaped = match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => u8::try_from(hi * 16 + lo).ok(),
            _ => None,
        };
        match escaped {
            Some(b) if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => {
                out.push(char::from(b));
                i += 3;
            }
            Some(b) => {
                out.push_str(&format!("%{b:02X}"));
                i += 3;
            }
            None => {
                let c = path[i..].chars().next().unwrap_or('\u{fffd}');
                if !(c == '/' && out.ends_with('/')) {
                    out.push(c);
                }
                i += c.len_utf8();
            }
        }
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    match fold {
        true => out.to_lowercase(),
        false => out,
    }
}
