//! MCP Apps methods of [`NativeHost`]: the `mcp://` channel
//! (`sendChannelMessage`; answers and forwarded notifications leave as
//! `channelMessage` events) and `readAppResource`.

use napi_derive::napi;

use super::{respond, run, NativeHost};

#[napi]
impl NativeHost {
    /// `sendChannelMessage(messageJson)` → response JSON with `null`; the
    /// request (if any) is admitted now, in call order, and served on the
    /// runtime; its answer arrives as a `channelMessage` event.
    #[napi(catch_unwind)]
    pub fn send_channel_message(&self, message_json: String) -> String {
        let admitted = self.host.send_channel_message(&message_json);
        respond(admitted.map(|task| {
            if let Some(task) = task {
                napi::bindgen_prelude::spawn(task);
            }
        }))
    }

    /// `readAppResource(serverId, uri)` → response JSON with the `ReadResourceResult`.
    #[napi]
    pub async fn read_app_resource(&self, server_id: String, uri: String) -> String {
        let host = self.host.clone();
        run(async move { host.read_app_resource(&server_id, &uri).await }).await
    }
}
