//! The model-facing output budget of a chat tool call (issue 29 item 5;
//! `crate::chat::budget`): which budget applies, and the result the
//! completion is built from.

use serde_json::Value;

use super::Host;
use crate::chat::OutputBudget;
use crate::error::{HostError, HostResult};
use crate::json::JsonText;
use crate::supervisor::ServerHandle;

impl Host {
    /// The model-facing output budget of a call on `handle`'s server: the
    /// call's own, else the server's (`modelOutputMaxChars`), else the
    /// host's (`limits.modelOutputMaxChars`); whole results kept under
    /// `dataDir`.
    pub(in crate::host) fn output_budget(
        &self,
        own: Option<usize>,
        handle: &ServerHandle,
    ) -> OutputBudget {
        let server = handle.spec.call_limits.output_max_chars;
        let host = self.shared.limits().model_output_max_chars;
        OutputBudget {
            max_chars: own.or(server).unwrap_or(host),
            files: self.tool_results.clone(),
        }
    }
}

/// A call's outcome as the JSON value its completion is built from.
pub(super) fn value_of(result: &HostResult<JsonText>) -> HostResult<Value> {
    result
        .as_ref()
        .map_err(HostError::clone)
        .and_then(JsonText::to_value)
}
