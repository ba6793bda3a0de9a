//! The per-server state machine.
//!
//! ```text
//! stopped ──Start──▶ starting ──initialize ok──▶ ready ──crash──▶ error ──backoff──▶ starting …
//!                        │                         │                 └─restart limit─▶ error (until Start)
//!                        └──fail/timeout──▶ error  └──Stop──▶ stopped
//! ```
//!
//! Restart policy: only a crash after `ready` restarts automatically, after
//! `restart_backoff_ms * 2^(n-1)` (capped), at most `max_restarts` times in a
//! row; the counter resets once the server stayed up `restart_reset_after_ms`.
//! A failed start (bad command, handshake failure, timeout) stays in `error`
//! until a start request. A server the user stopped is never restarted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ahp_types::state::{
    McpServerAuthRequiredState, McpServerReadyState, McpServerStartingState, McpServerState,
    McpServerStoppedState,
};
use rmcp::service::{Peer, RoleClient};
use tokio::sync::{mpsc, oneshot, watch};

use super::client::Notice;
use super::connect::{self, Connection, HttpAuth, OpenFailure, TransportSpec};
use super::discovery;
use super::{Command, HostShared, LiveConnection, ServerLive, ServerSpec, ToolsChangeReason};
use crate::auth::{self, AuthChallenge};
use crate::catalogue::ServerTools;
use crate::error::{
    ErrorCode, ErrorDetail, HostError, HostResult, AHP_AUTH_REQUIRED, JSONRPC_INVALID_PARAMS,
};
use crate::events::{log, LogLevel};
use crate::limits::LIST_CHANGED_DEBOUNCE_MS;
use crate::session::error_state;
use crate::transport::noise::OversizeIds;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};

/// How a ready period ended.
enum Ended {
    Stopped,
    Restart,
    Shutdown(tokio::sync::oneshot::Sender<()>),
    Crashed(String),
    /// The session became unusable (refused refresh, refused redirect).
    Failed(HostError, Option<String>),
    Disposed,
}

/// What the actor should do after a command arrived while not serving.
enum Next {
    Run,
    Idle,
    Exit,
}

/// What happened while waiting in `authRequired`.
enum AuthWait {
    Retry,
    Stopped,
    Exit,
}

struct Actor {
    shared: Arc<HostShared>,
    spec: ServerSpec,
    live: Arc<ServerLive>,
    commands: mpsc::UnboundedReceiver<Command>,
    /// Bearer token pushed with `authenticate` (a secret: never logged or emitted).
    token: Option<String>,
    /// The pending `authenticate` caller, answered after the next connect attempt.
    auth_reply: Option<oneshot::Sender<HostResult<()>>>,
    /// Authorization manager of a host-run sign-in (tokens + refresh).
    oauth: Option<AuthClient<reqwest::Client>>,
    /// Stored credentials were already tried since the last `ready`.
    restore_tried: bool,
    /// Skip the `starting` state once: a retry after `authenticate` stays
    /// `authRequired` until it succeeds.
    quiet_start: bool,
}

/// Refuses an `authenticate` that reached a server not waiting for one.
fn refuse_auth(reply: oneshot::Sender<HostResult<()>>) {
    let _ = reply.send(Err(HostError::new(
        ErrorCode::InvalidParams,
        "the server is not waiting for authentication",
    )
    .with_detail(ErrorDetail::Ahp {
        rpc_code: JSONRPC_INVALID_PARAMS,
        resources: None,
    })));
}

/// AHP `AuthRequired` (-32007) for a token the server refused.
fn token_refused(requirement: &McpServerAuthRequiredState) -> HostError {
    HostError::new(
        ErrorCode::AuthRequired,
        format!(
            "the server refused the token for {}",
            requirement.resource.resource
        ),
    )
    .with_detail(ErrorDetail::Ahp {
        rpc_code: AHP_AUTH_REQUIRED,
        resources: Some(vec![requirement.resource.clone()]),
    })
}

pub(super) async fn run(
    shared: Arc<HostShared>,
    spec: ServerSpec,
    live: Arc<ServerLive>,
    commands: mpsc::UnboundedReceiver<Command>,
    start: bool,
) {
    let disposed = shared.disposed.clone();
    let actor = Actor {
        shared,
        spec,
        live,
        commands,
        token: None,
        auth_reply: None,
        oauth: None,
        restore_tried: false,
        quiet_start: false,
    };
    tokio::select! {
        _ = actor.main(start) => {}
        _ = disposed.cancelled() => {}
    }
}

impl Actor {
    fn set_state(&self, state: McpServerState) {
        self.shared.set_server_state(&self.spec.id, state);
    }

