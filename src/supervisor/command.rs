//! [`Command`]: everything the host asks of a server's actor. The actor is
//! the only writer of its server's state, connection and credentials; the
//! host changes them only by sending commands.

use tokio::sync::oneshot;

use crate::auth::step_up::Leaving;
use crate::error::{HostError, HostResult};

/// Commands an actor accepts (what each does in each phase:
/// [`super::phase::transition`]).
pub enum Command {
    /// Start, or restart when running; resets the crash counter.
    Start,
    /// A call's start of a lazy server it read as `stopped` or failed
    /// ([`crate::mcp::activity::Activity::shown`] number `seen`): as
    /// [`Command::Start`] while that is still the server's shown state,
    /// else ignored: whatever was shown since (another call's start under
    /// way or ended, a stop, a toggle off) is what the call waits on, so
    /// concurrent first calls share one start and a failed start is not
    /// made again for the calls that waited on it.
    Wake {
        /// The number of the shown state the call read.
        seen: u64,
    },
    /// Stop and stay stopped until [`Command::Start`].
    Stop,
    /// A client backgrounded the start (AHP
    /// `session/mcpServerBackgroundRequested`): a `required` server's start
    /// in progress no longer blocks; its `starting` is published with
    /// `blocking: false` until the start ends. No process change.
    Background,
    /// The app's policy now denies the server (`setPolicy`, see
    /// `crate::policy`): stop whatever runs and show `error` with this
    /// error (`policy_denied`, boxed to keep commands small) until a start.
    Deny(Box<HostError>),
    /// Enablement changed: `true` starts the server unless it is already
    /// starting or running (no restart); `false` stops it.
    SetEnabled(bool),
    /// Stop and end the actor; `done` is told when the process is gone.
    Shutdown {
        /// Why: chat tool calls paused on the server fail with
        /// [`Leaving::code`] (`server_removed` for `remove`, `disposed` for
        /// the host's shutdown).
        why: Leaving,
        /// Told once the process is gone.
        done: oneshot::Sender<()>,
    },
    /// A host-run sign-in succeeded: connect through this authorization
    /// manager (it adds and refreshes the bearer token).
    UseOAuth {
        /// Holds the tokens; shared with every later connection (boxed: it is large).
        manager: Box<rmcp::transport::auth::AuthorizationManager>,
        /// Outcome: `Ok` once `ready`.
        reply: oneshot::Sender<HostResult<()>>,
    },
    /// A request on the live connection showed the session is unusable:
    /// `auth_required` (401 after a refused refresh) or `redirect_refused`.
    /// The actor leaves `ready` accordingly.
    ConnectionFailed {
        /// Why (`auth_required` with a challenge re-enters `authRequired`;
        /// anything else ends in `error`). Boxed: every server's command
        /// queue allocates its first block of slots at once, each slot the
        /// size of the largest command.
        error: Box<HostError>,
        /// The `WWW-Authenticate` header of the refusal, if any.
        challenge: Option<String>,
    },
    /// A step-up token for a tool call waiting in `auth-required` (AHP
    /// `authenticate` while `ready`): the actor writes it into the live
    /// connection's bearer cell and uses it for reconnects from now on.
    StepUpToken {
        /// Bearer access token; a secret.
        token: String,
        /// Told once the token is in place (so a paused call can retry).
        done: Option<oneshot::Sender<()>>,
    },
    /// AHP `authenticate` for this server's advertised resource: reconnect
    /// with `token` (empty = revoke). The reply says whether the server
    /// accepted it.
    Authenticate {
        /// Bearer access token; a secret.
        token: String,
        /// Outcome: `Ok` once `ready`, `auth_required` if the server still refuses.
        reply: oneshot::Sender<HostResult<()>>,
    },
    /// A host-run sign-in failed: the actor puts `description` into its
    /// `authRequired` state, only while that state is still shown.
    AuthFailed {
        /// Why the sign-in failed (never contains secrets).
        description: String,
        /// Told once the description is applied (or was not applicable).
        done: Option<oneshot::Sender<()>>,
    },
}

#[cfg(test)]
mod tests {
    use super::Command;

    #[test]
    fn a_command_stays_small() {
        // Each server's queue holds a first block of 32 of them from its
        // start (tokio's unbounded channel): 100 lazy servers that never
        // started keep those blocks.
        assert!(
            std::mem::size_of::<Command>() <= 48,
            "Command is {} bytes: box the large variant's payload",
            std::mem::size_of::<Command>()
        );
    }
}
