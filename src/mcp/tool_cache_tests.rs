use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::config::{HttpConfig, ProtocolSetting};
use crate::mcp::{CallLimits, StartPolicy, TransportSpec};

fn spec(url: &str, header: &str) -> ServerSpec {
    let headers = BTreeMap::from([("Authorization".to_owned(), header.to_owned())]);
    ServerSpec {
        id: "s".to_owned(),
        transport: TransportSpec::StreamableHttp(HttpConfig {
            url: url::Url::parse(url).unwrap_or_else(|e| panic!("{e}")),
            headers,
            transport: Default::default(),
        }),
        startup_timeout: Duration::from_secs(5),
        oauth_client: None,
        protocol: ProtocolSetting::default(),
        secret_values: Vec::new(),
        tool_filter: Default::default(),
        call_limits: CallLimits::default(),
        start: StartPolicy::default(),
        sandbox: None,
    }
}

#[test]
fn the_key_covers_names_and_settings_never_values() {
    let caps = json!({"roots": {}});
    let a = ToolCache::key(&spec("https://x.test/mcp?k=1", "Bearer one"), &caps);
    assert_eq!(a.len(), 64);
    // Another header value or query: the same key (values are not part of it).
    let b = ToolCache::key(&spec("https://x.test/mcp?k=2", "Bearer two"), &caps);
    assert_eq!(a, b);
    // Another URL path, server id, protocol or declared capability: another key.
    assert_ne!(
        a,
        ToolCache::key(&spec("https://x.test/other", "Bearer one"), &caps)
    );
    let mut renamed = spec("https://x.test/mcp", "Bearer one");
    renamed.id = "t".to_owned();
    assert_ne!(a, ToolCache::key(&renamed, &caps));
    let mut legacy = spec("https://x.test/mcp", "Bearer one");
    legacy.protocol = ProtocolSetting::Legacy;
    assert_ne!(a, ToolCache::key(&legacy, &caps));
    assert_ne!(
        a,
        ToolCache::key(&spec("https://x.test/mcp", "Bearer one"), &json!({}))
    );
}

#[tokio::test]
async fn a_stored_listing_loads_under_its_key_only_and_holds_no_kept_secret() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = ToolCache::in_dir(dir.path());
    let secret = "canary-tool-cache-9f8e7d6c5b4a";
    let _kept = crate::redact::KeptSecret::new(secret);
    let key = ToolCache::key(&spec("https://x.test/mcp", "Bearer one"), &json!({}));
    let other = ToolCache::key(&spec("https://x.test/other", "Bearer one"), &json!({}));
    assert_eq!(cache.load(&key).await, None);
    let digits = "424242424242424242";
    let _kept_digits = crate::redact::KeptSecret::new(digits);
    // In a text, a property name and a number (red team of issue 29, F4).
    let properties = json!({secret: {"type": "string", "default": 424_242_424_242_424_242_u64}});
    let tools = vec![
        json!({"name": "echo", "description": format!("token {secret}"), "inputSchema": {"type": "object", "properties": properties}}),
    ];
    cache.store(&key, tools, Vec::new()).await;
    let loaded = cache
        .load(&key)
        .await
        .unwrap_or_else(|| panic!("not cached"));
    assert_eq!(loaded[0]["description"], "token [redacted]");
    let shown = &loaded[0]["inputSchema"]["properties"];
    assert_eq!(shown["[redacted]"]["default"], "[redacted]", "{shown}");
    assert_eq!(cache.load(&other).await, None);
    let file = dir.path().join(TOOL_CACHE_DIR).join(format!("{key}.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(!text.contains(secret));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
    }
    // A file copied under another key's name is not used.
    let planted = dir
        .path()
        .join(TOOL_CACHE_DIR)
        .join(format!("{other}.json"));
    std::fs::copy(&file, &planted).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cache.load(&other).await, None);
    // Not a key: no file is named by it.
    assert_eq!(cache.load("../../etc/passwd").await, None);
}

#[tokio::test]
async fn an_old_or_broken_file_is_a_missing_cache_and_the_folder_is_bounded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = ToolCache::in_dir(dir.path());
    let key = ToolCache::key(&spec("https://x.test/mcp", "h"), &json!({}));
    let path = dir.path().join(TOOL_CACHE_DIR).join(format!("{key}.json"));
    std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    let old = json!({"key": key, "writtenMs": 1, "tools": []});
    write_private(&path, &old.to_string());
    assert_eq!(cache.load(&key).await, None, "older than the TTL");
    write_private(&path, "{not json");
    assert_eq!(cache.load(&key).await, None);
    // More files than the bound: the oldest go.
    for i in 0..MAX_TOOL_CACHE_FILES + 3 {
        let name = format!("{:064x}.json", i + 1);
        std::fs::write(path.with_file_name(name), "{}").unwrap_or_else(|e| panic!("{e}"));
    }
    cache
        .store(&key, vec![json!({"name": "t"})], Vec::new())
        .await;
    let count = std::fs::read_dir(path.parent().unwrap_or(dir.path()))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(count <= MAX_TOOL_CACHE_FILES, "{count} files");
    assert!(cache.load(&key).await.is_some(), "the new file stays");
}