    fn answer_auth(&mut self, outcome: HostResult<()>) {
        if let Some(reply) = self.auth_reply.take() {
            let _ = reply.send(outcome);
        }
    }

    /// Waits in `authRequired` for `authenticate`, a start, a stop or shutdown.
    async fn wait_for_auth(&mut self) -> AuthWait {
        loop {
            match self.commands.recv().await {
                Some(Command::Authenticate { token, reply }) if token.is_empty() => {
                    self.token = None;
                    let _ = reply.send(Ok(()));
                }
                Some(Command::Authenticate { token, reply }) => {
                    self.token = Some(token);
                    self.auth_reply = Some(reply);
                    return AuthWait::Retry;
                }
                Some(Command::UseOAuth { manager, reply }) => {
                    self.use_oauth(manager, reply);
                    return AuthWait::Retry;
                }
                Some(Command::Start) => return AuthWait::Retry,
                Some(Command::SetEnabled(true))
                | Some(Command::ConnectionFailed(..))
                | Some(Command::StepUpToken(_)) => {}
                Some(Command::Stop) | Some(Command::SetEnabled(false)) => return AuthWait::Stopped,
                Some(Command::Shutdown(ack)) => {
                    self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                    let _ = ack.send(());
                    return AuthWait::Exit;
                }
                None => return AuthWait::Exit,
            }
        }
    }

    /// Switches to the tokens of a host-run sign-in; `reply` is answered
    /// after the next connect attempt.
    fn use_oauth(
        &mut self,
        manager: Box<AuthorizationManager>,
        reply: oneshot::Sender<HostResult<()>>,
    ) {
        // The HTTP client inside is replaced per connection (see `HttpAuth::OAuth`).
        self.oauth = Some(AuthClient::new(reqwest::Client::new(), *manager));
        self.token = None;
        if let Some(previous) = self.auth_reply.replace(reply) {
            let _ = previous.send(Err(HostError::new(
                ErrorCode::Cancelled,
                "superseded by a newer sign-in",
            )));
        }
    }

    /// `authRequired` until something happens: `Some(true)` retry (quietly),
    /// `Some(false)` stopped or failed (state already set), `None` exit the actor.
    async fn await_authentication(&mut self, challenge: &AuthChallenge) -> Option<bool> {
        match self.enter_auth_required(challenge).await {
            Some(AuthWait::Retry) => {
                self.quiet_start = true;
                Some(true)
            }
            Some(AuthWait::Stopped) => {
                self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                Some(false)
            }
            Some(AuthWait::Exit) => None,
            None => Some(false),
        }
    }

    /// Handles a 401/403 at connect: discovery, then the `authRequired` state.
    /// Returns `None` when discovery failed (the state is then `error`).
    async fn enter_auth_required(&mut self, challenge: &AuthChallenge) -> Option<AuthWait> {
        let TransportSpec::StreamableHttp(cfg) = &self.spec.transport else {
            return None;
        };
        let url = cfg.url.clone();
        match auth::discover(&url, challenge).await {
            Ok(resource) => {
                // Credentials from an earlier sign-in (this or a previous host): reconnect without a browser.
                if !self.restore_tried && self.oauth.is_none() && self.token.is_none() {
                    self.restore_tried = true;
                    let issuer = resource
                        .authorization_servers
                        .iter()
                        .flatten()
                        .next()
                        .cloned()
                        .unwrap_or_default();
                    if let Some(manager) = auth::flow::restore(
                        &url,
                        &issuer,
                        &self.shared.secrets,
                        &self.shared.refresh_locks,
                    )
                    .await
                    {
                        self.log(
                            LogLevel::Info,
                            "signing in with stored credentials".to_owned(),
                        );
                        self.oauth = Some(AuthClient::new(reqwest::Client::new(), manager));
                        return Some(AuthWait::Retry);
                    }
                }
                let had_token = self.token.is_some() || self.oauth.is_some();
                let client_id = self
                    .spec
                    .oauth_client
                    .as_ref()
                    .map(|c| c.client_id.as_str());
                let requirement = auth::requirement(challenge, had_token, resource, client_id);
                self.live.set_challenge(Some(challenge.header.clone()));
                self.answer_auth(Err(token_refused(&requirement)));
                self.set_state(McpServerState::AuthRequired(Box::new(requirement)));
                Some(self.wait_for_auth().await)
            }
            Err(e) => {
                self.log(LogLevel::Error, e.message.clone());
                self.answer_auth(Err(e.clone()));
                self.set_state(error_state(e.code.as_str(), e.message));
                None
            }
        }
    }

