//! A DPoP-bound token on Streamable HTTP requests (RFC 9449 §7.1; the MCP
//! DPoP extension, SEP-1932): [`DpopClient`] wraps the pooled client and,
//! for every request that carries a token, sends `Authorization: DPoP
//! <token>` and a fresh `DPoP` proof for that method and URL with the
//! token's hash (`ath`) and the MCP server's newest nonce. rmcp's
//! `AuthClient` sits on top of it, as for a bearer token (it adds the token,
//! refreshes it before expiry and once on a 401).
//!
//! A 401 `DPoP error="use_dpop_nonce"` (RFC 9449 §9) is answered once:
//! rmcp's HTTP client reports the challenge but not its `DPoP-Nonce`
//! header, so the client learns the nonce from a `ping` sent with a proof
//! (the MCP server checks proofs before it reads the request) and then sends
//! the refused request again with it. The refused request was never served,
//! so nothing runs twice.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRequest,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use url::Url;

use crate::auth::dpop::{self, DpopKey, DpopKeys, DPOP_NONCE_HEADER, DPOP_SCHEME};
use crate::error::{ErrorCode, HostError, HostResult};

type HttpError = StreamableHttpError<reqwest::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// The body of the request that learns a nonce: a JSON-RPC `ping`.
const NONCE_PING: &str = r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#;

/// The pooled client presenting DPoP-bound tokens with proofs of `key`.
#[derive(Clone)]
pub struct DpopClient {
    /// The pooled client with the redirect policy.
    pub inner: reqwest::Client,
    /// The key the token is bound to (a secret).
    pub key: Arc<DpopKey>,
}

impl DpopClient {
    /// `custom` plus, when a token is presented, its `Authorization: DPoP`
    /// and a fresh proof (both marked sensitive).
    fn headers(
        &self,
        mut custom: Headers,
        method: &str,
        uri: &str,
        token: Option<&str>,
    ) -> Result<Headers, HttpError> {
        let Some(token) = token else {
            return Ok(custom);
        };
        let proof = self
            .key
            .proof(method, uri, Some(token))
            .map_err(|e| StreamableHttpError::Io(std::io::Error::other(e.message)))?;
        let invalid =
            || StreamableHttpError::Io(std::io::Error::other("token not usable in a header"));
        let mut authorization =
            HeaderValue::from_str(&format!("{DPOP_SCHEME} {token}")).map_err(|_| invalid())?;
        authorization.set_sensitive(true);
        let mut proof = HeaderValue::from_str(&proof).map_err(|_| invalid())?;
        proof.set_sensitive(true);
        custom.insert(AUTHORIZATION, authorization);
        custom.insert(HeaderName::from_static("dpop"), proof);
        Ok(custom)
    }

    /// Runs `call` with the DPoP headers; on a `use_dpop_nonce` challenge,
    /// learns the nonce and runs it once more.
    async fn send<T, F, Fut>(
        &self,
        (method, uri, session): (&str, &str, Option<&str>),
        token: Option<&str>,
        custom: &Headers,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Headers) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let first = call(self.headers(custom.clone(), method, uri, token)?).await;
        let challenge = match &first {
            Err(StreamableHttpError::AuthRequired(c)) => Some(c.www_authenticate_header.clone()),
            _ => None,
        };
        let (Some(challenge), Some(token)) = (challenge, token) else {
            return first;
        };
        let asks = Url::parse(uri).is_ok_and(|url| dpop::is_nonce_challenge(&challenge, &url));
        if !asks || !self.learn_nonce(uri, session, token, custom).await {
            return first;
        }
        call(self.headers(custom.clone(), method, uri, Some(token))?).await
    }

    /// Sends a `ping` with a proof and remembers the `DPoP-Nonce` of the
    /// answer. Whether a new nonce was learned.
    async fn learn_nonce(
        &self,
        uri: &str,
        session: Option<&str>,
        token: &str,
        custom: &Headers,
    ) -> bool {
        let standard = |name: &HeaderName| {
            let name = name.as_str();
            name == "mcp-method" || name == "mcp-name" || name.starts_with("mcp-param-")
        };
        let kept: Headers = custom
            .iter()
            .filter(|(name, _)| !standard(name))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let Ok(headers) = self.headers(kept, "POST", uri, Some(token)) else {
            return false;
        };
        let mut request = self
            .inner
            .post(uri)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header("mcp-method", "ping")
            .body(NONCE_PING);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let Ok(response) = request.send().await else {
            return false;
        };
        response
            .headers()
            .get(DPOP_NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|nonce| self.key.remember_nonce(uri, nonce))
    }
}

