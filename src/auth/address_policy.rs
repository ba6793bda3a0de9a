//! Which network addresses the host's own OAuth HTTP client may reach (the
//! one of a DPoP sign-in, [`super::dpop_http`]), the rule rmcp's
//! `AuthorizationManager::new` applies to hosts named by discovered
//! metadata (MCP 2025-11-25 "Authorization › Security Considerations",
//! server-side request forgery):
//!
//! - a public address is always allowed;
//! - a loopback or private address only when the MCP server's own URL names
//!   one of the same class (an IP literal of that class, or `localhost`);
//! - link-local (cloud instance metadata), unspecified, broadcast,
//!   multicast, documentation and reserved addresses never.
//!
//! The rule applies to the addresses a name resolves to (a [`Resolve`]
//! used by the client, so DNS answers are checked where they are used) and
//! to IP-literal URLs, including every redirect hop. As in rmcp, the hosts
//! of the proxies named by `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (any
//! case) are not filtered: through a proxy only the proxy's name resolves.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{MAX_HTTP_REDIRECTS, OAUTH_REQUEST_TIMEOUT_MS};

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

fn class_v6(ip: Ipv6Addr) -> Class {
    if let Some(v4) = ip.to_ipv4_mapped() {
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

/// The address rule for the OAuth requests of one MCP server.
#[derive(Debug, Clone)]
pub struct AddressPolicy {
    /// The non-public class the server's own URL names, if any.
    base: Option<Class>,
    /// Hosts of the configured proxies (lower case), resolved unfiltered.
    proxies: Arc<[String]>,
}

/// The proxy variables reqwest reads.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The hosts of the configured proxies.
fn proxy_hosts() -> Arc<[String]> {
    PROXY_VARIABLES
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .filter_map(|value| {
            let value = match value.contains("://") {
                true => value,
                false => format!("http://{value}"),
            };
            Url::parse(&value)
                .ok()?
                .host_str()
                .map(str::to_ascii_lowercase)
        })
        .collect()
}

impl AddressPolicy {
    /// The rule for the MCP server at `server`.
    pub fn for_server(server: &Url) -> Self {
        let base = match server.host() {
            Some(Host::Ipv4(v4)) => Some(class_v4(v4)),
            Some(Host::Ipv6(v6)) => Some(class_v6(v6)),
            Some(Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => Some(Class::Loopback),
            _ => None,
        };
        Self {
            base: base.filter(|c| matches!(c, Class::Loopback | Class::Private)),
            proxies: proxy_hosts(),
        }
    }

    /// Whether a connection to `ip` is allowed.
    pub fn allows(&self, ip: IpAddr) -> bool {
        match class(ip) {
            Class::Public => true,
            Class::Blocked => false,
            other => self.base == Some(other),
        }
    }

    /// Whether `url` may be requested: `http`/`https` with a host, and an
    /// IP-literal host that [`AddressPolicy::allows`] (names are checked
    /// when they resolve, see [`AddressPolicy::resolver`]).
    pub fn allows_url(&self, url: &Url) -> bool {
        if !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        match url.host() {
            Some(Host::Ipv4(v4)) => self.allows(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.allows(IpAddr::V6(v6)),
            Some(Host::Domain(_)) => true,
            None => false,
        }
    }

    /// A resolver that keeps only the allowed addresses of a name (none
    /// left: the lookup fails, naming the host).
    pub fn resolver(&self) -> Arc<dyn Resolve> {
        Arc::new(PolicyResolver {
            policy: self.clone(),
        })
    }

    /// An HTTP client under this rule: names resolve through
    /// [`AddressPolicy::resolver`]; with `follow`, redirects are followed
    /// (at most [`MAX_HTTP_REDIRECTS`] hops, each allowed by
    /// [`AddressPolicy::allows_url`]), else returned as they are. Each
    /// request may take [`OAUTH_REQUEST_TIMEOUT_MS`].
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn http_client(&self, follow: bool) -> HostResult<reqwest::Client> {
        let hops = self.clone();
        let redirect = match follow {
            true => reqwest::redirect::Policy::custom(move |attempt| {
                if !hops.allows_url(attempt.url()) {
                    attempt.error("redirect to an address not allowed for this resource")
                } else if attempt.previous().len() > MAX_HTTP_REDIRECTS {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }),
            false => reqwest::redirect::Policy::none(),
        };
        reqwest::Client::builder()
            .timeout(Duration::from_millis(OAUTH_REQUEST_TIMEOUT_MS))
            .dns_resolver(self.resolver())
            .redirect(redirect)
            .build()
            .map_err(|e| {
                HostError::new(
                    ErrorCode::Internal,
                    format!("cannot build HTTP client: {e}"),
                )
            })
    }
}

/// The operating system's resolver, filtered by an [`AddressPolicy`].
struct PolicyResolver {
    policy: AddressPolicy,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        let proxy = policy.proxies.iter().any(|p| p.eq_ignore_ascii_case(&host));
        Box::pin(async move {
            let lookup = host.clone();
            let found = tokio::task::spawn_blocking(move || {
                (lookup.as_str(), 0).to_socket_addrs().map(Vec::from_iter)
            })
            .await??;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| proxy || policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!("{host}: address not allowed for this resource").into());
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
        let policy = AddressPolicy::for_server(&url("https://mcp.example.com/mcp"));
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
        ] {
            assert!(!policy.allows(ip(blocked)), "{blocked}");
        }
        assert!(!policy.allows_url(&url("http://127.0.0.1:9/token")));
        assert!(!policy.allows_url(&url("file:///etc/passwd")));
        assert!(policy.allows_url(&url("https://as.example.com/token")));
    }

    #[test]
    fn a_loopback_server_also_reaches_loopback_but_never_link_local() {
        for server in ["http://127.0.0.1:3000/mcp", "http://localhost:3000/mcp"] {
            let policy = AddressPolicy::for_server(&url(server));
            assert!(
                policy.allows(ip("127.0.0.1")) && policy.allows(ip("::1")),
                "{server}"
            );
            assert!(!policy.allows(ip("10.0.0.9")), "{server}");
            assert!(!policy.allows(ip("169.254.169.254")), "{server}");
        }
        let private = AddressPolicy::for_server(&url("http://10.1.2.3/mcp"));
        assert!(private.allows(ip("10.0.0.9")) && !private.allows(ip("127.0.0.1")));
    }
}
