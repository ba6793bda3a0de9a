//! Host-side server settings that are not part of `mcp.json`: the MCP
//! protocol era a server is spoken to in ([`ProtocolSetting`]), and the
//! pre-registered OAuth client of `addServer({oauth})` and of plugin server
//! overrides (MCP 2025-11-25 "Authorization"; SEP-1046 client credentials;
//! SEP-990 enterprise-managed authorization).
//!
//! Secrets (`clientSecret`, `privateKeyPem`, the IdP's `clientSecret`) never
//! enter state, logs or error messages: [`OAuthClientSetting`]'s `Debug`
//! redacts them.

/// A server's host-side OAuth setting (`oauth` of `addServer` / plugin
/// server overrides, parsed by the binding's `JsOAuthClient`): a
/// pre-registered client (`clientId`, `clientSecret?`, its grant) and the
/// server's overrides (pinned `scopes`, `authServerMetadataUrl`,
/// `callbackPort`, RFC 8707 `resource`). The secret never enters state.
#[derive(Clone, Default)]
pub struct OAuthClientSetting {
    /// The client id registered with the authorization server; `None`: no
    /// pre-registered client (CIMD, else dynamic registration).
    pub client_id: Option<String>,
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
    /// Scopes requested when `authorize` names none and no step-up
    /// challenge asks for more (Claude Code's `oauth.scopes`); empty: the
    /// challenge's, else `scopes_supported`.
    pub scopes: Vec<String>,
    /// RFC 8414 / OpenID Connect metadata URL of the authorization server
    /// (`https`, or `http` to loopback), read instead of RFC 9728 → RFC
    /// 8414 discovery (Claude Code's `oauth.authServerMetadataUrl`).
    pub auth_server_metadata_url: Option<url::Url>,
    /// Port of the loopback redirect listener for this server (wins over
    /// the host's `oauthRedirectPort`; Claude Code's `oauth.callbackPort`).
    pub callback_port: Option<u16>,
    /// The RFC 8707 `resource` indicator sent instead of the server's URL
    /// (Codex's `oauth_resource`).
    pub resource: Option<url::Url>,
}

impl OAuthClientSetting {
    /// Checks what the binding parsed: a secret or key needs a client id;
    /// `authServerMetadataUrl` is `https` (or `http` to a loopback host);
    /// `resource` is an absolute URI without a fragment (RFC 8707 §2).
    ///
    /// # Errors
    /// `invalid_argument` naming the field under `path` (`options.oauth`).
    pub fn checked(self, path: &str) -> crate::error::HostResult<Self> {
        use crate::error::{ErrorCode, HostError};
        let invalid = |field: &str, why: &str| {
            HostError::new(ErrorCode::InvalidArgument, format!("{path}.{field}: {why}"))
        };
        if self.client_id.is_none() {
            if self.client_secret.is_some() {
                return Err(invalid("clientSecret", "needs oauth.clientId"));
            }
            if self.private_key_pem.is_some() {
                return Err(invalid("privateKeyPem", "needs oauth.clientId"));
            }
        }
        if let Some(url) = &self.auth_server_metadata_url {
            let loopback = matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
            if !(url.scheme() == "https" || url.scheme() == "http" && loopback) {
                return Err(invalid(
                    "authServerMetadataUrl",
                    "must be an https URL (or http to a loopback host)",
                ));
            }
        }
        if self
            .resource
            .as_ref()
            .is_some_and(|r| r.fragment().is_some())
        {
            return Err(invalid(
                "resource",
                "must not have a fragment (RFC 8707 §2)",
            ));
        }
        Ok(self)
    }
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
            .field("scopes", &self.scopes)
            .field("auth_server_metadata_url", &self.auth_server_metadata_url)
            .field("callback_port", &self.callback_port)
            .field("resource", &self.resource)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_secrets() {
        let setting = OAuthClientSetting {
            client_id: Some("app".into()),
            client_secret: Some("s3cret-client".into()),
            grant: OAuthGrant::EnterpriseManaged,
            private_key_pem: Some("-----BEGIN PRIVATE KEY-----pem-secret".into()),
            idp: Some(IdpSetting {
                issuer: "https://idp.example.test".into(),
                token_endpoint: "https://idp.example.test/token".into(),
                client_id: "idp-app".into(),
                client_secret: Some("idp-s3cret".into()),
            }),
            ..Default::default()
        };
        let shown = format!("{setting:?}");
        assert!(shown.contains("app") && shown.contains("EnterpriseManaged"));
        assert!(shown.contains("https://idp.example.test"));
        for secret in ["s3cret-client", "pem-secret", "idp-s3cret"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }

    #[test]
    fn overrides_are_checked_naming_the_field() {
        let url = |s: &str| Some(url::Url::parse(s).unwrap());
        let ok = OAuthClientSetting {
            scopes: vec!["mcp:read".into()],
            auth_server_metadata_url: url(
                "https://as.example/.well-known/oauth-authorization-server",
            ),
            callback_port: Some(4711),
            resource: url("https://mcp.example/"),
            ..Default::default()
        };
        assert!(ok.checked("options.oauth").is_ok());
        let loopback = url("http://127.0.0.1:9/.well-known/openid-configuration");
        let local = OAuthClientSetting {
            auth_server_metadata_url: loopback,
            ..Default::default()
        };
        assert!(local.checked("options.oauth").is_ok());
        for (bad, field) in [
            (
                OAuthClientSetting {
                    client_secret: Some("s".into()),
                    ..Default::default()
                },
                "options.oauth.clientSecret: needs oauth.clientId",
            ),
            (
                OAuthClientSetting {
                    auth_server_metadata_url: url("http://as.example/meta"),
                    ..Default::default()
                },
                "options.oauth.authServerMetadataUrl: must be an https URL",
            ),
            (
                OAuthClientSetting {
                    resource: url("https://mcp.example/#x"),
                    ..Default::default()
                },
                "options.oauth.resource: must not have a fragment",
            ),
        ] {
            let e = bad.checked("options.oauth").unwrap_err();
            assert!(e.message.starts_with(field), "{}", e.message);
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
