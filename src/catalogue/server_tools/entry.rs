//! One raw `tools/list` entry into a listing, read from the text the server
//! sent: its members one level deep ([`Members`]) give its fingerprints and
//! its name, so that an entry checked before is reused, or only relabeled,
//! without its tree ever being built; a new or reshaped entry is parsed
//! and checked in full ([`Listing::check_tool`]).
//!
//! The decisions are a full check's: the same name rules in the same order
//! ([`Listing::identify_name`]), the last of a repeated member (as a parse
//! into a `Map` keeps it), and an entry that is not an object or has no
//! string name goes to the full check, which says why it is left out.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::super::source::{source_digests, SourceDigests, LABELS};
use super::{relabel, DiagnosticAction, Listing, ServerTool, ServerTools};
use crate::error::HostError;
use crate::json::Members;

impl Listing<'_> {
    /// Checks entry `raw`, or reuses the tool of `previous` (the server's
    /// current tools, and where in them this entry's tool is looked for
    /// first) checked from the same text (its schema bytes counted and its
    /// diagnostics given again), or, when only the entry's labels changed,
    /// that tool with new labels ([`Listing::relabel`]). `Ok(None)`: left
    /// out, with a diagnostic.
    ///
    /// # Errors
    /// `limit_exceeded` when the schemas so far pass `maxTotalSchemaBytes`.
    pub(super) fn check_entry(
        &mut self,
        raw: &RawValue,
        previous: Option<(&ServerTools, usize)>,
    ) -> Result<Option<Arc<ServerTool>>, HostError> {
        let text = raw.get();
        let members = Members::of(text);
        let source = source_digests(text, members.as_ref());
        let Some(name) = members.as_ref().and_then(|m| m.string("name")) else {
            return self.check_text(text, None, source);
        };
        let name = match self.identify_name(name) {
            Ok(name) => name,
            Err(d) => {
                self.diagnostics.push(d);
                return Ok(None);
            }
        };
        let known = previous.and_then(|(p, hint)| p.same_shape(&name, &source, hint));
        if let Some(known) = known.filter(|k| !k.holds_kept_since()) {
            if known.source.labels == source.labels {
                self.add_schema_bytes(known.schema_bytes)?;
                self.diagnostics.extend(known.notes.iter().cloned());
                return Ok(Some(Arc::clone(known)));
            }
            let labels = members.as_ref().and_then(labels_of);
            if let Some(labels) = labels.filter(|l| relabel::fits(known, l)) {
                return self.relabel(known, name, labels, source).map(Some);
            }
        }
        self.check_text(text, Some(name), source)
    }

    /// The full check of entry `text`, parsed now; `name`: its name when
    /// already identified (the entry is then an object).
    fn check_text(
        &mut self,
        text: &str,
        name: Option<String>,
        source: SourceDigests,
    ) -> Result<Option<Arc<ServerTool>>, HostError> {
        let identified = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(mut tool)) if name.is_some() => {
                tool.remove("name");
                name.map(|name| (name, tool)).ok_or(None)
            }
            Ok(parsed) => self.identify(parsed).map_err(Some),
            // Text the transport took for JSON that does not parse (a lone
            // surrogate escape, nesting past the parser's bound, a number
            // out of range). It is no tool: its name stays free for a
            // later entry, as when the entry was never listed.
            Err(e) => {
                if let Some(name) = &name {
                    self.seen.remove(name);
                }
                Err(Some(self.diag(
                    name.as_deref().unwrap_or(""),
                    DiagnosticAction::Omitted,
                    format!("a tools/list entry is not valid JSON ({e})"),
                )))
            }
        };
        let (name, tool) = match identified {
            Ok(found) => found,
            Err(d) => {
                self.diagnostics.extend(d);
                return Ok(None);
            }
        };
        let first = self.diagnostics.len();
        let checked = self.check_tool(name, tool, source)?;
        Ok(checked.map(|mut tool| {
            tool.notes = self.diagnostics[first..].into();
            Arc::new(tool)
        }))
    }
}

