//! Replay under client actions back to back, and of plugin and App-server states: an invalid sibling, unwritable plugin data, concurrent adds, MCP Apps fields (the tests of `host_replay.rs` that did not fit in one file).

use super::*;
use ahp_mcp_host::host::PluginAdded;

/// The same four dispatches back to back, without waiting in between: the
/// stop still ends in the host's `stopped`, the start in a later `ready`,
/// and the replay still matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_to_back_client_actions_still_replay_to_host_state() {
    let (host, mut events, _data) = new_host();
    let id = add_everything(&host, "everything").await;
    wait_server(&host, &mut events, &id, "ready", is_ready).await;
    assert_eq!(echo(&host, &id, "hi").await.expect("echo"), "Echo: hi");

    let sent = [
        stop_action(&id),
        start_action(&id),
        start_action("nope"),
        forged_state_change(&id),
    ];
    let echoes: Vec<ActionEnvelope> = sent
        .iter()
        .enumerate()
        .map(|(i, a)| {
            host.dispatch(a.clone(), origin(i as i64 + 1))
                .expect("dispatch")
        })
        .collect();
    for (i, (e, a)) in echoes.iter().zip(&sent).enumerate() {
        assert_echo(e, a, i as i64 + 1, i >= 2);
    }

    let stopped = events
        .wait_action(
            echoes[0].server_seq,
            "host `stopped` after the stop request",
            |e| host_state_change(e, &id, is_stopped),
        )
        .await;
    let ready = events
        .wait_action(
            stopped.server_seq.max(echoes[1].server_seq),
            "host `ready` after the start request",
            |e| host_state_change(e, &id, is_ready),
        )
        .await;
    assert!(ready.server_seq > echoes[1].server_seq);
    wait_server(&host, &mut events, &id, "ready", is_ready).await;
    assert_eq!(
        echo(&host, &id, "again").await.expect("echo after restart"),
        "Echo: again"
    );

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[id.as_str()]);
}

// ---------------------------------------------------------------------------
// b. Sibling isolation inside one plugin
// ---------------------------------------------------------------------------

/// Writes a plugin with a valid `good` and an invalid `bad` entry and adds
/// it as `plug`; returns what `add_plugin` gave and the plugin dir (kept alive).
async fn add_plugin_with_bad_sibling(host: &Host) -> (PluginAdded, tempfile::TempDir) {
    let plugin = tempfile::tempdir().expect("plugin dir");
    let mcp = json!({
        "mcpServers": {
            "good": everything_config(),
            "bad": {"type": "stdio", "command": "node", "args": ["x.js"], "timeout": 5},
        }
    });
    std::fs::write(
        plugin.path().join("mcp.json"),
        serde_json::to_string_pretty(&mcp).unwrap(),
    )
    .unwrap();

    let opts = AddPlugin {
        name: Some("plug".into()),
        ..AddPlugin::new(plugin.path())
    };
    let added = host.add_plugin(opts).await.expect("add_plugin");
    (added, plugin)
}

/// Checks `add_plugin` started only the valid entry and loaded `degraded`, blaming only the bad one.
fn assert_degraded_by_bad_entry(added: &PluginAdded) {
    assert_eq!(added.id, "plug");
    assert_eq!(
        added.servers,
        vec!["plug/good".to_owned()],
        "only the valid entry is started"
    );
    let message = match &added.load {
        CustomizationLoadState::Degraded(d) => d.message.clone(),
        other => panic!("plugin load must be degraded, got {other:?}"),
    };
    assert!(
        message.contains("server \"bad\""),
        "degraded message must name the bad server: {message}"
    );
    assert!(
        message.contains("\"timeout\""),
        "degraded message must name the bad field: {message}"
    );
    assert!(
        !message.contains("\"good\""),
        "degraded message must not blame the valid sibling: {message}"
    );
}

