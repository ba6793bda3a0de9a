//! Which network addresses the host's OAuth and metadata fetches may reach
//! (MCP 2025-11-25 "Authorization › Security Considerations", server-side
//! request forgery). Every URL the host fetches because a remote server
//! named it (protected resource metadata, RFC 9728; authorization server
//! metadata, RFC 8414; token, registration and authorization endpoints;
//! client ID metadata documents; JWKS) goes through a client built here:
//!
//! - `https` only, except `http` to a loopback host (`localhost`,
//!   `127.0.0.0/8`, `::1`);
//! - a public address is always allowed;
//! - a loopback or private (RFC 1918, CGNAT `100.64.0.0/10`, unique-local
//!   `fc00::/7`) address only when the MCP server's own URL names one of the
//!   same class (an IP literal of that class, or `localhost`);
//! - link-local (`169.254.0.0/16`, `fe80::/10`: cloud instance metadata),
//!   unspecified, broadcast, multicast, documentation and reserved
//!   addresses never.
//!
//! The rule is checked on the addresses a name resolves to, by the client's
//! own resolver ([`AddressPolicy::resolver`]): only the allowed addresses
//! are handed to the connector, so the address checked is the address
//! connected to (no DNS rebinding between check and connect). IP-literal
//! URLs are checked before the request and on every redirect hop
//! ([`AddressPolicy::allows_url`]). A request that goes through a proxy
//! (see [`super::proxy`]) resolves only the proxy's name, which is not
//! filtered; the proxy resolves the target, so names are then checked only
//! by the proxy's own policy (IP literals and loopback names are still
//! checked here: loopback is never proxied).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::Network;
use crate::error::HostResult;
use crate::limits::MAX_HTTP_REDIRECTS;

/// The text every refusal ends with: the rule, in one sentence.
pub const RULE: &str = "OAuth and metadata URLs named by a server may reach loopback, private, link-local or unique-local addresses only when the MCP server itself is on such an address (link-local never), over https except to loopback";

/// A refused OAuth or metadata URL (the resolver's or the pre-request
/// check's error; [`super::error_text`] shows it as it is).
#[derive(Debug)]
pub struct AddressRefused(pub String);

impl std::fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} refused: {RULE}", self.0)
    }
}

impl std::error::Error for AddressRefused {}
/// The class of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Public,
    Loopback,
    Private,
    Blocked,
}

