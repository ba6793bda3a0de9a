//! AHP `authenticate` (a client hands over a token) and host-run `authorize`
//! (the host signs in itself), MCP 2025-11-25 "Authorization" and AHP 1.0
//! "Authentication".

use std::collections::HashMap;
use std::time::Duration;

use ahp_types::state::{McpServerAuthRequiredState, McpServerState, ProtectedResourceMetadata};

use super::Host;
use crate::auth::flow::{ClientIdentity, Overrides, SignIn, UserFlow};
use crate::auth::grant::{run_grant, Grant, Granted};
use crate::auth::redirect::Redirect;
use crate::auth::step_up::{require_scopes, ResumableCall};
use crate::config::{OAuthClientSetting, OAuthGrant};
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, JSONRPC_INVALID_PARAMS};
use crate::events::{DeviceCodePrompt, HostEvent};
use crate::mcp::TransportSpec;
use crate::session;
use crate::supervisor::{Command, ServerHandle};

/// AHP `authenticate` command parameters (AHP 1.0 "Authentication").
/// `Debug` never shows the token.
#[derive(Clone)]
pub struct AuthenticateArgs {
    /// The protected resource identifier (`resource` of the advertised RFC 9728 metadata).
    pub resource: String,
    /// Bearer access token; empty revokes. A secret: never logged or emitted.
    pub token: String,
    /// Seconds until the token expires, as the client computed it.
    pub expires_in: Option<u64>,
    /// Scopes the token grants; when given they must cover `requiredScopes`.
    pub scopes: Option<Vec<String>>,
}

impl std::fmt::Debug for AuthenticateArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticateArgs")
            .field("resource", &self.resource)
            .field("token", &"…")
            .field("expires_in", &self.expires_in)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// One host-run sign-in (the binding builds it from the JS `authorize`
/// options, the timeout by [`Authorize::timeout_of`]).
/// `Debug` never shows the ID token or the assertion.
#[derive(Clone, PartialEq, Eq)]
pub struct Authorize {
    /// Scopes to request; empty: the challenge's, else `scopes_supported`, else none.
    pub scopes: Vec<String>,
    /// Time allowed for the user to finish (1 ms ..= 24 h; default 5 min).
    pub timeout: Duration,
    /// Enterprise ID token for `grant: "enterpriseManaged"` (a secret).
    pub id_token: Option<String>,
    /// Workload JWT for `grant: "jwtBearer"` (a secret).
    pub assertion: Option<String>,
    /// A redirect URI the app handles (a private-use scheme, a claimed
    /// `https` URL; RFC 8252 §7): registered and sent instead of the
    /// loopback listener's, which is not opened; the app hands the callback
    /// back with [`Host::complete_authorization`]. Checked as RFC 8252 §7
    /// wants (`invalid_argument`, `options.redirectUri: …`): at most 2 KiB,
    /// absolute, no fragment or userinfo, `https`, `http` to loopback, or a
    /// private-use scheme other than the browser's own.
    pub redirect_uri: Option<String>,
    /// Authorization code or device authorization grant (see [`UserFlow`]).
    pub flow: UserFlow,
}

impl std::fmt::Debug for Authorize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorize")
            .field("scopes", &self.scopes)
            .field("timeout", &self.timeout)
            .field("id_token", &self.id_token.as_ref().map(|_| "…"))
            .field("assertion", &self.assertion.as_ref().map(|_| "…"))
            .field("redirect_uri", &self.redirect_uri)
            .field("flow", &self.flow)
            .finish()
    }
}

/// Servers in `authRequired` for one resource: (server id, that state).
type AuthTargets = Vec<(String, McpServerAuthRequiredState)>;

/// The error of a server that went away while it was being authenticated.
fn server_gone() -> HostError {
    HostError::new(ErrorCode::NotFound, "the server is gone")
}

