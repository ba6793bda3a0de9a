//! Which proxy, if any, a request goes through: the host's `proxy` option
//! when set, else `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` (either case,
//! lower case first, as curl reads them) with `NO_PROXY` / `no_proxy`.
//!
//! - Loopback (`localhost` and its subdomains, `127.0.0.0/8`, `::1`) is never
//!   proxied, whatever the settings say (as Node's and curl's defaults).
//! - `NO_PROXY` entries are comma-separated: `*` (nothing is proxied), an IP
//!   address or CIDR block, a domain that matches itself and its subdomains
//!   (`example.com` and `.example.com` alike), each optionally with `:port`
//!   (then only that port matches). The matching without ports is
//!   hyper-util's, the one reqwest uses.

use hyper_util::client::proxy::matcher::Matcher;
use url::{Host, Url};

/// The proxy decision of one host (read once, when the host is created).
pub struct ProxyRoute {
    /// Proxy for `http:` URLs.
    http: Option<Url>,
    /// Proxy for `https:` URLs.
    https: Option<Url>,
    /// `NO_PROXY` entries without a port (hyper-util's matcher).
    matcher: Matcher,
    /// `NO_PROXY` entries with a port: (host pattern matcher, port).
    ports: Vec<(Matcher, u16)>,
}

impl std::fmt::Debug for ProxyRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Proxy URLs may carry credentials: origins only.
        let origin = |u: &Option<Url>| u.as_ref().map(crate::redact::origin);
        f.debug_struct("ProxyRoute")
            .field("http", &origin(&self.http))
            .field("https", &origin(&self.https))
            .finish_non_exhaustive()
    }
}

/// The first set variable of `names`.
fn env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
}

/// A proxy URL as curl reads it (`host:port` means `http://host:port`).
pub fn parse_proxy_url(value: &str) -> Option<Url> {
    let value = value.trim();
    let full = match value.contains("://") {
        true => value.to_owned(),
        false => format!("http://{value}"),
    };
    Url::parse(&full)
        .ok()
        .filter(|u| u.host().is_some() && matches!(u.scheme(), "http" | "https"))
}

/// A `NO_PROXY` entry's trailing `:port` (not an IPv6 address's last group).
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        if let Some((host, port)) = rest.split_once("]:") {
            return (host, port.parse().ok());
        }
        return (rest.trim_end_matches(']'), None);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host, Some(p)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    }
}

fn no_proxy_matcher(list: &str) -> Matcher {
    // Any proxy value: only the `no` list decides whether it is used.
    Matcher::builder()
        .all("http://no-proxy.invalid".to_owned())
        .no(list.to_owned())
        .build()
}

impl ProxyRoute {
    /// The route from the environment.
    pub fn from_env() -> Self {
        let all = env(&["all_proxy", "ALL_PROXY"]);
        let http = env(&["http_proxy", "HTTP_PROXY"]).or_else(|| all.clone());
        let https = env(&["https_proxy", "HTTPS_PROXY"]).or(all);
        let no = env(&["no_proxy", "NO_PROXY"]).unwrap_or_default();
        Self::new(
            http.as_deref().and_then(parse_proxy_url),
            https.as_deref().and_then(parse_proxy_url),
            &no,
        )
    }

    /// The route of the `proxy` option: `url` for both schemes, `no_proxy` in
    /// `NO_PROXY` syntax.
    pub fn new(http: Option<Url>, https: Option<Url>, no_proxy: &str) -> Self {
        let mut plain = Vec::new();
        let mut ports = Vec::new();
        for entry in no_proxy.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match split_port(entry) {
                (host, Some(port)) => ports.push((no_proxy_matcher(host), port)),
                (host, None) => plain.push(host.to_owned()),
            }
        }
        Self {
            http,
            https,
            matcher: no_proxy_matcher(&plain.join(",")),
            ports,
        }
    }

    /// Hosts of the proxy URLs (lower case).
    pub fn proxy_hosts(&self) -> Vec<String> {
        [&self.http, &self.https]
            .into_iter()
            .flatten()
            .filter_map(|u| u.host_str().map(str::to_ascii_lowercase))
            .collect()
    }

    /// The proxy `url` goes through (`None`: direct).
    pub fn proxy_for(&self, url: &Url) -> Option<Url> {
        let proxy = match url.scheme() {
            "http" => self.http.as_ref()?,
            "https" => self.https.as_ref()?,
            _ => return None,
        };
        if is_loopback(url) {
            return None;
        }
        let uri: hyper::Uri = format!("http://{}/", url.host_str()?).parse().ok()?;
        // `NO_PROXY` without ports: `None` is "direct".
        self.matcher.intercept(&uri)?;
        let port = url.port_or_known_default();
        let excepted = self
            .ports
            .iter()
            .any(|(m, p)| Some(*p) == port && m.intercept(&uri).is_none());
        (!excepted).then(|| proxy.clone())
    }
}

/// `localhost` (and `*.localhost`, RFC 6761 §6.3), `127.0.0.0/8`, `::1`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(v4)) => v4.is_loopback(),
        Some(Host::Ipv6(v6)) => v6.is_loopback(),
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn route(no: &str) -> ProxyRoute {
        let p = parse_proxy_url("proxy.example.net:3128");
        ProxyRoute::new(p.clone(), p, no)
    }

    #[test]
    fn loopback_is_never_proxied() {
        let r = route("");
        for u in [
            "http://127.0.0.1:9/mcp",
            "http://127.3.4.5/",
            "http://[::1]:80/",
            "https://localhost/",
            "http://app.localhost:3000/",
        ] {
            assert_eq!(r.proxy_for(&url(u)), None, "{u}");
        }
        assert!(r.proxy_for(&url("https://mcp.example.com/")).is_some());
    }

    #[test]
    fn no_proxy_suffix_cidr_star_and_port_rules() {
        let r = route("example.com, .corp.test,10.0.0.0/8, tools.test:8443,[2001:db8::1]:80");
        for direct in [
            "https://example.com/",
            "https://a.example.com/",
            "https://x.corp.test/",
            "http://10.1.2.3/",
            "https://tools.test:8443/",
        ] {
            assert_eq!(r.proxy_for(&url(direct)), None, "{direct}");
        }
        for proxied in [
            "https://notexample.com/",
            "https://tools.test/",
            "https://tools.test:9000/",
            "http://11.0.0.1/",
        ] {
            assert!(r.proxy_for(&url(proxied)).is_some(), "{proxied}");
        }
        assert_eq!(route("*").proxy_for(&url("https://any.where/")), None);
    }
}
