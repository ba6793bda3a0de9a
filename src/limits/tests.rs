//! Defaults, hard caps and clamping of [`super::Limits`].

use super::*;

#[test]
fn backoff_doubles_and_caps() {
    let l = Limits {
        restart_backoff_ms: 100,
        restart_backoff_max_ms: 350,
        ..Default::default()
    };
    assert_eq!(
        [1, 2, 3, 4].map(|a| l.restart_delay_ms(a)),
        [100, 200, 350, 350]
    );
}

#[test]
fn clamped_enforces_caps() {
    let l = Limits {
        startup_timeout_ms: 0,
        call_timeout_ms: u64::MAX,
        max_restarts: 1000,
        ..Default::default()
    }
    .clamped();
    assert_eq!(
        (l.startup_timeout_ms, l.call_timeout_ms, l.max_restarts),
        (1, MAX_TIMEOUT_MS, 100)
    );
}

/// Every field at its largest value, clamped: exactly the hard caps.
fn caps() -> Limits {
    Limits {
        startup_timeout_ms: u64::MAX,
        call_timeout_ms: u64::MAX,
        max_restarts: u32::MAX,
        restart_backoff_ms: u64::MAX,
        restart_backoff_max_ms: u64::MAX,
        restart_reset_after_ms: u64::MAX,
        call_max_total_ms: u64::MAX,
        max_list_pages: usize::MAX,
        max_cursor_bytes: usize::MAX,
        max_tools_per_server: usize::MAX,
        max_list_items: usize::MAX,
        max_tool_name_bytes: usize::MAX,
        max_tool_description_bytes: usize::MAX,
        max_tool_schema_bytes: usize::MAX,
        max_total_schema_bytes: usize::MAX,
        max_result_bytes: usize::MAX,
        max_json_depth: usize::MAX,
        max_json_properties: usize::MAX,
        max_app_ui_meta_bytes: usize::MAX,
        max_channel_message_bytes: usize::MAX,
        max_channel_requests: usize::MAX,
        channel_request_timeout_ms: u64::MAX,
        max_ui_resource_bytes: usize::MAX,
        max_concurrent_launches: usize::MAX,
        max_config_file_bytes: usize::MAX,
        config_read_timeout_ms: u64::MAX,
        import_resolve_timeout_ms: u64::MAX,
        model_output_max_chars: usize::MAX,
        idle_stop_ms: u64::MAX,
        trust_timeout_ms: u64::MAX,
    }
    .clamped()
}

#[test]
fn clamped_caps_are_the_named_constants() {
    let c = caps();
    assert_eq!(
        [
            c.startup_timeout_ms,
            c.call_timeout_ms,
            c.restart_backoff_ms,
            c.restart_backoff_max_ms,
            c.restart_reset_after_ms,
            c.call_max_total_ms,
            c.channel_request_timeout_ms,
            c.config_read_timeout_ms,
            c.import_resolve_timeout_ms,
            c.idle_stop_ms,
            c.trust_timeout_ms
        ],
        [MAX_TIMEOUT_MS; 11]
    );
    assert_eq!(c.max_restarts, HARD_MAX_RESTARTS);
    assert_eq!(
        [
            c.max_list_pages,
            c.max_cursor_bytes,
            c.max_tools_per_server,
            c.max_list_items,
            c.max_tool_name_bytes,
            c.max_tool_description_bytes,
            c.max_tool_schema_bytes,
            c.max_total_schema_bytes,
            c.max_result_bytes,
            c.max_json_depth,
            c.max_json_properties,
            c.max_app_ui_meta_bytes,
            c.max_channel_message_bytes,
            c.max_channel_requests,
            c.max_ui_resource_bytes,
            c.max_concurrent_launches,
            c.max_config_file_bytes,
            c.model_output_max_chars
        ],
        [
            HARD_MAX_LIST_PAGES,
            HARD_MAX_CURSOR_BYTES,
            HARD_MAX_TOOLS_PER_SERVER,
            HARD_MAX_LIST_ITEMS,
            HARD_MAX_TOOL_NAME_BYTES,
            HARD_MAX_TOOL_DESCRIPTION_BYTES,
            HARD_MAX_TOOL_SCHEMA_BYTES,
            HARD_MAX_TOTAL_SCHEMA_BYTES,
            HARD_MAX_RESULT_BYTES,
            HARD_MAX_JSON_DEPTH,
            HARD_MAX_JSON_PROPERTIES,
            HARD_MAX_APP_UI_META_BYTES,
            HARD_MAX_CHANNEL_MESSAGE_BYTES,
            HARD_MAX_CHANNEL_REQUESTS,
            HARD_MAX_UI_RESOURCE_BYTES,
            HARD_MAX_CONCURRENT_LAUNCHES,
            HARD_MAX_CONFIG_FILE_BYTES,
            HARD_MAX_MODEL_OUTPUT_CHARS
        ]
    );
}

