//! A server's actor (one tokio task per server): the loop only. It waits for
//! the next [`Input`] — a [`Command`] or an event of the current phase —
//! asks [`transition`] where to go, and runs the [`Effect`]s. What happens to
//! which input in which phase is decided in [`super::phase`] alone.
//!
//! The actor is the single writer of its server's state
//! (`session/mcpServerStateChanged`), live connection, catalogue entry and
//! credentials (bearer cell, pushed token, sign-in tokens).

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use ahp_types::state::{AhpMcpUiHostCapabilities, McpServerState};
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use tokio::sync::{mpsc, oneshot};

use super::connector::{
    open_listed, relist_tools, BoxFuture, Connector, Discovered, Opened, ServerConnection,
};
use super::launch::{LaunchPermit, Queued};
use super::phase::{transition, Closing, Discovery, Effect, Input, Machine, Phase, Rules};
use super::phase::{Secret, Supersede};
use super::{Command, HostShared};
use crate::apps::capabilities::host_capabilities;
use crate::auth::AuthChallenge;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel, ToolsChangeReason};
use crate::limits::LIST_CHANGED_DEBOUNCE_MS;
use crate::mcp::activity::Shown;
use crate::mcp::connect::HttpAuth;
use crate::mcp::request::RequestFailure;
use crate::mcp::TransportSpec;
use crate::mcp::{ServerLive, ServerSpec, ServerTasks};
use crate::policy::Admission;
use crate::redact::KeptSecret;
use crate::requests::ServerRequestKind;

#[cfg(test)]
mod tests;
mod waiting;

use waiting::{relist_credit, Waiting};

/// The parts of a command that are not plain data.
#[derive(Default)]
struct Payload {
    /// `authenticate` / sign-in reply.
    reply: Option<oneshot::Sender<HostResult<()>>>,
    /// A sign-in's authorization manager.
    manager: Option<Box<AuthorizationManager>>,
    /// Told once the command was handled.
    done: Option<oneshot::Sender<()>>,
}

/// Splits a received command (`None`: every sender is gone) into its input
/// and payload.
fn split(command: Option<Command>) -> (Input, Payload) {
    let mut payload = Payload::default();
    let input = match command {
        None => Input::CommandsClosed,
        Some(Command::Start | Command::Wake { .. }) => Input::Start,
        Some(Command::Stop) => Input::Stop,
        Some(Command::Background) => Input::Background,
        Some(Command::SetEnabled(on)) => Input::SetEnabled(on),
        Some(Command::Deny(error)) => Input::Denied(*error),
        Some(Command::Shutdown { why, done }) => {
            payload.done = Some(done);
            Input::Shutdown(why)
        }
        Some(Command::UseOAuth { manager, reply }) => {
            payload.manager = Some(manager);
            payload.reply = Some(reply);
            Input::UseOAuth
        }
        Some(Command::ConnectionFailed { error, challenge }) => Input::ConnectionFailed {
            error: *error,
            challenge,
        },
        Some(Command::StepUpToken { token, done }) => {
            payload.done = done;
            Input::StepUpToken(Secret(token))
        }
        Some(Command::Authenticate { token, reply }) => {
            payload.reply = Some(reply);
            Input::Authenticate(Secret(token))
        }
        Some(Command::AuthFailed { description, done }) => {
            payload.done = done;
            Input::AuthFailed(description)
        }
    };
    (input, payload)
}

/// One server's actor.
pub(super) struct Actor<C: Connector> {
    shared: Arc<HostShared>,
    spec: Arc<ServerSpec>,
    live: Arc<ServerLive>,
    connector: Arc<C>,
    commands: mpsc::UnboundedReceiver<Command>,
    tasks: ServerTasks,
    rules: Rules,
    machine: Machine,
    /// Authorization manager of a host-run sign-in (tokens + refresh).
    oauth: Option<AuthClient<reqwest::Client>>,
    /// The pending `authenticate` / sign-in caller, answered after the next attempt.
    held: Option<oneshot::Sender<HostResult<()>>>,
    waiting: Waiting<C::Connection>,
    /// A stdio server's place in the launch queue, taken when the actor is
    /// created (so first starts go in configuration order); used by the
    /// first start, dropped after the first step otherwise.
    queued: Option<Queued>,
    /// The pushed token in use and its [`KeptSecret`] ([`Actor::keep_token`]).
    kept_token: Option<(String, Option<KeptSecret>)>,
    /// A lazy server's idle time before it is stopped (`None`: never).
    idle_stop: Option<Duration>,
    /// The first step: a start, or [`Input::Dormant`] / [`Input::Blocked`].
    first: Begin,
}

