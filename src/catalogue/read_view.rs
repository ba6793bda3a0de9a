//! The catalogue as the caller last read it (`listTools`), for the
//! stale-tool check of later calls: a call names a tool the model saw, and
//! if that tool changed or disappeared since, the call fails with
//! `stale_tool` instead of running with arguments built for another schema.
//!
//! ## Lock
//!
//! [`ReadCatalogue`] owns one `Mutex` (the last read snapshot). It is taken
//! while the catalogue's read lock is held ([`ReadCatalogue::resolve`]), never
//! the other way round, and nothing is locked while it is held (see the
//! `## Lock order` section of [`crate::host`]).

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

use super::sorted_index::SortedIndex;
use super::{Catalogue, CatalogueEntry};
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, StaleReason};

/// How a call names its tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef {
    /// A model-safe catalogue name (the `name` of a `listTools` entry).
    Catalogue(String),
    /// A server's customization id plus the server's original tool name
    /// (callable even when the tool is not in the model catalogue, e.g.
    /// app-only tools).
    Original {
        /// Customization id of the server.
        server_id: String,
        /// The tool's name as the server lists it.
        tool_name: String,
    },
}

/// A call target after [`ReadCatalogue::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTool {
    /// Customization id of the server.
    pub server_id: String,
    /// The server's original tool name.
    pub tool_name: String,
    /// The tool's display title, if the catalogue lists one: `title`, else
    /// `annotations.title` (see `ServerTool::display_title`).
    pub title: Option<String>,
}

/// One read snapshot, indexed by (server id, original name) on first use.
#[derive(Default)]
struct Snapshot {
    entries: Arc<Vec<Arc<CatalogueEntry>>>,
    /// Positions in `entries`, sorted by (server id, original tool name):
    /// searched with the entries' own strings (no copy of a name kept, no
    /// key built per call).
    index: OnceLock<SortedIndex>,
}

impl Snapshot {
    /// The digest the caller read for `tool` of `server`, if it read one.
    fn digest(&self, server: &str, tool: &str) -> Option<&str> {
        let index = (self.index).get_or_init(|| SortedIndex::new(&self.entries, server_and_tool));
        let at = index.find(&self.entries, server_and_tool, &(server, tool))?;
        Some(self.entries[at].tool.digest())
    }
}

/// The key of a [`Snapshot`]'s index: the server id and the original name.
fn server_and_tool(entry: &Arc<CatalogueEntry>) -> (&str, &str) {
    (&entry.customization_id, &entry.tool.tool_name)
}

/// The catalogue as of the caller's last [`ReadCatalogue::read`].
#[derive(Default)]
pub struct ReadCatalogue {
    last: Mutex<Snapshot>,
}

impl ReadCatalogue {
    fn last(&self) -> MutexGuard<'_, Snapshot> {
        self.last.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The model catalogue now (one `Arc` clone, no copy), recorded as what
    /// the caller has read.
    pub fn read(&self, catalogue: &RwLock<Catalogue>) -> Arc<Vec<Arc<CatalogueEntry>>> {
        let entries = catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        let read = Snapshot {
            entries: entries.clone(),
            index: OnceLock::new(),
        };
        let before = std::mem::replace(&mut *self.last(), read);
        // The last reference to an older catalogue may be this one.
        crate::reclaim::drop_later(before);
        entries
    }

    /// Resolves a call target against the catalogue now, checks the
    /// server's tool filter and that the tool is fresh (see
    /// [`ReadCatalogue::check_fresh`]).
    ///
    /// # Errors
    /// `tool_disabled` (data `{serverId, toolName, reason}`) when the
    /// server's filter leaves the tool out, also for a catalogue name the
    /// caller read before the tool was filtered out; `not_found` (data
    /// `{reason: "removed"}`) when a catalogue name is not in the
    /// catalogue; `stale_tool` as [`ReadCatalogue::check_fresh`].
    pub fn resolve(
        &self,
        catalogue: &RwLock<Catalogue>,
        target: ToolRef,
        digest: Option<&str>,
    ) -> HostResult<ResolvedTool> {
        let catalogue = catalogue.read().unwrap_or_else(PoisonError::into_inner);
        let (server_id, tool_name) = match target {
            ToolRef::Original {
                server_id,
                tool_name,
            } => (server_id, tool_name),
            ToolRef::Catalogue(name) => match catalogue.by_model_name(&name) {
                Some(e) => {
                    let now = (e.customization_id.to_string(), e.tool.tool_name.clone());
                    if digest.is_none() {
                        self.check_same_tool(&name, &now)?;
                    }
                    now
                }
                None => return Err(self.missing(&catalogue, &name)),
            },
        };
        if let Some(reason) = catalogue.why_disabled(&server_id, &tool_name) {
            return Err(disabled(server_id, tool_name, reason));
        }
        let title = self.check_fresh(&catalogue, &server_id, &tool_name, digest)?;
        Ok(ResolvedTool {
            server_id,
            tool_name,
            title,
        })
    }

