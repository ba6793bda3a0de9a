//! # ahp-mcp-host
//!
//! The MCP host core of an Agent Host Protocol (AHP) host; the Node.js
//! addon is the binding crate `ahp-mcp-host-napi` (`binding/`), which uses
//! only this crate's public API. It reads Agent Plugins `mcp.json` files,
//! launches stdio MCP servers and connects Streamable HTTP ones, runs the
//! MCP handshake, discovers and calls tools, supervises every server's
//! lifecycle and reports all of it as AHP action envelopes.
//!
//! Data flows one way: [`config`] → supervisor actors → [`session`] (the
//! `ahp` reducer, `serverSeq`) → [`events::EventSink`] → JS. Commands flow
//! back through [`host::Host`]. Only the binding crate knows about
//! JavaScript; this crate never links napi.
//! `docs/architecture.md` is the map: layers, the data flow of a tool call
//! and of a state change, the lock order, and where each concept lives.
//!
//! ## Public surface
//!
//! The modules below are public because embedders (the napi binding, the
//! integration tests, a Rust host) use them: [`host`] (the façade and its
//! option types), [`config`] (the `mcp.json` model and its validation),
//! [`session`] (AHP state helpers), [`events`], [`error`], [`limits`] and
//! [`requests`] (server-initiated requests). Everything else is private;
//! the few types of it that appear in the public API are re-exported here,
//! and [`drop_later`], which the binding uses for the large actions it has
//! encoded.

mod apps;
mod auth;
mod catalogue;
mod chat;
pub mod config;
pub mod error;
pub mod events;
/// Fuzzing entry points over private modules (cargo feature `fuzzing`, off
/// by default; used by `fuzz/` and by the fuzz regression tests). Not API.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
mod json;
pub mod limits;
mod mcp;
mod network;
mod platform;
mod policy;
mod publisher;
mod reclaim;
mod redact;
pub mod requests;
pub mod session;
mod skills;
mod supervisor;
mod transport;

pub use auth::keychain::{OsSecretStore, KEYCHAIN_SERVICE};
pub use auth::store::{MemorySecretStore, SecretStore};
pub use catalogue::{CatalogueEntry, DiagnosticAction, ToolDiagnostic};
pub use mcp::identity::{Handshake, ServerIcon, ServerIdentity, TransportKind};
pub use network::{CaCertificates, NetworkOptions, ProxyOption};
/// Gives back the resident pages of the addon's relocation table after
/// load (Linux; see the private `platform::loader_pages` module).
pub use platform::release_loader_pages;
/// Drops a large value on a background thread (see the private `reclaim` module).
pub use reclaim::drop_later;
