//! The OAuth 2.0 device authorization grant (RFC 8628) for hosts where no
//! browser can be redirected back (SSH sessions, containers, VS Code
//! Remote): the user enters a short code at a URL on any device, while the
//! host polls the token endpoint.
//!
//! The protocol is the `oauth2` crate's (`exchange_device_code`, the
//! §3.4–3.5 polling of `exchange_device_access_token`: `interval`, 5 s when
//! absent, `authorization_pending`, `slow_down` adding 5 s, `expired_token`,
//! `access_denied`, exponential backoff when the endpoint cannot be
//! reached); rmcp's manager has no device grant, so this module adds the
//! rest around it: which client (pre-registered, CIMD, or a dynamic
//! registration for this grant), RFC 8707 `resource` on both requests,
//! DPoP proofs when the authorization server takes them (every token
//! request goes through [`OAuthHttp`]), the bounds of `src/limits`, and the
//! tokens saved where rmcp's manager finds them, so it refreshes them like
//! any others.
//!
//! The device code never leaves this module; the user code is handed to
//! the app once (the `authorizationUrl` event) and kept out of errors.

mod client;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::basic::BasicTokenIntrospectionResponse;
use oauth2::basic::{BasicErrorResponse, BasicRevocationErrorResponse};
use oauth2::{
    ClientId, ClientSecret, DeviceAuthorizationUrl, DeviceCodeErrorResponseType, HttpRequest,
    RequestTokenError, Scope, StandardDeviceAuthorizationResponse, StandardRevocableToken,
    TokenResponse, TokenUrl,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, CredentialStore, OAuthClientConfig,
    OAuthTokenResponse, StoredCredentials,
};
use url::Url;

use super::oauth_http::OAuthHttp;
use super::setup::{failed, SignIn, UserFlow};
use super::store::BridgedCredentialStore;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::DeviceCodePrompt;
use crate::limits::{
    MAX_DEVICE_CODE_WAIT_SECS, MAX_DEVICE_POLL_BACKOFF_SECS, MAX_DEVICE_USER_CODE_CHARS,
    MAX_DEVICE_VERIFICATION_URI_BYTES, MIN_DEVICE_POLL_INTERVAL_MS,
};

/// The grant type of RFC 8628 §3.4.
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The `oauth2` client of one device sign-in (token responses as rmcp
/// stores them).
type DeviceClient = oauth2::Client<
    BasicErrorResponse,
    OAuthTokenResponse,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

/// A failure on the wire (what [`OAuthHttp::exchange`] said: no secrets).
#[derive(Debug)]
struct WireError(String);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

/// The `oauth2` crate's HTTP client of a device sign-in: every request
/// through [`OAuthHttp::exchange`] (no redirects followed; proofs on token
/// requests when the key is DPoP's). A type of its own, not a closure, so
/// the polling future is `Send` for the host's runtime.
struct DeviceHttp(OAuthHttp);

impl<'c> oauth2::AsyncHttpClient<'c> for DeviceHttp {
    type Error = WireError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, WireError>> + Send + 'c>,
    >;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            self.0
                .exchange(&request, false, None)
                .await
                .map_err(|e| WireError(e.to_string()))
        })
    }
}

/// The authorization server's device authorization endpoint, if it
/// advertises one (RFC 8628 §4).
fn endpoint_of(metadata: &AuthorizationMetadata) -> Option<&str> {
    metadata
        .additional_fields
        .get("device_authorization_endpoint")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
}

/// Whether a sign-in with `flow` runs the device authorization grant at
/// the authorization server of `metadata` (see [`UserFlow`]).
///
/// # Errors
/// `not_supported` for [`UserFlow::DeviceCode`] when the server advertises
/// no `device_authorization_endpoint`.
pub fn chosen(flow: UserFlow, metadata: &AuthorizationMetadata) -> HostResult<bool> {
    let advertised = endpoint_of(metadata).is_some();
    let lists = |list: &Option<Vec<String>>, item: &str| {
        list.as_ref().is_none_or(|l| l.iter().any(|s| s == item))
    };
    let grants = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok());
    let code_flow =
        lists(&grants, "authorization_code") && lists(&metadata.response_types_supported, "code");
    match flow {
        UserFlow::DeviceCode if !advertised => Err(HostError::new(
            ErrorCode::NotSupported,
            format!(
                "the authorization server {} advertises no device_authorization_endpoint \
                 (RFC 8628 §4): sign in with flow 'authorizationCode'",
                super::setup::issuer_of(metadata)
            ),
        )),
        UserFlow::DeviceCode => Ok(true),
        UserFlow::Auto => Ok(advertised),
        UserFlow::AuthorizationCode => Ok(advertised && !code_flow),
    }
}

