//! Tool search and summaries, for deferred tool loading: an agent harness
//! offers the model [`search`] results and [`ToolSummary`]s (no schemas)
//! and fetches the full definitions of the few tools it will call.
//!
//! ## Ranking
//!
//! Ranking uses [`nucleo_matcher`] (the fuzzy matcher of the Helix editor),
//! not a BM25 index: tool names are identifiers (`read_file`,
//! `getTinyImage`, `browser_tabs`) and queries are a few keywords, often
//! partial (`readfile`, `tab`), which a subsequence matcher with word-
//! boundary and camelCase bonuses ranks well and a word-token index misses
//! without a tokenizer of its own. Each query word is scored against the
//! tool's original name (fuzzy, weight 3), its display title (fuzzy,
//! weight 2) and its description (substring, weight 1: a fuzzy match over
//! a long text finds scattered letters anywhere); the word's score is the
//! best of the three, a tool's score is the sum over the words that match
//! it, and a tool no word matches is left out. Ties keep catalogue order.
//!
//! ## Index
//!
//! The searchable text of an entry (its fields as UTF-32, the description
//! cut at [`MAX_TOOL_SEARCH_DESCRIPTION_CHARS`]) is built by the first
//! search that sees the entry and kept with it; a catalogue generation
//! reuses every unchanged entry (see `Catalogue::rename`), so only new or
//! changed tools are indexed again. Only catalogue entries are searched:
//! app-only, task-required and filtered tools are never in it.

use std::sync::Arc;

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32String};
use serde::Serialize;

use super::CatalogueEntry;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{
    DEFAULT_TOOL_SEARCH_LIMIT, MAX_TOOL_SEARCH_DESCRIPTION_CHARS, MAX_TOOL_SEARCH_LIMIT,
    MAX_TOOL_SEARCH_QUERY_BYTES, MAX_TOOL_SEARCH_SERVER_IDS, MAX_TOOL_SEARCH_WORDS,
    MAX_TOOL_SUMMARY_DESCRIPTION_CHARS,
};

/// Weights of a word's match in the name, title and description.
const WEIGHTS: [u32; 3] = [3, 2, 1];

/// The searchable text of one catalogue entry (see the module docs).
#[derive(Debug)]
pub(crate) struct SearchText {
    /// Original name, display title, description (cut).
    fields: [Option<Utf32String>; 3],
}

impl SearchText {
    /// The searchable text of `entry`.
    pub(crate) fn of(entry: &CatalogueEntry) -> Self {
        let tool = &entry.tool;
        let description = tool.description().map(|d| {
            let cut: String = d.chars().take(MAX_TOOL_SEARCH_DESCRIPTION_CHARS).collect();
            Utf32String::from(cut)
        });
        Self {
            fields: [
                Some(Utf32String::from(tool.tool_name.as_str())),
                tool.display_title().map(Utf32String::from),
                description,
            ],
        }
    }

    /// The score of `words` (see the module docs), `None` when none matches.
    fn score(&self, words: &[[Atom; 2]], matcher: &mut Matcher) -> Option<u32> {
        let mut total: Option<u32> = None;
        for atoms in words {
            let best = self
                .fields
                .iter()
                .zip(WEIGHTS)
                .enumerate()
                .filter_map(|(i, (field, weight))| {
                    let atom = &atoms[usize::from(i == 2)];
                    let score = atom.score(field.as_ref()?.slice(..), matcher)?;
                    Some(u32::from(score) * weight)
                })
                .max();
            if let Some(best) = best {
                total = Some(total.unwrap_or(0) + best);
            }
        }
        total
    }
}

/// A catalogue entry without its schemas (`listToolSummaries`, and each
/// `searchTools` result): enough for a model to pick a tool, with the
/// size its full definition would take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSummary {
    /// Model-safe name (the `name` of the `listTools` entry).
    pub name: String,
    /// Display title: `title`, else `annotations.title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description's first non-blank line, trimmed, cut at
    /// [`MAX_TOOL_SUMMARY_DESCRIPTION_CHARS`] characters (then ending
    /// with `…`); `None` without a description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The owning server's customization id.
    pub customization_id: String,
    /// The tool's original name.
    pub tool_name: String,
    /// The entry's digest (as in `listTools`).
    pub digest: String,
    /// Estimated size of the full definition in model tokens: the bytes
    /// of the `listTools` entry's JSON text divided by 4, rounded up (a
    /// common rule of thumb for English text and JSON with BPE tokenizers;
    /// an estimate, not a tokenizer's count).
    pub estimated_tokens: u64,
}

