//! What every host-run grant starts from: the options of one sign-in
//! ([`SignIn`]), the server's host-side overrides ([`Overrides`]:
//! authorization server metadata URL, RFC 8707 resource, pinned scopes),
//! and rmcp's `AuthorizationManager` made for them: authorization server
//! metadata discovered (RFC 9728 → RFC 8414 / OpenID Connect, rmcp), or
//! read from the configured metadata URL instead; the manager's RFC 8707
//! `resource` the server's URL (or the configured one); DPoP when the
//! authorization server takes ES256 proofs; the credential store entry
//! of (issuer, server).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    OAuthHttpClient,
};
use url::Url;

use super::dpop::{self, DpopKeys};
use super::oauth_http::OAuthHttp;
use super::redirect::Redirect;
use super::store::{BridgedCredentialStore, RefreshLocks, SecretStore};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::AUTH_METADATA_TIMEOUT_MS;
use crate::network::Network;
use crate::redact::origin;

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

/// How the user of an interactive sign-in takes part (`authorize({flow})`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UserFlow {
    /// The authorization code grant with PKCE (a browser, redirected to the
    /// loopback listener or the app's redirect URI), except with an
    /// authorization server that advertises the device authorization grant
    /// and cannot run this one (its `grant_types_supported` without
    /// `authorization_code`, or `response_types_supported` without `code`).
    #[default]
    AuthorizationCode,
    /// The device authorization grant (RFC 8628): a code the user enters on
    /// any device. `not_supported` when the authorization server does not
    /// advertise a `device_authorization_endpoint`.
    DeviceCode,
    /// The device authorization grant when the authorization server
    /// advertises it, else the authorization code grant: for hosts with no
    /// browser or no redirect back (SSH, containers, VS Code Remote).
    Auto,
}

/// A server's host-side OAuth overrides (`addServer({oauth})`, plugin
/// server overrides; Claude Code's `oauth.authServerMetadataUrl` and
/// `oauth.scopes`, Codex's `oauth_resource`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// RFC 8414 / OpenID Connect metadata document of the authorization
    /// server, read instead of RFC 9728 → RFC 8414 discovery.
    pub metadata_url: Option<Url>,
    /// The RFC 8707 `resource` sent in the authorization request and every
    /// token request, instead of the server's URL (or the `resource` of its
    /// protected resource metadata).
    pub resource: Option<Url>,
    /// Scopes requested when the app names none (`authorize({scopes})`) and
    /// no step-up challenge asks for more.
    pub scopes: Vec<String>,
}

impl From<Option<&crate::config::OAuthClientSetting>> for Overrides {
    /// The overrides of a server's `oauth` setting (none without one).
    fn from(setting: Option<&crate::config::OAuthClientSetting>) -> Self {
        setting.map_or_else(Self::default, |s| Self {
            metadata_url: s.auth_server_metadata_url.clone(),
            resource: s.resource.clone(),
            scopes: s.scopes.clone(),
        })
    }
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
    /// Scopes to request; empty = step-up union, else pinned, else challenge
    /// scope, else `scopes_supported`, else omitted.
    pub scopes: Vec<String>,
    /// Where the browser returns (authorization code grant).
    pub redirect: Redirect,
    /// Authorization code or device authorization grant.
    pub flow: UserFlow,
    /// The server's overrides.
    pub overrides: Overrides,
    /// How long to wait for the user.
    pub timeout: Duration,
    /// The host's DPoP keys (used when the authorization server supports DPoP).
    pub dpop: Arc<DpopKeys>,
    /// The host's proxy route and trust roots (every OAuth request).
    pub network: Arc<Network>,
}

impl SignIn {
    /// The RFC 8707 `resource` of the grants the host builds itself (client
    /// credentials, device, enterprise-managed, JWT bearer): the override,
    /// else the server's URL.
    pub fn resource(&self) -> &Url {
        self.overrides.resource.as_ref().unwrap_or(&self.server)
    }

    /// The scopes of a grant without a user: the pinned `oauth.scopes`,
    /// else the challenge's `scope`.
    pub fn machine_scopes(&self) -> Vec<String> {
        if !self.overrides.scopes.is_empty() {
            return self.overrides.scopes.clone();
        }
        self.challenge
            .as_deref()
            .map(|h| super::AuthChallenge::from_header(h, &self.server).scopes())
            .unwrap_or_default()
    }
}

