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
//! the loopback redirect listener, the timeout, the URL hand-off to the app,
//! and errors that never carry secrets.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, CredentialStore, OAuthHttpClient,
};
use url::Url;

use std::sync::Arc;

use super::callback::CallbackListener;
use super::dpop::{self, DpopKeys};
use super::oauth_http::OAuthHttp;
use super::store::{BridgedCredentialStore, RefreshLocks, SecretStore};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::network::Network;

/// Default time allowed for the user to finish signing in: 5 min.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// How the host identifies itself to the authorization server.
#[derive(Debug, Clone, Default)]
pub struct ClientIdentity {
    /// Pre-registered client id for this server (config `oauth.clientId`).
    pub client_id: Option<String>,
    /// Its secret (`oauth.clientSecret`); a secret, never logged.
    pub client_secret: Option<String>,
    /// HTTPS URL of this app's Client ID Metadata Document (host option).
    pub client_metadata_url: Option<String>,
    /// `client_name` for dynamic registration.
    pub client_name: String,
}

/// Options of one sign-in.
#[derive(Debug, Clone)]
pub struct SignIn {
    /// The MCP server (protected resource) URL.
    pub server: Url,
    /// The `WWW-Authenticate` challenge that asked for it, if any.
    pub challenge: Option<String>,
    /// Client identity.
    pub identity: ClientIdentity,
    /// Scopes to request; empty = challenge scope, else `scopes_supported`, else omitted.
    pub scopes: Vec<String>,
    /// Loopback redirect port; 0 = random.
    pub redirect_port: u16,
    /// How long to wait for the redirect.
    pub timeout: Duration,
    /// The host's DPoP keys (used when the authorization server supports DPoP).
    pub dpop: Arc<DpopKeys>,
    /// The host's proxy route and trust roots (every OAuth request).
    pub network: Arc<Network>,
}

/// Runs the flow. `open_url` receives the authorization URL (the app opens
/// a browser); the host never opens one itself. On success the returned
/// manager holds the tokens (and refreshes them).
///
/// Errors: `auth_failed` (discovery, registration, PKCE, token exchange,
/// wrong `state`/`iss`), `auth_denied` (the user or AS refused consent),
/// `timeout` (no redirect within `timeout`; the port is freed),
/// `credential_store_failed` (the store cannot be read, checked before the
/// URL is handed out, or cannot keep the tokens).
/// Tokens and the client registration are saved in `secrets` under
/// (issuer, resource) (see [`super::store`]).
pub async fn sign_in(
    opts: &SignIn,
    secrets: &Arc<dyn SecretStore>,
    locks: &Arc<RefreshLocks>,
    open_url: impl FnOnce(String),
) -> HostResult<AuthorizationManager> {
    let (manager, issuer) = prepared_manager(opts, secrets, locks).await?;
    // The store is read before the user is sent anywhere: one that cannot
    // be used (an OS keychain not reachable) fails the sign-in now
    // (`credential_store_failed`), not after the user consented.
    let stored = BridgedCredentialStore::new(
        secrets.clone(),
        locks.clone(),
        &issuer,
        opts.server.as_str(),
    )
    .load()
    .await
    .map_err(failed)?;
    let listener = CallbackListener::bind(opts.redirect_port).await?;
    let mut request = AuthorizationRequest::new(listener.redirect_uri.clone())
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
    let scopes = match opts.scopes.is_empty() {
        true => step_up_scopes(opts, stored.map(|s| s.granted_scopes)),
        false => opts.scopes.clone(),
    };
    request = if scopes.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(scopes)
    };
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e))?;
    open_url(session.get_authorization_url().to_owned());
    let callback = listener.wait(opts.timeout).await?;
    if let Some(error) = callback
        .query_pairs()
        .find(|(k, _)| k == "error")
        .map(|(_, v)| v.into_owned())
    {
        let description = callback
            .query_pairs()
            .find(|(k, _)| k == "error_description")
            .map(|(_, v)| format!(": {v}"))
            .unwrap_or_default();
        return Err(HostError::new(
            ErrorCode::AuthDenied,
            format!("authorization was not granted ({error}{description})"),
        ));
    }
    session
        .handle_callback_url(callback.as_str())
        .await
        .map_err(failed)?;
    Ok(session.auth_manager)
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
    let (mut manager, _) = prepared_manager(opts, secrets, locks).await?;
    let scopes = opts
        .challenge
        .as_deref()
        .map(|h| super::AuthChallenge::from_header(h, &opts.server).scopes())
        .unwrap_or_default();
    let resource = Some(opts.server.to_string());
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
    let scopes = opts
        .challenge
        .as_deref()
        .map(|h| super::AuthChallenge::from_header(h, &opts.server).scopes())
        .unwrap_or_default();
    let resource = opts.server.to_string();
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

/// A manager for `opts.server` and its authorization server metadata (rmcp
/// discovery from the challenge, else 2025-03-26 root metadata).
pub(super) async fn discovered(
    opts: &SignIn,
) -> HostResult<(
    AuthorizationManager,
    rmcp::transport::auth::AuthorizationMetadata,
)> {
    let http = oauth_http(&opts.server, &opts.network, None)?;
    let manager = AuthorizationManager::new_with_oauth_http_client(opts.server.as_str(), http)
        .await
        .map_err(failed)?;
    discover_with(manager, opts).await
}

