//! Opening a stdio server: spawn it (launch policy of `crate::config::launch`,
//! process group, stderr capture), wrap its pipes in the host's stdio
//! transport, run the handshake raced against its exit and the startup
//! timeout, and say why a start failed (exit status, stderr tail).

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use tokio::sync::mpsc;

use super::connection::{
    finish, with_tail, Connection, Opening, EXIT_SETTLE, NEVER, STDERR_SETTLE,
};
use super::startup;
use crate::config::launch::resolve_stdio;
use crate::config::launch::LaunchSpec;
use crate::config::sandbox::SandboxProfile;
use crate::config::{PluginVars, StdioConfig};
use crate::error::strip_type_names;
use crate::error::{ErrorCode, HostError};
use crate::events::{log, LogLevel};
use crate::limits::MAX_STDIO_MESSAGE_BYTES;
use crate::mcp::client::{HostClient, Notice};
use crate::mcp::{Opener, ServerTasks};
use crate::transport::ordered::{Ordered, Overflow};
use crate::transport::process::{describe_exit, ServerProcess};
use crate::transport::sandbox::{ChildSandbox, SandboxReport};
use crate::transport::stderr::StderrTail;
use crate::transport::stdio::StdioTransport;
use crate::transport::stdout_monitor::Reporter;
use crate::transport::{drain, process, sandbox, stderr};
use startup::StartFailure;

/// What a stdio start needs from the server's spec.
pub(super) struct Stdio<'a> {
    pub(super) cfg: &'a StdioConfig,
    pub(super) vars: &'a PluginVars,
    pub(super) startup_timeout: Duration,
    pub(super) lifecycle: ClientLifecycleMode,
    /// The server's sandbox profile, when it runs in one.
    pub(super) sandbox: Option<&'a SandboxProfile>,
}

pub(super) async fn open_stdio(
    opener: &Opener,
    server_id: &str,
    stdio: Stdio<'_>,
    handler: HostClient,
    notices: mpsc::UnboundedReceiver<Notice>,
    tasks: &ServerTasks,
) -> Result<Connection, Opening> {
    let Stdio {
        cfg,
        vars,
        startup_timeout,
        lifecycle,
        sandbox,
    } = stdio;
    let (base_env, policy) = opener.base_env();
    let mut launch = resolve_stdio(cfg, vars, base_env, policy)?;
    let sink = opener.publisher().sink();
    let (report, child) = sandboxed_launch(opener, server_id, sandbox, &mut launch, vars)?;
    let sandboxed = report.is_some();
    let mut proc = process::spawn(&launch, opener.processes(), child)?;
    proc.watch_descendants(server_id.to_owned(), sink.clone());
    let Some((stdin, stdout, stderr_pipe)) = proc.stdio.take() else {
        return Err(
            HostError::new(ErrorCode::SpawnFailed, "server stdio pipes are unavailable").into(),
        );
    };
    let tail = stderr::drain(stderr_pipe, server_id.to_owned(), sink.clone());
    let (discarded, mut discards) = tokio::sync::broadcast::channel(16);
    // Drained after the transport is gone, so a server being stopped never
    // writes to a closed pipe (EPIPE).
    let stdout = drain::DrainOnDrop::new(stdout);
    let reporter = Reporter::new(
        server_id.to_owned(),
        sink.clone(),
        MAX_STDIO_MESSAGE_BYTES,
        Some(discarded.clone()),
    );
    let transport = StdioTransport::new((stdout, stdin), reporter);
    let stdin_stalled = transport.stalled();
    let transport = Ordered::new(transport, handler.clone(), Overflow::Wait);
    let mut exit = proc.exit.clone();
    let now = tokio::time::Instant::now();
    let deadline = now.checked_add(startup_timeout).unwrap_or(now + NEVER);
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let method = startup::handshake_method(&lifecycle);
    let handshake = handler.serve_with_lifecycle(transport, lifecycle);
    let started = tokio::select! {
        biased;
        started = startup::race(handshake, &mut exit, deadline) => started,
        gone = startup::first_discard(&mut discards) => Err(StartFailure::Discarded(gone)),
    };
    match started {
        Ok(service) => {
            let mut conn = finish(service, notices, (Some(proc), Some(tail)), tasks);
            conn.sandboxed = sandboxed;
            Arc::make_mut(&mut conn.identity).sandbox = report;
            conn.discarded = Some(discarded);
            conn.stdin_stalled = Some(stdin_stalled);
            Ok(conn)
        }
        Err(StartFailure::Discarded(gone)) if auto && startup::answered_probe(&gone) => {
            proc.stop().await;
            let why = format!("a response the host discarded ({})", gone.reason);
            Err(Opening::ProbeUnusable(why))
        }
        Err(StartFailure::Refused(e)) if auto && startup::probe_unusable(&e).is_some() => {
            proc.stop().await;
            Err(Opening::ProbeUnusable(
                startup::probe_unusable(&e).unwrap_or_default(),
            ))
        }
        Err(failure) => {
            let started = (&mut proc, &*tail);
            let e = stdio_failure((server_id, method), failure, started, startup_timeout).await;
            Err(denied_by_sandbox(e, sandboxed, &tail).into())
        }
    }
}