impl ToolSummary {
    /// The summary of `entry`.
    pub fn of(entry: &CatalogueEntry) -> Self {
        let tool = &entry.tool;
        Self {
            name: entry.name.clone(),
            title: tool.display_title().map(str::to_owned),
            description: tool.description().as_deref().and_then(one_line),
            customization_id: entry.customization_id.to_string(),
            tool_name: tool.tool_name.clone(),
            digest: tool.digest().to_owned(),
            estimated_tokens: estimate_tokens(entry.json_len()),
        }
    }
}

/// The token estimate of a JSON text of `json_bytes` bytes (see
/// [`ToolSummary::estimated_tokens`]).
pub fn estimate_tokens(json_bytes: usize) -> u64 {
    (json_bytes as u64).div_ceil(4)
}

/// The first non-blank line of `text`, trimmed and cut (see
/// [`ToolSummary::description`]).
fn one_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut chars = line.char_indices();
    match chars.nth(MAX_TOOL_SUMMARY_DESCRIPTION_CHARS - 1) {
        Some((at, _)) if chars.next().is_some() => Some(format!("{}…", line[..at].trim_end())),
        _ => Some(line.to_owned()),
    }
}

/// One `searchTools` result: the tool's summary and its score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSearchHit {
    /// The tool.
    #[serde(flatten)]
    pub summary: ToolSummary,
    /// Higher is better; only comparable within one search (0 for every
    /// result of an empty query).
    pub score: u32,
}

/// A checked `searchTools` query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSearch {
    words: Vec<String>,
    limit: usize,
    server_ids: Option<Vec<String>>,
}

impl ToolSearch {
    /// Checks a query: `query` (words separated by white space; empty
    /// lists the catalogue in order), `limit` (default
    /// [`DEFAULT_TOOL_SEARCH_LIMIT`]), `server_ids` (only those servers'
    /// tools; ids of no server match nothing).
    ///
    /// # Errors
    /// `invalid_argument`: `query` over [`MAX_TOOL_SEARCH_QUERY_BYTES`],
    /// `limit` 0 or over [`MAX_TOOL_SEARCH_LIMIT`], more than
    /// [`MAX_TOOL_SEARCH_SERVER_IDS`] server ids.
    pub fn new(
        query: &str,
        limit: Option<u64>,
        server_ids: Option<Vec<String>>,
    ) -> HostResult<Self> {
        let invalid = |what: String| Err(HostError::new(ErrorCode::InvalidArgument, what));
        if query.len() > MAX_TOOL_SEARCH_QUERY_BYTES {
            return invalid(format!(
                "query: longer than {MAX_TOOL_SEARCH_QUERY_BYTES} bytes"
            ));
        }
        let limit = limit.unwrap_or(DEFAULT_TOOL_SEARCH_LIMIT as u64);
        if limit == 0 || limit > MAX_TOOL_SEARCH_LIMIT as u64 {
            return invalid(format!(
                "options.limit: must be an integer from 1 to {MAX_TOOL_SEARCH_LIMIT}"
            ));
        }
        if server_ids
            .as_ref()
            .is_some_and(|ids| ids.len() > MAX_TOOL_SEARCH_SERVER_IDS)
        {
            return invalid(format!(
                "options.serverIds: more than {MAX_TOOL_SEARCH_SERVER_IDS} ids"
            ));
        }
        let words = query.split_whitespace().take(MAX_TOOL_SEARCH_WORDS);
        Ok(Self {
            words: words.map(str::to_owned).collect(),
            limit: limit as usize,
            server_ids,
        })
    }