/// How a new actor takes its server (see [`super::ServerHandle::start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Begin {
    /// Starts it at once.
    #[default]
    Start,
    /// Leaves it `stopped`: a lazy server whose cached tools the host
    /// published ([`Input::Dormant`]).
    Dormant,
    /// Leaves it in the `error` the host published: the policy denied it
    /// when it was added ([`Input::Blocked`]).
    Blocked,
}

/// Runs `actor` (starting its server at once) until it exits or the
/// server's token (a child of the host's `disposed`) is cancelled; the
/// token cuts even an effect in progress (a close, a discovery), dropping
/// the connection (its process group is killed).
pub(super) async fn run<C: Connector>(actor: Actor<C>) {
    let cancel = actor.tasks.cancel.clone();
    let (shared, id) = (actor.shared.clone(), actor.spec.id.clone());
    tokio::select! {
        _ = actor.main() => {}
        _ = cancel.cancelled() => {}
    }
    // Disposed (no state is emitted then): no channel outlives the actor.
    shared.publisher().close_app_channel(&id);
}

impl<C: Connector> Actor<C> {
    pub(super) fn new(
        shared: Arc<HostShared>,
        spec: Arc<ServerSpec>,
        live: Arc<ServerLive>,
        connector: Arc<C>,
        commands: mpsc::UnboundedReceiver<Command>,
        tasks: ServerTasks,
    ) -> Self {
        let stdio = matches!(spec.transport, TransportSpec::Stdio(..));
        let queued = stdio.then(|| shared.launches().queue());
        let idle_stop = spec
            .start
            .idle_stop
            .unwrap_or(Duration::from_millis(shared.limits().idle_stop_ms));
        let idle_stop = (spec.start.is_lazy() && !idle_stop.is_zero()).then_some(idle_stop);
        let rules = Rules {
            limits: *shared.limits(),
            endpoint: match &spec.transport {
                TransportSpec::StreamableHttp(cfg) => Some(cfg.url.clone()),
                TransportSpec::Stdio(..) => None,
            },
            client_id: spec.oauth_client.as_ref().and_then(|c| c.client_id.clone()),
            headers_provider: !stdio && shared.opener().header_provider().is_some(),
            required: spec.start.required,
            lazy: spec.start.is_lazy(),
        };
        Self {
            shared,
            spec,
            live,
            connector,
            commands,
            tasks,
            rules,
            machine: Machine::default(),
            oauth: None,
            held: None,
            waiting: Waiting::Nothing,
            queued,
            kept_token: None,
            idle_stop,
            first: Begin::Start,
        }
    }

    /// This actor, taking its server as `first` says.
    pub(super) fn begin(self, first: Begin) -> Self {
        Self { first, ..self }
    }

    async fn main(mut self) {
        let first = match self.first {
            Begin::Start => Input::Start,
            Begin::Dormant => Input::Dormant,
            Begin::Blocked => Input::Blocked,
        };
        Box::pin(self.step(first, Payload::default())).await;
        self.queued = None;
        while self.machine.phase != Phase::Exited {
            let (input, payload) = tokio::select! {
                command = self.commands.recv() => {
                    if self.stale(command.as_ref()) {
                        continue;
                    }
                    split(command)
                }
                input = Box::pin(self.waiting.next()) => (input, Payload::default()),
                _ = self.tasks.cancel.cancelled() => (Input::Disposed, Payload::default()),
            };
            Box::pin(self.step(input, payload)).await;
        }
    }

    /// Whether `command` is a [`Command::Wake`] for a shown state that is
    /// no longer shown (ignored: the call waits on what came since).
    fn stale(&self, command: Option<&Command>) -> bool {
        let shown = self.live.activity().shown_count();
        matches!(command, Some(Command::Wake { seen }) if *seen != shown)
    }

