//! Tests of the model-facing output budget (`budget.rs`, `spill.rs`,
//! `complete_within`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ahp_types::actions::StateAction;
use ahp_types::state::{ToolCallResult, ToolResultContent};
use serde_json::{json, Value};

use super::budget::{cut, grouped, over_budget, Kept, LeftOut};
use super::spill::{Bounds, ToolResults};
use super::*;

fn mapped(result: Value) -> ToolCallResult {
    map_result("T", &result)
}

fn file() -> Kept {
    Kept::File {
        uri: "file:///d/.tool-results/x.json".into(),
        bytes: 42,
    }
}

fn texts(r: &ToolCallResult) -> Vec<String> {
    (r.content.iter().flatten())
        .filter_map(|b| match b {
            ToolResultContent::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_result_within_the_budget_is_not_cut() {
    let r = mapped(json!({"content": [{"type": "text", "text": "héllo"}]}));
    assert!(!over_budget(&r, 5), "5 characters, 6 bytes");
    assert!(over_budget(&r, 4));
}

#[test]
fn text_is_cut_at_a_character_boundary_with_a_marker_and_a_link() {
    // 'é' is 2 bytes, '😀' 4 bytes (a surrogate pair in UTF-16).
    let mut r = mapped(json!({"content": [{"type": "text", "text": "aé😀b😀cd"}]}));
    let out = cut(&mut r, 3, &file());
    assert_eq!(
        out,
        LeftOut {
            chars: 4,
            total: 7,
            text: true,
            ..LeftOut::default()
        }
    );
    let content = r.content.as_ref().unwrap();
    assert_eq!(texts(&r)[0], "aé😀");
    assert_eq!(
        texts(&r)[1],
        "[… 4 of 7 characters left out (text); the whole result is in \
         file:///d/.tool-results/x.json]"
    );
    let ToolResultContent::Resource(link) = &content[2] else {
        panic!("no link: {content:?}");
    };
    assert_eq!(
        (
            link.uri.as_str(),
            link.size_hint,
            link.content_type.as_deref()
        ),
        (
            "file:///d/.tool-results/x.json",
            Some(42),
            Some("application/json")
        )
    );
    assert_eq!(content.len(), 3);
}

#[test]
fn the_budget_is_shared_by_every_text_block() {
    let blocks: Vec<Value> = ["abcd", "efgh", "ijkl"]
        .iter()
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    let mut r = mapped(json!({ "content": blocks }));
    let out = cut(&mut r, 6, &Kept::Not("no room".into()));
    assert_eq!((out.chars, out.total), (6, 12));
    let t = texts(&r);
    assert_eq!(t[..2], ["abcd", "ef"], "the third block is left out");
    assert_eq!(
        t[2],
        "[… 6 of 12 characters left out (text); the whole result was not kept: no room]"
    );
    assert_eq!(r.content.unwrap().len(), 3, "no link without a file");
}

#[test]
fn binary_past_the_budget_is_never_inlined() {
    let data = "QUJD".repeat(100);
    let mut r = mapped(json!({"content": [
        {"type": "text", "text": "see the picture"},
        {"type": "image", "data": data, "mimeType": "image/png"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
    ]}));
    assert!(over_budget(&r, 100));
    let out = cut(&mut r, 100, &file());
    assert_eq!((out.binary, out.text), (1, false));
    let content = r.content.as_ref().unwrap();
    let kinds: Vec<&str> = content
        .iter()
        .map(|b| match b {
            ToolResultContent::Text(_) => "text",
            ToolResultContent::EmbeddedResource(e) => &e.content_type,
            ToolResultContent::Resource(_) => "link",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["text", "audio/wav", "text", "link"]);
    assert!(!serde_json::to_string(&r).unwrap().contains(&data));
    assert!(texts(&r)[1].starts_with("[… 409 of 437 characters left out (1 binary block);"));
}

#[test]
fn structured_content_too_large_is_left_out_whole() {
    let mut r = mapped(json!({
        "content": [{"type": "text", "text": "ok"}],
        "structuredContent": {"rows": "x".repeat(50)},
    }));
    let out = cut(&mut r, 20, &file());
    assert!(out.structured && r.structured_content.is_none());
    assert_eq!(texts(&r)[0], "ok");
    assert!(texts(&r)[1].contains("(structuredContent)"));
}

#[test]
fn an_error_message_is_cut_to_the_budget() {
    let mut r =
        mapped(json!({"isError": true, "content": [{"type": "text", "text": "e".repeat(30)}]}));
    cut(&mut r, 10, &file());
    let message = r.error.as_ref().unwrap()["message"].as_str().unwrap();
    assert_eq!(message, "eeeeeeeeee[… 20 characters left out]");
}

#[test]
fn numbers_are_grouped_by_thousands() {
    assert_eq!(
        [0, 999, 1_000, 123_456, 1_234_567].map(grouped),
        ["0", "999", "1,000", "123,456", "1,234,567"]
    );
}

/// The `.json` files of the spill directory under `data`.
fn spilled(data: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data.join(".tool-results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn set_age(path: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

#[test]
fn a_spill_file_is_private_and_named_after_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ToolResults::in_dir(tmp.path());
    let Kept::File { uri, bytes } = store.keep("tc/../1 x", b"{\"a\":1}").unwrap() else {
        panic!("not kept");
    };
    assert_eq!(bytes, 7);
    let name = &spilled(tmp.path())[0];
    assert!(name.starts_with("tc____1_x-") && name.len() == "tc____1_x-".len() + 21);
    let path = url::Url::parse(&uri).unwrap().to_file_path().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&tmp.path().join(".tool-results")), 0o700);
    }
}

#[test]
fn a_result_over_the_file_bound_is_not_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ToolResults::in_dir(tmp.path());
    let big = vec![b' '; crate::limits::MAX_TOOL_RESULT_FILE_BYTES + 1];
    let why = store.keep("c", &big).unwrap_err();
    assert!(
        why.contains("more than the 20,971,520 a spill file may hold"),
        "{why}"
    );
    assert!(!tmp.path().join(".tool-results").exists());
}

#[test]
fn cleanup_removes_files_past_the_age_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ToolResults::in_dir(tmp.path());
    store.keep("old", b"1").unwrap();
    let old = tmp
        .path()
        .join(".tool-results")
        .join(&spilled(tmp.path())[0]);
    set_age(&old, Duration::from_secs(8 * 24 * 3600));
    std::fs::write(tmp.path().join(".tool-results/notes.txt"), "not ours").unwrap();
    store.keep("new", b"2").unwrap();
    let left = spilled(tmp.path());
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().any(|n| n.starts_with("new-")) && left.contains(&"notes.txt".into()));
}

