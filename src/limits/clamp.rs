//! [`Limits::clamped`]: every configurable bound within its hard cap.

use super::*;

impl Limits {
    /// Returns a copy with every value inside its hard cap: timeouts
    /// 1 ms ..= [`MAX_TIMEOUT_MS`], restarts at most [`HARD_MAX_RESTARTS`],
    /// sizes and counts at least 1 and at most the `HARD_MAX_*` constant
    /// named on each field; `restart_backoff_max_ms` at least
    /// `restart_backoff_ms`.
    pub fn clamped(self) -> Self {
        let t = |v: u64| v.clamp(1, MAX_TIMEOUT_MS);
        Self {
            startup_timeout_ms: t(self.startup_timeout_ms),
            call_timeout_ms: t(self.call_timeout_ms),
            max_restarts: self.max_restarts.min(HARD_MAX_RESTARTS),
            restart_backoff_ms: t(self.restart_backoff_ms),
            restart_backoff_max_ms: t(self.restart_backoff_max_ms).max(t(self.restart_backoff_ms)),
            restart_reset_after_ms: t(self.restart_reset_after_ms),
            call_max_total_ms: t(self.call_max_total_ms),
            max_list_pages: self.max_list_pages.clamp(1, HARD_MAX_LIST_PAGES),
            max_cursor_bytes: self.max_cursor_bytes.clamp(1, HARD_MAX_CURSOR_BYTES),
            max_tools_per_server: self
                .max_tools_per_server
                .clamp(1, HARD_MAX_TOOLS_PER_SERVER),
            max_list_items: self.max_list_items.clamp(1, HARD_MAX_LIST_ITEMS),
            max_tool_name_bytes: self.max_tool_name_bytes.clamp(1, HARD_MAX_TOOL_NAME_BYTES),
            max_tool_description_bytes: self
                .max_tool_description_bytes
                .clamp(1, HARD_MAX_TOOL_DESCRIPTION_BYTES),
            max_tool_schema_bytes: self
                .max_tool_schema_bytes
                .clamp(1, HARD_MAX_TOOL_SCHEMA_BYTES),
            max_total_schema_bytes: self
                .max_total_schema_bytes
                .clamp(1, HARD_MAX_TOTAL_SCHEMA_BYTES),
            max_result_bytes: self.max_result_bytes.clamp(1, HARD_MAX_RESULT_BYTES),
            max_json_depth: self.max_json_depth.clamp(1, HARD_MAX_JSON_DEPTH),
            max_json_properties: self.max_json_properties.clamp(1, HARD_MAX_JSON_PROPERTIES),
            max_app_ui_meta_bytes: self
                .max_app_ui_meta_bytes
                .clamp(1, HARD_MAX_APP_UI_META_BYTES),
            max_channel_message_bytes: self
                .max_channel_message_bytes
                .clamp(1, HARD_MAX_CHANNEL_MESSAGE_BYTES),
            max_channel_requests: self
                .max_channel_requests
                .clamp(1, HARD_MAX_CHANNEL_REQUESTS),
            channel_request_timeout_ms: t(self.channel_request_timeout_ms),
            max_ui_resource_bytes: self
                .max_ui_resource_bytes
                .clamp(1, HARD_MAX_UI_RESOURCE_BYTES),
            max_concurrent_launches: self
                .max_concurrent_launches
                .clamp(1, HARD_MAX_CONCURRENT_LAUNCHES),
            max_config_file_bytes: self
                .max_config_file_bytes
                .clamp(1, HARD_MAX_CONFIG_FILE_BYTES),
            config_read_timeout_ms: t(self.config_read_timeout_ms),
            import_resolve_timeout_ms: t(self.import_resolve_timeout_ms),
            model_output_max_chars: self
                .model_output_max_chars
                .clamp(1, HARD_MAX_MODEL_OUTPUT_CHARS),
            // 0 (never) stays 0.
            idle_stop_ms: self.idle_stop_ms.min(MAX_TIMEOUT_MS),
            trust_timeout_ms: t(self.trust_timeout_ms),
        }
    }
}