/// Runs the device authorization grant for `opts` at the authorization
/// server of `metadata`, on `manager` (discovered, with the credential
/// store of (issuer, server)), asking for `scopes`. `announce` receives
/// the URL to open and the [`DeviceCodePrompt`] once the authorization
/// server issued a code. On success the manager holds the tokens (saved in
/// the store) and refreshes them.
///
/// # Errors
/// `auth_failed` (no client id, a refused registration or device
/// authorization request, a verification URI that is not `https` (or
/// loopback `http`) or too long, a refused token request naming its OAuth
/// `error`); `auth_denied` (`access_denied`: the user refused); `timeout`
/// (`expired_token`, or the code outlived [`MAX_DEVICE_CODE_WAIT_SECS`] or
/// `opts.timeout`); `credential_store_failed`.
pub async fn sign_in(
    mut manager: AuthorizationManager,
    metadata: &AuthorizationMetadata,
    opts: &SignIn,
    scopes: &[String],
    store: BridgedCredentialStore,
    announce: impl FnOnce(String, Option<DeviceCodePrompt>),
) -> HostResult<AuthorizationManager> {
    let endpoint = endpoint_of(metadata).unwrap_or_default();
    let key = super::dpop::supported_by(metadata)
        .then(|| opts.dpop.key_for(opts.server.as_str()))
        .transpose()?;
    let http = DeviceHttp(OAuthHttp::for_server(
        &opts.server,
        opts.network.clone(),
        key,
    )?);
    let (client_id, secret) = client::identity(opts, metadata, &http.0, scopes).await?;
    let mut client: DeviceClient = oauth2::Client::new(ClientId::new(client_id.clone()))
        .set_device_authorization_url(
            DeviceAuthorizationUrl::new(endpoint.to_owned()).map_err(bad_endpoint)?,
        )
        .set_token_uri(TokenUrl::new(metadata.token_endpoint.clone()).map_err(bad_endpoint)?);
    if let Some(secret) = &secret {
        client = client.set_client_secret(ClientSecret::new(secret.clone()));
        if client::posts_secret(metadata) {
            client = client.set_auth_type(oauth2::AuthType::RequestBody);
        }
    }
    let resource = opts.resource().to_string();
    let details: StandardDeviceAuthorizationResponse = client
        .exchange_device_code()
        .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())))
        .add_extra_param("resource", resource.clone())
        .request_async(&http)
        .await
        .map_err(|e| refused("the device authorization request", &e.to_string(), &[]))?;
    let wait = details
        .expires_in()
        .min(Duration::from_secs(MAX_DEVICE_CODE_WAIT_SECS))
        .min(opts.timeout);
    announce_code(&details, wait, announce)?;
    let secrets = [
        details.device_code().secret().clone(),
        details.user_code().secret().clone(),
    ];
    let token = client
        .exchange_device_access_token(&details)
        .add_extra_param("resource", resource)
        .set_max_backoff_interval(Duration::from_secs(MAX_DEVICE_POLL_BACKOFF_SECS))
        .request_async(&http, poll_sleep, Some(wait))
        .await
        .map_err(|e| poll_failed(e, &secrets))?;
    keep(&store, &client_id, token, scopes, metadata).await?;
    let config = OAuthClientConfig::new(client_id, opts.server.as_str());
    let config = match secret {
        Some(secret) => config.with_client_secret(secret),
        None => config,
    };
    manager.configure_client(config).map_err(failed)?;
    Ok(manager)
}

/// Waits `interval` before the next poll, never less than
/// [`MIN_DEVICE_POLL_INTERVAL_MS`].
async fn poll_sleep(interval: Duration) {
    tokio::time::sleep(interval.max(Duration::from_millis(MIN_DEVICE_POLL_INTERVAL_MS))).await;
}