/// `manager` and the authorization server metadata it discovered for `opts`.
async fn discover_with(
    manager: AuthorizationManager,
    opts: &SignIn,
) -> HostResult<(
    AuthorizationManager,
    rmcp::transport::auth::AuthorizationMetadata,
)> {
    let resolved = manager
        .resolve_metadata_from_challenge(opts.challenge.as_deref())
        .await;
    // rmcp found no authorization server through RFC 9728: one the metadata
    // names may have been refused by the address rule, which must not end
    // in the server's own endpoints.
    if !matches!(&resolved, Ok(r) if r.source == AuthorizationMetadataSource::ProtectedResourceMetadata)
    {
        let challenge = opts.challenge.as_deref();
        if let Some(refused) =
            super::refused_authorization_servers(&opts.server, challenge, &opts.network).await
        {
            return Err(refused);
        }
    }
    let metadata = match resolved {
        Ok(resolution) => resolution.metadata,
        Err(e) => super::legacy_metadata(&opts.server, &opts.network)
            .await
            .ok_or_else(|| failed(e))?,
    };
    Ok((manager, metadata))
}

/// A manager for `opts.server` with discovered authorization server metadata
/// (rmcp discovery, else 2025-03-26 root metadata) and the credential store
/// entry of (issuer, resource); and that issuer.
///
/// When the authorization server takes ES256 DPoP proofs (RFC 9449 §5.1),
/// the manager runs every OAuth request through an [`OAuthHttp`] with the
/// server's key from `opts.dpop` (discovery is repeated on it), so its
/// token requests carry proofs and it obtains DPoP-bound tokens.
async fn prepared_manager(
    opts: &SignIn,
    secrets: &Arc<dyn SecretStore>,
    locks: &Arc<RefreshLocks>,
) -> HostResult<(AuthorizationManager, String)> {
    let (mut manager, mut metadata) = discovered(opts).await?;
    if dpop::supported_by(&metadata) {
        let http = oauth_http(&opts.server, &opts.network, Some(&opts.dpop))?;
        let bound = AuthorizationManager::new_with_oauth_http_client(opts.server.as_str(), http)
            .await
            .map_err(failed)?;
        (manager, metadata) = discover_with(bound, opts).await?;
    }
    let issuer = issuer_of(&metadata);
    manager.set_metadata(metadata);
    manager.set_credential_store(BridgedCredentialStore::new(
        secrets.clone(),
        locks.clone(),
        &issuer,
        opts.server.as_str(),
    ));
    Ok((manager, issuer))
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

/// The issuer that keys stored credentials: the metadata's `issuer`, else
/// the origin of the authorization endpoint.
pub fn issuer_of(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> String {
    metadata.issuer.clone().unwrap_or_else(|| {
        Url::parse(&metadata.authorization_endpoint)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default()
    })
}

/// Rebuilds a manager from stored credentials for `server`, without any
/// browser. `None` when nothing usable is stored. DPoP-bound credentials
/// get a manager that refreshes with proofs of the server's key in `dpop`
/// (a key of another host is refused by the servers: sign in again).
///
/// # Errors
/// `credential_store_failed` when the store cannot be read (an OS keychain
/// not reachable): never taken for "nothing stored".
pub async fn restore(
    server: &Url,
    issuer: &str,
    (secrets, locks, dpop, network): (
        &Arc<dyn SecretStore>,
        &Arc<RefreshLocks>,
        &DpopKeys,
        &Arc<Network>,
    ),
) -> HostResult<Option<AuthorizationManager>> {
    let store =
        BridgedCredentialStore::new(secrets.clone(), locks.clone(), issuer, server.as_str());
    let Some(stored) = store.load().await.map_err(failed)? else {
        return Ok(None);
    };
    let bound = stored.token_response.as_ref().is_some_and(dpop::is_bound);
    let Ok(http) = oauth_http(server, network, bound.then_some(dpop)) else {
        return Ok(None);
    };
    let Ok(mut manager) =
        AuthorizationManager::new_with_oauth_http_client(server.as_str(), http).await
    else {
        return Ok(None);
    };
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(restored) => Ok(restored.then_some(manager)),
        Err(e @ AuthError::CredentialStoreError(_)) => Err(failed(e)),
        Err(_) => Ok(None),
    }
}

/// The OAuth HTTP client for `server` (its address rule, the host's
/// network), with `server`'s DPoP key from `keys` when given.
///
/// # Errors
/// `internal` (no key, no HTTP stack).
fn oauth_http(
    server: &Url,
    network: &Arc<Network>,
    keys: Option<&DpopKeys>,
) -> HostResult<Arc<dyn OAuthHttpClient>> {
    let key = keys.map(|k| k.key_for(server.as_str())).transpose()?;
    Ok(Arc::new(OAuthHttp::for_server(
        server,
        network.clone(),
        key,
    )?))
}

/// Maps an rmcp auth error. rmcp's messages name URLs and OAuth error codes,
/// never tokens or client secrets; the values a parse error quotes (a
/// wrongly typed member of a token response) are taken out
/// ([`super::echo::without_echoed_values`]).
///
/// A failure of the credential store is `credential_store_failed`,
/// whatever step met it, with the store's text (`credential store: OS
/// keychain (Secret Service) is not reachable: …`, [`super::store`]).
fn failed(e: AuthError) -> HostError {
    if let AuthError::CredentialStoreError(text) = &e {
        return HostError::new(ErrorCode::CredentialStoreFailed, text.clone());
    }
    let text = super::echo::without_echoed_values(&e.to_string());
    HostError::new(ErrorCode::AuthFailed, format!("sign-in failed: {text}"))
}