/// The entry's labels (`title`, `description`) parsed, in a map of their
/// own; `None` when one does not parse (the full check then says why).
fn labels_of(members: &Members<'_>) -> Option<Map<String, Value>> {
    let mut labels = Map::with_capacity(LABELS.len());
    for key in LABELS {
        if let Some(raw) = members.get(key) {
            labels.insert(key.to_owned(), serde_json::from_str(raw.get()).ok()?);
        }
    }
    Some(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;

    fn texts(entries: &[&str]) -> Vec<Box<RawValue>> {
        let text = |e: &&str| RawValue::from_string((*e).to_owned()).expect("JSON");
        entries.iter().map(text).collect()
    }

    /// Name, definition text and digest of each tool, and the diagnostics.
    fn shown(tools: &ServerTools) -> (Vec<(String, String, String)>, Vec<String>) {
        let tool = |t: &Arc<ServerTool>| {
            let digest = t.digest().to_owned();
            (t.tool_name.clone(), t.definition_json.clone(), digest)
        };
        let notes = tools.diagnostics.iter().map(|d| format!("{d:?}")).collect();
        (tools.tools.iter().map(tool).collect(), notes)
    }

    /// Entries as a server may write them: spacing, escaped member names,
    /// repeated members, members in any order, entries that are no tool.
    const ODD: [&str; 8] = [
        r#" { "name" : "spaced" , "inputSchema" : { "type" : "object" } } "#,
        r#"{"na\u006de":"escaped","description":"d\u00e9","inputSchema":{"type":"object"}}"#,
        r#"{"name":"x","name":"repeated","description":"first","description":"last","inputSchema":{"type":"object"}}"#,
        r#"{"inputSchema":{"type":"object"},"description":"late name","name":"ordered"}"#,
        r#"{"name":7,"inputSchema":{"type":"object"}}"#,
        r#"["not", "an", "object"]"#,
        r#"{"name":"","inputSchema":{"type":"object"}}"#,
        r#"{"name":"spaced","inputSchema":{"type":"object"}}"#,
    ];

    #[test]
    fn an_entry_is_read_as_a_parse_of_its_text_reads_it() {
        let limits = Limits::default();
        let from_text = ServerTools::build_after_text("s", &texts(&ODD), &limits, None).unwrap();
        let trees = ODD
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        let from_trees = ServerTools::build_after("s", trees, &limits, None).unwrap();
        assert_eq!(shown(&from_text), shown(&from_trees));
        let names: Vec<&str> = from_text
            .tools
            .iter()
            .map(|t| t.tool_name.as_str())
            .collect();
        assert_eq!(names, ["spaced", "escaped", "repeated", "ordered"]);
        assert_eq!(from_text.tools[2].definition()["description"], "last");
        // Relisted from the same texts: each tool reused as it is; from the
        // trees' compact text (other spacing): checked again, the same.
        let again =
            ServerTools::build_after_text("s", &texts(&ODD), &limits, Some(&from_text)).unwrap();
        assert_eq!(shown(&again), shown(&from_text));
        assert!(again
            .tools
            .iter()
            .zip(&from_text.tools)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        let trees = ODD
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        let respaced = ServerTools::build_after("s", trees, &limits, Some(&from_text)).unwrap();
        assert_eq!(shown(&respaced), shown(&from_text));
        assert!(
            !Arc::ptr_eq(&respaced.tools[0], &from_text.tools[0]),
            "spacing changed"
        );
        assert!(
            Arc::ptr_eq(&respaced.tools[3], &from_text.tools[3]),
            "already compact"
        );
    }

    #[test]
    fn a_reordered_relist_finds_each_tool_by_its_name() {
        let limits = Limits::default();
        let tool = |n: &str| format!(r#"{{"name":"{n}","inputSchema":{{"type":"object"}}}}"#);
        let (a, b, c) = (tool("a"), tool("b"), tool("c"));
        let first =
            ServerTools::build_after_text("s", &texts(&[&a, &b, &c]), &limits, None).unwrap();
        // Reversed, and with an entry left out in front (positions shift).
        let again = [r#"{"name":""}"#, c.as_str(), b.as_str(), a.as_str()];
        let relisted =
            ServerTools::build_after_text("s", &texts(&again), &limits, Some(&first)).unwrap();
        let names: Vec<&str> = relisted
            .tools
            .iter()
            .map(|t| t.tool_name.as_str())
            .collect();
        assert_eq!(names, ["c", "b", "a"]);
        for t in &relisted.tools {
            let before = first
                .tools
                .iter()
                .find(|f| f.tool_name == t.tool_name)
                .unwrap();
            assert!(Arc::ptr_eq(t, before), "{} reused", t.tool_name);
        }
    }

    #[test]
    fn a_relabeled_text_takes_the_last_of_a_repeated_label() {
        let limits = Limits::default();
        let before = [r#"{"name":"t","description":"old","inputSchema":{"type":"object"}}"#];
        let after = [
            r#"{"name":"t","description":"x","description":"new","inputSchema":{"type":"object"}}"#,
        ];
        let first = ServerTools::build_after_text("s", &texts(&before), &limits, None).unwrap();
        let relisted =
            ServerTools::build_after_text("s", &texts(&after), &limits, Some(&first)).unwrap();
        let fresh = ServerTools::build_after_text("s", &texts(&after), &limits, None).unwrap();
        assert_eq!(shown(&relisted), shown(&fresh));
        assert_eq!(relisted.tools[0].definition()["description"], "new");
    }

    #[test]
    fn an_entry_that_does_not_parse_costs_only_itself() {
        // Valid JSON text to the transport's check, refused by a parse: a
        // lone surrogate escape (the transports repair these first) and
        // nesting past serde_json's recursion limit.
        let deep = format!(
            r#"{{"name":"deep","inputSchema":{{"type":"object","default":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let entries = [
            r#"{"name":"lone","description":"\ud800","inputSchema":{"type":"object"}}"#,
            deep.as_str(),
            r#"{"name":"fine","inputSchema":{"type":"object"}}"#,
            r#"{"name":"big","inputSchema":{"type":"object","maximum":1e400}}"#,
            // The same name after an entry that did not parse: kept.
            r#"{"name":"big","inputSchema":{"type":"object"}}"#,
        ];
        let built =
            ServerTools::build_after_text("s", &texts(&entries), &Limits::default(), None).unwrap();
        let names: Vec<&str> = built.tools.iter().map(|t| t.tool_name.as_str()).collect();
        assert_eq!(names, ["fine", "big"]);
        let omitted: Vec<(&str, bool)> = built
            .diagnostics
            .iter()
            .map(|d| (d.tool.as_str(), d.reason.contains("not valid JSON")))
            .collect();
        assert_eq!(omitted, [("lone", true), ("deep", true), ("big", true)]);
    }
}
