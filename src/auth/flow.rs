//! Host-run sign-in: the OAuth 2.1 authorization code flow with PKCE, run
//! entirely in Rust on rmcp's `AuthorizationManager` / `AuthorizationSession`
//! (MCP 2025-11-25 "Authorization").
//!
//! rmcp does the protocol work: RFC 9728 → RFC 8414 / OpenID Connect
//! discovery (path-insertion variants, root fallback, 2025-03-26 default
//! endpoints), client identity in spec order (pre-registered client, Client
//! ID Metadata Document, dynamic client registration per RFC 7591), PKCE S256
//! (an AS advertising methods without S256 is refused), the RFC 8707
//! `resource` parameter, `state` and RFC 9207 `iss` checks, the token
//! endpoint auth method the AS metadata names. This module adds the policy:
//! where the callback arrives (the loopback redirect listener and/or a
//! callback URL the app hands back, [`super::redirect`]), the device
//! authorization grant when chosen ([`super::device`]), the timeout, the URL
//! hand-off to the app, and errors that never carry secrets.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
};
use tokio::sync::mpsc;
use url::Url;

use super::device;
use super::dpop::{self, DpopKeys};
use super::oauth_http::OAuthHttp;
use super::redirect::{denied, Callbacks};
use super::setup::{discovered, failed, metadata_at, oauth_http, prepared_manager};
pub use super::setup::{issuer_of, ClientIdentity, Overrides, SignIn, UserFlow};
use super::store::{BridgedCredentialStore, RefreshLocks, SecretStore};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::DeviceCodePrompt;
use crate::network::Network;

/// Default time allowed for the user to finish signing in: 5 min.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the interactive sign-in: the authorization code flow, or the
/// device authorization grant when `opts.flow` and the authorization
/// server's metadata choose it ([`device::chosen`]). `announce` receives
/// what the app shows: the authorization URL (the app opens a browser; the
/// host never opens one itself), or the verification URL and the
/// [`DeviceCodePrompt`]. `pasted` brings the callback URLs the app hands
/// back (`completeAuthorization`): with [`super::redirect::Redirect::App`]
/// the only way back, else raced with the loopback listener. On success
/// the returned manager holds the tokens (and refreshes them).
///
/// Errors: `auth_failed` (discovery, registration, PKCE, token exchange,
/// wrong `state`/`iss`), `auth_denied` (the user or AS refused consent),
/// `timeout` (no redirect within `timeout`; the port is freed),
/// `not_supported` (a device grant the AS does not advertise), `cancelled`
/// (a newer sign-in of the server took over the app's callbacks),
/// `credential_store_failed` (the store cannot be read, checked before the
/// URL is handed out, or cannot keep the tokens).
/// Tokens and the client registration are saved in `secrets` under
/// (issuer, resource) (see [`super::store`]).
pub async fn sign_in(
    opts: &SignIn,
    (secrets, locks): (&Arc<dyn SecretStore>, &Arc<RefreshLocks>),
    pasted: mpsc::Receiver<Url>,
    announce: impl FnOnce(String, Option<DeviceCodePrompt>),
) -> HostResult<AuthorizationManager> {
    let prepared = prepared_manager(opts, secrets, locks).await?;
    // The store is read before the user is sent anywhere: one that cannot
    // be used (an OS keychain not reachable) fails the sign-in now
    // (`credential_store_failed`), not after the user consented.
    let store = BridgedCredentialStore::new(
        secrets.clone(),
        locks.clone(),
        &prepared.issuer,
        opts.server.as_str(),
    );
    let stored = store.load().await.map_err(failed)?;
    let scopes = requested_scopes(opts, stored.map(|s| s.granted_scopes), prepared.scopes);
    if device::chosen(opts.flow, &prepared.metadata)? {
        let (manager, metadata) = (prepared.manager, &prepared.metadata);
        return device::sign_in(manager, metadata, opts, &scopes, store, announce).await;
    }
    let callbacks = Callbacks::open(&opts.redirect, pasted).await?;
    let mut request = AuthorizationRequest::new(callbacks.redirect_uri.clone())
        .with_client_name(opts.identity.client_name.clone());
    if let Some(header) = &opts.challenge {
        request = request.with_challenge(header.clone());
    }
    if let Some(id) = &opts.identity.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &opts.identity.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if let Some(url) = &opts.identity.client_metadata_url {
        request = request.with_client_metadata_url(url.clone());
    }
    request = if scopes.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(scopes)
    };
    let session = AuthorizationSession::new(prepared.manager, request)
        .await
        .map_err(|(_, e)| failed(e))?;
    announce(session.get_authorization_url().to_owned(), None);
    let callback = callbacks.wait(opts.timeout).await?;
    if let Some(refused) = denied(&callback) {
        return Err(refused);
    }
    session
        .handle_callback_url(callback.as_str())
        .await
        .map_err(failed)?;
    Ok(session.auth_manager)
}

