//! # ahp-mcp-host
//!
//! The MCP host core of an Agent Host Protocol (AHP) host, as a Node.js
//! native addon. It reads Agent Plugins `mcp.json` files, launches stdio MCP
//! servers and connects Streamable HTTP ones, runs the MCP handshake,
//! discovers and calls tools, supervises every server's lifecycle and reports
//! all of it as AHP action envelopes.
//!
//! Data flows one way: [`config`] → [`supervisor`] actors → [`session`]
//! (the `ahp` reducer, `serverSeq`) → [`events::EventSink`] → JS. Commands
//! flow back through [`host::Host`]. Only [`napi`] knows about JavaScript.

pub mod auth;
pub mod catalogue;
pub mod config;
pub mod error;
pub mod events;
pub mod host;
pub mod json;
pub mod limits;
pub mod requests;
pub mod session;
pub mod supervisor;
pub mod toolcall;
pub mod transport;

#[cfg(not(test))]
pub mod napi;
