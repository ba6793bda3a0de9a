//! RFC 9728 protected resource metadata for the AHP `authRequired` state.
//!
//! Discovery order (MCP 2025-11-25 "Authorization › Protected Resource
//! Metadata Discovery"): the `resource_metadata` URL of the challenge, then
//! the path-aware well-known URL, then the root one. When none answers,
//! rmcp's authorization-server discovery decides: metadata found at the
//! server's origin (2025-03-26 servers) gives a synthesized document naming
//! that origin; nothing found is an error listing every URL tried.
//!
//! Every fetch goes through the host's network (proxy, trust roots) under
//! the server's [`AddressPolicy`]: a URL a remote server names may not
//! reach loopback or private addresses (see [`crate::network::address_policy`]).

use std::sync::Arc;
use std::time::Duration;

use ahp_types::state::{
    McpAuthRequiredReason, McpOAuthClient, McpServerAuthRequiredState, ProtectedResourceMetadata,
};
use futures::StreamExt;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};
use url::Url;

use super::challenge::{AuthChallenge, ChallengeStatus};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{AUTH_METADATA_TIMEOUT_MS, MAX_AUTH_METADATA_BYTES};
use crate::network::address_policy::AddressPolicy;
use crate::network::Network;
use crate::redact::{origin, shown_server_url};

/// GETs of metadata documents for one MCP server: no redirects, the
/// server's address rule, the host's network.
struct Fetcher {
    client: reqwest::Client,
    policy: AddressPolicy,
    network: Arc<Network>,
}

impl Fetcher {
    /// # Errors
    /// `internal` when the HTTP stack cannot start.
    fn new(server: &Url, network: &Arc<Network>) -> HostResult<Self> {
        let policy = AddressPolicy::for_server(server, network);
        Ok(Self {
            client: policy.http_client(false, network)?,
            policy,
            network: network.clone(),
        })
    }

    /// Sends a GET to `url` (refused without a request when the rule forbids it).
    async fn get(&self, url: &Url, accept: &str) -> Result<reqwest::Response, String> {
        self.policy.check_url(url).map_err(|e| e.to_string())?;
        self.client
            .get(url.clone())
            .header("Accept", accept)
            .timeout(Duration::from_millis(AUTH_METADATA_TIMEOUT_MS))
            .send()
            .await
            .map_err(|e| self.network.describe(&e, url, "request failed"))
    }
}