/// Every field of `l` as `u64`, in declaration order (see [`FIELDS`]).
fn values(l: &Limits) -> [u64; 30] {
    let n = |v: usize| v as u64;
    [
        l.startup_timeout_ms,
        l.call_timeout_ms,
        l.max_restarts.into(),
        l.restart_backoff_ms,
        l.restart_backoff_max_ms,
        l.restart_reset_after_ms,
        l.call_max_total_ms,
        n(l.max_list_pages),
        n(l.max_cursor_bytes),
        n(l.max_tools_per_server),
        n(l.max_list_items),
        n(l.max_tool_name_bytes),
        n(l.max_tool_description_bytes),
        n(l.max_tool_schema_bytes),
        n(l.max_total_schema_bytes),
        n(l.max_result_bytes),
        n(l.max_json_depth),
        n(l.max_json_properties),
        n(l.max_app_ui_meta_bytes),
        n(l.max_channel_message_bytes),
        n(l.max_channel_requests),
        l.channel_request_timeout_ms,
        n(l.max_ui_resource_bytes),
        n(l.max_concurrent_launches),
        n(l.max_config_file_bytes),
        l.config_read_timeout_ms,
        l.import_resolve_timeout_ms,
        n(l.model_output_max_chars),
        l.idle_stop_ms,
        l.trust_timeout_ms,
    ]
}

/// The JS names of the fields, in the order of [`values`].
const FIELDS: [&str; 30] = [
    "startupTimeoutMs",
    "callTimeoutMs",
    "maxRestarts",
    "restartBackoffMs",
    "restartBackoffMaxMs",
    "restartResetAfterMs",
    "callMaxTotalMs",
    "maxListPages",
    "maxCursorBytes",
    "maxToolsPerServer",
    "maxListItems",
    "maxToolNameBytes",
    "maxToolDescriptionBytes",
    "maxToolSchemaBytes",
    "maxTotalSchemaBytes",
    "maxResultBytes",
    "maxJsonDepth",
    "maxJsonProperties",
    "maxAppUiMetaBytes",
    "maxChannelMessageBytes",
    "maxChannelRequests",
    "channelRequestTimeoutMs",
    "maxUiResourceBytes",
    "maxConcurrentLaunches",
    "maxConfigFileBytes",
    "configReadTimeoutMs",
    "importResolveTimeoutMs",
    "modelOutputMaxChars",
    "idleStopMs",
    "trustTimeoutMs",
];

#[test]
fn every_hard_cap_is_at_least_its_default() {
    let (defaults, caps) = (values(&Limits::default()), values(&caps()));
    for ((name, default), cap) in FIELDS.iter().zip(defaults).zip(caps) {
        assert!(default >= 1, "{name}: default {default} is below 1");
        assert!(cap >= default, "{name}: hard cap {cap} < default {default}");
    }
    assert_eq!(
        Limits::default().clamped(),
        Limits::default(),
        "clamping the defaults changes nothing"
    );
}