    /// Applies `input` and every input its effects lead to.
    async fn step(&mut self, input: Input, mut payload: Payload) {
        let mut next = Some(input);
        while let Some(input) = next.take() {
            let (machine, effects) = transition(&self.machine, input, &self.rules);
            self.machine = machine;
            self.keep_token();
            for effect in effects {
                if let Some(follow) = self.run(effect, &mut payload).await {
                    next = Some(follow);
                }
            }
            self.waiting.keep_for(&self.machine.phase);
            if let Waiting::Serve(serving) = &mut self.waiting {
                serving.stop_when_idle(self.idle_stop, &self.live);
            }
        }
    }

    /// Keeps the pushed token the machine now holds (`crate::redact`: hidden
    /// from every text while it is in use), forgetting the one it replaced.
    fn keep_token(&mut self) {
        let current = self.machine.creds.token.as_ref().map(|t| t.0.as_str());
        if self.kept_token.as_ref().map(|(token, _)| token.as_str()) != current {
            self.kept_token = current.map(|t| (t.to_owned(), KeptSecret::new(t)));
        }
    }

    /// Runs one effect; some yield the next input.
    async fn run(&mut self, effect: Effect, payload: &mut Payload) -> Option<Input> {
        let id = &self.spec.id;
        match effect {
            Effect::EndToolAuthWaits(why) => self.shared.end_tool_auth_waits(id, why),
            Effect::SetState(state) => self.set_state(state),
            Effect::Log(level, message) => self.log(level, message),
            Effect::Open => self.waiting = Waiting::Open(self.attempt()),
            Effect::CancelOpen => self.waiting = Waiting::Nothing,
            Effect::Close(closing) => return Box::pin(self.close(closing)).await,
            Effect::SetChallenge(header) => self.live.set_challenge(header),
            Effect::Discover { header, restore } => {
                return Some(Box::pin(self.discover(header, restore)).await)
            }
            Effect::PublishTools => self
                .shared
                .publisher()
                .publish_tools(id, ToolsChangeReason::Ready),
            Effect::DropTools => {
                let publisher = self.shared.publisher();
                publisher.set_tools(id, None, ToolsChangeReason::Stopped);
            }
            Effect::ScheduleRelist => {
                if let Waiting::Serve(serving) = &mut self.waiting {
                    serving.schedule_relist();
                }
            }
            Effect::Relist => Box::pin(self.relist()).await,
            Effect::ScheduleRestart(delay) => {
                self.waiting = Waiting::Backoff(Box::pin(tokio::time::sleep(delay)));
            }
            Effect::AdoptOAuth => {
                if let Some(manager) = payload.manager.take() {
                    // The HTTP client inside is replaced per connection (see `HttpAuth::OAuth`).
                    self.oauth = Some(AuthClient::new(reqwest::Client::new(), *manager));
                }
            }
            Effect::WriteBearer => self.write_bearer(),
            Effect::HoldReply(supersede) => self.hold(payload.reply.take(), supersede),
            Effect::Reply(outcome) => answer(payload.reply.take(), outcome),
            Effect::Answer(outcome) => answer(self.held.take(), outcome),
            Effect::Ack => {
                if let Some(done) = payload.done.take() {
                    let _ = done.send(());
                }
            }
        }
        None
    }

    /// Emits `state`; a `ready` one with the server's MCP Apps
    /// capabilities (see [`SessionPublisher::set_server_state`]).
    fn set_state(&self, state: McpServerState) {
        self.live.activity().show(Shown::of(&self.spec.id, &state));
        let app = match state {
            McpServerState::Ready(_) => self.app_capabilities(),
            _ => None,
        };
        self.shared
            .publisher()
            .set_server_state(&self.spec.id, state, app);
    }