    /// The best [`ToolSearch::new`]'s `limit` entries of `entries` (a
    /// catalogue generation), best first.
    pub fn run(&self, entries: &[Arc<CatalogueEntry>]) -> Vec<ToolSearchHit> {
        let wanted = |e: &CatalogueEntry| {
            (self.server_ids.as_ref())
                .is_none_or(|ids| ids.iter().any(|id| **id == *e.customization_id))
        };
        let atom = |word: &str, kind| {
            Atom::new(
                word,
                CaseMatching::Ignore,
                Normalization::Smart,
                kind,
                false,
            )
        };
        let words: Vec<[Atom; 2]> = (self.words.iter())
            .map(|w| [atom(w, AtomKind::Fuzzy), atom(w, AtomKind::Substring)])
            .collect();
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut scored: Vec<(u32, &CatalogueEntry)> = entries
            .iter()
            .filter(|e| wanted(e))
            .filter_map(|e| {
                if words.is_empty() {
                    return Some((0, &**e));
                }
                Some((e.search_text().score(&words, &mut matcher)?, &**e))
            })
            .collect();
        // Stable: equal scores keep catalogue order.
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        scored.truncate(self.limit);
        (scored.into_iter())
            .map(|(score, e)| ToolSearchHit {
                summary: ToolSummary::of(e),
                score,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::catalogue::{Catalogue, ServerTools, ToolFilter};
    use crate::limits::Limits;

    fn server(c: &mut Catalogue, id: &str, tools: Vec<Value>) {
        let tools = ServerTools::build(id, tools, &Limits::default()).unwrap();
        c.set_server(id, Some(Arc::new(tools)));
    }

    fn tool(name: &str, title: &str, description: &str) -> Value {
        json!({"name": name, "title": title, "description": description,
               "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
    }

    fn catalogue() -> Catalogue {
        let mut c = Catalogue::default();
        server(
            &mut c,
            "files",
            vec![
                tool("read_file", "Read file", "Reads a file.\nSecond line."),
                tool("write_file", "Write file", "Writes a file."),
                tool(
                    "list_dir",
                    "List directory",
                    "Lists entries; echo is not here",
                ),
            ],
        );
        server(
            &mut c,
            "misc",
            vec![
                tool("echo", "Echo", "Echoes the input back."),
                tool("add", "Add numbers", "Adds two numbers."),
            ],
        );
        c
    }

    fn names(c: &Catalogue, query: &str, limit: Option<u64>, ids: Option<&[&str]>) -> Vec<String> {
        let ids = ids.map(|ids| ids.iter().map(|s| s.to_string()).collect());
        let search = ToolSearch::new(query, limit, ids).unwrap();
        let hits = search.run(&c.entries());
        hits.into_iter().map(|h| h.summary.tool_name).collect()
    }

    #[test]
    fn the_name_ranks_above_title_and_description() {
        let c = catalogue();
        assert_eq!(names(&c, "echo", None, None), ["echo", "list_dir"]);
        assert_eq!(names(&c, "echo", Some(1), None), ["echo"]);
        assert_eq!(names(&c, "readfile", None, None)[0], "read_file");
        assert_eq!(names(&c, "numbers", None, None), ["add"]);
        assert!(names(&c, "zzzz", None, None).is_empty());
        // Every word counts: both words beat one.
        assert_eq!(names(&c, "write file", None, None)[0], "write_file");
    }

    #[test]
    fn server_ids_limit_and_an_empty_query() {
        let c = catalogue();
        assert_eq!(names(&c, "echo", None, Some(&["files"])), ["list_dir"]);
        assert!(names(&c, "echo", None, Some(&["nobody"])).is_empty());
        assert_eq!(names(&c, " ", Some(2), None), ["read_file", "write_file"]);
        assert_eq!(names(&c, "", None, Some(&["misc"])), ["echo", "add"]);
    }

    #[test]
    fn filtered_tools_are_never_found() {
        let mut c = catalogue();
        let filter = ToolFilter::new(None, &["echo".to_owned()]).unwrap();
        c.set_filter("misc", Some(&filter));
        assert_eq!(names(&c, "echo", None, None), ["list_dir"]);
        assert_eq!(names(&c, "", None, Some(&["misc"])), ["add"]);
    }

    #[test]
    fn queries_are_bounded() {
        let long = "a".repeat(MAX_TOOL_SEARCH_QUERY_BYTES + 1);
        let code = |r: HostResult<ToolSearch>| r.unwrap_err().code;
        assert_eq!(
            code(ToolSearch::new(&long, None, None)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(ToolSearch::new("a", Some(0), None)),
            ErrorCode::InvalidArgument
        );
        let over = Some(MAX_TOOL_SEARCH_LIMIT as u64 + 1);
        assert_eq!(
            code(ToolSearch::new("a", over, None)),
            ErrorCode::InvalidArgument
        );
        let ids = vec![String::new(); MAX_TOOL_SEARCH_SERVER_IDS + 1];
        assert_eq!(
            code(ToolSearch::new("a", None, Some(ids))),
            ErrorCode::InvalidArgument
        );
        let many = "w ".repeat(MAX_TOOL_SEARCH_WORDS + 5);
        assert_eq!(
            ToolSearch::new(&many, None, None).unwrap().words.len(),
            MAX_TOOL_SEARCH_WORDS
        );
    }

    #[test]
    fn summaries_have_no_schema_and_a_token_estimate() {
        let c = catalogue();
        let entry = c.by_model_name("mcp__files__read_file").unwrap();
        let summary = ToolSummary::of(entry);
        assert_eq!(summary.description.as_deref(), Some("Reads a file."));
        assert_eq!(summary.title.as_deref(), Some("Read file"));
        assert_eq!(
            summary.estimated_tokens,
            estimate_tokens(entry.json().len())
        );
        assert_eq!(entry.json_len(), entry.json().len());
        assert_eq!(
            summary.estimated_tokens,
            (entry.json().len() as u64).div_ceil(4)
        );
        let js = serde_json::to_value(&summary).unwrap();
        let keys: Vec<&str> = js.as_object().unwrap().keys().map(String::as_str).collect();
        let expected = [
            "name",
            "title",
            "description",
            "customizationId",
            "toolName",
            "digest",
            "estimatedTokens",
        ];
        assert_eq!(keys, expected);
    }

    #[test]
    fn one_line_takes_the_first_line_and_cuts_it() {
        assert_eq!(one_line("\n  first \nsecond").as_deref(), Some("first"));
        assert_eq!(one_line(" \n "), None);
        let exact = "x".repeat(MAX_TOOL_SUMMARY_DESCRIPTION_CHARS);
        assert_eq!(one_line(&exact).as_deref(), Some(exact.as_str()));
        let long = "é".repeat(MAX_TOOL_SUMMARY_DESCRIPTION_CHARS + 1);
        let cut = one_line(&long).unwrap();
        assert_eq!(cut.chars().count(), MAX_TOOL_SUMMARY_DESCRIPTION_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn an_unchanged_entry_keeps_its_index_across_generations() {
        let mut c = catalogue();
        let before = c.by_model_name("mcp__misc__echo").unwrap().search_text() as *const _;
        server(&mut c, "files", vec![tool("read_file", "Read", "Reads.")]);
        let after = c.by_model_name("mcp__misc__echo").unwrap().search_text() as *const _;
        assert_eq!(before, after);
    }

    /// `cargo test --release --lib catalogue::search -- --ignored --nocapture`
    #[test]
    #[ignore = "timing; prints searchTools time over 5,000 tools"]
    fn search_time_over_5000_tools() {
        let mut c = Catalogue::default();
        for s in 0..50 {
            let tools = (0..100)
                .map(|t| {
                    let d = format!(
                        "Tool {t} of server {s}: reads, writes and lists records of kind k{t}."
                    );
                    tool(&format!("tool_{s}_{t}_op"), &format!("Tool {t} op"), &d)
                })
                .collect();
            server(&mut c, &format!("srv{s}"), tools);
        }
        let entries = c.entries();
        assert_eq!(entries.len(), 5_000);
        let search = ToolSearch::new("records k42 op", Some(20), None).unwrap();
        let first = std::time::Instant::now();
        assert_eq!(search.run(&entries).len(), 20);
        println!("first search (builds the index): {:?}", first.elapsed());
        let mut times: Vec<_> = (0..21)
            .map(|_| {
                let t = std::time::Instant::now();
                search.run(&entries);
                t.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "searchTools over 5,000 tools: p50 {:?}, max {:?}",
            times[10], times[20]
        );
    }
}
