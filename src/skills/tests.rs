use ahp_types::actions::StateAction;
use ahp_types::state::{
    ChildCustomization, Customization, McpServerState, McpServerStoppedState, SessionState,
};
use rmcp::model::SkillResource;
use serde_json::json;

use super::content::{file_content, verify};
use super::publish::{remove_container, skills_action};
use super::*;
use crate::session::{empty_session_state, mcp_server_entry};

fn entry(uri: &str, name: &str, body: &str) -> Value {
    let file = SkillResource::from_bytes(uri, body.as_bytes());
    json!({
        "uri": uri,
        "frontmatter": {"name": name, "description": "d", "disable-model-invocation": true},
        "resources": [file],
    })
}

#[test]
fn entries_are_checked_one_by_one() {
    let good = entry_of(entry("skill://a/SKILL.md", "a", "x"));
    assert!(good.problem.is_none() && good.skill.is_some());
    let wrong_name = entry_of(entry("skill://a/SKILL.md", "b", "x"));
    assert!(wrong_name.problem.is_some());
    let no_resources = entry_of(
        json!({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"}}),
    );
    assert!(no_resources.problem.unwrap().contains("not a skill entry"));
    let mut huge = entry("skill://a/SKILL.md", "a", "x");
    huge["resources"][0]["size"] = json!(MAX_SKILL_TOTAL_BYTES + 1);
    assert!(entry_of(huge).problem.unwrap().contains("bytes in all"));
    let js = good.to_json("srv");
    assert_eq!(js["serverId"], "srv");
    assert_eq!(js["name"], "a");
    assert!(js.get("problem").is_none());
}

#[test]
fn file_bytes_come_from_text_or_blob_and_are_verified() {
    let text = json!({"contents": [{"uri": "u", "text": "héllo"}]});
    let c = file_content(&text, "u").unwrap();
    assert_eq!(c.bytes, "héllo".as_bytes());
    let blob = json!({"contents": [{"uri": "u", "blob": "AAEC", "mimeType": "x/y"}]});
    let c = file_content(&blob, "u").unwrap();
    assert_eq!((c.bytes.as_slice(), c.is_text), (&[0u8, 1, 2][..], false));
    assert!(file_content(&json!({"contents": []}), "u").is_err());
    let listed = SkillResource::from_bytes("u", b"abc");
    assert!(verify(&listed, b"abc").is_ok());
    assert_eq!(verify(&listed, b"abcd").unwrap_err().0, "size");
    assert_eq!(verify(&listed, b"abd").unwrap_err().0, "digest");
}

fn with_server(id: &str) -> SessionState {
    let mut state = empty_session_state();
    let stopped = McpServerState::Stopped(McpServerStoppedState {});
    let server = mcp_server_entry(id, "file:///cfg", id, None, stopped);
    state.customizations = Some(vec![Customization::McpServer(Box::new(server))]);
    state
}

#[test]
fn a_top_level_server_gets_a_skills_container() {
    let state = with_server("docs");
    let skills = vec![
        entry_of(entry("skill://acme/x/SKILL.md", "x", "1")),
        entry_of(entry("skill://other/x/SKILL.md", "x", "2")),
        entry_of(entry("skill://bad/SKILL.md", "nope", "3")),
    ];
    let Some(StateAction::SessionCustomizationUpdated(a)) = skills_action(&state, "docs", &skills)
    else {
        panic!("no update");
    };
    let Customization::Directory(d) = &a.customization else {
        panic!("not a directory");
    };
    assert_eq!(d.id, "docs/skills");
    let names: Vec<_> = d
        .children
        .iter()
        .flatten()
        .map(|c| match c {
            ChildCustomization::Skill(s) => (s.name.clone(), s.disable_model_invocation),
            _ => panic!("not a skill"),
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("acme/x".to_owned(), Some(true)),
            ("other/x".to_owned(), Some(true))
        ]
    );
    let mut after = state.clone();
    after
        .customizations
        .as_mut()
        .unwrap()
        .push(a.customization.clone());
    assert!(skills_action(&after, "docs", &skills).is_none());
    assert!(matches!(
        skills_action(&after, "docs", &[]),
        Some(StateAction::SessionCustomizationRemoved(_))
    ));
    assert!(remove_container(&after, "docs").is_some());
    assert!(remove_container(&state, "docs").is_none());
}

#[test]
fn the_registry_keys_entries_by_server_and_forgets_a_plugin_with_its_servers() {
    let registry = SkillRegistry::default();
    let listing = || vec![entry_of(entry("skill://a/SKILL.md", "a", "x"))];
    assert!(registry.set("p/docs", listing()));
    assert!(
        !registry.set("p/docs", listing()),
        "the same listing is no change"
    );
    assert!(registry.set("other", listing()));
    assert_eq!(registry.of("p/docs")[0].uri, registry.of("other")[0].uri);
    registry.forget("p");
    assert!(registry.of("p/docs").is_empty());
    assert_eq!(registry.all().len(), 1);
}
