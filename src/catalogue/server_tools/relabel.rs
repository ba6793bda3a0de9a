//! A re-listed tool whose entry changed only in its labels (`title`,
//! `description`): the labels are checked and written again in front of the
//! rest of its checked definition, which is kept as text.
//!
//! A re-list where every description changed (a server that appends a
//! version, a count or a status to each) otherwise checks every tool in
//! full: the redaction walk, the schema bounds, normalization, the
//! definition's serialization. The entry's shape fingerprint
//! ([`SourceDigests::shape`]: every member but the labels) says the rest of
//! it is what was checked before, so only what a check does to the labels
//! is done again: kept secret values are `[redacted]`, the description is
//! cut to `maxToolDescriptionBytes` (a `truncated` diagnostic), the display
//! title is read again. The definition, its digest and the diagnostics are
//! the same as a full check gives (the tests compare them).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::source::{SourceDigests, LABELS};
use super::definition::{annotations_title, digest_of, text_labels_end, TitleFrom};
use super::{DiagnosticAction, Listing, ServerTool};
use crate::error::HostError;

/// Whether `known` can take the labels of the re-listed entry `tool`: its
/// text marks where its labels end, and the new labels are strings or
/// absent (`null` counts as absent, as in a full check).
pub(super) fn fits(known: &ServerTool, tool: &Map<String, Value>) -> bool {
    known.labels_end.is_some()
        && LABELS
            .iter()
            .all(|k| matches!(tool.get(*k), None | Some(Value::Null | Value::String(_))))
}

/// The entry's label `key` as a string, `[redacted]` where it holds a kept
/// secret value; `None` when absent or `null`.
fn label(tool: &mut Map<String, Value>, key: &str) -> Option<String> {
    let mut value = tool.remove(key).filter(|v| !v.is_null())?;
    crate::redact::hidden_in_value(&mut value);
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

impl Listing<'_> {
    /// `known` (checked from an entry with the same shape, see [`fits`])
    /// with the labels of `tool`: its schema bytes counted, its diagnostics
    /// given again in a full check's order with the description's
    /// `truncated` one made anew.
    ///
    /// # Errors
    /// `limit_exceeded` when the schemas so far pass `maxTotalSchemaBytes`.
    pub(super) fn relabel(
        &mut self,
        known: &ServerTool,
        name: String,
        mut tool: Map<String, Value>,
        source: SourceDigests,
    ) -> Result<Arc<ServerTool>, HostError> {
        self.add_schema_bytes(known.schema_bytes)?;
        #[cfg(test)]
        tests::RELABELED.with(|n| n.set(n.get() + 1));
        let title = label(&mut tool, "title");
        let mut description = label(&mut tool, "description");
        // A full check's order: the schema's fixes, the description's cut,
        // then the output schema's and the task's notes.
        let first = self.diagnostics.len();
        let notes = known.notes.iter();
        let fixes = notes
            .clone()
            .filter(|d| d.action == DiagnosticAction::Normalized);
        self.diagnostics.extend(fixes.cloned());
        if let Some(d) = description.as_mut() {
            self.cut_description(&name, d);
        }
        let later = notes.filter(|d| {
            !matches!(
                d.action,
                DiagnosticAction::Normalized | DiagnosticAction::Truncated
            )
        });
        self.diagnostics.extend(later.cloned());
        let (definition_json, labels_end) =
            relabeled_text(known, title.as_deref(), description.as_deref());
        debug_assert_eq!(labels_end, text_labels_end(&definition_json));
        let (shown, title_from) = display_title(known, title.as_deref(), &definition_json);
        Ok(Arc::new(ServerTool {
            digest: digest_of(&name, &definition_json),
            tool_name: name,
            definition_json,
            title: shown,
            title_from,
            labels_end,
            ui: known.ui.clone(),
            app_only: known.app_only,
            task_required: known.task_required,
            source,
            redaction: self.redaction,
            schema_bytes: known.schema_bytes,
            notes: self.diagnostics[first..].into(),
        }))
    }
}

/// `known`'s definition text with `title` and `description` as its labels:
/// what serde writes for the checked definition (the labels first, then
/// the members after them, kept as text), and where those members begin
/// in it (what [`text_labels_end`] finds there: a label's quotes are
/// escaped, so no `"inputSchema":` is found in one).
fn relabeled_text(
    known: &ServerTool,
    title: Option<&str>,
    description: Option<&str>,
) -> (String, Option<u32>) {
    let after = known.labels_end.map_or(0, |at| at as usize);
    let rest = &known.definition_json[after..];
    let mut text = Vec::with_capacity(rest.len() + 32 + label_len(title) + label_len(description));
    text.push(b'{');
    for (key, value) in LABELS.iter().zip([title, description]) {
        if let Some(value) = value {
            text.push(b'"');
            text.extend_from_slice(key.as_bytes());
            text.extend_from_slice(b"\":");
            // Writing a `&str` to a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut text, value);
            text.push(b',');
        }
    }
    let labels_end = u32::try_from(text.len()).ok();
    text.extend_from_slice(rest.as_bytes());
    // Every piece is UTF-8 (JSON text, a `&str` key, serde's output).
    match String::from_utf8(text) {
        Ok(mut text) => {
            text.shrink_to_fit();
            (text, labels_end)
        }
        Err(_) => (known.definition_json.clone(), known.labels_end),
    }
}

