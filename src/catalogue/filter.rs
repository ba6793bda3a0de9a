//! Per-server tool filters: which of a server's tools the model catalogue
//! (`listTools`, AHP `session/serverToolsChanged`) offers and `callTool`
//! accepts. A filter matches the server's original tool name (`toolName`),
//! never the model-safe catalogue name.
//!
//! Three parts, checked in this order:
//!
//! 1. the switches of `setToolEnabled` (like VS Code's per-tool toggle):
//!    an exact name switched on or off wins over the lists;
//! 2. `excludeTools`: a name matching one of its patterns is left out;
//! 3. `includeTools` (when given): a name matching none of its patterns is
//!    left out. An empty list leaves every tool out.
//!
//! A pattern is an exact name, or a glob where `*` matches any run of
//! characters (also none) and `?` exactly one (`read_*`, `get-?ime`);
//! matching is case-sensitive, as tool names are (MCP 2025-11-25 "Tools ›
//! Tool names"). A filter is kept by server id in the [`super::Catalogue`],
//! so it outlives reconnects, restarts and `notifications/tools/list_changed`.

use std::collections::BTreeMap;

use wildmatch::WildMatch;

use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{
    MAX_TOOL_FILTER_PATTERNS, MAX_TOOL_FILTER_PATTERN_BYTES, MAX_TOOL_TOGGLES_PER_SERVER,
};

/// One pattern of `includeTools` / `excludeTools` (and of a server
/// policy rule, `crate::policy`): its text and its glob (`*`, `?`).
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    text: String,
    glob: WildMatch,
}

impl Pattern {
    /// The glob of `text`.
    pub(crate) fn new(text: String) -> Self {
        let glob = WildMatch::new(&text);
        Self { text, glob }
    }

    /// The pattern as written.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        self.glob.matches(name)
    }
}

/// The filter of one server (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// `includeTools`; `None`: every tool is included.
    include: Option<Vec<Pattern>>,
    /// `excludeTools`.
    exclude: Vec<Pattern>,
    /// Exact names switched on (`true`) or off (`false`) at run time.
    switched: BTreeMap<String, bool>,
}

impl ToolFilter {
    /// The filter of `includeTools` (`None`: all tools) and `excludeTools`.
    ///
    /// # Errors
    /// `invalid_argument` naming the field (`includeTools[3]: …`): more
    /// than [`MAX_TOOL_FILTER_PATTERNS`] patterns, an empty pattern, or
    /// one longer than [`MAX_TOOL_FILTER_PATTERN_BYTES`].
    pub fn new(include: Option<&[String]>, exclude: &[String]) -> HostResult<Self> {
        Ok(Self {
            include: include
                .map(|list| patterns("includeTools", list))
                .transpose()?,
            exclude: patterns("excludeTools", exclude)?,
            switched: BTreeMap::new(),
        })
    }

    /// Whether this filter leaves every tool in (no lists, no switches).
    pub fn is_empty(&self) -> bool {
        self.include.is_none() && self.exclude.is_empty() && self.switched.is_empty()
    }

    /// Why tool `name` is left out (the reason of its `filtered`
    /// diagnostic and of `tool_disabled`), or `None` when it is offered.
    pub fn why_disabled(&self, name: &str) -> Option<String> {
        match self.switched.get(name) {
            Some(true) => return None,
            Some(false) => return Some("switched off by setToolEnabled".to_owned()),
            None => {}
        }
        if let Some(p) = self.exclude.iter().find(|p| p.matches(name)) {
            return Some(format!("matches excludeTools pattern {:?}", p.text));
        }
        match &self.include {
            Some(list) if !list.iter().any(|p| p.matches(name)) => {
                Some("matches no includeTools pattern".to_owned())
            }
            _ => None,
        }
    }

    /// Switches tool `name` on or off, over the lists. Returns whether the
    /// switch changed.
    ///
    /// # Errors
    /// `invalid_argument` (an empty name, or one longer than
    /// [`MAX_TOOL_FILTER_PATTERN_BYTES`]); `limit_exceeded` when
    /// [`MAX_TOOL_TOGGLES_PER_SERVER`] names are switched already and `name`
    /// is not one of them.
    pub fn switch(&mut self, name: &str, enabled: bool) -> HostResult<bool> {
        check_text("tool", name)?;
        if !self.switched.contains_key(name) && self.switched.len() >= MAX_TOOL_TOGGLES_PER_SERVER {
            return Err(HostError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "setToolEnabled: {MAX_TOOL_TOGGLES_PER_SERVER} tools of this server are \
                     switched already (MAX_TOOL_TOGGLES_PER_SERVER)"
                ),
            ));
        }
        Ok(self.switched.insert(name.to_owned(), enabled) != Some(enabled))
    }

    /// This filter with the configured lists of `config` (the switches
    /// made at run time are kept).
    pub fn with_lists_of(mut self, config: &ToolFilter) -> Self {
        self.include.clone_from(&config.include);
        self.exclude.clone_from(&config.exclude);
        self
    }
}