/// Prepares the sandbox of this start when the server has a profile:
/// its variables go into `launch`, its summary into a `host.sandbox` log
/// (`info` when fully enforced, else `warn`).
///
/// # Errors
/// `sandbox_unavailable` (see `transport::sandbox::prepare`).
fn sandboxed_launch(
    opener: &Opener,
    server_id: &str,
    sandbox: Option<&SandboxProfile>,
    launch: &mut LaunchSpec,
    vars: &PluginVars,
) -> Result<(Option<SandboxReport>, Option<ChildSandbox>), HostError> {
    let Some(profile) = sandbox else {
        return Ok((None, None));
    };
    let sink = opener.publisher().sink();
    let prepared = sandbox::prepare(profile, launch, vars, (server_id, sink))?;
    launch.env.extend(prepared.env);
    let level = match prepared.report.enforced {
        "full" => LogLevel::Info,
        _ => LogLevel::Warn,
    };
    let text = prepared.report.summary();
    opener.log(log(level, "host.sandbox", Some(server_id), text));
    Ok((Some(prepared.report), Some(prepared.child)))
}

/// The error of a failed stdio start, from its first cause (see
/// [`startup`]): `protocol_error` for an answer, `startup_timeout`, or
/// `server_exited` with the exit status (settled) and stderr tail.
async fn stdio_failure(
    (server_id, method): (&str, &str),
    failure: StartFailure,
    (proc, tail): (&mut ServerProcess, &StderrTail),
    startup_timeout: Duration,
) -> HostError {
    let answer = match failure {
        StartFailure::Discarded(gone) => {
            let e = startup::discarded_answer(server_id, method, &gone);
            return HostError {
                message: with_tail(e.message.clone(), tail),
                ..e
            };
        }
        StartFailure::TimedOut => {
            let ms = startup_timeout.as_millis();
            let what = format!("did not answer initialize within {ms} ms; process group killed");
            return HostError::new(ErrorCode::StartupTimeout, with_tail(what, tail));
        }
        StartFailure::Refused(e) => Some(e),
        StartFailure::Exited(answer) => answer,
    };
    // The same message whether the host read the answer before or after
    // the exit it was racing (after a refusal the host closes stdin, and
    // most servers exit then): the exit is not the cause.
    if let Some(refusal) = answer
        .as_ref()
        .and_then(|e| startup::initialize_refusal(server_id, e, method))
    {
        return HostError {
            message: with_tail(refusal.message.clone(), tail),
            ..refusal
        };
    }
    let status = settle_exit(proc).await;
    tail.wait_eof(STDERR_SETTLE).await;
    let what = match (status, answer) {
        (None, Some(e)) => format!("initialize failed: {}", strip_type_names(&e.to_string())),
        _ => format!("{} before completing initialize", describe_exit(status)),
    };
    HostError::new(ErrorCode::ServerExited, with_tail(what, tail))
}

/// A start that failed `server_exited` inside a sandbox, with a
/// permission error on stderr, is the sandbox's doing: `sandbox_denied`.
fn denied_by_sandbox(e: HostError, sandboxed: bool, tail: &StderrTail) -> HostError {
    if !sandboxed || e.code != ErrorCode::ServerExited || !sandbox::looks_denied(&tail.text()) {
        return e;
    }
    HostError {
        code: ErrorCode::SandboxDenied,
        message: format!("{}{}", sandbox::DENIED_PREFIX, e.message),
        ..e
    }
}

async fn settle_exit(proc: &mut ServerProcess) -> Option<std::process::ExitStatus> {
    tokio::time::timeout(EXIT_SETTLE, proc.wait_exit())
        .await
        .ok()
        .flatten()
}
