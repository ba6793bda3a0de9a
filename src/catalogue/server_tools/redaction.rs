//! Kept secret values in tools already checked: a tool named with one is
//! left out, and a tool checked before a value was kept
//! ([`crate::redact::generation`]) is checked for it again.
//!
//! A server can list a string that only later becomes a secret of the host
//! (another server's configured header or environment value, a token): the
//! definitions checked before then still hold it, and a re-list reuses
//! them unchanged. [`ServerTools::redacted_again`] redacts them in place of
//! a re-list; the catalogue runs it whenever the generation has grown.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::super::sorted_index::SortedIndex;
use super::{tool_name, DiagnosticAction, ServerTool, ServerTools, ToolDiagnostic};
use crate::limits::DIAGNOSTIC_TOOL_NAME_CHARS;
use crate::redact::{hidden, hidden_in_value, kept_since};

/// The reason of the `omitted` diagnostic of a tool whose name holds a
/// kept secret value.
pub const SECRET_NAME_REASON: &str = "the tool name holds a secret value the host keeps (a \
     configured header or environment value, a URL's query, a token): the tool is left out, \
     since its name could not be shown or called without it";

/// The name as a diagnostic shows it (redacted, cut to
/// [`DIAGNOSTIC_TOOL_NAME_CHARS`]) when it holds a kept secret value;
/// `None` when it holds none.
pub(super) fn secret_in_name(name: &str) -> Option<String> {
    match hidden(name) {
        Cow::Borrowed(_) => None,
        Cow::Owned(shown) => Some(shown.chars().take(DIAGNOSTIC_TOOL_NAME_CHARS).collect()),
    }
}

/// `diagnostic` with every kept secret value taken out of its texts.
fn redacted(diagnostic: &ToolDiagnostic) -> ToolDiagnostic {
    ToolDiagnostic {
        tool: hidden(&diagnostic.tool).into_owned(),
        reason: hidden(&diagnostic.reason).into_owned(),
        ..diagnostic.clone()
    }
}

impl ServerTools {
    /// These tools checked again for the values kept since each was checked
    /// ([`ServerTool::holds_kept_since`]), stamped `generation` (the
    /// current [`crate::redact::generation`]), or `None` when no tool holds
    /// one. A tool whose name holds a value is left out (an `omitted`
    /// diagnostic, [`SECRET_NAME_REASON`]); in the others every value is
    /// `[redacted]`, as a new check does; each diagnostic's texts are
    /// redacted too. A tool that holds none is kept as it is.
    #[must_use]
    pub fn redacted_again(&self, server_id: &str, generation: u64) -> Option<Self> {
        if !self.tools.iter().any(|t| t.holds_kept_since()) {
            return None;
        }
        let mut diagnostics: Vec<ToolDiagnostic> = self.diagnostics.iter().map(redacted).collect();
        let mut tools = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            if !tool.holds_kept_since() {
                tools.push(Arc::clone(tool));
            } else if let Some(shown) = secret_in_name(&tool.tool_name) {
                diagnostics.push(ToolDiagnostic {
                    server_id: server_id.to_owned(),
                    tool: shown,
                    action: DiagnosticAction::Omitted,
                    reason: SECRET_NAME_REASON.to_owned(),
                });
            } else {
                tools.push(Arc::new(tool.checked_again(generation)));
            }
        }
        let index = SortedIndex::new(&tools, tool_name);
        Some(Self {
            tools,
            diagnostics,
            index,
        })
    }
}

impl ServerTool {
    /// Whether its name, definition or diagnostics hold a secret value
    /// kept after it was checked ([`crate::redact::kept_since`]), or its
    /// description was cut and any value was kept since. A diagnostic can
    /// quote what the definition no longer has (a dropped output schema's
    /// `type`).
    #[must_use]
    pub fn holds_kept_since(&self) -> bool {
        let since = self.redaction;
        let in_notes = || {
            (self.notes.iter()).any(|n| kept_since(since, &n.tool) || kept_since(since, &n.reason))
        };
        // A description cut to `maxToolDescriptionBytes` may end inside a
        // value kept since: only its prefix is left, which no search for the
        // whole value finds, and a full check redacts before it cuts.
        let cut = || {
            crate::redact::generation() > since
                && (self.notes.iter()).any(|n| n.action == DiagnosticAction::Truncated)
        };
        kept_since(since, &self.tool_name)
            || kept_since(since, &self.definition_json)
            || in_notes()
            || cut()
    }

