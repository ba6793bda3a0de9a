//! The HTTP client of every OAuth exchange the host runs through rmcp's
//! `AuthorizationManager` (discovery, registration, the code, client
//! credentials and token exchanges, refresh) and of the enterprise-managed
//! grant: [`OAuthHttp`], an rmcp [`OAuthHttpClient`] that
//!
//! - applies the host's proxy route and trust roots ([`Network`]);
//! - for URLs a server named, applies [`AddressPolicy`] (resolved
//!   addresses filtered, `https` except loopback, every redirect hop);
//! - honours the request's redirect policy and timeout, and reads at most
//!   [`MAX_OAUTH_RESPONSE_BYTES`] of a body;
//! - says what went wrong on the wire ([`Network::describe`]);
//! - with a DPoP key (RFC 9449 §5, §8: only for a server whose
//!   authorization server advertises ES256 DPoP, see [`super::flow`]) adds
//!   a fresh proof to every token request (a form POST with `grant_type`),
//!   remembers each `DPoP-Nonce` the authorization server sends, and
//!   retries a token request answered with `use_dpop_nonce` once.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use oauth2::{HttpRequest, HttpResponse};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use url::Url;

use super::dpop::{DpopKey, DPOP_HEADER, DPOP_NONCE_HEADER, USE_DPOP_NONCE};
use crate::error::HostResult;
use crate::limits::{MAX_HTTP_REDIRECTS, MAX_OAUTH_RESPONSE_BYTES};
use crate::network::address_policy::AddressPolicy;
use crate::network::Network;

/// The host's [`OAuthHttpClient`] (see the module documentation).
pub struct OAuthHttp {
    /// Follows redirects (each hop checked by the policy).
    follow: reqwest::Client,
    /// Returns redirects as they are.
    stop: reqwest::Client,
    /// `None`: URLs the app configured (an enterprise IdP), not a server.
    policy: Option<AddressPolicy>,
    network: Arc<Network>,
    key: Option<Arc<DpopKey>>,
}

impl OAuthHttp {
    /// The client for the OAuth requests of the MCP server at `server`
    /// (under its [`AddressPolicy`]), signing token requests with `key`.
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn for_server(
        server: &Url,
        network: Arc<Network>,
        key: Option<Arc<DpopKey>>,
    ) -> HostResult<Self> {
        let policy = AddressPolicy::for_server(server, &network);
        Ok(Self {
            follow: policy.http_client(true, &network)?,
            stop: policy.http_client(false, &network)?,
            policy: Some(policy),
            network,
            key,
        })
    }

    /// The client for endpoints the app configured itself (an enterprise
    /// IdP): the host's proxy route and trust roots, no address rule.
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn for_app(network: Arc<Network>) -> HostResult<Self> {
        let build = |redirect| Network::build(network.oauth_client_builder().redirect(redirect));
        let follow = reqwest::redirect::Policy::limited(MAX_HTTP_REDIRECTS);
        Ok(Self {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy: None,
            network,
            key: None,
        })
    }

    /// Sends `request` once (with a proof when `token_request` and a key),
    /// reads the bounded answer and remembers its `DPoP-Nonce`.
    async fn send(
        &self,
        client: &reqwest::Client,
        request: &HttpRequest,
        token_request: bool,
        timeout: Option<Duration>,
    ) -> Result<HttpResponse, OAuthHttpClientError> {
        let url = Url::parse(&request.uri().to_string())?;
        if let Some(policy) = &self.policy {
            policy.check_url(&url)?;
        }
        let mut builder = client
            .request(request.method().clone(), url.clone())
            .headers(request.headers().clone())
            .body(request.body().clone());
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        let key = self.key.as_ref().filter(|_| token_request);
        if let Some(key) = key {
            let proof = key.proof(request.method().as_str(), url.as_str(), None)?;
            builder = builder.header(DPOP_HEADER, proof);
        }
        let response = builder.send().await.map_err(|e| {
            let what = self.network.describe(&e, &url, "request failed");
            format!("{} {what}", request.method())
        })?;
        if let (Some(key), Some(nonce)) = (&self.key, response.headers().get(DPOP_NONCE_HEADER)) {
            if let Ok(nonce) = nonce.to_str() {
                key.remember_nonce(url.as_str(), nonce);
            }
        }
        bounded(response).await
    }
}

impl OAuthHttp {
    /// One OAuth exchange outside rmcp's manager (the device authorization
    /// grant, its registration, a configured metadata document): `request`
    /// sent as [`OAuthHttpClient::execute`] sends rmcp's, following
    /// redirects when `follow` (each hop checked), within `timeout`.
    ///
    /// # Errors
    /// What the wire or the address rule said (no secrets: the request's
    /// method and URL origin, [`Network::describe`]).
    pub async fn exchange(
        &self,
        request: &HttpRequest,
        follow: bool,
        timeout: Option<Duration>,
    ) -> Result<HttpResponse, OAuthHttpClientError> {
        let client = if follow { &self.follow } else { &self.stop };
        let token_request = is_token_request(request);
        let response = self.send(client, request, token_request, timeout).await?;
        if token_request && self.key.is_some() && asks_for_nonce(&response) {
            // RFC 9449 §8: once, with the nonce just remembered.
            return self.send(client, request, true, timeout).await;
        }
        Ok(response)
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request,
                redirect_policy,
                timeout,
                ..
            } = request;
            let follow = matches!(redirect_policy, OAuthHttpRedirectPolicy::Follow);
            self.exchange(&request, follow, timeout).await
        })
    }
}

/// A token request: a POST whose form body names a `grant_type` (RFC 6749 §4).
fn is_token_request(request: &HttpRequest) -> bool {
    request.method() == oauth2::http::Method::POST
        && url::form_urlencoded::parse(request.body()).any(|(k, _)| k == "grant_type")
}

/// A 400 `use_dpop_nonce` with a `DPoP-Nonce` (RFC 9449 §8).
fn asks_for_nonce(response: &HttpResponse) -> bool {
    #[derive(serde::Deserialize)]
    struct OAuthError {
        error: Option<String>,
    }
    response.status() == oauth2::http::StatusCode::BAD_REQUEST
        && response.headers().contains_key(DPOP_NONCE_HEADER)
        && serde_json::from_slice::<OAuthError>(response.body())
            .ok()
            .and_then(|e| e.error)
            .as_deref()
            == Some(USE_DPOP_NONCE)
}

/// The response with at most [`MAX_OAUTH_RESPONSE_BYTES`] of body.
async fn bounded(response: reqwest::Response) -> Result<HttpResponse, OAuthHttpClientError> {
    let mut builder = oauth2::http::Response::builder()
        .status(response.status())
        .version(response.version());
    for (name, value) in response.headers() {
        builder = builder.header(name, value);
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > MAX_OAUTH_RESPONSE_BYTES {
            return Err(
                format!("OAuth response larger than {MAX_OAUTH_RESPONSE_BYTES} bytes").into(),
            );
        }
        body.extend_from_slice(&chunk);
    }
    Ok(builder.body(body)?)
}
