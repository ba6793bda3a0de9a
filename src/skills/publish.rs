//! MCP-served skills as AHP `SkillCustomization`s (AHP 1.0 "Customization
//! Types"): where they sit, and the one action that publishes a server's.
//!
//! - A server of a plugin: its skills are children of that plugin's
//!   `PluginCustomization`, after its MCP server children.
//! - A top-level server (an `McpServerCustomization` has no children): a
//!   `DirectoryCustomization` container with id `<server id>/skills`
//!   (top-level ids never contain `/`, so it cannot collide), `contents:
//!   "skill"`, `writable: false`, the server's `uri`, and `_meta`
//!   `{"ahp-mcp-host/skillsOf": <server id>}`; removed when the server has
//!   no loadable skill, and with the server.
//!
//! Each skill: id `<server id>/skill:<SKILL.md uri>` (the identity is
//! the pair of server id and URI, SEP-2640 "Skill URIs"), `uri` the
//! `SKILL.md` URI, `name` the frontmatter `name` (the skill path,
//! e.g. `acme/billing/refunds`, when two entries of the server share a
//! name), `description`, `disableModelInvocation` from
//! `disable-model-invocation: true`, `disableUserInvocation` from
//! `user-invocable: false`, and `_meta` `{"ahp-mcp-host/skill": {serverId,
//! uri}}`. Only loadable entries are published (valid, with a file
//! manifest; not `"dynamic"` ones, which `loadSkill` declines). Clients
//! cannot toggle them (the host manages no enablement of skills).

use ahp_types::actions::{
    SessionCustomizationRemovedAction, SessionCustomizationUpdatedAction, StateAction,
};
use ahp_types::state::{
    ChildCustomization, Customization, CustomizationLoadState, CustomizationLoadedState,
    CustomizationType, DirectoryCustomization, SessionState, SkillCustomization,
};
use rmcp::model::{Skill, SkillResources};
use serde_json::{json, Map, Value};

use super::ListedSkill;
use crate::session::{find, Found};

/// `_meta` key of a skill customization: `{serverId, uri}`.
pub const SKILL_META_KEY: &str = "ahp-mcp-host/skill";
/// `_meta` key of a top-level server's skills container: the server id.
pub const SKILLS_OF_META_KEY: &str = "ahp-mcp-host/skillsOf";

/// The id of top-level server `server_id`'s skills container.
pub fn container_id(server_id: &str) -> String {
    format!("{server_id}/skills")
}

/// The action publishing server `server_id`'s `skills` in `state`; `None`
/// when nothing changes or `server_id` is no MCP server of the session.
pub fn skills_action(
    state: &SessionState,
    server_id: &str,
    skills: &[ListedSkill],
) -> Option<StateAction> {
    let children = children(server_id, skills);
    let updated = match find(state, server_id)? {
        Found::McpServer(_, Some(plugin)) => {
            let mut plugin = plugin.clone();
            let list = plugin.children.get_or_insert_with(Vec::new);
            list.retain(|c| !is_skill_of(c, server_id));
            list.extend(children);
            Customization::Plugin(plugin)
        }
        Found::McpServer(server, None) => {
            let id = container_id(server_id);
            if children.is_empty() {
                return existing(state, &id).map(|_| removed(id));
            }
            let mut meta = Map::new();
            meta.insert(SKILLS_OF_META_KEY.to_owned(), json!(server_id));
            Customization::Directory(DirectoryCustomization {
                id,
                uri: server.uri.clone(),
                name: format!("{} skills", server.name),
                icons: None,
                range: None,
                meta: Some(meta),
                client_id: None,
                load: Some(CustomizationLoadState::Loaded(CustomizationLoadedState {})),
                children: Some(children),
                enabled: true,
                contents: CustomizationType::Skill,
                writable: false,
            })
        }
        _ => return None,
    };
    let id = top_id(&updated);
    if existing(state, id) == Some(&updated) {
        return None;
    }
    Some(StateAction::SessionCustomizationUpdated(Box::new(
        SessionCustomizationUpdatedAction {
            customization: updated,
        },
    )))
}

/// The removal of top-level server `server_id`'s skills container, when
/// `state` has one.
pub fn remove_container(state: &SessionState, server_id: &str) -> Option<StateAction> {
    let id = container_id(server_id);
    existing(state, &id).map(|_| removed(id))
}

fn removed(id: String) -> StateAction {
    StateAction::SessionCustomizationRemoved(SessionCustomizationRemovedAction { id })
}

fn top_id(c: &Customization) -> &str {
    match c {
        Customization::Plugin(p) => &p.id,
        Customization::Directory(d) => &d.id,
        Customization::McpServer(s) => &s.id,
        _ => "",
    }
}

fn existing<'a>(state: &'a SessionState, id: &str) -> Option<&'a Customization> {
    state
        .customizations
        .iter()
        .flatten()
        .find(|c| top_id(c) == id)
}

fn is_skill_of(child: &ChildCustomization, server_id: &str) -> bool {
    let ChildCustomization::Skill(s) = child else {
        return false;
    };
    s.meta
        .as_ref()
        .and_then(|m| m.get(SKILL_META_KEY))
        .and_then(|v| v.get("serverId"))
        .and_then(Value::as_str)
        == Some(server_id)
}

/// The loadable entries as skill children, names disambiguated.
fn children(server_id: &str, skills: &[ListedSkill]) -> Vec<ChildCustomization> {
    let loadable: Vec<&Skill> = skills
        .iter()
        .filter_map(|s| s.skill.as_ref())
        .filter(|s| matches!(s.resources, SkillResources::Files(_)))
        .collect();
    let shared_name = |name: &str| loadable.iter().filter(|s| s.name() == name).count() > 1;
    loadable
        .iter()
        .map(|skill| {
            let name = if shared_name(skill.name()) {
                skill_path(&skill.uri)
            } else {
                skill.name().to_owned()
            };
            ChildCustomization::Skill(skill_entry(server_id, skill, name))
        })
        .collect()
}

fn skill_entry(server_id: &str, skill: &Skill, name: String) -> SkillCustomization {
    let extra = &skill.frontmatter.extra;
    let mut meta = Map::new();
    meta.insert(
        SKILL_META_KEY.to_owned(),
        json!({ "serverId": server_id, "uri": skill.uri }),
    );
    SkillCustomization {
        id: format!("{server_id}/skill:{}", skill.uri),
        uri: skill.uri.clone(),
        name,
        icons: None,
        range: None,
        meta: Some(meta),
        enabled: None,
        description: Some(skill.frontmatter.description.clone()),
        disable_model_invocation: (extra.get("disable-model-invocation") == Some(&json!(true)))
            .then_some(true),
        disable_user_invocation: (extra.get("user-invocable") == Some(&json!(false)))
            .then_some(true),
    }
}

/// `skill://acme/billing/refunds/SKILL.md` → `acme/billing/refunds`.
fn skill_path(uri: &str) -> String {
    let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
    rest.strip_suffix("/SKILL.md").unwrap_or(rest).to_owned()
}
