//! The OAuth HTTP client of a DPoP sign-in (RFC 9449 §5, §8): rmcp's
//! `AuthorizationManager` runs the flow (discovery, registration, the code
//! or client credentials exchange, refresh) through this
//! [`OAuthHttpClient`], which adds a fresh DPoP proof to every token
//! request (a form POST with `grant_type`), remembers each `DPoP-Nonce` the
//! authorization server sends, and retries a token request answered with
//! `use_dpop_nonce` once, with the new nonce.
//!
//! Only a server whose authorization server advertises ES256 DPoP gets this
//! client (see [`super::flow`]); it applies [`AddressPolicy`] (the rule
//! rmcp applies to discovered hosts), the request's redirect policy and
//! timeout, and reads at most [`MAX_OAUTH_RESPONSE_BYTES`] of a body.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use oauth2::{HttpRequest, HttpResponse};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use url::Url;

use super::address_policy::AddressPolicy;
use super::dpop::{DpopKey, DPOP_HEADER, DPOP_NONCE_HEADER, USE_DPOP_NONCE};
use crate::error::HostResult;
use crate::limits::MAX_OAUTH_RESPONSE_BYTES;

/// [`OAuthHttpClient`] with DPoP proofs on token requests.
pub struct DpopOAuthHttp {
    /// Follows redirects (each hop checked by the policy).
    follow: reqwest::Client,
    /// Returns redirects as they are.
    stop: reqwest::Client,
    policy: AddressPolicy,
    key: Arc<DpopKey>,
}

impl DpopOAuthHttp {
    /// The client for the OAuth requests of the MCP server at `server`, signing with `key`.
    ///
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    pub fn new(server: &Url, key: Arc<DpopKey>) -> HostResult<Self> {
        let policy = AddressPolicy::for_server(server);
        Ok(Self {
            follow: policy.http_client(true)?,
            stop: policy.http_client(false)?,
            policy,
            key,
        })
    }

    /// Sends `request` once (with a proof when `token_request`), reads the
    /// bounded answer and remembers its `DPoP-Nonce`.
    async fn send(
        &self,
        client: &reqwest::Client,
        request: &HttpRequest,
        token_request: bool,
        timeout: Option<Duration>,
    ) -> Result<HttpResponse, OAuthHttpClientError> {
        let url = Url::parse(&request.uri().to_string())?;
        if !self.policy.allows_url(&url) {
            return Err(format!("{url}: address not allowed for this resource").into());
        }
        let mut builder = client
            .request(request.method().clone(), url.clone())
            .headers(request.headers().clone())
            .body(request.body().clone());
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        if token_request {
            let proof = self
                .key
                .proof(request.method().as_str(), url.as_str(), None)?;
            builder = builder.header(DPOP_HEADER, proof);
        }
        let response = builder.send().await?;
        if let Some(nonce) = response.headers().get(DPOP_NONCE_HEADER) {
            if let Ok(nonce) = nonce.to_str() {
                self.key.remember_nonce(url.as_str(), nonce);
            }
        }
        bounded(response).await
    }
}

impl OAuthHttpClient for DpopOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request,
                redirect_policy,
                timeout,
                ..
            } = request;
            let client = match redirect_policy {
                OAuthHttpRedirectPolicy::Follow => &self.follow,
                _ => &self.stop,
            };
            let token_request = is_token_request(&request);
            let response = self.send(client, &request, token_request, timeout).await?;
            if token_request && asks_for_nonce(&response) {
                // RFC 9449 §8: once, with the nonce just remembered.
                return self.send(client, &request, true, timeout).await;
            }
            Ok(response)
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