    /// This tool with every kept secret value of `generation` redacted from
    /// its definition (written again, with a new digest, only when one was
    /// found) and its notes.
    fn checked_again(&self, generation: u64) -> Self {
        let mut again = match serde_json::from_str::<Value>(&self.definition_json) {
            Ok(Value::Object(found)) => {
                let mut shown = Value::Object(found.clone());
                hidden_in_value(&mut shown);
                match shown {
                    Value::Object(shown) if shown != found => {
                        let mut fresh = Self::new(self.tool_name.clone(), shown);
                        fresh.source = self.source;
                        fresh.schema_bytes = self.schema_bytes;
                        fresh
                    }
                    _ => self.clone(),
                }
            }
            // Not reached: the text was written from an object.
            _ => self.clone(),
        };
        again.notes = self.notes.iter().map(redacted).collect();
        again.redaction = generation;
        again
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::Catalogue;
    use super::*;
    use crate::limits::Limits;
    use crate::redact::KeptSecret;

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
    }

    #[test]
    fn a_tool_named_with_a_kept_secret_is_left_out_and_its_name_not_shown() {
        // Red team of issue 28, F1: the name reached listTools, actions and state.
        let secret = "canary-name-secret-7c41d9e2";
        let _kept = KeptSecret::new(secret);
        let raw = vec![tool(&format!("get_{secret}"), "d"), tool("fine", "d")];
        let built = ServerTools::build("srv", raw, &Limits::default()).unwrap();
        let names: Vec<&str> = built.tools.iter().map(|t| t.tool_name.as_str()).collect();
        assert_eq!(names, ["fine"]);
        let d = &built.diagnostics[0];
        assert_eq!(
            (d.action, d.tool.as_str(), d.reason.as_str()),
            (
                DiagnosticAction::Omitted,
                "get_[redacted]",
                SECRET_NAME_REASON
            )
        );
    }

    #[test]
    fn tools_checked_before_a_value_was_kept_are_redacted_again() {
        // Red team of issue 28, F3: a string that became secret later stayed
        // in tools checked before, and a re-list reused them.
        let secret = "canary-later-secret-31f0aa57";
        let limits = Limits::default();
        let listing = || {
            vec![
                tool("echo", &format!("says {secret}")),
                tool(&format!("x_{secret}"), "d"),
                tool("plain", "nothing to hide"),
            ]
        };
        let before = ServerTools::build("srv", listing(), &limits).unwrap();
        assert_eq!(before.tools.len(), 3);
        let plain_digest = before.tools[2].digest().to_owned();
        let mut catalogue = Catalogue::default();
        catalogue.set_server("srv", Some(Arc::new(before.clone())));
        let _kept = KeptSecret::new(secret);

        // A re-list of the same entries checks them again instead of reusing them.
        let relisted = ServerTools::build_after("srv", listing(), &limits, Some(&before)).unwrap();
        let now = crate::redact::generation();
        let again = before.redacted_again("srv", now).unwrap();
        for tools in [&relisted, &again] {
            let texts: Vec<&str> = tools
                .tools
                .iter()
                .map(|t| t.definition_json.as_str())
                .collect();
            assert_eq!(texts.len(), 2, "{texts:?}");
            assert!(texts.iter().all(|t| !t.contains(secret)), "{texts:?}");
            assert!(texts[0].contains("says [redacted]"), "{texts:?}");
            assert_eq!(
                tools.tools[1].digest(),
                plain_digest,
                "an untouched tool keeps its digest"
            );
            assert!(tools.diagnostics.iter().any(|d| d.tool == "x_[redacted]"));
        }
        // Redacted: nothing more to do (whatever other tests keep meanwhile).
        assert!(again.redacted_again("srv", now).is_none());

        // The catalogue redacts on its next change (another server's tools).
        catalogue.set_server("other", Some(Arc::new(ServerTools::default())));
        let published: Vec<String> = catalogue.entries().iter().map(|e| e.json()).collect();
        assert_eq!(published.len(), 2);
        assert!(
            published.iter().all(|j| !j.contains(secret)),
            "{published:?}"
        );
    }
}
