//! Transport launch policy: how a stdio process is started, watched and
//! stopped (process group, stderr capture, stdout monitoring and draining,
//! parent-death cleanup), how a Streamable HTTP client is configured (origin-bound
//! headers, redirects), and the legacy HTTP+SSE transport built on that client.

#[cfg(unix)]
pub mod descendants;
pub mod drain;
pub mod flood;
pub mod http;
pub(crate) mod lone_surrogates;
pub mod ordered;
#[cfg(unix)]
pub mod process;
#[cfg(windows)]
#[path = "process_windows.rs"]
pub mod process;
pub mod raw_text;
pub mod raw_tools;
pub mod sandbox;
pub mod sse;
pub mod stderr;
pub mod stdio;
pub mod stdout_monitor;
pub mod stream_watch;
pub mod too_large;