#[test]
fn cleanup_keeps_the_newest_within_the_size_and_count_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let bounds = Bounds {
        max_age: Duration::from_secs(3600),
        max_files: 3,
        max_bytes: 25,
    };
    let store = ToolResults::with_bounds(tmp.path(), bounds);
    for (i, age) in [50u64, 40, 30, 20].into_iter().enumerate() {
        store.keep(&format!("f{i}"), &[b'x'; 10]).unwrap();
        let name = spilled(tmp.path())
            .into_iter()
            .find(|n| n.starts_with(&format!("f{i}-")))
            .unwrap();
        set_age(
            &tmp.path().join(".tool-results").join(name),
            Duration::from_secs(age),
        );
    }
    // 10 bytes each: the newest (just written) and the next one fit 25 bytes.
    let left = spilled(tmp.path());
    let stems: Vec<&str> = left.iter().map(|n| &n[..2]).collect();
    assert_eq!(stems, ["f2", "f3"], "{left:?}");
    let store = ToolResults::with_bounds(
        tmp.path(),
        Bounds {
            max_bytes: 1_000,
            max_files: 1,
            ..bounds
        },
    );
    store.keep("g", b"y").unwrap();
    assert_eq!(spilled(tmp.path()).len(), 1, "the count bound");
}

fn ctx() -> ChatContext {
    ChatContext {
        chat: "ahp-chat:/c".into(),
        turn_id: "t".into(),
        tool_call_id: "call-1".into(),
        customization_id: "s".into(),
        meta: None,
    }
}