impl Host {
    /// AHP `authenticate`: hands a token to every chat tool call paused on a
    /// step-up challenge or a refused (expired) token for `resource` (the
    /// latter's server reconnects with it first, see
    /// [`Host::call_tool`]), or else to every server whose live
    /// `authRequired` state advertises `resource`; resolves once one of
    /// those servers is `ready` with it.
    ///
    /// # Errors
    /// `invalid_params` (data `{code: -32602, resources}`) when nothing
    /// waits for `resource`; `auth_required` (data `{code: -32007,
    /// resources: [resource]}`) when `scopes` do not cover the required
    /// scopes (nothing is retried) or the server still refuses the token
    /// (the calls paused on a refused token then fail with it); `disposed`.
    pub async fn authenticate(&self, args: AuthenticateArgs) -> HostResult<()> {
        self.check_live()?;
        let paused = self.shared.step_up().take_for_resource(
            &args.resource,
            &args.token,
            args.scopes.as_deref(),
        )?;
        if !paused.is_empty() {
            return self.resume_paused(paused, &args.token).await;
        }
        let (targets, mut advertised) = self.auth_required_for(&args.resource);
        // Lock order: the step-up waits are never taken under the session lock.
        advertised.extend(self.shared.step_up().advertised_resources());
        if targets.is_empty() {
            return Err(HostError::new(
                ErrorCode::InvalidParams,
                format!(
                    "{} is not a protected resource this host is waiting for",
                    args.resource
                ),
            )
            .with_detail(ErrorDetail::Ahp {
                rpc_code: JSONRPC_INVALID_PARAMS,
                resources: Some(advertised),
            }));
        }
        if let Some(granted) = args.scopes.as_deref().filter(|_| !args.token.is_empty()) {
            for (_, req) in &targets {
                let required = req.required_scopes.as_deref().unwrap_or_default();
                require_scopes(&req.resource, required, granted)?;
            }
        }
        let replies: Vec<_> = {
            let reg = self.registry();
            targets
                .iter()
                .filter_map(|(id, _)| reg.servers.get(id).cloned())
                .map(|handle| {
                    let (reply, rx) = tokio::sync::oneshot::channel();
                    let token = args.token.clone();
                    handle.send(Command::Authenticate { token, reply });
                    rx
                })
                .collect()
        };
        let mut last = Err(server_gone());
        for outcome in futures::future::join_all(replies).await {
            match outcome {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => last = Err(e),
                Err(_) => {}
            }
        }
        last
    }

    /// Hands `token` to the servers of the chat tool calls `paused` for it,
    /// then resumes the calls. A step-up call's server takes the token on
    /// its live connection; the server of a call whose token it refused
    /// (401) reconnects with it (`Command::Authenticate`, like
    /// `authenticate` for a server in `authRequired`), once per server.
    ///
    /// # Errors
    /// The first refusal of such a reconnect (`auth_required` -32007 when
    /// the server refuses the token again; `invalid_params` when it is no
    /// longer waiting): that server's calls fail with it.
    async fn resume_paused(&self, paused: Vec<ResumableCall>, token: &str) -> HostResult<()> {
        let (reconnect, step_up): (Vec<_>, Vec<_>) =
            paused.into_iter().partition(|call| call.reconnect);
        for call in step_up {
            self.install_step_up_token(&call.server_id, token).await;
            call.resume();
        }
        let mut servers: Vec<&str> = reconnect.iter().map(|c| c.server_id.as_str()).collect();
        servers.sort_unstable();
        servers.dedup();
        let mut outcomes = HashMap::new();
        for id in servers {
            let handle = self.registry().servers.get(id).cloned();
            let outcome = match handle {
                Some(handle) => {
                    let (reply, rx) = tokio::sync::oneshot::channel();
                    let token = token.to_owned();
                    handle.send(Command::Authenticate { token, reply });
                    rx.await.unwrap_or_else(|_| Err(server_gone()))
                }
                None => Err(server_gone()),
            };
            outcomes.insert(id.to_owned(), outcome);
        }
        let mut first = Ok(());
        for call in reconnect {
            match outcomes.get(&call.server_id) {
                Some(Err(e)) => {
                    call.refuse(e.clone());
                    first = first.and(Err(e.clone()));
                }
                _ => call.resume(),
            }
        }
        first
    }

    /// The servers whose live `authRequired` state advertises `resource`
    /// (id and that state), and every advertised resource.
    fn auth_required_for(&self, resource: &str) -> (AuthTargets, Vec<ProtectedResourceMetadata>) {
        self.shared.publisher().read_state(|state| {
            let mut targets = Vec::new();
            let mut advertised = Vec::new();
            for server in session::mcp_servers(state) {
                if let McpServerState::AuthRequired(req) = &server.state {
                    advertised.push(req.resource.clone());
                    if req.resource.resource == resource {
                        targets.push((server.id.clone(), (**req).clone()));
                    }
                }
            }
            (targets, advertised)
        })
    }