    fn log(&self, level: LogLevel, message: String) {
        self.shared
            .log(log(level, "host.supervisor", Some(&self.spec.id), message));
    }

    async fn main(mut self, start: bool) {
        let mut running = start;
        let mut crashes: u32 = 0;
        if !start {
            self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
        }
        loop {
            if !running {
                match self.idle_command().await {
                    Next::Run => {
                        running = true;
                        crashes = 0;
                    }
                    Next::Idle => {}
                    Next::Exit => return,
                }
                continue;
            }
            if !std::mem::take(&mut self.quiet_start) {
                self.set_state(McpServerState::Starting(McpServerStartingState::default()));
            }
            let mut signed_in = None;
            let opened = {
                let (oauth, token) = (self.oauth.clone(), self.token.clone());
                let credentials = match (&oauth, &token) {
                    (Some(manager), _) => HttpAuth::OAuth(manager),
                    (None, Some(token)) => HttpAuth::Bearer(token),
                    (None, None) => HttpAuth::None,
                };
                let open = open(&self.shared, &self.spec, &self.live, credentials);
                tokio::pin!(open);
                loop {
                    tokio::select! {
                        r = &mut open => break Some(r),
                        cmd = self.commands.recv() => match cmd {
                            // Already starting: nothing to do.
                            Some(Command::SetEnabled(true)) => {}
                            Some(Command::Authenticate { reply, .. }) => refuse_auth(reply),
                            Some(Command::ConnectionFailed(..)) | Some(Command::StepUpToken(_)) => {}
                            Some(Command::UseOAuth { manager, reply }) => {
                                signed_in = Some((manager, reply));
                                break None;
                            }
                            // Restart: drop this attempt (its process group is killed).
                            Some(Command::Start) => break None,
                            Some(Command::Stop) | Some(Command::SetEnabled(false)) => {
                                running = false;
                                break None;
                            }
                            Some(Command::Shutdown(ack)) => {
                                self.shared.set_server_state(&self.spec.id, McpServerState::Stopped(McpServerStoppedState {}));
                                let _ = ack.send(());
                                return;
                            }
                            None => return,
                        },
                    }
                }
            };
            if let Some((manager, reply)) = signed_in {
                self.use_oauth(manager, reply);
            }
            let Some(opened) = opened else {
                if !running {
                    self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                }
                continue;
            };
            let (conn, closed_tx, catalogue_changed) = match opened {
                Ok(v) => {
                    self.live.set_challenge(None);
                    self.restore_tried = false;
                    v
                }
                Err(OpenFailure::Failed(e)) => {
                    self.log(LogLevel::Error, format!("start failed: {}", e.message));
                    self.answer_auth(Err(e.clone()));
                    self.set_state(error_state(e.code.as_str(), e.message));
                    running = false;
                    continue;
                }
                Err(OpenFailure::AuthRequired(challenge)) => {
                    match self.await_authentication(&challenge).await {
                        Some(keep_running) => running = keep_running,
                        None => return,
                    }
                    continue;
                }
            };
            let ready_at = Instant::now();
            self.set_state(McpServerState::Ready(McpServerReadyState {}));
            if catalogue_changed {
                self.shared
                    .publish_tools(&self.spec.id, ToolsChangeReason::Ready);
            }
            // `authenticate` / `authorize` resolve only once `ready` is in the state.
            self.answer_auth(Ok(()));
            let ended = self.serve(conn, &closed_tx).await;
            self.live.set(None);
            self.shared
                .set_tools(&self.spec.id, None, ToolsChangeReason::Stopped);
            match ended {
                Ended::Stopped => {
                    running = false;
                    self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                }
                Ended::Restart => crashes = 0,
                Ended::Shutdown(ack) => {
                    self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                    let _ = ack.send(());
                    return;
                }
                Ended::Disposed => return,
                Ended::Failed(e, challenge) => {
                    let base = match &self.spec.transport {
                        TransportSpec::StreamableHttp(cfg) => Some(cfg.url.clone()),
                        TransportSpec::Stdio(..) => None,
                    };
                    match (e.code, challenge, base) {
                        (ErrorCode::AuthRequired, Some(header), Some(base)) => {
                            match self
                                .await_authentication(&AuthChallenge::from_header(&header, &base))
                                .await
                            {
                                Some(keep_running) => running = keep_running,
                                None => return,
                            }
                        }
                        _ => {
                            self.log(LogLevel::Error, e.message.clone());
                            self.set_state(error_state(e.code.as_str(), e.message));
                            running = false;
                        }
                    }
                }
                Ended::Crashed(reason) => {
                    let limits = self.shared.limits;
                    if ready_at.elapsed() >= Duration::from_millis(limits.restart_reset_after_ms) {
                        crashes = 0;
                    }
                    crashes += 1;
                    let message = format!("server {reason}");
                    self.log(LogLevel::Error, message.clone());
                    if crashes > limits.max_restarts {
                        let message = format!(
                            "{message}; restart limit reached ({} restarts)",
                            limits.max_restarts
                        );
                        self.set_state(error_state("server_exited", message));
                        running = false;
                        continue;
                    }
                    self.set_state(error_state("server_exited", message));
                    let delay = limits.restart_delay_ms(crashes);
                    self.log(
                        LogLevel::Info,
                        format!(
                            "restarting in {delay} ms (restart {crashes} of {})",
                            limits.max_restarts
                        ),
                    );
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        cmd = self.commands.recv() => match cmd {
                            Some(Command::Start) => crashes = 0,
                            Some(Command::SetEnabled(true)) => {}
                            Some(Command::Authenticate { reply, .. }) => refuse_auth(reply),
                            Some(Command::ConnectionFailed(..)) | Some(Command::StepUpToken(_)) => {}
                            Some(Command::UseOAuth { manager, reply }) => {
                                self.use_oauth(manager, reply);
                                crashes = 0;
                            }
                            Some(Command::Stop) | Some(Command::SetEnabled(false)) => {
                                running = false;
                                self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                            }
                            Some(Command::Shutdown(ack)) => {
                                self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                                let _ = ack.send(());
                                return;
                            }
                            None => return,
                        },
                    }
                }
            }
        }
    }

    /// Waits for a command while the server is not running.
    async fn idle_command(&mut self) -> Next {
        match self.commands.recv().await {
            Some(Command::Start) | Some(Command::SetEnabled(true)) => Next::Run,
            Some(Command::Authenticate { reply, .. }) => {
                refuse_auth(reply);
                Next::Idle
            }
            Some(Command::UseOAuth { manager, reply }) => {
                self.use_oauth(manager, reply);
                Next::Run
            }
            Some(Command::ConnectionFailed(..)) | Some(Command::StepUpToken(_)) => Next::Idle,
            Some(Command::Stop) | Some(Command::SetEnabled(false)) => {
                self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                Next::Idle
            }
            Some(Command::Shutdown(ack)) => {
                self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
                let _ = ack.send(());
                Next::Exit
            }
            None => Next::Exit,
        }
    }

    /// Serves a ready connection until it ends.
    async fn serve(
        &mut self,
        mut conn: Connection,
        closed_tx: &watch::Sender<Option<String>>,
    ) -> Ended {
        let peer = conn.peer.clone();
        let oversize = conn.oversize.clone();
        let mut notices = std::mem::replace(&mut conn.notices, mpsc::unbounded_channel().1);
        let mut notices_open = true;
        let mut relist_at: Option<tokio::time::Instant> = None;
        let ended = {
            let gone = conn.ended();
            tokio::pin!(gone);
            loop {
                let relist = async {
                    match relist_at {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    cmd = self.commands.recv() => match cmd {
                        Some(Command::SetEnabled(true)) => {}
                        Some(Command::Authenticate { reply, .. }) => refuse_auth(reply),
                        Some(Command::UseOAuth { manager, reply }) => {
                            self.use_oauth(manager, reply);
                            break Ended::Restart;
                        }
                        Some(Command::ConnectionFailed(e, challenge)) => break Ended::Failed(e, challenge),
                        Some(Command::StepUpToken(token)) => self.token = Some(token),
                        Some(Command::Stop) | Some(Command::SetEnabled(false)) => break Ended::Stopped,
                        Some(Command::Start) => break Ended::Restart,
                        Some(Command::Shutdown(ack)) => break Ended::Shutdown(ack),
                        None => break Ended::Disposed,
                    },
                    notice = notices.recv(), if notices_open => match notice {
                        Some(Notice::ToolsChanged) => {
                            relist_at = Some(tokio::time::Instant::now() + Duration::from_millis(LIST_CHANGED_DEBOUNCE_MS));
                        }
                        None => notices_open = false,
                    },
                    _ = relist => {
                        relist_at = None;
                        if let Some(tools) = discover(&self.shared, &self.spec, &peer, oversize.as_ref()).await {
                            self.log(LogLevel::Info, format!("tools/list_changed: now {} tools", tools.tools.len()));
                            self.shared.set_tools(&self.spec.id, Some(tools), ToolsChangeReason::ListChanged);
                        }
                    }
                    reason = &mut gone => break Ended::Crashed(reason),
                }
            }
        };
        match &ended {
            Ended::Crashed(reason) => {
                let _ = closed_tx.send(Some(format!("server {reason}")));
                conn.discard().await;
            }
            _ => {
                let _ = closed_tx.send(Some("server was stopped".to_owned()));
                conn.close().await;
            }
        }
        ended
    }
}