    /// Checks that catalogue name `name`, which names tool `now` (server
    /// id, original name) in the catalogue now, named the same tool when
    /// the caller last read the catalogue: a name can pass to another tool
    /// (a filter change, a re-list that renamed tools), and a call by the
    /// name the model read must not reach a tool it never read.
    ///
    /// # Errors
    /// `stale_tool` (data `{reason: "changed", serverId, toolName}`: the
    /// tool the caller read under that name).
    fn check_same_tool(&self, name: &str, now: &(String, String)) -> HostResult<()> {
        let last = self.last();
        let Some(read) = last.entries.iter().find(|e| e.name == name) else {
            return Ok(());
        };
        let (server, tool) = (&*read.customization_id, read.tool.tool_name.as_str());
        if (server, tool) == (now.0.as_str(), now.1.as_str()) {
            return Ok(());
        }
        Err(HostError::new(
            ErrorCode::StaleTool,
            format!(
                "catalogue name {name:?} named tool {tool:?} on {server} when the catalogue was \
                 read and names tool {:?} on {} now; read it again (listTools) before calling",
                now.1, now.0
            ),
        )
        .with_detail(ErrorDetail::Stale {
            reason: StaleReason::Changed,
            tool: Some((server.to_owned(), tool.to_owned())),
        }))
    }

    /// The error of catalogue name `name`, not in the catalogue now:
    /// `tool_disabled` when the caller last read it for a tool that the
    /// server's filter now leaves out, else `not_found`.
    fn missing(&self, catalogue: &Catalogue, name: &str) -> HostError {
        let read = self
            .last()
            .entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| {
                let tool = e.tool.tool_name.clone();
                (e.customization_id.to_string(), tool)
            });
        if let Some((server, tool)) = read {
            if let Some(reason) = catalogue.why_disabled(&server, &tool) {
                return disabled(server, tool, reason);
            }
        }
        HostError::new(
            ErrorCode::NotFound,
            format!(
                "no tool {name:?} in the catalogue (pass serverId to call a tool by its \
                 original name)"
            ),
        )
        .with_detail(ErrorDetail::Stale {
            reason: StaleReason::Removed,
            tool: None,
        })
    }

    /// Checks that tool `tool` of server `server` is what the caller
    /// validated its arguments against: the `digest` given, else the digest
    /// as of the last [`ReadCatalogue::read`]. A tool the caller never read
    /// (and no `digest`) is fresh. Returns the tool's display title
    /// (`title`, else `annotations.title`), if listed.
    ///
    /// # Errors
    /// `stale_tool` when the tool changed or disappeared since; data
    /// `{reason: "changed" | "removed", serverId, toolName}`.
    pub fn check_fresh(
        &self,
        catalogue: &Catalogue,
        server: &str,
        tool: &str,
        digest: Option<&str>,
    ) -> HostResult<Option<String>> {
        let listed = catalogue.server(server);
        let listed = listed.as_ref().and_then(|st| st.get(tool));
        let now = listed.map(|t| t.digest());
        let title = listed.and_then(|t| t.display_title().map(str::to_owned));
        let last = self.last();
        let Some(expected) = digest.or_else(|| last.digest(server, tool)) else {
            return Ok(title);
        };
        let (reason, what) = match now {
            None => (StaleReason::Removed, "removed"),
            Some(d) if d != expected => (StaleReason::Changed, "changed"),
            Some(_) => return Ok(title),
        };
        Err(HostError::new(
            ErrorCode::StaleTool,
            format!(
                "tool {tool:?} on {server} was {what} since the catalogue was read; read it \
                 again (listTools) before calling"
            ),
        )
        .with_detail(ErrorDetail::Stale {
            reason,
            tool: Some((server.to_owned(), tool.to_owned())),
        }))
    }
}