/// Checks the published plugin has load `load`, only the `plug/good` child, and no `plug/bad` server.
fn assert_published_plugin(host: &Host, load: &CustomizationLoadState) {
    // The published plugin matches what add_plugin returned.
    let state = host.state();
    let plug = state
        .customizations
        .iter()
        .flatten()
        .find_map(|c| match c {
            Customization::Plugin(p) if p.id == "plug" => Some(p.clone()),
            _ => None,
        })
        .expect("plugin customization");
    assert_eq!(plug.load.as_ref(), Some(load));
    let child_ids: Vec<String> = plug
        .children
        .iter()
        .flatten()
        .map(|c| {
            serde_json::to_value(c).unwrap()["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(child_ids, vec!["plug/good".to_owned()]);
    assert!(
        server_state(&state, "plug/bad").is_none(),
        "an invalid entry must not become a server"
    );
}

/// Checks `plug/good` answers `echo` and lists it in `list_tools`.
async fn assert_valid_sibling_serves(host: &Host) {
    assert_eq!(
        echo(host, "plug/good", "sibling")
            .await
            .expect("echo on the valid sibling"),
        "Echo: sibling"
    );
    let tools = host.list_tools();
    assert!(
        tools
            .iter()
            .any(|t| t["customizationId"] == "plug/good" && t["toolName"] == "echo"),
        "echo of plug/good missing from list_tools: {tools:?}"
    );
}

/// One valid stdio entry and one with an unknown field: the plugin loads
/// `degraded` naming the bad entry, the bad entry gets no child, and the
/// valid sibling starts and serves calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_sibling_degrades_plugin_but_valid_server_reaches_ready() {
    let (host, mut events, _data) = new_host();
    let (added, _plugin) = add_plugin_with_bad_sibling(&host).await;
    assert_degraded_by_bad_entry(&added);

    wait_server(&host, &mut events, "plug/good", "ready", is_ready).await;

    assert_published_plugin(&host, &added.load);

    events.drain();
    assert!(
        events
            .logs
            .iter()
            .any(|l| l.level == LogLevel::Warn && l.message.contains("\"bad\"")),
        "the skipped entry must be logged as a warning:\n{}",
        events.dump_logs()
    );

    assert_valid_sibling_serves(&host).await;

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &["plug/good"]);
}

// ---------------------------------------------------------------------------
// Known host bug (see the report): kept runnable with `--ignored`
// ---------------------------------------------------------------------------

/// When `PLUGIN_DATA` cannot be created (here `dataDir` is a regular file),
/// MCP is disabled for that plugin only: `add_plugin` resolves with load
/// `error` naming PLUGIN_DATA, the published plugin is not left `loading`,
/// no server is started, and the plugin can be removed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwritable_plugin_data_ends_in_load_error_not_loading() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let not_a_dir = scratch.path().join("data-file");
    std::fs::write(&not_a_dir, b"not a directory").unwrap();
    let options = HostConfig {
        session: CHANNEL.into(),
        data_dir: not_a_dir,
        ..HostConfig::default()
    };
    let (tx, rx) = unbounded_channel::<HostEvent>();
    let host = Host::new(options, Arc::new(tx));
    let mut events = Events {
        rx,
        actions: Vec::new(),
        logs: Vec::new(),
    };

    let plugin = tempfile::tempdir().expect("plugin dir");
    std::fs::write(
        plugin.path().join("mcp.json"),
        json!({"mcpServers": {"good": everything_config()}}).to_string(),
    )
    .unwrap();
    let opts = AddPlugin {
        name: Some("plug".into()),
        ..AddPlugin::new(plugin.path())
    };
    let added = host
        .add_plugin(opts)
        .await
        .expect("a plugin-level failure is reported in its load state");
    assert!(
        added.servers.is_empty(),
        "no server may start without PLUGIN_DATA: {:?}",
        added.servers
    );
    match &added.load {
        CustomizationLoadState::Error(e) => {
            assert!(e.message.contains("PLUGIN_DATA"), "{}", e.message)
        }
        other => panic!("expected load error, got {other:?}"),
    }

    let state = host.state();
    let load = state.customizations.iter().flatten().find_map(|c| match c {
        Customization::Plugin(p) if p.id == "plug" => Some(p.load.clone()),
        _ => None,
    });
    events.drain();
    assert!(
        matches!(load, Some(Some(CustomizationLoadState::Error(_)))),
        "the published plugin must show the error, not stay `loading`: {load:?}\nactions:\n{}",
        events.dump_actions()
    );
    host.remove("plug")
        .await
        .expect("the plugin can be removed");
    assert!(host
        .state()
        .customizations
        .iter()
        .flatten()
        .all(|c| !matches!(c, Customization::Plugin(p) if p.id == "plug")));
    host.shutdown().await;
}