/// A manager for `opts.server` and its authorization server metadata (see
/// [`manager_on`]), with no DPoP key.
pub(super) async fn discovered(
    opts: &SignIn,
) -> HostResult<(AuthorizationManager, AuthorizationMetadata)> {
    let http = oauth_http(&opts.server, &opts.network, None)?;
    let (manager, metadata, _) = manager_on(http, opts).await?;
    Ok((manager, metadata))
}

/// The scopes a first sign-in asks for when nobody named any: rmcp's
/// initial selection (the challenge's `scope`, else the RFC 9728
/// `scopes_supported`, plus `offline_access` when the AS lists it); with a
/// metadata URL override, the challenge's `scope`.
pub(super) type InitialScopes = Vec<String>;

/// Discovery for `opts` on `http`: a manager holding the authorization
/// server metadata (read from `opts.overrides.metadata_url` when set, else
/// discovered from the challenge, else the 2025-03-26 root metadata) whose
/// RFC 8707 resource is `opts.overrides.resource` when set (else what
/// discovery found: the server's URL or its RFC 9728 `resource`); that
/// metadata; and the initial scopes.
async fn manager_on(
    http: Arc<dyn OAuthHttpClient>,
    opts: &SignIn,
) -> HostResult<(AuthorizationManager, AuthorizationMetadata, InitialScopes)> {
    if let Some(url) = &opts.overrides.metadata_url {
        let metadata = metadata_at(url, &opts.network).await?;
        let manager = rebased(http, opts, &metadata).await?;
        let scopes = opts
            .challenge
            .as_deref()
            .map(|h| super::AuthChallenge::from_header(h, &opts.server).scopes())
            .unwrap_or_default();
        return Ok((manager, metadata, scopes));
    }
    let manager =
        AuthorizationManager::new_with_oauth_http_client(opts.server.as_str(), http.clone())
            .await
            .map_err(failed)?;
    let (mut manager, metadata) = discover_with(manager, opts).await?;
    manager.set_metadata(metadata.clone());
    let scopes = manager.select_initial_scopes(&[]).await;
    if opts.overrides.resource.is_some() {
        manager = rebased(http, opts, &metadata).await?;
    }
    Ok((manager, metadata, scopes))
}

/// A manager with `metadata` and no discovery state whose RFC 8707
/// `resource` (rmcp's base URL) is `opts.overrides.resource`, else the
/// server's URL.
async fn rebased(
    http: Arc<dyn OAuthHttpClient>,
    opts: &SignIn,
    metadata: &AuthorizationMetadata,
) -> HostResult<AuthorizationManager> {
    let resource = opts.overrides.resource.as_ref().unwrap_or(&opts.server);
    let mut manager = AuthorizationManager::new_with_oauth_http_client(resource.as_str(), http)
        .await
        .map_err(failed)?;
    manager.set_metadata(metadata.clone());
    Ok(manager)
}

