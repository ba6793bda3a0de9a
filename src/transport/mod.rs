//! Transport launch policy: how a stdio process is started, watched and
//! stopped (process group, stderr capture, stdout monitoring and draining,
//! parent-death cleanup), and how a Streamable HTTP client is configured (origin-bound
//! headers, redirects).

pub mod drain;
pub mod http;
pub mod ordered;
#[cfg(unix)]
pub mod process;
pub mod stderr;
pub mod stdio;
pub mod stdout_monitor;
pub mod stream_watch;