    /// Hands a step-up `token` to server `server_id`'s actor, the only
    /// writer of its credentials: it switches the live connection to the
    /// token (no reconnect: other calls keep running) and reuses it on
    /// reconnect. Resolves once the connection uses it.
    async fn install_step_up_token(&self, server_id: &str, token: &str) {
        let handle = self.registry().servers.get(server_id).cloned();
        if let Some(handle) = handle {
            handle.step_up_token(token.to_owned()).await;
        }
    }

    /// Host-run sign-in for Streamable HTTP server `server_id` (see
    /// `crate::auth::flow`) with the grant of its `oauth` setting (see
    /// `crate::auth::grant`). The app receives the authorization URL (or,
    /// for a device authorization grant, the verification URL and user
    /// code) as an `authorizationUrl` event and opens or shows it; the host
    /// never opens a browser. The callback arrives at the loopback listener
    /// or from the app ([`Host::complete_authorization`]; with
    /// `args.redirect_uri` only from the app). Resolves once the server is
    /// `ready` with the new tokens; chat tool calls paused on that server
    /// then retry once.
    ///
    /// A denied consent, a wrong `state`, a failed exchange or a timeout ends
    /// the attempt: the server stays `authRequired` with the reason as its
    /// `description`, the redirect port is freed, and nothing is retried.
    ///
    /// # Errors
    /// `not_found`, `invalid_argument` (not an HTTP server; an
    /// enterprise-managed grant without `oauth.idp` or `idToken`; a
    /// `redirect_uri` the RFC 8252 checks refuse), `not_supported` (a
    /// device grant the authorization server does not advertise),
    /// `auth_failed`, `auth_denied`, `timeout`, `cancelled`, `disposed`.
    pub async fn authorize(&self, server_id: &str, args: Authorize) -> HostResult<()> {
        self.check_live()?;
        let handle = self.server(server_id)?;
        let client = handle.spec.oauth_client.clone();
        let grant = grant_of(
            client.as_ref(),
            (args.id_token.clone(), args.assertion.clone()),
        )?;
        let opts = self.sign_in_options(&handle, args)?;
        let (ticket, pasted) = self.sign_ins.open(server_id);
        let (sink, id) = (self.shared.publisher().sink().clone(), server_id.to_owned());
        let (sign_ins, ticket_id) = (self.sign_ins.clone(), ticket.id());
        let announce = move |url: String, device_code: Option<DeviceCodePrompt>| {
            if device_code.is_none() {
                sign_ins.ready(&id, ticket_id, &url);
            }
            let server_id = id;
            sink.send(HostEvent::AuthorizationUrl {
                server_id,
                url,
                device_code,
            });
        };
        let secrets = self.shared.credentials().secrets();
        let locks = self.shared.credentials().refresh_locks();
        // `timeoutMs` bounds the whole sign-in, the token exchange too (a
        // response that trickles), not only the wait for the redirect.
        let limit = opts.timeout;
        let bounded = async move {
            let run = run_grant(grant, &opts, (secrets, locks), pasted, announce);
            tokio::time::timeout(limit, run).await.unwrap_or_else(|_| {
                let ms = limit.as_millis();
                let text = format!("the sign-in did not complete within {ms} ms (timeoutMs)");
                Err(HostError::new(ErrorCode::Timeout, text))
            })
        };
        let granted = self.until_disposed(bounded).await;
        let outcome = match granted {
            Ok(Granted::AccessToken(token)) => {
                let (reply, rx) = tokio::sync::oneshot::channel();
                handle.send(Command::Authenticate { token, reply });
                rx.await.unwrap_or_else(|_| Err(server_gone()))
            }
            Ok(Granted::Manager(manager)) => self.use_oauth(&handle, manager).await,
            Err(e) => {
                self.describe_auth_failure(&handle, &e.message).await;
                Err(e)
            }
        };
        ticket.finish(&outcome);
        outcome
    }