/// `manager` and the authorization server metadata it discovered for `opts`.
async fn discover_with(
    manager: AuthorizationManager,
    opts: &SignIn,
) -> HostResult<(AuthorizationManager, AuthorizationMetadata)> {
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

/// The protected resource metadata of a server that publishes none
/// (RFC 9728 discovery failed) but whose authorization server is
/// configured (`oauth.authServerMetadataUrl`): `resource` the server's URL,
/// `authorization_servers` that document's issuer, `scopes_supported` the
/// challenge's `scope`. `None` when the document cannot be read.
pub async fn configured_resource(
    server: &Url,
    challenge: &super::AuthChallenge,
    metadata_url: &Url,
    network: &Arc<Network>,
) -> Option<ahp_types::state::ProtectedResourceMetadata> {
    let metadata = metadata_at(metadata_url, network).await.ok()?;
    super::resource_metadata::synthesized(server, issuer_of(&metadata), challenge)
}

/// The RFC 8414 / OpenID Connect metadata document at `url` (a server's
/// `oauth.authServerMetadataUrl`: configured by the app, so, like an
/// enterprise IdP, not under the server's address rule; `https`, or `http`
/// to loopback, was checked when it was configured). No redirect is
/// followed; the body is bounded like every OAuth answer.
///
/// # Errors
/// `auth_failed` naming the URL (without query) and what was wrong: no
/// answer, not 200, not JSON metadata with `authorization_endpoint` and
/// `token_endpoint`.
pub(super) async fn metadata_at(
    url: &Url,
    network: &Arc<Network>,
) -> HostResult<AuthorizationMetadata> {
    let shown = crate::redact::shown(url.as_str()).into_owned();
    let bad = |what: String| {
        HostError::new(
            ErrorCode::AuthFailed,
            format!("sign-in failed: the authorization server metadata at {shown} {what}"),
        )
    };
    let request = oauth2::http::Request::get(url.as_str())
        .header("accept", "application/json")
        .body(Vec::new())
        .map_err(|e| bad(format!("cannot be asked for: {e}")))?;
    let timeout = Some(Duration::from_millis(AUTH_METADATA_TIMEOUT_MS));
    let response = OAuthHttp::for_app(network.clone())?
        .exchange(&request, false, timeout)
        .await
        .map_err(|e| bad(format!("could not be read: {e}")))?;
    if response.status() != oauth2::http::StatusCode::OK {
        return Err(bad(format!("answered HTTP {}", response.status().as_u16())));
    }
    let metadata: AuthorizationMetadata = serde_json::from_slice(response.body())
        .map_err(|e| bad(format!("is not authorization server metadata ({e})")))?;
    if metadata.authorization_endpoint.is_empty() || metadata.token_endpoint.is_empty() {
        return Err(bad("names no authorization or token endpoint".to_owned()));
    }
    Ok(metadata)
}

/// A manager ready for a grant (see [`prepared_manager`]).
pub(super) struct Prepared {
    /// The manager, with the metadata and the credential store entry.
    pub manager: AuthorizationManager,
    /// The authorization server metadata.
    pub metadata: AuthorizationMetadata,
    /// The issuer that keys the credentials ([`issuer_of`]).
    pub issuer: String,
    /// The scopes a first sign-in asks for when nobody named any.
    pub scopes: InitialScopes,
}

/// A manager for `opts.server` with the authorization server metadata (see
/// [`manager_on`]) and the credential store entry of (issuer, resource).
///
/// When the authorization server takes ES256 DPoP proofs (RFC 9449 §5.1),
/// the manager runs every OAuth request through an [`OAuthHttp`] with the
/// server's key from `opts.dpop` (discovery is repeated on it), so its
/// token requests carry proofs and it obtains DPoP-bound tokens.
pub(super) async fn prepared_manager(
    opts: &SignIn,
    secrets: &Arc<dyn SecretStore>,
    locks: &Arc<RefreshLocks>,
) -> HostResult<Prepared> {
    let http = oauth_http(&opts.server, &opts.network, None)?;
    let (mut manager, mut metadata, mut scopes) = manager_on(http, opts).await?;
    if dpop::supported_by(&metadata) {
        let http = oauth_http(&opts.server, &opts.network, Some(&opts.dpop))?;
        (manager, metadata, scopes) = manager_on(http, opts).await?;
    }
    let issuer = issuer_of(&metadata);
    manager.set_metadata(metadata.clone());
    manager.set_credential_store(BridgedCredentialStore::new(
        secrets.clone(),
        locks.clone(),
        &issuer,
        opts.server.as_str(),
    ));
    Ok(Prepared {
        manager,
        metadata,
        issuer,
        scopes,
    })
}

/// The issuer that keys stored credentials: the metadata's `issuer`, else
/// the origin of the authorization endpoint.
pub fn issuer_of(metadata: &AuthorizationMetadata) -> String {
    metadata.issuer.clone().unwrap_or_else(|| {
        Url::parse(&metadata.authorization_endpoint)
            .map(|u| origin(&u))
            .unwrap_or_default()
    })
}

/// The OAuth HTTP client for `server` (its address rule, the host's
/// network), with `server`'s DPoP key from `keys` when given.
///
/// # Errors
/// `internal` (no key, no HTTP stack).
pub(super) fn oauth_http(
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
pub(super) fn failed(e: AuthError) -> HostError {
    if let AuthError::CredentialStoreError(text) = &e {
        return HostError::new(ErrorCode::CredentialStoreFailed, text.clone());
    }
    let text = super::echo::without_echoed_values(&e.to_string());
    HostError::new(ErrorCode::AuthFailed, format!("sign-in failed: {text}"))
}