#[tokio::test]
async fn the_servers_own_secrets_are_redacted_even_when_not_kept_and_a_future_write_time_is_not_fresh(
) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = ToolCache::in_dir(dir.path());
    let key = ToolCache::key(&spec("https://x.test/mcp", "h"), &json!({}));
    let own = "own-secret-not-kept-3c5e7a9b";
    let digits = "97531975319753";
    let schema = json!({"properties": {own: {"default": 97_531_975_319_753_u64}}});
    let tools =
        vec![json!({"name": "t", "description": format!("uses {own}"), "inputSchema": schema})];
    cache
        .store(&key, tools, vec![own.to_owned(), digits.to_owned()])
        .await;
    let loaded = cache
        .load(&key)
        .await
        .unwrap_or_else(|| panic!("not cached"));
    assert_eq!(loaded[0]["description"], "uses [redacted]");
    let text = loaded[0].to_string();
    assert!(!text.contains(own) && !text.contains(digits), "{text}");
    assert_eq!(
        loaded[0]["inputSchema"]["properties"]["[redacted]"]["default"],
        "[redacted]"
    );
    let path = dir.path().join(TOOL_CACHE_DIR).join(format!("{key}.json"));
    let ahead = now_ms() + 10 * TOOL_CACHE_TTL_MS;
    let planted = json!({"key": key, "writtenMs": ahead, "tools": []});
    write_private(&path, &planted.to_string());
    assert_eq!(
        cache.load(&key).await,
        None,
        "a write time far ahead never expires otherwise"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_cache_folder_that_is_a_link_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let elsewhere = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(TOOL_CACHE_DIR))
        .unwrap_or_else(|e| panic!("{e}"));
    let cache = ToolCache::in_dir(dir.path());
    let key = ToolCache::key(&spec("https://x.test/mcp", "h"), &json!({}));
    cache
        .store(&key, vec![json!({"name": "t"})], Vec::new())
        .await;
    let written = std::fs::read_dir(elsewhere.path())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(written, 0, "nothing written through the link");
}

/// Writes `text` to `path` with mode `0600` (the mode the host writes).
fn write_private(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(path, private).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_loose_folder_is_made_private_and_a_loose_or_foreign_file_is_a_missing_cache() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| {
        let meta = std::fs::metadata(p).unwrap_or_else(|e| panic!("{e}"));
        meta.permissions().mode() & 0o777
    };
    let set = |p: &std::path::Path, m: u32| {
        let perms = std::fs::Permissions::from_mode(m);
        std::fs::set_permissions(p, perms).unwrap_or_else(|e| panic!("{e}"));
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = ToolCache::in_dir(dir.path());
    let key = ToolCache::key(&spec("https://x.test/mcp", "h"), &json!({}));
    cache
        .store(&key, vec![json!({"name": "t"})], Vec::new())
        .await;
    let folder = dir.path().join(TOOL_CACHE_DIR);
    let path = folder.join(format!("{key}.json"));
    assert!(cache.load(&key).await.is_some());
    set(&folder, 0o777);
    set(&path, 0o644);
    assert_eq!(
        cache.load(&key).await,
        None,
        "a file others may read or write"
    );
    assert_eq!(mode(&folder), 0o700, "the loose folder is made private");
    set(&path, 0o600);
    assert!(cache.load(&key).await.is_some());
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: files and folders of another user need root to make (chown)");
        return;
    }
    let nobody = |p: &std::path::Path| {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap_or_else(|e| panic!("{e}"));
    };
    nobody(&path);
    assert_eq!(cache.load(&key).await, None, "another user's file");
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{e}"));
    cache
        .store(&key, vec![json!({"name": "t"})], Vec::new())
        .await;
    nobody(&folder);
    let (all, why) = cache.load_all(vec![key.clone()], |_, raw| Some(raw)).await;
    assert_eq!(all, vec![None], "another user's folder is not read");
    let why = why.unwrap_or_default();
    assert!(
        why.contains("owned by user 65534") && why.contains(".tool-cache"),
        "{why}"
    );
    std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{e}"));
    cache
        .store(&key, vec![json!({"name": "t"})], Vec::new())
        .await;
    assert!(
        !path.exists(),
        "nothing is written into another user's folder"
    );
}