/// The scopes an interactive sign-in asks for: the app's
/// (`authorize({scopes})`), else on a step-up the union of the granted and
/// the challenged ones ([`step_up_scopes`]), else the server's pinned
/// `oauth.scopes`, else `initial` (rmcp's selection).
fn requested_scopes(
    opts: &SignIn,
    granted: Option<Vec<String>>,
    initial: Vec<String>,
) -> Vec<String> {
    if !opts.scopes.is_empty() {
        return opts.scopes.clone();
    }
    let step_up = step_up_scopes(opts, granted);
    if !step_up.is_empty() {
        return step_up;
    }
    match opts.overrides.scopes.is_empty() {
        true => initial,
        false => opts.overrides.scopes.clone(),
    }
}

/// OAuth 2.1 client credentials grant (SEP-1046): no browser, no user.
/// `client_secret` (client_secret_basic / _post as the AS advertises) or a
/// PEM key for `private_key_jwt`; RFC 8707 `resource` is always sent.
///
/// Errors: `auth_failed`; `invalid_argument` when neither a secret nor a key is configured.
pub async fn client_credentials(
    opts: &SignIn,
    key: Option<(&str, &str)>,
    secrets: &Arc<dyn SecretStore>,
    locks: &Arc<RefreshLocks>,
) -> HostResult<AuthorizationManager> {
    use rmcp::transport::auth::{ClientCredentialsConfig, JwtSigningAlgorithm};
    let client_id = opts.identity.client_id.clone().ok_or_else(|| {
        HostError::new(
            ErrorCode::InvalidArgument,
            "oauth.clientId is required for clientCredentials",
        )
    })?;
    let mut manager = prepared_manager(opts, secrets, locks).await?.manager;
    let scopes = opts.machine_scopes();
    let resource = Some(opts.resource().to_string());
    let config = match (&opts.identity.client_secret, key) {
        (_, Some((pem, algorithm))) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: pem.as_bytes().to_vec(),
            signing_algorithm: match algorithm {
                "ES384" => JwtSigningAlgorithm::ES384,
                "RS256" => JwtSigningAlgorithm::RS256,
                "RS384" => JwtSigningAlgorithm::RS384,
                "RS512" => JwtSigningAlgorithm::RS512,
                _ => JwtSigningAlgorithm::ES256,
            },
            token_endpoint_audience: None,
            scopes,
            resource,
        },
        (Some(secret), None) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        (None, None) => {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                "clientCredentials needs oauth.clientSecret or oauth.privateKeyPem",
            ))
        }
    };
    manager
        .configure_client_credentials(&config)
        .map_err(failed)?;
    manager
        .exchange_client_credentials(&config)
        .await
        .map_err(failed)?;
    Ok(manager)
}

/// Enterprise-managed authorization (SEP-990, rmcp's `enterprise` module):
/// `id_token` from the enterprise IdP → ID-JAG (RFC 8693 token exchange at the
/// IdP) → MCP access token (RFC 7523 JWT bearer grant at the server's
/// authorization server, with RFC 8707 `resource`). Returns the access token
/// (a secret). No browser; no refresh (the app supplies a new ID token).
///
/// Errors: `auth_failed`; `invalid_argument` (missing client id or IdP).
pub async fn enterprise_managed(
    opts: &SignIn,
    idp: &crate::config::IdpSetting,
    client_secret: Option<&str>,
    id_token: &str,
) -> HostResult<String> {
    use oauth2::ClientSecret;
    use rmcp::transport::auth::enterprise::{
        EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
    };
    let client_id = opts.identity.client_id.clone().ok_or_else(|| {
        HostError::new(
            ErrorCode::InvalidArgument,
            "oauth.clientId is required for enterpriseManaged",
        )
    })?;
    let (_, metadata) = discovered(opts).await?;
    let secret_auth = |s: Option<&str>| match s {
        Some(s) => EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(s.to_owned())),
        None => EmaClientAuthentication::None,
    };
    let idp_server = EmaAuthorizationServer::new(
        idp.issuer.clone(),
        idp.token_endpoint.clone(),
        idp.client_id.clone(),
    )
    .with_client_authentication(secret_auth(idp.client_secret.as_deref()));
    let resource_server = EmaAuthorizationServer::new(
        issuer_of(&metadata),
        metadata.token_endpoint.clone(),
        client_id,
    )
    .with_client_authentication(secret_auth(client_secret));
    let idp_http = OAuthHttp::for_app(opts.network.clone())?;
    let http = OAuthHttp::for_server(&opts.server, opts.network.clone(), None)?;
    let scopes = opts.machine_scopes();
    let resource = opts.resource().to_string();
    let token =
        EmaExchangeRequest::new_with_id_token(idp_server, resource_server, &resource, id_token)
            .with_scopes(scopes)
            .exchange(&idp_http, &http)
            .await
            .map_err(|e| {
                HostError::new(
                    ErrorCode::AuthFailed,
                    format!("enterprise-managed authorization failed: {e}"),
                )
            })?;
    Ok(token.access_token.secret().clone())
}

