//! A server's skills (SEP-2640) listed after connect: when its declared
//! capabilities carry the `io.modelcontextprotocol/skills` extension, every
//! page of `skills/list` (bounded: `maxListPages`, `maxCursorBytes`,
//! [`MAX_SKILLS_PER_SERVER`] entries, the startup timeout), each entry
//! checked ([`crate::skills::entry_of`]), kept in
//! the host's [`SkillRegistry`] under the server's id and published as AHP skill
//! customizations ([`crate::skills::publish`]). No skill file is read
//! here (SEP-2640 "Lazy Retrieval"): files are read only by `loadSkill`.
//!
//! Runs before the server's `ready` state, so `listSkills()` has them when
//! `ready` is seen, and again, by the actor, after
//! `notifications/resources/list_changed` (skills are resources). A failed listing keeps the previous entries (a warning
//! on `host.skills`); the server stays usable. A server that does not
//! declare the extension is sent nothing and has no skills.

use std::time::Duration;

use super::request::{list_all, RequestFailure};
use super::{Opener, ServerLive};
use crate::events::{log, LogLevel};
use crate::limits::MAX_SKILLS_PER_SERVER;
use crate::skills::SkillRegistry;
use crate::skills::{entry_of, publish::skills_action};

/// Lists server `id`'s skills on its live connection and publishes them.
/// Returns whether the server declared the extension (then
/// `notifications/resources/list_changed` re-lists them: see the actor).
pub async fn list_skills(
    opener: &Opener,
    skills: &SkillRegistry,
    id: &str,
    live: &ServerLive,
    timeout: Duration,
) -> bool {
    let Some(conn) = live.session() else {
        return false;
    };
    let declared = conn
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.supports_skills());
    if !declared {
        set_skills(opener, skills, id, Vec::new());
        return false;
    }
    let limits = opener.limits();
    let bound = (MAX_SKILLS_PER_SERVER, "MAX_SKILLS_PER_SERVER");
    let walk = list_all(conn.wire(), id, "skills/list", "skills", limits, bound);
    let warn = |message: String| opener.log(log(LogLevel::Warn, "host.skills", Some(id), message));
    let items = match tokio::time::timeout(timeout, walk).await {
        Ok(Ok(items)) => items,
        Ok(Err(RequestFailure::Failed(e))) => {
            warn(format!("{}; the previous skills are kept", e.message));
            return true;
        }
        Ok(Err(RequestFailure::Auth(_))) => {
            warn("skills/list was refused (authorization)".to_owned());
            return true;
        }
        Err(_) => {
            warn("skills/list timed out; the previous skills are kept".to_owned());
            return true;
        }
    };
    let entries: Vec<_> = items.into_iter().map(entry_of).collect();
    for e in &entries {
        if let Some(problem) = &e.problem {
            warn(format!("skill {:?} cannot be loaded: {problem}", e.uri));
        }
    }
    set_skills(opener, skills, id, entries);
    true
}

/// Keeps `entries` as server `id`'s skills and publishes them when they changed.
fn set_skills(
    opener: &Opener,
    skills: &SkillRegistry,
    id: &str,
    entries: Vec<crate::skills::ListedSkill>,
) {
    if skills.set(id, entries) {
        let entries = skills.of(id);
        opener
            .publisher()
            .emit_from(|state| skills_action(state, id, &entries));
    }
}
