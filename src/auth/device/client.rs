//! The client a device authorization grant runs as, in the MCP order
//! ("Authorization › Client Registration"): the server's pre-registered
//! client (`oauth.clientId`, its secret), else the app's Client ID
//! Metadata Document when the authorization server supports CIMD (the
//! document must list the device grant), else a dynamic registration
//! (RFC 7591) for this grant. rmcp's `register_client` registers the
//! authorization code grant only, so this registration is made here:
//! `grant_types` [device code, `refresh_token`], no redirect URI, a public
//! `native` client.

use oauth2::HttpRequest;
use rmcp::transport::auth::AuthorizationMetadata;
use serde::Deserialize;

use super::super::oauth_http::OAuthHttp;
use super::super::setup::SignIn;
use super::DEVICE_CODE_GRANT;
use crate::error::{ErrorCode, HostError, HostResult};

/// What a registration answer must carry (RFC 7591 §3.2.1).
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
}

/// The client id of the grant, and its secret when it has one (a secret).
///
/// # Errors
/// `auth_failed` when there is no client (no pre-registered one, no CIMD,
/// no `registration_endpoint`) or the registration was refused.
pub(super) async fn identity(
    opts: &SignIn,
    metadata: &AuthorizationMetadata,
    http: &OAuthHttp,
    scopes: &[String],
) -> HostResult<(String, Option<String>)> {
    if let Some(id) = &opts.identity.client_id {
        return Ok((id.clone(), opts.identity.client_secret.clone()));
    }
    let cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        == Some(true);
    if let (true, Some(url)) = (cimd, &opts.identity.client_metadata_url) {
        return Ok((url.clone(), None));
    }
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(failed(
            "the authorization server has no registration_endpoint and no client is configured \
             (oauth.clientId, or clientMetadataUrl with CIMD)",
        ));
    };
    register(endpoint, &opts.identity.client_name, http, scopes).await
}

/// Registers a public native client for the device grant at `endpoint`.
async fn register(
    endpoint: &str,
    name: &str,
    http: &OAuthHttp,
    scopes: &[String],
) -> HostResult<(String, Option<String>)> {
    let mut body = serde_json::json!({
        "client_name": name,
        "grant_types": [DEVICE_CODE_GRANT, "refresh_token"],
        "response_types": [],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    if !scopes.is_empty() {
        body["scope"] = serde_json::Value::String(scopes.join(" "));
    }
    let request: HttpRequest = oauth2::http::Request::post(endpoint)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.to_string().into_bytes())
        .map_err(|e| failed(&format!("the registration request: {e}")))?;
    let response = http
        .exchange(&request, true, None)
        .await
        .map_err(|e| failed(&format!("the registration request failed: {e}")))?;
    if !response.status().is_success() {
        let text = String::from_utf8_lossy(response.body());
        let text: String = text.chars().take(300).collect();
        return Err(failed(&format!(
            "dynamic registration was refused: HTTP {}: {text}",
            response.status().as_u16()
        )));
    }
    let registered: Registered = serde_json::from_slice(response.body())
        .map_err(|_| failed("the registration answer names no client_id"))?;
    let secret = registered.client_secret.filter(|s| !s.is_empty());
    Ok((registered.client_id, secret))
}

/// Whether the authorization server takes the client secret in the body
/// only (`client_secret_post` without `client_secret_basic`), as rmcp
/// decides for its own token requests.
pub(super) fn posts_secret(metadata: &AuthorizationMetadata) -> bool {
    let methods = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|v| v.as_array());
    let has = |m: &str| methods.is_some_and(|a| a.iter().any(|v| v.as_str() == Some(m)));
    has("client_secret_post") && !has("client_secret_basic")
}

/// `auth_failed` for the device grant's client.
fn failed(what: &str) -> HostError {
    HostError::new(
        ErrorCode::AuthFailed,
        format!("device sign-in failed: {what}"),
    )
}