/// Connects, initializes and discovers tools; publishes the live connection
/// and the server's tools.
async fn open(
    shared: &Arc<HostShared>,
    spec: &ServerSpec,
    live: &ServerLive,
    auth: HttpAuth<'_>,
) -> Result<(Connection, watch::Sender<Option<String>>, bool), OpenFailure> {
    let conn = connect::open(
        shared,
        &spec.id,
        &spec.transport,
        spec.startup_timeout,
        auth,
    )
    .await?;
    // A server may accept `initialize` unauthenticated and challenge the first real request.
    let listing = tokio::time::timeout(
        spec.startup_timeout,
        list_tools(shared, spec, &conn.peer, conn.oversize.as_ref()),
    )
    .await;
    let tools = match listing {
        Ok(Err(discovery::ListFailure::Auth(header))) => {
            conn.close().await;
            let base = match &spec.transport {
                TransportSpec::StreamableHttp(cfg) => cfg.url.clone(),
                TransportSpec::Stdio(..) => {
                    return Err(HostError::new(
                        ErrorCode::ProtocolError,
                        "tools/list asked a stdio server for authorization",
                    )
                    .into())
                }
            };
            return Err(OpenFailure::AuthRequired(AuthChallenge::from_header(
                &header, &base,
            )));
        }
        // The first listing failed: the server is usable (resources, prompts,
        // direct calls) but lists no tools; the diagnostic says why.
        first => report_listing(shared, spec, first)
            .unwrap_or_else(|e| Arc::new(ServerTools::failed(&spec.id, e.message))),
    };
    let (closed_tx, closed) = watch::channel(None);
    live.set(Some(LiveConnection {
        peer: conn.peer.clone(),
        closed,
        redirect_refused: conn.redirect_refused.clone(),
        progress: conn.progress.clone(),
        bearer: conn.bearer.clone(),
        oversize: conn.oversize.clone(),
    }));
    let changed = shared.update_tools(&spec.id, Some(tools));
    Ok((conn, closed_tx, changed))
}