    /// The `mcpApp.capabilities` of the ready server (MCP Apps, with
    /// `mcp_apps`): from what its connection declared, its checked tools and
    /// whether the app registered a `sampling` handler; `None` when it does
    /// not host Apps (see [`crate::apps::capabilities`]).
    fn app_capabilities(&self) -> Option<AhpMcpUiHostCapabilities> {
        if !self.shared.publisher().mcp_apps() {
            return None;
        }
        let info = self.live.session().and_then(|c| c.peer_info());
        let declared = info.as_ref().map(|i| &i.capabilities);
        let tools = self
            .shared
            .publisher()
            .catalogue()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .server(&self.spec.id);
        let sampling = self
            .shared
            .opener()
            .requests()
            .as_ref()
            .is_some_and(|h| h.handles(ServerRequestKind::Sampling));
        host_capabilities(declared, tools.as_deref(), sampling)
    }

    fn log(&self, level: LogLevel, message: String) {
        self.shared
            .publisher()
            .log(log(level, "host.supervisor", Some(&self.spec.id), message));
    }

    /// A start attempt with the current credentials (a sign-in's tokens
    /// win over a pushed token). A stdio server's attempt first waits for a
    /// launch permit (see [`super::launch`]) and holds it until it ends.
    fn attempt(&mut self) -> BoxFuture<Result<Opened<C::Connection>, RequestFailure>> {
        let queued = self.launch_place();
        let connector = self.connector.clone();
        let (shared, spec) = (self.shared.clone(), self.spec.clone());
        let (live, tasks) = (self.live.clone(), self.tasks.clone());
        let (oauth, token) = (self.oauth.clone(), self.machine.creds.token.clone());
        Box::pin(async move {
            // The app's policy and trust first: nothing is spawned or
            // connected for a server they refuse (`crate::policy`).
            let (cancel, stdio) = (tasks.cancel.clone(), queued.is_some());
            let mut place = queued;
            // A place kept while the app is asked could hold a permit: it goes.
            let give_up = || place = None;
            let admitted = shared
                .gate()
                .admit(&spec, shared.publisher(), &cancel, give_up);
            let queued = match admitted.await {
                Err(refused) => return Err(RequestFailure::Failed(refused)),
                Ok(Admission::Now) => place,
                Ok(Admission::Asked) => stdio.then(|| shared.launches().queue()),
            };
            let _permit = match queued {
                Some(queued) => wait_turn(&shared, &spec.id, queued).await,
                None => None,
            };
            let auth = match (&oauth, &token) {
                (Some(manager), _) => HttpAuth::OAuth(manager),
                (None, Some(token)) => HttpAuth::Bearer(&token.0),
                (None, None) => HttpAuth::None,
            };
            open_listed(&*connector, &shared, &spec, (&live, &tasks), auth).await
        })
    }

    /// A stdio start's place in the launch queue: the one taken when the
    /// actor was created, else a new one at the end.
    fn launch_place(&mut self) -> Option<Queued> {
        let first = self.queued.take();
        let stdio = matches!(self.spec.transport, TransportSpec::Stdio(..));
        stdio.then(|| first.unwrap_or_else(|| self.shared.launches().queue()))
    }

    /// Closes the ready connection, withdraws it and its tools. After a
    /// crash, says when the connection was gone.
    async fn close(&mut self, closing: Closing) -> Option<Input> {
        // Nothing more reaches the connection through its channel.
        self.shared.publisher().close_app_channel(&self.spec.id);
        if let Waiting::Serve(serving) = std::mem::replace(&mut self.waiting, Waiting::Nothing) {
            match &closing {
                Closing::Crashed(reason) => {
                    let _ = serving.closed.send(Some(format!("server {reason}")));
                    serving.conn.discard().await;
                }
                Closing::Stopped | Closing::Dormant => {
                    let _ = serving.closed.send(Some("server was stopped".to_owned()));
                    serving.conn.close().await;
                }
            }
        }
        self.live.set(None);
        if closing != Closing::Dormant {
            let publisher = self.shared.publisher();
            publisher.set_tools(&self.spec.id, None, ToolsChangeReason::Stopped);
        }
        matches!(closing, Closing::Crashed(_)).then(|| Input::Discarded { at: Instant::now() })
    }