fn class_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_private() || (a == 100 && (64..=127).contains(&b)) {
        Class::Private
    } else if ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || (a == 198 && (18..=19).contains(&b))
    {
        Class::Blocked
    } else {
        Class::Public
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::/48`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] => Some(low),
        [0, 0, 0, 0, 0, 0, ..] if !ip.is_loopback() && !ip.is_unspecified() => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        _ => None,
    }
}

fn class_v6(ip: Ipv6Addr) -> Class {
    if let Some(v4) = embedded_v4(ip) {
        return class_v4(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Class::Loopback
    } else if first & 0xfe00 == 0xfc00 {
        Class::Private
    } else if ip.is_unspecified()
        || ip.is_multicast()
        || first & 0xffc0 == 0xfe80
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        || first == 0x0064
    {
        Class::Blocked
    } else {
        Class::Public
    }
}

fn class(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => class_v6(v6),
    }
}

/// Name lookup used by the resolver (the system's; tests swap it).
pub type Lookup = Arc<dyn Fn(&str) -> std::io::Result<Vec<IpAddr>> + Send + Sync>;

fn system_lookup() -> Lookup {
    Arc::new(|host| {
        let found = (host, 0).to_socket_addrs()?;
        Ok(found.map(|a| a.ip()).collect())
    })
}

/// The address rule for the OAuth requests of one MCP server.
#[derive(Clone)]
pub struct AddressPolicy {
    /// The non-public class the server's own URL names, if any.
    base: Option<Class>,
    /// Hosts of the proxies this host uses (lower case), resolved unfiltered.
    proxies: Arc<[String]>,
    lookup: Lookup,
}

impl std::fmt::Debug for AddressPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressPolicy")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(v4)) => v4.is_loopback(),
        Some(Host::Ipv6(v6)) => v6.is_loopback(),
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

impl AddressPolicy {
    /// The rule for the MCP server at `server`, whose requests go through
    /// `network`'s proxies.
    pub fn for_server(server: &Url, network: &Network) -> Self {
        let base = match server.host() {
            Some(Host::Ipv4(v4)) => Some(class_v4(v4)),
            Some(Host::Ipv6(v6)) => Some(class_v6(v6)),
            Some(Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => Some(Class::Loopback),
            _ => None,
        };
        Self {
            base: base.filter(|c| matches!(c, Class::Loopback | Class::Private)),
            proxies: network.proxy_hosts().into(),
            lookup: system_lookup(),
        }
    }

    /// The same rule, names looked up with `lookup` (a hosts-style table in
    /// tests; never real DNS there).
    #[cfg(test)]
    pub fn with_lookup(mut self, lookup: Lookup) -> Self {
        self.lookup = lookup;
        self
    }

    /// Whether a connection to `ip` is allowed.
    pub fn allows(&self, ip: IpAddr) -> bool {
        match class(ip) {
            Class::Public => true,
            Class::Blocked => false,
            other => self.base == Some(other),
        }
    }

    /// Whether `url` may be requested: `https` (or `http` to a loopback
    /// host) with a host, and an IP-literal host that
    /// [`AddressPolicy::allows`] (names are checked when they resolve, see
    /// [`AddressPolicy::resolver`]).
    pub fn allows_url(&self, url: &Url) -> bool {
        let scheme = url.scheme() == "https" || (url.scheme() == "http" && is_loopback_host(url));
        scheme
            && match url.host() {
                Some(Host::Ipv4(v4)) => self.allows(IpAddr::V4(v4)),
                Some(Host::Ipv6(v6)) => self.allows(IpAddr::V6(v6)),
                Some(Host::Domain(_)) => true,
                None => false,
            }
    }

    /// [`AddressPolicy::allows_url`] as a result.
    ///
    /// # Errors
    /// [`AddressRefused`] naming the URL's origin and the rule.
    pub fn check_url(&self, url: &Url) -> Result<(), AddressRefused> {
        match self.allows_url(url) {
            true => Ok(()),
            false => Err(AddressRefused(crate::redact::origin(url))),
        }
    }

    /// Whether `url` is refused: by [`AddressPolicy::allows_url`], or
    /// because every address its host name resolves to is refused (a
    /// proxy's name, or a lookup that fails, is no refusal: the request
    /// would fail on its own).
    pub async fn refuses(&self, url: &Url) -> bool {
        if !self.allows_url(url) {
            return true;
        }
        let Some(Host::Domain(host)) = url.host() else {
            return false;
        };
        if self.proxies.iter().any(|p| p.eq_ignore_ascii_case(host)) {
            return false;
        }
        let (host, lookup) = (host.to_owned(), self.lookup.clone());
        match tokio::task::spawn_blocking(move || lookup(&host)).await {
            Ok(Ok(found)) => !found.is_empty() && !found.iter().any(|ip| self.allows(*ip)),
            _ => false,
        }
    }

    /// A resolver that keeps only the allowed addresses of a name (none
    /// left: the lookup fails with [`AddressRefused`], naming the host).
    pub fn resolver(&self) -> Arc<dyn Resolve> {
        Arc::new(PolicyResolver {
            policy: self.clone(),
        })
    }

    /// An HTTP client under this rule, with `network`'s proxy route and
    /// trust roots: names resolve through [`AddressPolicy::resolver`]; with
    /// `follow`, redirects are followed (at most [`MAX_HTTP_REDIRECTS`]
    /// hops, each allowed by [`AddressPolicy::allows_url`]), else returned
    /// as they are. Each request may take [`OAUTH_REQUEST_TIMEOUT_MS`](crate::limits::OAUTH_REQUEST_TIMEOUT_MS).
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn http_client(&self, follow: bool, network: &Network) -> HostResult<reqwest::Client> {
        let hops = self.clone();
        let redirect = match follow {
            true => reqwest::redirect::Policy::custom(move |attempt| {
                if let Err(refused) = hops.check_url(attempt.url()) {
                    attempt.error(refused)
                } else if attempt.previous().len() > MAX_HTTP_REDIRECTS {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }),
            false => reqwest::redirect::Policy::none(),
        };
        Network::build(
            network
                .oauth_client_builder()
                .dns_resolver(self.resolver())
                .redirect(redirect),
        )
    }
}

/// The lookup, filtered by an [`AddressPolicy`].
struct PolicyResolver {
    policy: AddressPolicy,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        let proxy = policy.proxies.iter().any(|p| p.eq_ignore_ascii_case(&host));
        Box::pin(async move {
            let lookup = (host.clone(), policy.lookup.clone());
            let found = tokio::task::spawn_blocking(move || (lookup.1)(&lookup.0)).await??;
            let allowed: Vec<SocketAddr> = found
                .iter()
                .filter(|ip| proxy || policy.allows(**ip))
                .map(|ip| SocketAddr::new(*ip, 0))
                .collect();
            if allowed.is_empty() {
                let shown: Vec<String> = found.iter().map(IpAddr::to_string).collect();
                let what = format!("{host} (resolves to {})", shown.join(", "));
                return Err(Box::new(AddressRefused(what)) as Box<_>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_public_server_reaches_public_addresses_only() {
        let policy =
            AddressPolicy::for_server(&url("https://mcp.example.com/mcp"), &Network::default());
        assert!(policy.allows(ip("93.184.216.34")));
        assert!(policy.allows(ip("2606:2800:220:1::1")));
        for blocked in [
            "127.0.0.1",
            "10.0.0.9",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:169.254.169.254",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(!policy.allows(ip(blocked)), "{blocked}");
        }
        assert!(!policy.allows_url(&url("http://127.0.0.1:9/token")));
        assert!(!policy.allows_url(&url("file:///etc/passwd")));
        assert!(policy.allows_url(&url("https://as.example.com/token")));
        assert!(!policy.allows_url(&url("http://as.example.com/token")));
    }

    #[test]
    fn a_loopback_server_also_reaches_loopback_but_never_link_local() {
        for server in ["http://127.0.0.1:3000/mcp", "http://localhost:3000/mcp"] {
            let policy = AddressPolicy::for_server(&url(server), &Network::default());
            assert!(
                policy.allows(ip("127.0.0.1")) && policy.allows(ip("::1")),
                "{server}"
            );
            assert!(!policy.allows(ip("10.0.0.9")), "{server}");
            assert!(!policy.allows(ip("169.254.169.254")), "{server}");
        }
        let private = AddressPolicy::for_server(&url("http://10.1.2.3/mcp"), &Network::default());
        assert!(private.allows(ip("10.0.0.9")) && !private.allows(ip("127.0.0.1")));
    }

    /// An HTTP/1.1 server on 127.0.0.1 answering every request `200 ok`;
    /// returns its port.
    async fn loopback_server() -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    let answer =
                        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
                    let _ = s.write_all(answer.as_bytes()).await;
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_unless_the_server_is_on_loopback() {
        let port = loopback_server().await;
        // A hosts-style table: no real DNS.
        let hosts: Lookup = Arc::new(|host| match host {
            "metadata.example.test" => Ok(vec!["127.0.0.1".parse().unwrap()]),
            "intranet.example.test" => Ok(vec!["10.9.8.7".parse().unwrap()]),
            _ => Err(std::io::Error::other("unknown host")),
        });
        let network = Network::default();
        let target = format!("http://metadata.example.test:{port}/prm");
        let remote = AddressPolicy::for_server(&url("https://mcp.example.com/mcp"), &network)
            .with_lookup(hosts.clone());
        let client = remote.http_client(false, &network).unwrap();
        let err = client.get(&target).send().await.unwrap_err();
        let text = super::super::error_text::what_happened(&err).unwrap();
        assert!(
            text.contains("metadata.example.test (resolves to 127.0.0.1) refused")
                && text.contains("only when the MCP server itself is on such an address"),
            "{text}"
        );
        let private = client
            .get("http://intranet.example.test:1/")
            .send()
            .await
            .unwrap_err();
        let text = super::super::error_text::what_happened(&private).unwrap();
        assert!(text.contains("10.9.8.7"), "{text}");
        let unknown = client.get("https://nowhere.example.test/").send().await;
        let text = super::super::error_text::what_happened(&unknown.unwrap_err()).unwrap();
        assert_eq!(text, "DNS lookup failed (unknown host)");
        // The same name for a loopback MCP server: resolved, checked, connected.
        let local = AddressPolicy::for_server(&url("http://127.0.0.1:3000/mcp"), &network)
            .with_lookup(hosts);
        let client = local.http_client(false, &network).unwrap();
        let ok = client.get(&target).send().await.unwrap();
        assert_eq!(ok.text().await.unwrap(), "ok");
    }
}