fn result_of(action: &StateAction) -> &ToolCallResult {
    match action {
        StateAction::ChatToolCallComplete(c) => &c.result,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn complete_within_cuts_the_chat_state_and_keeps_the_whole_result() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = OutputBudget {
        max_chars: 10,
        files: Arc::new(ToolResults::in_dir(tmp.path())),
    };
    let whole = json!({"content": [{"type": "text", "text": "0123456789abcdef"}]});
    let (action, warning) = complete_within(&ctx(), "T", &Ok(whole.clone()), &budget).await;
    assert_eq!(warning, None);
    let result = result_of(&action);
    assert_eq!(texts(result)[0], "0123456789");
    let Some(ToolResultContent::Resource(link)) = result.content.as_ref().unwrap().get(2) else {
        panic!("no link");
    };
    let path = url::Url::parse(&link.uri).unwrap().to_file_path().unwrap();
    let kept: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(kept, whole);
    // Within the budget: nothing cut, no file.
    let small = json!({"content": [{"type": "text", "text": "0123456789"}]});
    let (action, _) = complete_within(&ctx(), "T", &Ok(small), &budget).await;
    assert_eq!(texts(result_of(&action)), ["0123456789"]);
    assert_eq!(spilled(tmp.path()).len(), 1);
}

#[tokio::test]
async fn a_spill_that_fails_still_completes_with_a_marker_and_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    // A file where the directory should be.
    std::fs::write(tmp.path().join(".tool-results"), "x").unwrap();
    let budget = OutputBudget {
        max_chars: 4,
        files: Arc::new(ToolResults::in_dir(tmp.path())),
    };
    let whole = json!({"content": [{"type": "text", "text": "abcdefgh"}]});
    let (action, warning) = complete_within(&ctx(), "T", &Ok(whole), &budget).await;
    let t = texts(result_of(&action));
    assert_eq!(t[0], "abcd");
    assert!(t[1].contains("the whole result was not kept: "), "{}", t[1]);
    assert!(warning.unwrap().contains("call-1"));
}

#[tokio::test]
async fn a_kept_secret_is_redacted_in_the_spill_file_too() {
    let canary = "spill-canary-7f3a9c2e51d0";
    let _kept = crate::redact::KeptSecret::new(canary).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let budget = OutputBudget {
        max_chars: 8,
        files: Arc::new(ToolResults::in_dir(tmp.path())),
    };
    let text = format!("TOKEN={canary} and more text past the budget");
    let whole = json!({"content": [{"type": "text", "text": text}]});
    let (action, _) = complete_within(&ctx(), "T", &Ok(whole), &budget).await;
    let name = &spilled(tmp.path())[0];
    let file = std::fs::read_to_string(tmp.path().join(".tool-results").join(name)).unwrap();
    assert!(file.contains("TOKEN=[redacted] and more") && !file.contains(canary));
    assert!(!serde_json::to_string(&action).unwrap().contains(canary));
}

#[test]
fn countless_empty_blocks_are_bounded_too() {
    let blocks: Vec<Value> = (0..10_000)
        .map(|_| json!({"type": "text", "text": ""}))
        .collect();
    let mut r = mapped(json!({ "content": blocks }));
    assert!(over_budget(&r, 10), "each empty block counts as 1");
    let out = cut(&mut r, 10, &file());
    assert_eq!(out.total, 10_000);
    // 10 empty blocks kept, then the marker and the link.
    assert_eq!(r.content.as_ref().map(Vec::len), Some(12));
}

#[cfg(unix)]
#[test]
fn a_loose_spill_folder_of_ours_is_made_private_and_another_users_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".tool-results");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let store = ToolResults::in_dir(tmp.path());
    assert!(matches!(store.keep("a", b"{}"), Ok(Kept::File { .. })));
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "a pre-existing 0777 folder is made private");
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a folder owned by another user needs root to make (chown)");
        return;
    }
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let before = spilled(tmp.path());
    let why = store.keep("b", b"{}").unwrap_err();
    assert!(why.contains("owned by user 65534"), "{why}");
    assert_eq!(spilled(tmp.path()), before, "nothing written into it");
}