/// Finds the protected resource metadata of the MCP server at `server`.
///
/// Errors: `auth_discovery_failed` naming every URL tried (malformed,
/// oversized or mismatched documents are named with the reason).
pub async fn discover(
    server: &Url,
    challenge: &AuthChallenge,
    network: &Arc<Network>,
) -> HostResult<ProtectedResourceMetadata> {
    let client = Fetcher::new(server, network)?;
    let mut tried = Vec::new();
    for url in candidates(server, challenge) {
        match fetch(&client, &url).await {
            Ok(doc) => match check(doc, server) {
                Ok(metadata) => return Ok(metadata),
                Err(reason) => tried.push(format!("{url} ({reason})")),
            },
            Err(reason) => tried.push(format!("{url} ({reason})")),
        }
    }
    // No RFC 9728 document: a 2025-03-26 server publishes RFC 8414 metadata at
    // its origin, or uses the default endpoints (/authorize, /token, /register).
    let http = super::oauth_http::OAuthHttp::for_server(server, network.clone(), None)?;
    let resolved =
        match AuthorizationManager::new_with_oauth_http_client(server.as_str(), Arc::new(http))
            .await
        {
            Ok(manager) => manager
                .resolve_metadata()
                .await
                .map(|r| (r.metadata, r.source))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
    let resolved = match resolved {
        Err(e) => legacy_metadata(server, network)
            .await
            .map(|m| (m, AuthorizationMetadataSource::AuthorizationServerMetadata))
            .ok_or(e),
        ok => ok,
    };
    let well_known = format!("{}/.well-known/oauth-authorization-server", origin(server));
    match resolved {
        Ok((metadata, AuthorizationMetadataSource::AuthorizationServerMetadata)) => {
            let issuer = metadata.issuer.clone().unwrap_or_else(|| origin(server));
            if let Some(prm) = synthesized(server, issuer, challenge) {
                return Ok(prm);
            }
        }
        Ok((metadata, _))
            if legacy_endpoint_exists(&client, &metadata.authorization_endpoint).await =>
        {
            if let Some(prm) = synthesized(server, origin(server), challenge) {
                return Ok(prm);
            }
        }
        Ok((metadata, _)) => tried.push(format!(
            "{well_known} and {} (no authorization server)",
            metadata.authorization_endpoint
        )),
        Err(e) => tried.push(format!("{well_known} ({e})")),
    }
    Err(HostError::new(
        ErrorCode::AuthDiscoveryFailed,
        format!("OAuth discovery failed; tried {}", tried.join(", ")),
    ))
}

/// The sign-in's guard against a silent fallback (MCP 2025-11-25
/// "Authorization › Security Considerations"): when the first valid RFC
/// 9728 document of `server` (found as [`discover`] finds it) names only
/// authorization servers the address rule refuses (a link-local, private
/// or unique-local address the server itself is not on, `http` to a
/// non-loopback host, `file:` or any other scheme), the error naming them
/// and the rule, instead of the server's own endpoints rmcp would fall
/// back to. `None` when no document is found or one named server is allowed.
pub async fn refused_authorization_servers(
    server: &Url,
    challenge: Option<&str>,
    network: &Arc<Network>,
) -> Option<HostError> {
    let client = Fetcher::new(server, network).ok()?;
    let challenge = AuthChallenge::from_header(challenge.unwrap_or(""), server);
    for url in candidates(server, &challenge) {
        let Ok(Ok(metadata)) = fetch(&client, &url).await.map(|doc| check(doc, server)) else {
            continue;
        };
        let named = metadata.authorization_servers.unwrap_or_default();
        let mut refused = Vec::new();
        for issuer in &named {
            let refuses = match Url::parse(issuer) {
                Ok(u) => client.policy.refuses(&u).await,
                Err(_) => true,
            };
            if refuses {
                refused.push(shown_issuer(issuer));
            }
        }
        if refused.len() < named.len() {
            return None;
        }
        return Some(HostError::new(
            ErrorCode::AuthFailed,
            format!(
                "sign-in failed: the protected resource metadata at {} names only authorization \
                 servers the host may not reach ({}): {}",
                origin(&url),
                refused.join(", "),
                crate::network::address_policy::RULE
            ),
        ));
    }
    None
}

/// An authorization server URL as shown in errors: its origin (or scheme
/// for a URL without a host, e.g. `file:`), never its path or query.
fn shown_issuer(issuer: &str) -> String {
    match Url::parse(issuer) {
        Ok(u) if u.host().is_some() => origin(&u),
        Ok(u) => format!("a {}: URL", u.scheme()),
        Err(_) => "a malformed URL".to_owned(),
    }
}

/// Builds the AHP `authRequired` state for a challenge (no token, no client
/// secret). Its `resource.resource` is shown without userinfo, query and
/// fragment when it has any ([`shown_server_url`]: a metadata document
/// made from, or echoing, a server URL with `?api_key=…` must not carry it
/// into the session state); `authenticate` matches that shown form, and the
/// sign-in itself sends the server's own URL as RFC 8707 `resource`.
pub fn requirement(
    challenge: &AuthChallenge,
    had_token: bool,
    mut resource: ProtectedResourceMetadata,
    client_id: Option<&str>,
) -> McpServerAuthRequiredState {
    if let Ok(url) = Url::parse(&resource.resource) {
        let secret_bearing = url.query().is_some() || url.fragment().is_some();
        if secret_bearing || !url.username().is_empty() || url.password().is_some() {
            resource.resource = shown_server_url(&url);
        }
    }
    let reason = match challenge.status {
        ChallengeStatus::InsufficientScope => McpAuthRequiredReason::InsufficientScope,
        ChallengeStatus::Unauthorized if had_token => McpAuthRequiredReason::Expired,
        ChallengeStatus::Unauthorized => McpAuthRequiredReason::Required,
    };
    let mut scopes = challenge.scopes();
    if scopes.is_empty() {
        scopes = resource.scopes_supported.clone().unwrap_or_default();
    }
    McpServerAuthRequiredState {
        reason,
        oauth_client: client_id.map(|id| McpOAuthClient {
            client_id: id.to_owned(),
            client_secret: None,
        }),
        resource,
        required_scopes: (!scopes.is_empty()).then_some(scopes),
        description: challenge
            .params
            .error_description
            .as_deref()
            .map(|text| crate::redact::shown(text).into_owned()),
    }
}

/// 2025-03-26 servers without RFC 9728 metadata publish RFC 8414 metadata at
/// the root of their origin, sometimes with an `issuer` on a sub-path, which
/// rmcp's strict issuer check refuses. Accepted only without protected
/// resource metadata and only when the issuer has the server's own origin
/// (so no other origin can mix in).
pub async fn legacy_metadata(
    server: &Url,
    network: &Arc<Network>,
) -> Option<AuthorizationMetadata> {
    let client = Fetcher::new(server, network).ok()?;
    let url = Url::parse(&format!(
        "{}/.well-known/oauth-authorization-server",
        origin(server)
    ))
    .ok()?;
    let doc = fetch(&client, &url).await.ok()?;
    let metadata: AuthorizationMetadata = serde_json::from_value(doc).ok()?;
    let issuer = Url::parse(metadata.issuer.as_deref()?).ok()?;
    (issuer.origin() == server.origin()).then_some(metadata)
}

/// 2025-03-26 default-endpoint fallback: only when the server really serves
/// its default authorization endpoint (anything but 404 / no answer).
async fn legacy_endpoint_exists(client: &Fetcher, endpoint: &str) -> bool {
    let Ok(endpoint) = Url::parse(endpoint) else {
        return false;
    };
    match client.get(&endpoint, "*/*").await {
        Ok(r) => r.status() != reqwest::StatusCode::NOT_FOUND,
        Err(_) => false,
    }
}

fn candidates(server: &Url, challenge: &AuthChallenge) -> Vec<Url> {
    let mut out: Vec<Url> = Vec::new();
    if let Some(u) = &challenge.params.resource_metadata_url {
        out.push(u.clone());
    }
    let base = origin(server);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        if let Ok(u) = Url::parse(&format!(
            "{base}/.well-known/oauth-protected-resource{path}"
        )) {
            out.push(u);
        }
    }
    if let Ok(u) = Url::parse(&format!("{base}/.well-known/oauth-protected-resource")) {
        out.push(u);
    }
    out.dedup();
    out
}