/// The `tool_disabled` error of tool `tool` of server `server` (data
/// `{serverId, toolName, reason}`).
pub(crate) fn disabled(server: String, tool: String, reason: String) -> HostError {
    HostError::new(
        ErrorCode::ToolDisabled,
        format!("tool {tool:?} on {server} is disabled: {reason}"),
    )
    .with_detail(ErrorDetail::ToolDisabled {
        server_id: server,
        tool_name: tool,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::ServerTools;
    use crate::limits::Limits;
    use serde_json::json;

    /// A catalogue with server `srv` listing `tools` (name, description).
    fn catalogue(tools: &[(&str, &str)]) -> RwLock<Catalogue> {
        let mut c = Catalogue::default();
        set(&mut c, tools);
        RwLock::new(c)
    }

    fn set(c: &mut Catalogue, tools: &[(&str, &str)]) {
        let raw = tools
            .iter()
            .map(|(name, description)| {
                json!({
                    "name": name,
                    "title": format!("{name} title"),
                    "description": description,
                    "inputSchema": {"type": "object"},
                })
            })
            .collect();
        let tools = ServerTools::build("srv", raw, &Limits::default()).unwrap();
        c.set_server("srv", Some(Arc::new(tools)));
    }

    fn original(tool: &str) -> ToolRef {
        ToolRef::Original {
            server_id: "srv".into(),
            tool_name: tool.into(),
        }
    }

    fn stale_reason(e: &HostError) -> String {
        assert_eq!(e.code, ErrorCode::StaleTool, "{e}");
        e.detail.data().unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn never_read_is_fresh_and_resolves_catalogue_names() {
        let c = catalogue(&[("echo", "v1")]);
        let view = ReadCatalogue::default();
        let name = c.read().unwrap().entries()[0].name.clone();
        let resolved = view.resolve(&c, ToolRef::Catalogue(name), None).unwrap();
        assert_eq!(
            resolved,
            ResolvedTool {
                server_id: "srv".into(),
                tool_name: "echo".into(),
                title: Some("echo title".into()),
            }
        );
        let missing = view.resolve(&c, ToolRef::Catalogue("nope".into()), None);
        let e = missing.unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.detail.data().unwrap()["reason"], "removed");
    }

    #[test]
    fn the_resolved_title_falls_back_to_annotations_title() {
        let mut c = Catalogue::default();
        let raw = vec![json!({"name": "browser_tabs", "annotations": {"title": "Manage tabs"}})];
        let tools = ServerTools::build("srv", raw, &Limits::default()).unwrap();
        c.set_server("srv", Some(Arc::new(tools)));
        let view = ReadCatalogue::default();
        let resolved = view.resolve(&RwLock::new(c), original("browser_tabs"), None);
        assert_eq!(resolved.unwrap().title.as_deref(), Some("Manage tabs"));
    }

    #[test]
    fn a_changed_digest_is_stale_changed() {
        let c = catalogue(&[("echo", "v1")]);
        let view = ReadCatalogue::default();
        view.read(&c);
        assert!(view.resolve(&c, original("echo"), None).is_ok());
        set(&mut c.write().unwrap(), &[("echo", "v2")]);
        let e = view.resolve(&c, original("echo"), None).unwrap_err();
        assert_eq!(stale_reason(&e), "changed");
        let data = e.detail.data().unwrap();
        assert_eq!(
            (&data["serverId"], &data["toolName"]),
            (&json!("srv"), &json!("echo"))
        );
        view.read(&c);
        assert!(
            view.resolve(&c, original("echo"), None).is_ok(),
            "read again"
        );
    }

    #[test]
    fn a_removed_tool_is_stale_removed() {
        let c = catalogue(&[("echo", "v1"), ("gone", "v1")]);
        let view = ReadCatalogue::default();
        view.read(&c);
        set(&mut c.write().unwrap(), &[("echo", "v1")]);
        let e = view.resolve(&c, original("gone"), None).unwrap_err();
        assert_eq!(stale_reason(&e), "removed");
    }

    #[test]
    fn an_explicit_digest_wins_over_the_last_read() {
        let c = catalogue(&[("echo", "v1")]);
        let view = ReadCatalogue::default();
        view.read(&c);
        let read = c.read().unwrap().entries()[0].tool.digest().to_owned();
        set(&mut c.write().unwrap(), &[("echo", "v2")]);
        let now = c.read().unwrap().entries()[0].tool.digest().to_owned();
        let fresh = view.check_fresh(&c.read().unwrap(), "srv", "echo", Some(&now));
        assert_eq!(fresh.unwrap(), Some("echo title".into()));
        let old = view.check_fresh(&c.read().unwrap(), "srv", "echo", Some(&read));
        assert_eq!(stale_reason(&old.unwrap_err()), "changed");
    }

    #[test]
    fn a_filtered_tool_is_refused_by_either_name_until_switched_on() {
        let c = catalogue(&[("echo", "v1"), ("read_file", "v1")]);
        let view = ReadCatalogue::default();
        view.read(&c);
        let filter = crate::catalogue::ToolFilter::new(None, &["read_*".to_owned()]).unwrap();
        assert!(c.write().unwrap().set_filter("srv", Some(&filter)));
        let e = view.resolve(&c, original("read_file"), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolDisabled);
        assert_eq!(
            e.detail.data().unwrap(),
            json!({"serverId": "srv", "toolName": "read_file", "reason": "matches excludeTools pattern \"read_*\""})
        );
        // The catalogue name read before the filter: tool_disabled, not not_found.
        let by_name = ToolRef::Catalogue("mcp__srv__read_file".into());
        let e = view.resolve(&c, by_name.clone(), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolDisabled);
        assert!(view.resolve(&c, original("echo"), None).is_ok());
        let e = view.resolve(&c, ToolRef::Catalogue("mcp__srv__nope".into()), None);
        assert_eq!(e.unwrap_err().code, ErrorCode::NotFound);
        c.write()
            .unwrap()
            .switch_tool("srv", "read_file", true)
            .unwrap();
        assert!(view.resolve(&c, by_name, None).is_ok());
    }

    #[test]
    fn a_catalogue_name_that_passed_to_another_tool_is_stale() {
        // `a.b` and `a_b` both want the model name `mcp__srv__a_b`; with
        // `a_b` filtered out, `a.b` has it.
        let c = catalogue(&[("a.b", "reads"), ("a_b", "deletes")]);
        let excluded = |tool: &str| crate::catalogue::ToolFilter::new(None, &[tool.to_owned()]);
        let filter = excluded("a_b").unwrap();
        assert!(c.write().unwrap().set_filter("srv", Some(&filter)));
        let view = ReadCatalogue::default();
        view.read(&c);
        let name = c.read().unwrap().entries()[0].name.clone();
        assert_eq!(name, "mcp__srv__a_b");
        let by_name = ToolRef::Catalogue(name);
        assert_eq!(
            view.resolve(&c, by_name.clone(), None).unwrap().tool_name,
            "a.b"
        );
        // Now `a.b` is filtered out and `a_b` takes the name.
        let filter = excluded("a.b").unwrap();
        assert!(c.write().unwrap().set_filter("srv", Some(&filter)));
        assert_eq!(c.read().unwrap().entries()[0].tool.tool_name, "a_b");
        let e = view.resolve(&c, by_name.clone(), None).unwrap_err();
        assert_eq!(stale_reason(&e), "changed");
        let data = e.detail.data().unwrap();
        assert_eq!(
            (&data["toolName"], &data["serverId"]),
            (&json!("a.b"), &json!("srv"))
        );
        // With the digest of the tool it names now, or read again: called.
        let now = c.read().unwrap().entries()[0].tool.digest().to_owned();
        assert!(view.resolve(&c, by_name.clone(), Some(&now)).is_ok());
        view.read(&c);
        assert_eq!(view.resolve(&c, by_name, None).unwrap().tool_name, "a_b");
    }
}