/// The patterns of list `field`.
fn patterns(field: &str, list: &[String]) -> HostResult<Vec<Pattern>> {
    if list.len() > MAX_TOOL_FILTER_PATTERNS {
        return Err(HostError::new(
            ErrorCode::InvalidArgument,
            format!(
                "{field}: {} patterns, more than {MAX_TOOL_FILTER_PATTERNS} \
                 (MAX_TOOL_FILTER_PATTERNS)",
                list.len()
            ),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, text)| {
            check_text(&format!("{field}[{i}]"), text)?;
            Ok(Pattern::new(text.clone()))
        })
        .collect()
}

/// A pattern or tool name: not empty, at most [`MAX_TOOL_FILTER_PATTERN_BYTES`].
fn check_text(field: &str, text: &str) -> HostResult<()> {
    let why = match text.len() {
        0 => "must not be empty".to_owned(),
        n if n > MAX_TOOL_FILTER_PATTERN_BYTES => format!(
            "is {n} bytes, more than {MAX_TOOL_FILTER_PATTERN_BYTES} \
             (MAX_TOOL_FILTER_PATTERN_BYTES)"
        ),
        _ => return Ok(()),
    };
    Err(HostError::new(
        ErrorCode::InvalidArgument,
        format!("{field}: {why}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn filter(include: Option<&[&str]>, exclude: &[&str]) -> ToolFilter {
        let include = include.map(list);
        ToolFilter::new(include.as_deref(), &list(exclude)).unwrap()
    }

    #[test]
    fn no_lists_offer_every_tool() {
        let f = filter(None, &[]);
        assert!(f.is_empty());
        assert_eq!(f.why_disabled("anything"), None);
    }

    #[test]
    fn exact_names_and_globs_match_the_whole_name_case_sensitively() {
        let f = filter(None, &["read_*", "get-?ime", "exact"]);
        for out in ["read_", "read_file", "get-time", "exact"] {
            assert!(f.why_disabled(out).is_some(), "{out}");
        }
        for kept in [
            "Read_file",
            "xread_file",
            "get-tiime",
            "exactly",
            "get-ime",
            "exac",
        ] {
            assert_eq!(f.why_disabled(kept), None, "{kept}");
        }
        assert_eq!(
            f.why_disabled("read_file").unwrap(),
            "matches excludeTools pattern \"read_*\""
        );
    }

    #[test]
    fn include_keeps_only_matches_and_exclude_wins_over_it() {
        let f = filter(Some(&["read_*", "echo"]), &["read_secret"]);
        assert_eq!(f.why_disabled("echo"), None);
        assert_eq!(f.why_disabled("read_file"), None);
        assert_eq!(
            f.why_disabled("write_file").unwrap(),
            "matches no includeTools pattern"
        );
        assert!(f
            .why_disabled("read_secret")
            .unwrap()
            .contains("excludeTools"));
        let none = filter(Some(&[]), &[]);
        assert!(none.why_disabled("echo").is_some(), "an empty include list");
    }

    #[test]
    fn switches_win_over_both_lists_and_survive_new_lists() {
        let mut f = filter(Some(&["echo"]), &["echo_*"]);
        assert!(f.switch("echo_secret", true).unwrap());
        assert!(!f.switch("echo_secret", true).unwrap(), "unchanged");
        assert_eq!(f.why_disabled("echo_secret"), None);
        assert!(f.switch("echo", false).unwrap());
        assert_eq!(
            f.why_disabled("echo").unwrap(),
            "switched off by setToolEnabled"
        );
        let f = f.with_lists_of(&filter(None, &[]));
        assert_eq!(
            f.why_disabled("echo").unwrap(),
            "switched off by setToolEnabled"
        );
        assert_eq!(f.why_disabled("other"), None);
        assert!(!f.is_empty());
    }

    #[test]
    fn bounds_name_the_field() {
        let long = "x".repeat(MAX_TOOL_FILTER_PATTERN_BYTES + 1);
        let e = ToolFilter::new(None, &list(&["ok", ""])).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message, "excludeTools[1]: must not be empty");
        let e = ToolFilter::new(Some(std::slice::from_ref(&long)), &[]).unwrap_err();
        assert!(
            e.message.starts_with("includeTools[0]: is 1025 bytes"),
            "{}",
            e.message
        );
        let many = vec!["a".to_owned(); MAX_TOOL_FILTER_PATTERNS + 1];
        let e = ToolFilter::new(None, &many).unwrap_err();
        assert!(
            e.message.contains("MAX_TOOL_FILTER_PATTERNS"),
            "{}",
            e.message
        );
        let mut f = ToolFilter::default();
        assert_eq!(
            f.switch(&long, false).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        for i in 0..MAX_TOOL_TOGGLES_PER_SERVER {
            f.switched.insert(format!("t{i}"), false);
        }
        assert!(f.switch("t0", true).unwrap(), "a remembered name");
        assert_eq!(
            f.switch("new", true).unwrap_err().code,
            ErrorCode::LimitExceeded
        );
    }
}
