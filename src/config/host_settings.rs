//! Host-side server settings that are not part of `mcp.json`: the MCP
//! protocol era a server is spoken to in ([`ProtocolSetting`]), and the
//! pre-registered OAuth client of `addServer({oauth})` and of plugin server
//! overrides (MCP 2025-11-25 "Authorization"; SEP-1046 client credentials;
//! SEP-990 enterprise-managed authorization).
//!
//! Secrets (`clientSecret`, `privateKeyPem`, the IdP's `clientSecret`) never
//! enter state, logs or error messages: [`OAuthClientSetting`]'s `Debug`
//! redacts them.

/// A pre-registered OAuth client (`oauth: {clientId, clientSecret?}` of
/// `addServer` / plugin server overrides, parsed by the binding's
/// `JsOAuthClient`). The secret never enters state.
#[derive(Clone)]
pub struct OAuthClientSetting {
    /// The client id registered with the authorization server.
    pub client_id: String,
    /// Its secret, for confidential clients.
    pub client_secret: Option<String>,
    /// `authorizationCode` (default: a user signs in in a browser),
    /// `clientCredentials` (OAuth 2.1 client credentials grant, SEP-1046: no
    /// user; `clientSecret` or `privateKeyPem` authenticates the client),
    /// `enterpriseManaged` (SEP-990) or `jwtBearer` (SEP-1933 workload
    /// identity federation).
    pub grant: OAuthGrant,
    /// PEM private key for `private_key_jwt` client authentication (RFC 7523).
    pub private_key_pem: Option<String>,
    /// JWS algorithm of `privateKeyPem`: `ES256` (default), `ES384`, `RS256`, `RS384`, `RS512`.
    pub signing_algorithm: Option<String>,
    /// The enterprise identity provider of `grant: "enterpriseManaged"`.
    pub idp: Option<IdpSetting>,
}

/// An enterprise IdP for enterprise-managed authorization (SEP-990 cross-app
/// access; parsed by the binding's `JsIdp`).
#[derive(Clone)]
pub struct IdpSetting {
    /// The IdP's issuer.
    pub issuer: String,
    /// Its token endpoint (RFC 8693 token exchange).
    pub token_endpoint: String,
    /// This app's client id at the IdP.
    pub client_id: String,
    /// Its secret at the IdP, if confidential (a secret).
    pub client_secret: Option<String>,
}

/// OAuth grant a pre-registered client uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthGrant {
    /// Authorization code with PKCE: a user signs in.
    #[default]
    AuthorizationCode,
    /// Client credentials: machine-to-machine, no user.
    ClientCredentials,
    /// Enterprise-managed (SEP-990 cross-app access): an enterprise ID token
    /// (given to `authorize`) is exchanged at the IdP for an ID-JAG (RFC 8693),
    /// which the MCP authorization server redeems (RFC 7523 JWT bearer).
    EnterpriseManaged,
    /// Workload identity federation (SEP-1933): a workload JWT (given to
    /// `authorize` as `assertion`) is redeemed at the MCP authorization
    /// server with the RFC 7523 §2.1 JWT-bearer grant. No user, no refresh.
    JwtBearer,
}

/// Which MCP revision a server is spoken to in (`protocol` of `addServer` /
/// plugin server overrides).
///
/// MCP 2026-07-28 "Lifecycle" (stateless: `server/discover`, per-request
/// `_meta`) and its "Backward Compatibility" section: a client probes with
/// `server/discover` and falls back to the 2025-era `initialize` handshake
/// when the server answers with a JSON-RPC error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
pub enum ProtocolSetting {
    /// `"auto"` (default): `server/discover` first; on a JSON-RPC error (or
    /// no answer within rmcp's probe time, 10 s) the 2025-11-25 `initialize`
    /// handshake on the same connection.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// `"2026-07-28"`: `server/discover` only; a server that does not speak
    /// it fails to start (`protocol_error`).
    #[serde(rename = "2026-07-28")]
    Stateless,
    /// `"legacy"`: the `initialize` handshake only (offering 2025-11-25), for
    /// servers that misbehave on the `server/discover` probe.
    #[serde(rename = "legacy")]
    Legacy,
}

impl std::fmt::Debug for OAuthClientSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientSetting")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("grant", &self.grant)
            .field(
                "private_key_pem",
                &self.private_key_pem.as_ref().map(|_| "…"),
            )
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp.as_ref().map(|i| &i.issuer))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_secrets() {
        let setting = OAuthClientSetting {
            client_id: "app".into(),
            client_secret: Some("s3cret-client".into()),
            grant: OAuthGrant::EnterpriseManaged,
            private_key_pem: Some("-----BEGIN PRIVATE KEY-----pem-secret".into()),
            signing_algorithm: None,
            idp: Some(IdpSetting {
                issuer: "https://idp.example.test".into(),
                token_endpoint: "https://idp.example.test/token".into(),
                client_id: "idp-app".into(),
                client_secret: Some("idp-s3cret".into()),
            }),
        };
        let shown = format!("{setting:?}");
        assert!(shown.contains("app") && shown.contains("EnterpriseManaged"));
        assert!(shown.contains("https://idp.example.test"));
        for secret in ["s3cret-client", "pem-secret", "idp-s3cret"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }

    #[test]
    fn protocol_setting_reads_the_three_documented_values_only() {
        let read = |v: &str| serde_json::from_value::<ProtocolSetting>(serde_json::json!(v));
        assert_eq!(read("auto").ok(), Some(ProtocolSetting::Auto));
        assert_eq!(read("2026-07-28").ok(), Some(ProtocolSetting::Stateless));
        assert_eq!(read("legacy").ok(), Some(ProtocolSetting::Legacy));
        assert!(read("2025-11-25").is_err() && read("Auto").is_err());
        assert_eq!(ProtocolSetting::default(), ProtocolSetting::Auto);
    }
}