/// One `tools/list` walk, checked into [`ServerTools`].
async fn list_tools(
    shared: &HostShared,
    spec: &ServerSpec,
    peer: &Peer<RoleClient>,
    oversize: Option<&OversizeIds>,
) -> Result<ServerTools, discovery::ListFailure> {
    let limits = &shared.limits;
    let raw = discovery::list_all(
        peer,
        oversize,
        &spec.id,
        "tools/list",
        "tools",
        limits,
        (limits.max_tools_per_server, "maxToolsPerServer"),
    )
    .await?;
    ServerTools::build(&spec.id, raw, limits).map_err(discovery::ListFailure::Failed)
}

/// Re-lists tools; `None` keeps the previous catalogue (a failed refresh is atomic).
async fn discover(
    shared: &HostShared,
    spec: &ServerSpec,
    peer: &Peer<RoleClient>,
    oversize: Option<&OversizeIds>,
) -> Option<Arc<ServerTools>> {
    let listing = tokio::time::timeout(
        spec.startup_timeout,
        list_tools(shared, spec, peer, oversize),
    )
    .await;
    report_listing(shared, spec, listing).ok()
}

/// Logs every diagnostic of a listing, or why it failed.
fn report_listing(
    shared: &HostShared,
    spec: &ServerSpec,
    listing: Result<Result<ServerTools, discovery::ListFailure>, tokio::time::error::Elapsed>,
) -> Result<Arc<ServerTools>, HostError> {
    let warn =
        |level, message: String| shared.log(log(level, "host.catalogue", Some(&spec.id), message));
    let error = match listing {
        Ok(Ok(found)) => {
            for d in &found.diagnostics {
                warn(LogLevel::Warn, format!("tool {:?}: {}", d.tool, d.reason));
            }
            return Ok(Arc::new(found));
        }
        Ok(Err(discovery::ListFailure::Failed(e))) => e,
        Ok(Err(discovery::ListFailure::Auth(_))) => HostError::new(
            ErrorCode::AuthRequired,
            format!("tools/list on {} was refused (authorization)", spec.id),
        ),
        Err(_) => HostError::new(
            ErrorCode::Timeout,
            format!("tools/list on {} timed out", spec.id),
        ),
    };
    warn(
        LogLevel::Error,
        format!("{}; the previous tool list is kept", error.message),
    );
    Err(error)
}
