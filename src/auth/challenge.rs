//! Recognising an authorization challenge in a failed MCP request.

use rmcp::transport::auth::WWWAuthenticateParams;

/// Which HTTP status carried the challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeStatus {
    /// 401: no token, or an invalid/expired one.
    Unauthorized,
    /// 403 with `error="insufficient_scope"`.
    InsufficientScope,
}

/// A `WWW-Authenticate` challenge from a Streamable HTTP server.
#[derive(Debug, Clone)]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: ChallengeStatus,
    /// Parsed parameters (`resource_metadata`, `scope`, `error`, `error_description`).
    pub params: WWWAuthenticateParams,
}

impl AuthChallenge {
    /// Classifies a `WWW-Authenticate` header (as returned by rmcp's
    /// `ClientInitializeError::auth_challenge` / `ServiceError::auth_challenge`):
    /// `error="insufficient_scope"` is a 403 step-up, anything else a 401.
    /// `base` resolves a relative `resource_metadata` URL.
    pub fn from_header(header: &str, base: &url::Url) -> Self {
        let params = WWWAuthenticateParams::parse(header, base);
        let status = if params.is_insufficient_scope() {
            ChallengeStatus::InsufficientScope
        } else {
            ChallengeStatus::Unauthorized
        };
        Self { status, params }
    }

    /// The challenge's `scope`, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        self.params
            .scope
            .as_deref()
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_and_parses_challenges() {
        let base =
            url::Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}"));
        let c = AuthChallenge::from_header(
            r#"Bearer resource_metadata="/.well-known/oauth-protected-resource/mcp", scope="a b""#,
            &base,
        );
        assert_eq!(c.status, ChallengeStatus::Unauthorized);
        assert_eq!(c.scopes(), ["a", "b"]);
        assert_eq!(
            c.params
                .resource_metadata_url
                .as_ref()
                .map(url::Url::as_str),
            Some("https://mcp.example.test/.well-known/oauth-protected-resource/mcp")
        );
        let c = AuthChallenge::from_header(
            r#"Bearer error="insufficient_scope", scope="files:write", error_description="need write""#,
            &base,
        );
        assert_eq!(c.status, ChallengeStatus::InsufficientScope);
        assert_eq!(c.params.error_description.as_deref(), Some("need write"));
    }
}
