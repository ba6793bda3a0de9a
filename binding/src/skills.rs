//! Skills methods of [`NativeHost`] (SEP-2640; see `host/skills.rs`):
//! `listSkills` answers at once, `loadSkill` is a request whose answer is
//! a `response` item of the event batch.

use napi_derive::napi;

use super::{respond, NativeHost};

#[napi]
impl NativeHost {
    /// `listSkills(serverId | null)` → response JSON with the `SkillEntry`
    /// array (every server's when `null`).
    #[napi(catch_unwind)]
    pub fn list_skills(&self, server_id: Option<String>) -> String {
        respond(self.host.list_skills(server_id.as_deref()))
    }

    /// `loadSkill(requestId, serverId, uri)`: answers (a `response` item of
    /// the event batch) with the `LoadedSkill`; `cancel(requestId)` aborts it.
    #[napi]
    pub fn load_skill(&self, request_id: u32, server_id: String, uri: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.load_skill(&server_id, &uri, Some(&token)).await
        })
    }
}
