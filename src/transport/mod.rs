//! Transport launch policy: how a stdio process is started, watched and
//! stopped (process group, stderr capture, stdout monitoring, parent-death
//! cleanup), and how a Streamable HTTP client is configured (origin-bound
//! headers, redirects).

pub mod http;
#[cfg(unix)]
pub mod process;
pub mod stderr;
pub mod stdout_monitor;

/// Old path of [`stdout_monitor`] (`noise::NoiseWatch`), kept until
/// `supervisor` names the new one; remove after the merge.
pub mod noise {
    pub use super::stdout_monitor::{OversizeIds, StdoutMonitor as NoiseWatch};
}
