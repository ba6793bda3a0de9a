//! The network edge every HTTP client of the host shares (Streamable HTTP
//! connections, OAuth and metadata fetches): which proxy a request goes
//! through ([`proxy`]), which certificate authorities are trusted
//! ([`trust`]), how a failed exchange is described ([`error_text`]), and
//! which addresses OAuth and metadata fetches may reach
//! ([`address_policy`]).
//!
//! Built once per host from its `proxy` and `caCertificates` options and
//! the process environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
//! `NO_PROXY`, `NODE_EXTRA_CA_CERTS`), read when the host is created.

pub mod address_policy;
pub mod error_text;
pub mod proxy;
pub mod trust;

use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use url::Url;

use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{HTTP_POOL_IDLE_MS, OAUTH_REQUEST_TIMEOUT_MS};

use proxy::ProxyRoute;
pub use trust::CaCertificates;

/// The `proxy` host option: a proxy URL (`"http://proxy.corp:3128"`;
/// `host:port` means `http://host:port`) or `{url, noProxy?}` with
/// `noProxy` in `NO_PROXY` syntax. It wins over the environment: with it,
/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` are not read.
#[derive(Clone, Deserialize)]
#[serde(try_from = "serde_json::Value")]
pub struct ProxyOption {
    url: Url,
    no_proxy: String,
}

impl std::fmt::Debug for ProxyOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyOption")
            .field("url", &crate::redact::origin(&self.url))
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// The `{url, noProxy?}` form of the option.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProxySettings {
    url: String,
    #[serde(default)]
    no_proxy: String,
}

impl TryFrom<serde_json::Value> for ProxyOption {
    type Error = String;

    /// Errors (surfaced as `invalid_argument: options: …`): `proxy: a proxy
    /// URL string or {url, noProxy?}: …`, `proxy: not an http(s) URL with a
    /// host`.
    fn try_from(raw: serde_json::Value) -> Result<Self, String> {
        let settings = match raw {
            serde_json::Value::String(url) => ProxySettings {
                url,
                no_proxy: String::new(),
            },
            other => serde_json::from_value(other)
                .map_err(|e| format!("proxy: a proxy URL string or {{url, noProxy?}}: {e}"))?,
        };
        let url = proxy::parse_proxy_url(&settings.url)
            .ok_or_else(|| "proxy: not an http(s) URL with a host".to_owned())?;
        Ok(Self {
            url,
            no_proxy: settings.no_proxy,
        })
    }
}

/// The host's network options (see `Network`).
#[derive(Debug, Clone, Default)]
pub struct NetworkOptions {
    /// The app's own proxy setting; `None`: the environment's.
    pub proxy: Option<ProxyOption>,
    /// Extra trusted CAs, besides the OS store and `NODE_EXTRA_CA_CERTS`.
    pub ca_certificates: CaCertificates,
}

/// The proxy route and trust roots of one host.
#[derive(Debug, Clone)]
pub struct Network {
    route: Arc<ProxyRoute>,
    roots: Vec<trust::Certificate>,
    /// The TLS configuration the host's clients share, made on first use
    /// (`None`: it could not be made; each client then builds its own).
    tls: Arc<OnceLock<Option<rustls::ClientConfig>>>,
    warnings: Vec<String>,
}

impl Network {
    /// Reads the environment (proxy variables unless `options.proxy` is
    /// set; `NODE_EXTRA_CA_CERTS`).
    pub fn new(options: &NetworkOptions) -> Self {
        let route = match &options.proxy {
            Some(p) => ProxyRoute::new(Some(p.url.clone()), Some(p.url.clone()), &p.no_proxy),
            None => ProxyRoute::from_env(),
        };
        let mut roots = options.ca_certificates.certificates().to_vec();
        let mut warnings = Vec::new();
        match trust::node_extra_ca_certs() {
            Ok(certs) => roots.extend(certs),
            Err(warning) => warnings.push(warning),
        }
        Self {
            route: Arc::new(route),
            roots,
            tls: Arc::default(),
            warnings,
        }
    }

    /// Problems met while reading the environment (to log once).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// A client builder with this host's proxy route and trust roots (the
    /// host's shared TLS configuration, see [`trust::client_tls`]).
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        let route = self.route.clone();
        let builder = reqwest::Client::builder()
            .proxy(reqwest::Proxy::custom(move |url| route.proxy_for(url)));
        let shared = self.tls.get_or_init(|| trust::client_tls(&self.roots).ok());
        match shared {
            Some(config) => builder.tls_backend_preconfigured(config.clone()),
            None => builder.tls_certs_merge(
                (self.roots.iter()).filter_map(|der| reqwest::Certificate::from_der(der).ok()),
            ),
        }
    }

    /// [`Network::client_builder`] with the time limit of one OAuth or
    /// metadata request ([`OAUTH_REQUEST_TIMEOUT_MS`]) and the idle bound
    /// of the Streamable HTTP pool ([`HTTP_POOL_IDLE_MS`]): a token refresh
    /// comes an access token's lifetime after the exchange before it, and a
    /// connection kept that long was reused just as the authorization
    /// server (Node, 5 s keep-alive) closed it, failing the refresh.
    pub fn oauth_client_builder(&self) -> reqwest::ClientBuilder {
        self.client_builder()
            .timeout(std::time::Duration::from_millis(OAUTH_REQUEST_TIMEOUT_MS))
            .pool_idle_timeout(std::time::Duration::from_millis(HTTP_POOL_IDLE_MS))
    }

    /// Builds `builder` (from [`Network::client_builder`]).
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn build(builder: reqwest::ClientBuilder) -> HostResult<reqwest::Client> {
        builder.build().map_err(|e| {
            // reqwest's own text is only "builder error": add its causes.
            let mut text = format!("cannot build HTTP client: {e}");
            let mut cause = std::error::Error::source(&e);
            while let Some(inner) = cause {
                text.push_str(&format!(": {inner}"));
                cause = inner.source();
            }
            HostError::new(ErrorCode::Internal, text)
        })
    }

    /// The proxy a request to `url` goes through (`None`: direct).
    pub fn proxy_for(&self, url: &Url) -> Option<Url> {
        self.route.proxy_for(url)
    }

    /// Hosts of the proxies this host may use (lower case).
    pub fn proxy_hosts(&self) -> Vec<String> {
        self.route.proxy_hosts()
    }

    /// [`error_text::describe`] for a request to `url` from this host.
    pub fn describe(
        &self,
        e: &(dyn std::error::Error + 'static),
        url: &Url,
        fallback: &str,
    ) -> String {
        error_text::describe(e, url, self.proxy_for(url).as_ref(), fallback)
    }
}

impl Default for Network {
    fn default() -> Self {
        Self::new(&NetworkOptions::default())
    }
}
