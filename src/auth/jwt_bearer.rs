//! Workload identity federation (SEP-1933; the MCP extension
//! `io.modelcontextprotocol/auth/wif`): the app hands over a JWT its
//! workload platform issued (a Kubernetes service-account token, a CI OIDC
//! token, a SPIFFE JWT-SVID), and the host redeems it at the MCP server's
//! authorization server with the RFC 7523 §2.1 JWT-bearer grant:
//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, `assertion`,
//! RFC 8707 `resource`, `scope` when known, and the configured client
//! (`client_id`; HTTP Basic with `clientSecret` when one is configured).
//! No browser, no refresh: an expired token needs a new assertion.
//!
//! A refused request is reported, never retried with another grant or the
//! same assertion. rmcp's enterprise-managed module redeems only the ID-JAG
//! it obtained itself (its JWT-bearer step is not public), so the request
//! is built here.
//!
//! The assertion, the client secret and the access token are secrets: they
//! never appear in errors (an `error_description` that quotes the assertion
//! is cut).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use futures::StreamExt;
use url::Url;

use super::setup::{discovered, SignIn};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::MAX_OAUTH_RESPONSE_BYTES;
use crate::network::address_policy::AddressPolicy;

/// The RFC 7523 §2.1 grant type.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Longest `error_description` kept in an error message (characters).
const DESCRIPTION_CHARS: usize = 200;

/// Redeems `assertion` for an access token (a secret) for `opts.server`.
///
/// # Errors
/// `invalid_argument` (an empty assertion); `auth_failed` (discovery, a
/// token endpoint that is neither HTTPS nor loopback HTTP, a refused
/// request with its OAuth `error` and `error_description`, an unreadable
/// answer).
pub async fn jwt_bearer(
    opts: &SignIn,
    client_secret: Option<&str>,
    assertion: &str,
) -> HostResult<String> {
    if assertion.trim().is_empty() {
        return Err(HostError::new(
            ErrorCode::InvalidArgument,
            "authorize needs a non-empty assertion for jwtBearer",
        ));
    }
    let (_, metadata) = discovered(opts).await?;
    let policy = AddressPolicy::for_server(&opts.server, &opts.network);
    let endpoint = Url::parse(&metadata.token_endpoint)
        .ok()
        .filter(|u| secure(u) && policy.allows_url(u))
        .ok_or_else(|| {
            failed(format!(
                "the token endpoint {} is not an HTTPS (or loopback HTTP) URL this resource may use",
                metadata.token_endpoint
            ))
        })?;
    let scopes = match opts.scopes.is_empty() {
        true => opts.machine_scopes(),
        false => opts.scopes.clone(),
    };
    let client_id = opts.identity.client_id.as_deref();
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", JWT_BEARER_GRANT)
            .append_pair("assertion", assertion)
            .append_pair("resource", opts.resource().as_str());
        if !scopes.is_empty() {
            form.append_pair("scope", &scopes.join(" "));
        }
        if let (Some(id), None) = (client_id, client_secret) {
            form.append_pair("client_id", id);
        }
        form.finish()
    };
    let endpoint_url = endpoint.clone();
    let mut request = policy
        .http_client(false, &opts.network)?
        .post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    if let (Some(id), Some(secret)) = (client_id, client_secret) {
        request = request.header("authorization", basic(id, secret));
    }
    let response = request.body(body).send().await.map_err(|e| {
        let what = opts.network.describe(&e, &endpoint_url, "request failed");
        failed(format!("token request failed: {what}"))
    })?;
    let status = response.status();
    let body = read(response).await?;
    if !status.is_success() {
        return Err(refused(status.as_u16(), &body, assertion));
    }
    #[derive(serde::Deserialize)]
    struct TokenResponse {
        access_token: String,
    }
    serde_json::from_slice::<TokenResponse>(&body)
        .map(|t| t.access_token)
        .map_err(|_| failed("the token response has no access_token".to_owned()))
}

/// HTTPS, or HTTP to a loopback host.
fn secure(url: &Url) -> bool {
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    url.scheme() == "https" || (url.scheme() == "http" && loopback)
}

/// `client_secret_basic` (RFC 6749 §2.3.1: form-encoded, then Basic), marked sensitive.
fn basic(client_id: &str, secret: &str) -> reqwest::header::HeaderValue {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let credentials = STANDARD.encode(format!("{}:{}", encode(client_id), encode(secret)));
    let mut value = reqwest::header::HeaderValue::from_str(&format!("Basic {credentials}"))
        .unwrap_or_else(|_| reqwest::header::HeaderValue::from_static("Basic"));
    value.set_sensitive(true);
    value
}

/// At most [`MAX_OAUTH_RESPONSE_BYTES`] of the answer.
async fn read(response: reqwest::Response) -> HostResult<Vec<u8>> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| failed(format!("token response: {}", e.without_url())))?;
        if body.len() + chunk.len() > MAX_OAUTH_RESPONSE_BYTES {
            return Err(failed(format!(
                "the token response is larger than {MAX_OAUTH_RESPONSE_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The `auth_failed` of a refused token request (RFC 6749 §5.2): status,
/// OAuth `error` and a short `error_description` without the assertion.
fn refused(status: u16, body: &[u8], assertion: &str) -> HostError {
    #[derive(serde::Deserialize)]
    struct OAuthError {
        error: Option<String>,
        error_description: Option<String>,
    }
    let parsed = serde_json::from_slice::<OAuthError>(body).ok();
    let error = parsed.as_ref().and_then(|e| e.error.clone());
    let description = parsed.and_then(|e| e.error_description).map(|d| {
        d.replace(assertion, "…")
            .chars()
            .take(DESCRIPTION_CHARS)
            .collect::<String>()
    });
    let mut message =
        format!("the authorization server refused the workload identity (HTTP {status}");
    if let Some(error) = error {
        message.push_str(&format!(", {error}"));
    }
    if let Some(description) = description {
        message.push_str(&format!(": {description}"));
    }
    message.push(')');
    failed(message)
}

fn failed(message: String) -> HostError {
    HostError::new(ErrorCode::AuthFailed, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_oauth_error_but_never_the_assertion() {
        let assertion = "eyJhbGciOiJFUzI1NiJ9.secret-claims.sig";
        let body = format!(
            r#"{{"error":"invalid_grant","error_description":"bad assertion {assertion}"}}"#
        );
        let e = refused(400, body.as_bytes(), assertion);
        assert_eq!(e.code, ErrorCode::AuthFailed);
        assert!(
            e.message.contains("HTTP 400") && e.message.contains("invalid_grant"),
            "{}",
            e.message
        );
        assert!(!e.message.contains(assertion), "{}", e.message);
        let e = refused(500, b"<html>", assertion);
        assert!(e.message.contains("HTTP 500"), "{}", e.message);
    }

    #[test]
    fn only_https_or_loopback_http_token_endpoints() {
        let ok = |s: &str| secure(&Url::parse(s).unwrap_or_else(|e| panic!("{e}")));
        assert!(ok("https://as.example.test/token"));
        assert!(ok("http://localhost:8080/token") && ok("http://127.0.0.1/token"));
        assert!(!ok("http://as.example.test/token"));
    }

    #[test]
    fn basic_credentials_are_form_encoded_and_sensitive() {
        let value = basic("a b", "s:e");
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().ok(), Some("Basic YStiOnMlM0Fl"));
    }
}