/// An estimate of a label's written length (its text; escapes may add more).
fn label_len(label: Option<&str>) -> usize {
    label.map_or(0, str::len)
}

/// The display title (MCP 2025-11-25 "Tools › Tool": `title`, else
/// `annotations.title`) with the new `title`: `known`'s annotations are
/// unchanged, so their title is `known`'s when it was read from them, and
/// read from the kept text only when `known` showed its own `title`.
fn display_title(
    known: &ServerTool,
    title: Option<&str>,
    definition_json: &str,
) -> (Option<Box<str>>, TitleFrom) {
    if let Some(title) = title.filter(|t| !t.is_empty()) {
        return (Some(Box::from(title)), TitleFrom::Title);
    }
    match known.title_from {
        TitleFrom::Annotations => (known.title.clone(), TitleFrom::Annotations),
        TitleFrom::Nothing => (None, TitleFrom::Nothing),
        TitleFrom::Title => {
            /// Only the member wanted; the rest of the text is skipped.
            #[derive(serde::Deserialize)]
            struct Annotated {
                annotations: Option<Value>,
            }
            let annotations = serde_json::from_str::<Annotated>(definition_json)
                .ok()
                .and_then(|a| a.annotations);
            match annotations_title(annotations.as_ref()) {
                Some(t) => (Some(Box::from(t)), TitleFrom::Annotations),
                None => (None, TitleFrom::Nothing),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use serde_json::json;

    use super::super::{ServerTools, ToolDiagnostic};
    use super::*;
    use crate::limits::Limits;

    thread_local! {
        /// How many tools [`Listing::relabel`] wrote on this thread.
        pub(super) static RELABELED: Cell<usize> = const { Cell::new(0) };
    }

    /// Every tool of a listing whose labels are `labels(name)`.
    fn listing(labels: &dyn Fn(&str) -> Value) -> Vec<Value> {
        let base = [
            json!({"name": "plain", "inputSchema": {"type": "object"}}),
            json!({"name": "titled", "annotations": {"title": "From annotations", "readOnlyHint": true},
                   "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}),
            json!({"name": "bare_schema", "inputSchema": {"properties": {"q": {"type": "string"}}}}),
            json!({"name": "dropped", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
            json!({"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}),
            json!({"name": "app", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["app"]}}}),
            json!({"inputSchema": {"type": "object"}, "name": "moved"}),
        ];
        base.into_iter()
            .map(|mut entry| {
                let name = entry["name"].as_str().unwrap().to_owned();
                let object = entry.as_object_mut().unwrap();
                for (key, value) in labels(&name).as_object().unwrap() {
                    object.insert(key.clone(), value.clone());
                }
                entry
            })
            .collect()
    }

    /// What a tool is to its users: everything but how it was checked.
    fn seen(tools: &ServerTools) -> Vec<(String, String, String, Option<String>, bool, bool)> {
        let shown = |t: &Arc<ServerTool>| {
            (
                t.tool_name.clone(),
                t.definition_json.clone(),
                t.digest().to_owned(),
                t.display_title().map(str::to_owned),
                t.app_only,
                t.task_required,
            )
        };
        tools.tools.iter().map(shown).collect()
    }

    fn notes(tools: &ServerTools) -> Vec<Vec<ToolDiagnostic>> {
        tools.tools.iter().map(|t| t.notes.to_vec()).collect()
    }

    /// `after` listed after `before`, against a fresh build of `after`;
    /// returns how many tools were relabeled.
    /// A value another test keeps meanwhile has a cut description checked
    /// in full, so the count is taken from an undisturbed run.
    fn relist(before: &[Value], after: &[Value], limits: &Limits) -> usize {
        let (again, relabeled) = crate::redact::undisturbed(|| {
            let first = ServerTools::build("s", before.to_vec(), limits).unwrap();
            let at = RELABELED.with(Cell::get);
            let again =
                ServerTools::build_after("s", after.to_vec(), limits, Some(&first)).unwrap();
            (again, RELABELED.with(Cell::get) - at)
        });
        let fresh = ServerTools::build("s", after.to_vec(), limits).unwrap();
        assert_eq!(seen(&again), seen(&fresh));
        assert_eq!(notes(&again), notes(&fresh));
        assert_eq!(again.diagnostics, fresh.diagnostics);
        let relabeled_ui = again.get("app").and_then(ServerTool::ui_meta);
        assert_eq!(relabeled_ui, fresh.get("app").and_then(ServerTool::ui_meta));
        // A third listing can be relabeled from a relabeled one.
        let third = ServerTools::build_after("s", before.to_vec(), limits, Some(&again)).unwrap();
        let fresh = ServerTools::build("s", before.to_vec(), limits).unwrap();
        assert_eq!(seen(&third), seen(&fresh));
        assert_eq!(third.diagnostics, fresh.diagnostics);
        relabeled
    }

    #[test]
    fn a_relist_that_changes_only_labels_equals_a_full_check() {
        let limits = Limits {
            max_tool_description_bytes: 24,
            ..Limits::default()
        };
        let none = listing(&|_| json!({}));
        let described =
            listing(&|n| json!({"description": format!("{n}: \"inputSchema\": é\u{1}")}));
        let long = listing(&|n| json!({"description": format!("{n} {}", "long ".repeat(9))}));
        let titled = listing(&|n| json!({"title": format!("The {n}"), "description": null}));
        let empty_title = listing(&|_| json!({"title": "", "description": "d"}));
        let cases: [(&[Value], &[Value]); 5] = [
            (&none, &described),
            (&described, &long),
            (&long, &titled),
            (&titled, &empty_title),
            (&empty_title, &none),
        ];
        for (before, after) in cases {
            assert_eq!(relist(before, after, &limits), 7, "{after:?}");
        }
    }

    #[test]
    fn labels_that_are_not_strings_are_checked_in_full() {
        let limits = Limits::default();
        let before = listing(&|_| json!({"description": "d"}));
        let numbered = listing(&|_| json!({"title": 7}));
        assert_eq!(relist(&before, &numbered, &limits), 0);
        // Nor can a tool whose title was no string take new labels.
        let after = listing(&|_| json!({"description": "e"}));
        assert_eq!(relist(&numbered, &after, &limits), 0);
    }

    #[test]
    fn a_secret_kept_since_is_redacted_from_the_new_labels() {
        let secret = "canary-relabel-key-41d0e2";
        let limits = Limits::default();
        let before = listing(&|_| json!({"description": "d"}));
        let first = ServerTools::build("s", before, &limits).unwrap();
        let _kept = crate::redact::KeptSecret::all([secret]);
        let after = listing(&|_| json!({"title": secret, "description": format!("uses {secret}")}));
        let at = RELABELED.with(Cell::get);
        let again = ServerTools::build_after("s", after.to_vec(), &limits, Some(&first)).unwrap();
        assert_eq!(RELABELED.with(Cell::get) - at, 7);
        for tool in &again.tools {
            assert!(
                !tool.definition_json.contains(secret),
                "{}",
                tool.definition_json
            );
            assert!(!tool.display_title().unwrap_or("").contains(secret));
        }
        let fresh = ServerTools::build("s", after, &limits).unwrap();
        assert_eq!(seen(&again), seen(&fresh));
    }

    #[test]
    fn a_secret_kept_since_in_a_reused_diagnostic_is_checked_again() {
        // Red team of this change: a dropped output schema's `type` is
        // quoted in its diagnostic, not in the definition; reused as it
        // was (same labels) or relabeled, the note kept the secret.
        let secret = "canary-relabel-note-9a61c4";
        let limits = Limits::default();
        let entry = |d: &str| {
            json!({"name": "o", "description": d, "inputSchema": {"type": "object"},
                   "outputSchema": {"type": secret}})
        };
        let first = ServerTools::build("s", vec![entry("d")], &limits).unwrap();
        let _kept = crate::redact::KeptSecret::all([secret]);
        for label in ["d", "e"] {
            let again =
                ServerTools::build_after("s", vec![entry(label)], &limits, Some(&first)).unwrap();
            let fresh = ServerTools::build("s", vec![entry(label)], &limits).unwrap();
            assert_eq!(seen(&again), seen(&fresh));
            assert_eq!(again.diagnostics, fresh.diagnostics);
            for d in &again.diagnostics {
                assert!(!d.reason.contains(secret), "{label}: {}", d.reason);
            }
        }
    }

    #[test]
    fn a_description_cut_inside_a_value_kept_since_is_checked_again() {
        // Red team: cut to maxToolDescriptionBytes before the value was
        // kept, the description holds only its prefix, which no search for
        // the whole value finds; a full check redacts first, then cuts.
        let secret = "canary-cut-secret-77aa";
        let limits = Limits {
            max_tool_description_bytes: 20,
            ..Limits::default()
        };
        let entry = json!({"name": "c", "description": format!("prefix {secret} tail"),
                           "inputSchema": {"type": "object"}});
        let first = ServerTools::build("s", vec![entry.clone()], &limits).unwrap();
        assert!(first.tools[0].definition_json.contains("canary-cut"));
        let _kept = crate::redact::KeptSecret::all([secret]);
        let again =
            ServerTools::build_after("s", vec![entry.clone()], &limits, Some(&first)).unwrap();
        let fresh = ServerTools::build("s", vec![entry], &limits).unwrap();
        assert_eq!(seen(&again), seen(&fresh));
        assert!(!again.tools[0].definition_json.contains("canary-cut"));
    }
}