/// Two concurrent `add_server` calls with one name: exactly one may succeed,
/// the other must fail with `already_exists`.
///
/// Fails with the current host (about 1 round in 6 on a 2-core box): in
/// `src/host.rs` `reserve_id` only *checks* the registry under its lock and
/// `add_server` inserts the id much later (`spawn_actors`), so both callers
/// pass the check; the second `spawn_actors` overwrites the first handle and
/// both publish a customization with the same id. Probabilistic as a
/// reproduction, but a correct host passes every round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_add_server_with_one_name_admits_only_one() {
    let cfg =
        json!({"type": "stdio", "command": "node", "args": ["-e", "setTimeout(() => {}, 1e9)"]});
    let mut both = 0;
    for _ in 0..200 {
        let (host, _events, _data) = new_host();
        let host = Arc::new(host);
        let add = |h: Arc<Host>, c: Value| {
            tokio::spawn(async move {
                let opts = AddServer::new("x", c);
                h.add_server(opts).await.map_err(|e| e.code)
            })
        };
        let (a, b) = (
            add(host.clone(), cfg.clone()),
            add(host.clone(), cfg.clone()),
        );
        let (a, b) = (a.await.expect("task"), b.await.expect("task"));
        match (&a, &b) {
            (Ok(_), Err(ErrorCode::AlreadyExists)) | (Err(ErrorCode::AlreadyExists), Ok(_)) => {}
            (Ok(_), Ok(_)) => both += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
        host.dispose_sync();
    }
    assert_eq!(
        both, 0,
        "both concurrent add_server calls for one name succeeded in {both} of 200 rounds"
    );
}

// ---------------------------------------------------------------------------
// e. MCP Apps: mcpApp and the mcp:// channel replay like any other state
// ---------------------------------------------------------------------------

/// The real MCP Apps example server (`@modelcontextprotocol/server-basic-vanillajs`).
fn vanilla_config() -> Value {
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    assert!(js.is_file(), "run `npm install` first: {}", js.display());
    json!({"type": "stdio", "command": "node", "args": [js, "--stdio"]})
}

/// `(mcpApp present, channel)` of server `id` in `state`.
fn app_fields(state: &SessionState, id: &str) -> (bool, Option<String>) {
    match find(state, id) {
        Some(Found::McpServer(s, _)) => (s.mcp_app.is_some(), s.channel.clone()),
        _ => panic!("no server {id}"),
    }
}

/// With `mcpApps`, the App server's customization carries `mcpApp` and, while
/// ready, a `channel` (a new one after a restart, none while stopped); an
/// ordinary server gets no `mcpApp`. At every step the replay of the emitted
/// envelopes through `ahp`'s session reducer is the host's state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_apps_state_replays_to_host_state_across_stop_and_start() {
    let (host, mut events, _data) = new_host_with(true);
    let opts = AddServer::new("vanilla", vanilla_config());
    let app = host.add_server(opts).await.expect("add_server");
    let plain = add_everything(&host, "everything").await;
    wait_server(&host, &mut events, &app, "ready", is_ready).await;
    wait_server(&host, &mut events, &plain, "ready", is_ready).await;
    assert_replay_settles(&host, &mut events, "both ready").await;
    let (has_app, first) = app_fields(&host.state(), &app);
    assert!(has_app, "the App server has mcpApp");
    let first = first.expect("a ready App server has a channel");
    assert!(first.starts_with("mcp:/"), "{first}");
    assert!(
        !app_fields(&host.state(), &plain).0,
        "no mcpApp without Apps"
    );

    let stop = host.dispatch(stop_action(&app), origin(1)).expect("stop");
    let stopped = events
        .wait_action(stop.server_seq, "stopped", |e| {
            host_state_change(e, &app, is_stopped)
        })
        .await;
    assert_eq!(
        app_fields(&host.state(), &app),
        (true, None),
        "stopped: no channel"
    );
    assert_replay_settles(&host, &mut events, "App server stopped").await;

    host.dispatch(start_action(&app), origin(2)).expect("start");
    events
        .wait_action(stopped.server_seq, "ready again", |e| {
            host_state_change(e, &app, is_ready)
        })
        .await;
    let (_, second) = app_fields(&host.state(), &app);
    let second = second.expect("ready again: a channel");
    assert_ne!(first, second, "a restart gives a new channel URI");
    assert_replay_settles(&host, &mut events, "App server restarted").await;

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[&app, &plain]);
    assert_eq!(
        app_fields(&host.state(), &app).1,
        None,
        "no channel after shutdown"
    );
}
