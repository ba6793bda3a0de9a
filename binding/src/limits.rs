//! `limits` of `new McpHost(options)` as JS writes it ([`JsLimits`]:
//! camelCase, every field optional, unknown fields refused) and its
//! conversion into the core's [`Limits`]. The fields are the core's, in the
//! core's order (the order serde lists in an unknown-field message); a
//! missing one takes [`Limits::default`]'s value. The struct literal in
//! `From` names every field, so a bound added to the core fails this
//! crate's build until it is added here.

use ahp_mcp_host::limits::Limits;
use serde::Deserialize;

/// Builds [`JsLimits`], its defaults and its conversion from one field list.
macro_rules! js_limits {
    ($($(#[$doc:meta])* $name:ident: $ty:ty,)*) => {
        /// Host option `limits` as JS writes it (see the module doc).
        #[derive(Debug, Clone, Copy, Deserialize)]
        #[serde(rename_all = "camelCase", default, deny_unknown_fields)]
        pub(crate) struct JsLimits {
            $($(#[$doc])* $name: $ty,)*
        }

        impl Default for JsLimits {
            fn default() -> Self {
                let core = Limits::default();
                Self { $($name: core.$name,)* }
            }
        }

        impl From<JsLimits> for Limits {
            fn from(js: JsLimits) -> Self {
                Limits { $($name: js.$name,)* }
            }
        }
    };
}

js_limits! {
    /// `startupTimeoutMs`: [`Limits::startup_timeout_ms`].
    startup_timeout_ms: u64,
    /// `callTimeoutMs`: [`Limits::call_timeout_ms`].
    call_timeout_ms: u64,
    /// `maxRestarts`: [`Limits::max_restarts`].
    max_restarts: u32,
    /// `restartBackoffMs`: [`Limits::restart_backoff_ms`].
    restart_backoff_ms: u64,
    /// `restartBackoffMaxMs`: [`Limits::restart_backoff_max_ms`].
    restart_backoff_max_ms: u64,
    /// `restartResetAfterMs`: [`Limits::restart_reset_after_ms`].
    restart_reset_after_ms: u64,
    /// `callMaxTotalMs`: [`Limits::call_max_total_ms`].
    call_max_total_ms: u64,
    /// `maxListPages`: [`Limits::max_list_pages`].
    max_list_pages: usize,
    /// `maxCursorBytes`: [`Limits::max_cursor_bytes`].
    max_cursor_bytes: usize,
    /// `maxToolsPerServer`: [`Limits::max_tools_per_server`].
    max_tools_per_server: usize,
    /// `maxListItems`: [`Limits::max_list_items`].
    max_list_items: usize,
    /// `maxToolNameBytes`: [`Limits::max_tool_name_bytes`].
    max_tool_name_bytes: usize,
    /// `maxToolDescriptionBytes`: [`Limits::max_tool_description_bytes`].
    max_tool_description_bytes: usize,
    /// `maxToolSchemaBytes`: [`Limits::max_tool_schema_bytes`].
    max_tool_schema_bytes: usize,
    /// `maxTotalSchemaBytes`: [`Limits::max_total_schema_bytes`].
    max_total_schema_bytes: usize,
    /// `maxResultBytes`: [`Limits::max_result_bytes`].
    max_result_bytes: usize,
    /// `maxJsonDepth`: [`Limits::max_json_depth`].
    max_json_depth: usize,
    /// `maxJsonProperties`: [`Limits::max_json_properties`].
    max_json_properties: usize,
    /// `maxAppUiMetaBytes`: [`Limits::max_app_ui_meta_bytes`].
    max_app_ui_meta_bytes: usize,
    /// `maxChannelMessageBytes`: [`Limits::max_channel_message_bytes`].
    max_channel_message_bytes: usize,
    /// `maxChannelRequests`: [`Limits::max_channel_requests`].
    max_channel_requests: usize,
    /// `channelRequestTimeoutMs`: [`Limits::channel_request_timeout_ms`].
    channel_request_timeout_ms: u64,
    /// `maxUiResourceBytes`: [`Limits::max_ui_resource_bytes`].
    max_ui_resource_bytes: usize,
    /// `maxConcurrentLaunches`: [`Limits::max_concurrent_launches`].
    max_concurrent_launches: usize,
    /// `maxConfigFileBytes`: [`Limits::max_config_file_bytes`].
    max_config_file_bytes: usize,
    /// `configReadTimeoutMs`: [`Limits::config_read_timeout_ms`].
    config_read_timeout_ms: u64,
    /// `importResolveTimeoutMs`: [`Limits::import_resolve_timeout_ms`].
    import_resolve_timeout_ms: u64,
    /// `modelOutputMaxChars`: [`Limits::model_output_max_chars`].
    model_output_max_chars: usize,
    /// `idleStopMs`: [`Limits::idle_stop_ms`] (`0`: never).
    idle_stop_ms: u64,
    /// `trustTimeoutMs`: [`Limits::trust_timeout_ms`].
    trust_timeout_ms: u64,
}