    /// The options of a sign-in to `handle`'s server with `args`: its URL
    /// and challenge, the client identity and overrides of its `oauth`
    /// setting, the redirect (the app's URI, else the loopback listener on
    /// the server's `oauth.callbackPort`, else the host's
    /// `oauthRedirectPort`, else a random port).
    ///
    /// # Errors
    /// `invalid_argument`: not an HTTP server; a refused `redirect_uri`.
    fn sign_in_options(&self, handle: &ServerHandle, args: Authorize) -> HostResult<SignIn> {
        let TransportSpec::StreamableHttp(cfg) = &handle.spec.transport else {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("{} is not a Streamable HTTP server", handle.id),
            ));
        };
        let client = handle.spec.oauth_client.as_ref();
        let redirect = match &args.redirect_uri {
            Some(uri) => Redirect::app(uri)?,
            None => Redirect::Loopback {
                port: client
                    .and_then(|c| c.callback_port)
                    .or(self.oauth.redirect_port)
                    .unwrap_or(0),
            },
        };
        Ok(SignIn {
            server: cfg.url.clone(),
            challenge: handle.live.challenge(),
            identity: ClientIdentity {
                client_id: client.and_then(|c| c.client_id.clone()),
                client_secret: client.and_then(|c| c.client_secret.clone()),
                client_metadata_url: self.oauth.client_metadata_url.clone(),
                client_name: self.shared.opener().client_info().client_info.name.clone(),
            },
            scopes: args.scopes,
            redirect,
            flow: args.flow,
            overrides: Overrides::from(client),
            timeout: args.timeout,
            dpop: self.shared.opener().dpop_keys().clone(),
            network: self.shared.opener().network().clone(),
        })
    }

    /// Hands a signed-in manager to the server's actor; once the server is
    /// `ready` with it, resumes the chat tool calls paused on it.
    async fn use_oauth(
        &self,
        handle: &ServerHandle,
        manager: Box<rmcp::transport::auth::AuthorizationManager>,
    ) -> HostResult<()> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        handle.send(Command::UseOAuth { manager, reply });
        let outcome = rx.await.unwrap_or_else(|_| Err(server_gone()));
        if outcome.is_ok() {
            self.shared.step_up().resume_server(&handle.id);
        }
        outcome
    }

    /// Puts the reason of a failed sign-in into the server's `authRequired`
    /// state: its actor applies it only while it still shows that state.
    async fn describe_auth_failure(&self, handle: &ServerHandle, message: &str) {
        handle.auth_failed(message.to_owned()).await;
    }
}

/// The grant a server's `oauth` setting asks for.
///
/// # Errors
/// `invalid_argument` when an enterprise-managed grant has no `oauth.idp`,
/// or `authorize` got no `idToken` for it; when a JWT-bearer grant got no
/// `assertion`.
fn grant_of(
    setting: Option<&OAuthClientSetting>,
    (id_token, assertion): (Option<String>, Option<String>),
) -> HostResult<Grant> {
    let Some(s) = setting else {
        return Ok(Grant::AuthorizationCode);
    };
    Ok(match s.grant {
        OAuthGrant::AuthorizationCode => Grant::AuthorizationCode,
        OAuthGrant::ClientCredentials => Grant::ClientCredentials {
            private_key_pem: s.private_key_pem.clone(),
            signing_algorithm: s.signing_algorithm.clone(),
        },
        OAuthGrant::EnterpriseManaged => Grant::EnterpriseManaged {
            idp: s.idp.clone().ok_or_else(|| {
                HostError::new(
                    ErrorCode::InvalidArgument,
                    "oauth.idp is required for enterpriseManaged",
                )
            })?,
            client_secret: s.client_secret.clone(),
            id_token: id_token.ok_or_else(|| {
                HostError::new(
                    ErrorCode::InvalidArgument,
                    "authorize needs idToken for enterpriseManaged",
                )
            })?,
        },
        OAuthGrant::JwtBearer => Grant::JwtBearer {
            client_secret: s.client_secret.clone(),
            assertion: assertion.ok_or_else(|| {
                HostError::new(
                    ErrorCode::InvalidArgument,
                    "authorize needs assertion (the workload JWT) for jwtBearer",
                )
            })?,
        },
    })
}