    /// Discovery for a challenge; stored credentials it finds are adopted.
    async fn discover(&mut self, header: String, restore: bool) -> Input {
        let Some(endpoint) = self.rules.endpoint.clone() else {
            let e = HostError::new(ErrorCode::Internal, "authorization over stdio");
            return Input::Discovered(Discovery::Failed(e));
        };
        let challenge = AuthChallenge::from_header(&header, &endpoint);
        let found = self
            .connector
            .discover(
                &self.shared,
                (&endpoint, self.spec.oauth_client.as_ref()),
                &challenge,
                restore,
            )
            .await;
        Input::Discovered(match found {
            Ok(Discovered::Restored(manager)) => {
                self.oauth = Some(AuthClient::new(reqwest::Client::new(), *manager));
                Discovery::Restored
            }
            Ok(Discovered::Resource(resource)) => Discovery::Resource(*resource),
            Err(e) => Discovery::Failed(e),
        })
    }

    /// Re-lists what change notices made stale (free-standing, or on a
    /// `subscriptions/listen` stream: see [`crate::mcp::listen`]): tools after
    /// `notifications/tools/list_changed`, skills after
    /// `notifications/resources/list_changed` from a server with skills.
    async fn relist(&mut self) {
        let Waiting::Serve(serving) = &mut self.waiting else {
            return;
        };
        let interval = Duration::from_millis(LIST_CHANGED_DEBOUNCE_MS);
        let now = tokio::time::Instant::now();
        serving.relist_tat = Some(relist_credit(serving.relist_tat, now, interval));
        let stale = std::mem::take(&mut serving.stale);
        if stale.skills {
            // Bounded like a tools re-list (`relist_tools`): the startup timeout.
            let (id, timeout) = (&self.spec.id, self.spec.startup_timeout);
            let (opener, skills) = (self.shared.opener(), self.shared.skills());
            crate::mcp::skills::list_skills(opener, skills, id, &self.live, timeout).await;
        }
        if !stale.tools {
            return;
        }
        let Waiting::Serve(serving) = &self.waiting else {
            return;
        };
        let conn = &serving.conn;
        if let Some(tools) = relist_tools(&self.shared, &self.spec, conn).await {
            let count = tools.tools.len();
            self.shared.publisher().set_tools(
                &self.spec.id,
                Some(tools),
                ToolsChangeReason::ListChanged,
            );
            self.shared
                .publisher()
                .update_mcp_app(&self.spec.id, self.app_capabilities());
            // Logged after the publication: queued before it, the record
            // woke the JS thread once more while the catalogue was set.
            self.log(
                LogLevel::Info,
                format!("tools/list_changed: now {count} tools"),
            );
        }
    }

    /// Puts the pushed token into the live connection's bearer cell.
    fn write_bearer(&self) {
        let (Waiting::Serve(serving), Some(token)) = (&self.waiting, &self.machine.creds.token)
        else {
            return;
        };
        if let Some(cell) = serving.conn.bearer() {
            *cell.write().unwrap_or_else(PoisonError::into_inner) = Some(token.0.clone());
        }
        // Another token, another authorization context (SEP-2549 `cacheScope`).
        if let Some(live) = self.live.session() {
            live.drop_private_cache();
        }
    }

    /// Holds `reply` until the next attempt ends.
    fn hold(&mut self, reply: Option<oneshot::Sender<HostResult<()>>>, supersede: Supersede) {
        let Some(reply) = reply else {
            return;
        };
        if let Some(previous) = self.held.replace(reply) {
            if supersede == Supersede::Cancel {
                let cancelled =
                    HostError::new(ErrorCode::Cancelled, "superseded by a newer sign-in");
                let _ = previous.send(Err(cancelled));
            }
        }
    }
}

/// Waits for the launch permit of server `id` (logged at `debug` when it
/// has to wait).
async fn wait_turn(shared: &HostShared, id: &str, queued: Queued) -> Option<LaunchPermit> {
    if queued.waits() {
        let n = shared.limits().max_concurrent_launches;
        let text =
            format!("waiting to start: {n} stdio servers are starting (maxConcurrentLaunches)");
        shared
            .publisher()
            .log(log(LogLevel::Debug, "host.supervisor", Some(id), text));
    }
    queued.permit().await
}

fn answer(reply: Option<oneshot::Sender<HostResult<()>>>, outcome: HostResult<()>) {
    if let Some(reply) = reply {
        let _ = reply.send(outcome);
    }
}