type StreamResult = Result<
    futures::stream::BoxStream<
        'static,
        Result<sse_stream::Sse, rmcp::transport::streamable_http_client::SseError>,
    >,
    HttpError,
>;

impl StreamableHttpClient for DpopClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let target = ("POST", &*uri, session_id.as_deref());
        self.send(target, auth_token.as_deref(), &custom_headers, |headers| {
            let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
            self.inner
                .post_message_with_response_limits(uri, message, session_id, None, headers, limits)
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), HttpError> {
        let target = ("DELETE", &*uri, Some(&*session_id));
        self.send(target, auth_token.as_deref(), &custom_headers, |headers| {
            let (uri, session_id) = (uri.clone(), session_id.clone());
            self.inner.delete_session(uri, session_id, None, headers)
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: Headers,
    ) -> StreamResult {
        let target = ("GET", &*uri, session_id.as_deref());
        self.send(target, auth_token.as_deref(), &custom_headers, |headers| {
            let (uri, session_id, last) = (uri.clone(), session_id.clone(), last_event_id.clone());
            self.inner.get_stream(uri, session_id, last, None, headers)
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> StreamResult {
        let target = ("GET", &*uri, session_id.as_deref());
        self.send(target, auth_token.as_deref(), &custom_headers, |headers| {
            let (uri, session_id, last) = (uri.clone(), session_id.clone(), last_event_id.clone());
            self.inner.get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last,
                None,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}

/// The server's DPoP key when the tokens of `oauth` are DPoP-bound
/// (`token_type: "DPoP"`), else `None`.
///
/// # Errors
/// Those of [`DpopKeys::key_for`].
pub async fn bound_key(
    oauth: &AuthClient<reqwest::Client>,
    keys: &DpopKeys,
    server: &Url,
) -> HostResult<Option<Arc<DpopKey>>> {
    let bound = match oauth.auth_manager.lock().await.get_credentials().await {
        Ok((_, Some(token))) => dpop::is_bound(&token),
        _ => false,
    };
    match bound {
        true => keys.key_for(server.as_str()).map(Some),
        false => Ok(None),
    }
}

/// rmcp's `AuthClient` over a [`DpopClient`], sharing the authorization
/// manager (tokens, refresh) of `oauth`.
///
/// `AuthClient` is `#[non_exhaustive]` and is only built from an owned
/// manager: it is built with a placeholder manager (no HTTP client, never
/// used) whose place the shared one then takes.
///
/// # Errors
/// `internal` when the placeholder cannot be made.
pub async fn dpop_auth_client(
    oauth: &AuthClient<reqwest::Client>,
    client: DpopClient,
    server: &Url,
) -> HostResult<AuthClient<DpopClient>> {
    let placeholder =
        AuthorizationManager::new_with_oauth_http_client(server.as_str(), Arc::new(NoOAuthHttp))
            .await
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("DPoP client: {e}")))?;
    let mut authorized = AuthClient::new(client, placeholder);
    authorized.auth_manager = oauth.auth_manager.clone();
    Ok(authorized)
}

/// The placeholder's OAuth HTTP client: refuses every request.
struct NoOAuthHttp;

impl OAuthHttpClient for NoOAuthHttp {
    fn execute(&self, _request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async { Err("placeholder: no OAuth requests".into()) })
    }
}
