//! MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`), the
//! pure parts: the entries of a server's `skills/list` checked
//! ([`entry_of`]), the registry of every server's entries ([`SkillRegistry`],
//! keyed by server id and skill URI, never by URI alone), the `SKILL.md`
//! frontmatter ([`frontmatter`]), the check of a file read against its
//! manifest entry ([`content`]), and the AHP `SkillCustomization`s that
//! publish them ([`publish`]).
//!
//! The requests (listing after connect, loading) live in the supervisor
//! (`connector::open_listed`) and the host façade (`host/skills.rs`).

pub mod content;
pub mod frontmatter;
pub mod publish;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{Skill, SkillResources};
use serde_json::{json, Value};

use crate::limits::{MAX_SKILL_RESOURCES, MAX_SKILL_TOTAL_BYTES};

/// One entry of a server's listing, as checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedSkill {
    /// The entry's `uri` (its `SKILL.md`); empty when the entry has none.
    pub uri: String,
    /// The entry as sent.
    pub raw: Value,
    /// The parsed entry; `None` when it is not a valid skill entry.
    pub skill: Option<Skill>,
    /// Why the entry cannot be loaded (`None`: it can).
    pub problem: Option<String>,
}

impl ListedSkill {
    /// The entry as JS sees it (`SkillEntry` in `index.d.ts`): `{serverId,
    /// uri, name, description, frontmatter, resources, problem?}`.
    pub fn to_json(&self, server_id: &str) -> Value {
        let fm = self.raw.get("frontmatter").cloned().unwrap_or(Value::Null);
        let text = |k: &str| fm.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let mut out = json!({
            "serverId": server_id,
            "uri": self.uri,
            "name": text("name"),
            "description": text("description"),
            "frontmatter": fm,
            "resources": self.raw.get("resources").cloned().unwrap_or(Value::Null),
        });
        if let Some(problem) = &self.problem {
            out["problem"] = Value::String(problem.clone());
        }
        out
    }
}

/// Checks one `Skill` entry (from `skills/list` or `skills/get`): its
/// shape, the rules the spec puts on an entry (URI ends in `/SKILL.md`
/// whose segment is the name, naming rules, `SKILL.md` listed, files inside
/// the skill, each once, `sha256:` digests), then the per-skill limits
/// (at most [`MAX_SKILL_RESOURCES`] files, [`MAX_SKILL_TOTAL_BYTES`] in all).
/// A broken entry is kept with its `problem`, so it never hides its siblings.
pub fn entry_of(raw: Value) -> ListedSkill {
    let uri = raw
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let checked = serde_json::from_value::<Skill>(raw.clone())
        .map_err(|e| format!("not a skill entry: {e}"))
        .and_then(|skill| {
            skill.validate().map_err(|e| e.to_string())?;
            within_limits(&skill)?;
            Ok(skill)
        });
    match checked {
        Ok(skill) => ListedSkill {
            uri,
            raw,
            skill: Some(skill),
            problem: None,
        },
        Err(problem) => ListedSkill {
            uri,
            raw,
            skill: None,
            problem: Some(problem),
        },
    }
}

fn within_limits(skill: &Skill) -> Result<(), String> {
    let SkillResources::Files(files) = &skill.resources else {
        return Ok(());
    };
    if files.len() > MAX_SKILL_RESOURCES {
        return Err(format!(
            "{} files, more than the {MAX_SKILL_RESOURCES} a skill may have",
            files.len()
        ));
    }
    let total = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
    if total > MAX_SKILL_TOTAL_BYTES {
        return Err(format!(
            "{total} bytes in all, more than the {MAX_SKILL_TOTAL_BYTES} a skill may have"
        ));
    }
    Ok(())
}

/// Every server's last listing, by server id (a leaf lock).
#[derive(Debug, Default)]
pub struct SkillRegistry(Mutex<HashMap<String, Arc<Vec<ListedSkill>>>>);

impl SkillRegistry {
    /// Replaces server `server_id`'s entries; `false` when they are the same.
    pub fn set(&self, server_id: &str, skills: Vec<ListedSkill>) -> bool {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map.get(server_id).is_some_and(|old| **old == skills) {
            return false;
        }
        map.insert(server_id.to_owned(), Arc::new(skills));
        true
    }

    /// Forgets top-level id `id` (removed): the server `id`, or every
    /// server `id/…` of plugin `id`.
    pub fn forget(&self, id: &str) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let prefix = format!("{id}/");
        map.retain(|k, _| k != id && !k.starts_with(&prefix));
    }

    /// Server `server_id`'s entries (none listed yet: empty).
    pub fn of(&self, server_id: &str) -> Arc<Vec<ListedSkill>> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(server_id).cloned().unwrap_or_default()
    }

    /// Every server with entries, sorted by id.
    pub fn all(&self) -> Vec<(String, Arc<Vec<ListedSkill>>)> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out: Vec<_> = map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
mod tests;