/// Hands the user code and verification URI to the app (`announce`),
/// checked first: a user code of at most [`MAX_DEVICE_USER_CODE_CHARS`], a
/// verification URI (and its complete form) of at most
/// [`MAX_DEVICE_VERIFICATION_URI_BYTES`], `https` or loopback `http`.
///
/// # Errors
/// `auth_failed` when one is not (nothing is announced).
fn announce_code(
    details: &StandardDeviceAuthorizationResponse,
    wait: Duration,
    announce: impl FnOnce(String, Option<DeviceCodePrompt>),
) -> HostResult<()> {
    let user_code = details.user_code().secret().clone();
    if user_code.is_empty() || user_code.chars().count() > MAX_DEVICE_USER_CODE_CHARS {
        return Err(HostError::new(
            ErrorCode::AuthFailed,
            format!(
                "device sign-in failed: the user_code is empty or longer than \
                 {MAX_DEVICE_USER_CODE_CHARS} characters"
            ),
        ));
    }
    let verification_uri = shown_uri(details.verification_uri().as_str())?;
    let complete = details
        .verification_uri_complete()
        .map(|u| shown_uri(u.secret()))
        .transpose()?;
    let url = complete.clone().unwrap_or_else(|| verification_uri.clone());
    announce(
        url,
        Some(DeviceCodePrompt {
            user_code,
            verification_uri,
            verification_uri_complete: complete,
            expires_in_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        }),
    );
    Ok(())
}

/// A verification URI the app may open: `https`, or `http` to loopback,
/// at most [`MAX_DEVICE_VERIFICATION_URI_BYTES`].
///
/// # Errors
/// `auth_failed` naming the rule (not the URI: its complete form holds the
/// user code).
fn shown_uri(uri: &str) -> HostResult<String> {
    let ok = uri.len() <= MAX_DEVICE_VERIFICATION_URI_BYTES
        && Url::parse(uri).is_ok_and(|u| match u.scheme() {
            "https" => true,
            "http" => matches!(u.host_str(), Some("127.0.0.1" | "[::1]" | "localhost")),
            _ => false,
        });
    match ok {
        true => Ok(uri.to_owned()),
        false => Err(HostError::new(
            ErrorCode::AuthFailed,
            format!(
                "device sign-in failed: the verification_uri is not an https (or loopback http) \
                 URL of at most {MAX_DEVICE_VERIFICATION_URI_BYTES} bytes"
            ),
        )),
    }
}

/// Saves the tokens of the grant in `store` (where rmcp's manager reads
/// them), with the scopes granted: the response's `scope`, else those
/// requested (RFC 6749 §5.1, SEP-2350).
///
/// # Errors
/// `credential_store_failed`.
async fn keep(
    store: &BridgedCredentialStore,
    client_id: &str,
    token: OAuthTokenResponse,
    requested: &[String],
    metadata: &AuthorizationMetadata,
) -> HostResult<()> {
    let granted = token
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| requested.to_vec());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let stored = StoredCredentials::new(client_id.to_owned(), Some(token), granted, Some(now))
        .with_issuer(metadata.issuer.clone());
    store.save(stored).await.map_err(failed)
}

/// The error of a device token request that ended without tokens.
fn poll_failed(
    e: RequestTokenError<WireError, oauth2::DeviceCodeErrorResponse>,
    secrets: &[String],
) -> HostError {
    match &e {
        RequestTokenError::ServerResponse(r) => match r.error() {
            DeviceCodeErrorResponseType::AccessDenied => HostError::new(
                ErrorCode::AuthDenied,
                "authorization was not granted (access_denied): the user refused the device sign-in",
            ),
            DeviceCodeErrorResponseType::ExpiredToken => HostError::new(
                ErrorCode::Timeout,
                "the device code expired before the user approved it (expired_token)",
            ),
            _ => refused("the device token request", &e.to_string(), secrets),
        },
        _ => refused("the device token request", &e.to_string(), secrets),
    }
}

/// `auth_failed`: `what` failed with `text` (oauth2's words: the OAuth
/// `error` and `error_description`, or what the wire said), cut to 300
/// characters, with `secrets` (the device and user codes a hostile server
/// might echo) and quoted values of parse errors taken out.
fn refused(what: &str, text: &str, secrets: &[String]) -> HostError {
    let text = crate::redact::without(&super::echo::without_echoed_values(text), secrets);
    let text: String = text.chars().take(300).collect();
    HostError::new(
        ErrorCode::AuthFailed,
        format!("device sign-in failed: {what} was refused: {text}"),
    )
}

/// `auth_failed` for an endpoint URL of the metadata that does not parse.
fn bad_endpoint(e: url::ParseError) -> HostError {
    HostError::new(
        ErrorCode::AuthFailed,
        format!("device sign-in failed: an endpoint of the authorization server metadata: {e}"),
    )
}

#[cfg(test)]
mod tests;