/// The scopes a sign-in asks for when the app named none: on a 403
/// `insufficient_scope` step-up, the union of the scopes `granted` to the
/// stored credentials of (issuer, server) and the challenge's scopes, in
/// that order (MCP 2026-07-28 "Authorization › Scope Challenge Handling",
/// SEP-2350); otherwise none (rmcp then selects the challenge's scope, else
/// `scopes_supported`).
fn step_up_scopes(opts: &SignIn, granted: Option<Vec<String>>) -> Vec<String> {
    let Some(challenge) = opts
        .challenge
        .as_deref()
        .map(|h| super::AuthChallenge::from_header(h, &opts.server))
        .filter(|c| c.status == super::ChallengeStatus::InsufficientScope)
    else {
        return Vec::new();
    };
    let mut scopes = granted.unwrap_or_default();
    for scope in challenge.scopes() {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes
}

/// Rebuilds a manager from stored credentials for `server`, without any
/// browser. `None` when nothing usable is stored. DPoP-bound credentials
/// get a manager that refreshes with proofs of the server's key in `dpop`
/// (a key of another host is refused by the servers: sign in again).
/// With the server's `overrides`, the credentials are those of the issuer
/// of its configured metadata document, and refreshes send its configured
/// RFC 8707 `resource`.
///
/// # Errors
/// `credential_store_failed` when the store cannot be read (an OS keychain
/// not reachable): never taken for "nothing stored".
pub async fn restore(
    server: &Url,
    (issuer, overrides): (&str, &Overrides),
    (secrets, locks, dpop, network): (
        &Arc<dyn SecretStore>,
        &Arc<RefreshLocks>,
        &DpopKeys,
        &Arc<Network>,
    ),
) -> HostResult<Option<AuthorizationManager>> {
    let metadata = match &overrides.metadata_url {
        Some(url) => match metadata_at(url, network).await {
            Ok(metadata) => Some(metadata),
            Err(_) => return Ok(None),
        },
        None => None,
    };
    let issuer = metadata.as_ref().map_or(issuer.to_owned(), issuer_of);
    let store =
        BridgedCredentialStore::new(secrets.clone(), locks.clone(), &issuer, server.as_str());
    let Some(stored) = store.load().await.map_err(failed)? else {
        return Ok(None);
    };
    let bound = stored.token_response.as_ref().is_some_and(dpop::is_bound);
    let Ok(http) = oauth_http(server, network, bound.then_some(dpop)) else {
        return Ok(None);
    };
    let metadata = match (metadata, overrides.resource.is_some()) {
        (None, true) => match discovered_metadata(server, http.clone()).await {
            Some(metadata) => Some(metadata),
            None => return Ok(None),
        },
        (metadata, _) => metadata,
    };
    let base = overrides.resource.as_ref().unwrap_or(server);
    let Ok(mut manager) =
        AuthorizationManager::new_with_oauth_http_client(base.as_str(), http).await
    else {
        return Ok(None);
    };
    if let Some(metadata) = metadata {
        manager.set_metadata(metadata);
    }
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(restored) => Ok(restored.then_some(manager)),
        Err(e @ AuthError::CredentialStoreError(_)) => Err(failed(e)),
        Err(_) => Ok(None),
    }
}

/// rmcp's discovery of the authorization server metadata from `server`.
async fn discovered_metadata(
    server: &Url,
    http: Arc<dyn rmcp::transport::auth::OAuthHttpClient>,
) -> Option<rmcp::transport::auth::AuthorizationMetadata> {
    let manager = AuthorizationManager::new_with_oauth_http_client(server.as_str(), http)
        .await
        .ok()?;
    manager.resolve_metadata().await.ok().map(|r| r.metadata)
}