/// GETs a JSON document of at most [`MAX_AUTH_METADATA_BYTES`].
async fn fetch(client: &Fetcher, url: &Url) -> Result<serde_json::Value, String> {
    let response = client.get(url, "application/json").await?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status().as_u16()));
    }
    if response
        .content_length()
        .is_some_and(|n| n as usize > MAX_AUTH_METADATA_BYTES)
    {
        return Err(format!("larger than {MAX_AUTH_METADATA_BYTES} bytes"));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| client.network.describe(&e, url, "read failed"))?;
        if body.len() + chunk.len() > MAX_AUTH_METADATA_BYTES {
            return Err(format!("larger than {MAX_AUTH_METADATA_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
}

/// RFC 9728 §3.3: the document must be an object whose `resource` identifies this server.
fn check(doc: serde_json::Value, server: &Url) -> Result<ProtectedResourceMetadata, String> {
    if !doc.is_object() {
        return Err("not a JSON object".to_owned());
    }
    let metadata: ProtectedResourceMetadata =
        serde_json::from_value(doc).map_err(|e| format!("malformed metadata: {e}"))?;
    let resource =
        Url::parse(&metadata.resource).map_err(|_| "\"resource\" is not a URL".to_owned())?;
    if !same_resource(&resource, server) {
        return Err(format!(
            "\"resource\" {} does not match the server URL",
            metadata.resource
        ));
    }
    if metadata
        .authorization_servers
        .as_ref()
        .is_none_or(Vec::is_empty)
    {
        return Err("no \"authorization_servers\"".to_owned());
    }
    Ok(metadata)
}

/// `resource` identifies `server` when it has the same origin and its path is
/// a prefix of the server's path (MCP: the canonical server URI).
fn same_resource(resource: &Url, server: &Url) -> bool {
    resource.origin() == server.origin()
        && server
            .path()
            .starts_with(resource.path().trim_end_matches('/'))
}

/// A minimal document for a server without RFC 9728 metadata whose origin
/// publishes authorization server metadata.
pub(super) fn synthesized(
    server: &Url,
    issuer: String,
    challenge: &AuthChallenge,
) -> Option<ProtectedResourceMetadata> {
    let mut doc =
        serde_json::json!({ "resource": server.as_str(), "authorization_servers": [issuer] });
    if let Some(scope) = &challenge.params.scope {
        doc["scopes_supported"] = serde_json::json!(scope.split_whitespace().collect::<Vec<_>>());
    }
    serde_json::from_value(doc).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn candidates_follow_spec_order() {
        let server = url("https://mcp.example.test/tools/mcp");
        let c = AuthChallenge::from_header(
            r#"Bearer resource_metadata="https://mcp.example.test/prm""#,
            &server,
        );
        let list: Vec<String> = candidates(&server, &c)
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            list,
            [
                "https://mcp.example.test/prm",
                "https://mcp.example.test/.well-known/oauth-protected-resource/tools/mcp",
                "https://mcp.example.test/.well-known/oauth-protected-resource",
            ]
        );
    }

    #[test]
    fn check_rejects_mismatched_and_malformed_documents() {
        let server = url("https://mcp.example.test/mcp");
        let ok = serde_json::json!({"resource": "https://mcp.example.test/mcp", "authorization_servers": ["https://as.example.test"]});
        assert!(check(ok, &server).is_ok());
        let other = serde_json::json!({"resource": "https://evil.example.test/mcp", "authorization_servers": ["https://as.example.test"]});
        assert!(check(other, &server)
            .unwrap_err()
            .contains("does not match"));
        assert!(check(serde_json::json!([1]), &server)
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(check(serde_json::json!({"resource": 3}), &server)
            .unwrap_err()
            .contains("malformed"));
        let no_as = serde_json::json!({"resource": "https://mcp.example.test/mcp"});
        assert!(check(no_as, &server)
            .unwrap_err()
            .contains("authorization_servers"));
    }
}
