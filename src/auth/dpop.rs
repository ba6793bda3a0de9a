//! DPoP: sender-constrained access tokens (RFC 9449 "OAuth 2.0
//! Demonstrating Proof of Possession"; the MCP DPoP extension, SEP-1932,
//! `io.modelcontextprotocol/auth/dpop`).
//!
//! The host uses DPoP when the authorization server advertises `ES256` in
//! `dpop_signing_alg_values_supported` (RFC 9449 §5.1): every token request
//! carries a proof (§5), the access token comes back with `token_type:
//! "DPoP"`, and every MCP HTTP request presents it as `Authorization: DPoP
//! <token>` with a fresh proof bound to the method, the URL and the token's
//! hash (§4.2, §7.1). Server-provided nonces (§8 from the authorization
//! server, §9 from the MCP server) are remembered per origin and sent in
//! later proofs.
//!
//! One ES256 (P-256) key per host and MCP server ([`DpopKeys`]), generated
//! in memory with aws-lc-rs, never stored, never logged: a new host signs in
//! again (its stored DPoP-bound tokens are refused, their refresh fails).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse};
use sha2::{Digest, Sha256};
use url::Url;

use crate::error::{ErrorCode, HostError, HostResult};

/// The `Authorization` scheme of a DPoP-bound token (RFC 9449 §7.1), and
/// the `token_type` the authorization server answers with (§5).
pub const DPOP_SCHEME: &str = "DPoP";
/// The request header that carries a proof (RFC 9449 §4.1).
pub const DPOP_HEADER: &str = "DPoP";
/// The response header that carries a server-provided nonce (RFC 9449 §8).
pub const DPOP_NONCE_HEADER: &str = "DPoP-Nonce";
/// The OAuth error of a server that wants a nonce (RFC 9449 §8, §9).
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The one JWS algorithm the host signs proofs with.
pub const DPOP_ALGORITHM: &str = "ES256";

/// One DPoP key pair and the latest nonce each server gave for it.
pub struct DpopKey {
    /// PKCS#8 P-256 private key (a secret; never leaves this struct).
    signing: EncodingKey,
    /// Its public half, as the `jwk` proof header (no private member).
    jwk: Jwk,
    /// Latest `DPoP-Nonce` per origin (RFC 9449 §8.2: use the newest).
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey { .. }")
    }
}

/// The claims of a proof (RFC 9449 §4.2).
#[derive(serde::Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
}

impl DpopKey {
    /// A fresh ES256 key pair from the system's random source.
    ///
    /// # Errors
    /// `internal` when the key cannot be generated.
    pub fn generate() -> HostResult<Self> {
        let failed = |what: &str| {
            HostError::new(
                ErrorCode::Internal,
                format!("cannot create a DPoP key: {what}"),
            )
        };
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| failed("key generation failed"))?;
        let signing = EncodingKey::from_ec_der(pkcs8.as_ref());
        let jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256)
            .map_err(|_| failed("no public key"))?;
        Ok(Self {
            signing,
            jwk,
            nonces: Mutex::default(),
        })
    }

    /// A fresh proof JWT (RFC 9449 §4.2) for `method` on `url`: header
    /// `typ: dpop+jwt`, `alg: ES256`, the public `jwk`; claims `jti` (128
    /// random bits), `htm`, `htu` (`url` without query and fragment), `iat`
    /// (Unix seconds), `ath` (base64url SHA-256 of `access_token`, when one
    /// is presented) and `nonce` (the newest nonce of `url`'s origin).
    ///
    /// # Errors
    /// `internal` when signing fails; `invalid_argument` for a URL that does not parse.
    pub fn proof(&self, method: &str, url: &str, access_token: Option<&str>) -> HostResult<String> {
        let url = Url::parse(url).map_err(|_| {
            HostError::new(ErrorCode::InvalidArgument, "DPoP proof for an invalid URL")
        })?;
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        let claims = ProofClaims {
            jti: random_id()?,
            htm: method,
            htu: htu(&url),
            iat: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default(),
            ath: access_token.map(token_hash),
            nonce: self.nonce_for(&url),
        };
        jsonwebtoken::encode(&header, &claims, &self.signing)
            .map_err(|_| HostError::new(ErrorCode::Internal, "cannot sign a DPoP proof"))
    }

    /// The newest nonce `url`'s origin gave, if any.
    fn nonce_for(&self, url: &Url) -> Option<String> {
        self.nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&url.origin().ascii_serialization())
            .cloned()
    }

    /// Remembers a `DPoP-Nonce` answer of `url`'s origin (RFC 9449 §8.2, §9).
    /// Returns whether it differs from the one already known.
    pub fn remember_nonce(&self, url: &str, nonce: &str) -> bool {
        let Ok(url) = Url::parse(url) else {
            return false;
        };
        let origin = url.origin().ascii_serialization();
        let mut nonces = self.nonces.lock().unwrap_or_else(PoisonError::into_inner);
        nonces.insert(origin, nonce.to_owned()).as_deref() != Some(nonce)
    }

    /// The JWK SHA-256 thumbprint (RFC 7638) a DPoP-bound token names in `cnf.jkt`.
    #[cfg(test)]
    pub fn thumbprint(&self) -> String {
        self.jwk
            .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .unwrap_or_default()
    }
}

/// `htu`: the URL without query and fragment (RFC 9449 §4.2).
fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// `ath`: base64url (no padding) of the SHA-256 of the access token (RFC 9449 §4.2).
fn token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// A `jti`: 128 random bits, base64url.
fn random_id() -> HostResult<String> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| HostError::new(ErrorCode::Internal, "no random source for a DPoP proof"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The DPoP keys of one host: one per MCP server URL, made on first use.
#[derive(Default)]
pub struct DpopKeys {
    keys: Mutex<HashMap<String, Arc<DpopKey>>>,
}

impl std::fmt::Debug for DpopKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKeys { .. }")
    }
}

impl DpopKeys {
    /// The key for the MCP server at `resource` (made now if it has none).
    ///
    /// # Errors
    /// Those of [`DpopKey::generate`].
    pub fn key_for(&self, resource: &str) -> HostResult<Arc<DpopKey>> {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = keys.get(resource) {
            return Ok(key.clone());
        }
        let key = Arc::new(DpopKey::generate()?);
        keys.insert(resource.to_owned(), key.clone());
        Ok(key)
    }
}

/// Whether an authorization server takes ES256 DPoP proofs (its
/// `dpop_signing_alg_values_supported`, RFC 9449 §5.1).
pub fn supported_by(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some(DPOP_ALGORITHM)))
}

/// Whether a token response is DPoP-bound (`token_type: "DPoP"`, RFC 9449 §5).
pub fn is_bound(token: &OAuthTokenResponse) -> bool {
    use oauth2::TokenResponse;
    match token.token_type() {
        oauth2::basic::BasicTokenType::Extension(t) => t.eq_ignore_ascii_case(DPOP_SCHEME),
        _ => false,
    }
}

/// Whether a `WWW-Authenticate` challenge of the server at `url` asks for a
/// DPoP nonce (RFC 9449 §9: scheme `DPoP`, `error="use_dpop_nonce"`).
pub fn is_nonce_challenge(www_authenticate: &str, url: &Url) -> bool {
    let scheme = www_authenticate
        .split_whitespace()
        .next()
        .unwrap_or_default();
    scheme.eq_ignore_ascii_case(DPOP_SCHEME)
        && rmcp::transport::auth::WWWAuthenticateParams::parse(www_authenticate, url)
            .error
            .as_deref()
            == Some(USE_DPOP_NONCE)
}

#[cfg(test)]
mod tests;
