//! MCP Apps methods of [`NativeHost`]: the `mcp://` channel
//! (`sendChannelMessage`; answers and forwarded notifications leave as
//! `channelMessage` events); `readAppResource` is in `abort`.

use napi_derive::napi;

use super::{respond, NativeHost};

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
}
