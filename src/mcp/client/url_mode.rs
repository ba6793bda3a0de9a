//! URL-mode elicitation on a connection (SEP-1036; MCP 2025-11-25 and
//! 2026-07-28 "Client Features › Elicitation › URL Mode"): who is asked and
//! how their answer reaches the server.
//!
//! - Declared (`elicitation.url`) only when the app's `elicitation` handler
//!   takes URL mode or AHP clients answer chat elicitations
//!   ([`crate::requests::client_capabilities_with`]); a URL request to a
//!   host that did not declare it gets `-32602`, as the spec says.
//! - The URL is checked ([`UrlElicitation::check`]: `http`/`https`, no
//!   userinfo, bounded) and never opened or fetched by the host; a refused
//!   one gets `-32602` naming why, never the URL.
//! - Asked ([`HostClient::url_answer`]): for an AHP tool call, an input
//!   request with `url` (`chat/inputRequested`, `session/inputNeededSet`),
//!   raced against the app's URL handler when there is one; otherwise the
//!   app's URL handler (with the URL's `origin`); otherwise the request is
//!   declined. `notifications/elicitation/complete` for the elicitation's
//!   id, arriving before anyone answered, answers `accept` (the user did
//!   it): the AHP input is completed `accept` and the handler withdrawn.
//! - Answered `{action}` alone: `content` is left out for URL mode.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitResult, ErrorData};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::HostClient;
use crate::chat::input_publisher::{self, ChatCallInputs};
use crate::limits::MAX_OPEN_INPUTS_PER_CALL;
use crate::requests::url_elicitation::UrlElicitation;
use crate::requests::{HandlerRequest, ServerRequestKind};

/// A URL elicitation's answer, once someone is asked (`{action}`, or why
/// the asking failed).
pub(crate) type UrlAnswer = BoxFuture<'static, Result<Value, String>>;

impl HostClient {
    /// Whether this connection declared URL-mode elicitation in `initialize`.
    fn declares_url(&self) -> bool {
        let elicitation = self.info.capabilities.elicitation.as_ref();
        elicitation.is_some_and(|e| e.url.is_some())
    }

    /// `elicitation/create` in URL mode (see the module doc).
    pub(super) async fn elicit_url(
        &self,
        request: &ElicitRequestParams,
        context: &RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if !self.declares_url() {
            return Err(ErrorData::invalid_params(
                "elicitation/create refused: URL mode was not declared by this client \
                 (capabilities.elicitation.url)",
                None,
            ));
        }
        let url = match UrlElicitation::of_params(request) {
            Some(Ok(url)) => url,
            Some(Err(why)) => {
                let why = format!("elicitation/create refused: {why}");
                return Err(ErrorData::invalid_params(why, None));
            }
            None => return Err(ErrorData::internal_error("not a URL elicitation", None)),
        };
        let kind = ServerRequestKind::Elicitation;
        let _slot = self.bounds.request_slot(kind)?;
        let watch = self.url_waits.watch(&url.elicitation_id);
        let chat = input_publisher::attribute(&self.calls, context);
        let done = watch.as_ref().map(|w| w.done());
        let answer = match self.url_answer(&url, chat.as_ref(), done) {
            Ok(Some(answer)) => self.wait_on_user(kind, answer, context).await?,
            Ok(None) => json!({ "action": "decline" }),
            Err(why) => return Err(ErrorData::internal_error(why, None)),
        };
        url_result(answer)
    }

    /// Asks for a URL elicitation (see the module doc): the answer's
    /// future, or `None` when nobody can be asked (no AHP chat call, no URL
    /// handler). `done`, when given, answers `accept` once cancelled (the
    /// server's completion notification).
    ///
    /// # Errors
    /// The call has [`MAX_OPEN_INPUTS_PER_CALL`] open input requests.
    pub(crate) fn url_answer(
        &self,
        url: &UrlElicitation,
        chat: Option<&Arc<ChatCallInputs>>,
        done: Option<CancellationToken>,
    ) -> Result<Option<UrlAnswer>, String> {
        let kind = ServerRequestKind::Elicitation;
        let handler = self.handler(kind).filter(|h| h.elicitation_url());
        let mut request = HandlerRequest::new(self.server_id.clone(), kind, url.params());
        request.origin = Some(url.origin.clone());
        let Some(call) = chat else {
            let app = handler.map(|h| h.request(request));
            return Ok(app.map(|app| completed_by(Some(app), done)));
        };
        let Some(mut pending) = call.open_url(url) else {
            return Err(format!(
                "elicitation/create declined: tool call {} already has {MAX_OPEN_INPUTS_PER_CALL} \
                 open input requests (MAX_OPEN_INPUTS_PER_CALL)",
                call.tool_call_id()
            ));
        };
        request.chat_input = Some(pending.chat_input_ref());
        let app = handler.map(|h| h.request(request));
        let app = (app.is_some() || done.is_some()).then(|| completed_by(app, done));
        Ok(Some(Box::pin(async move {
            input_publisher::race(&mut pending, app).await
        })))
    }
}

/// `app`'s answer, or `accept` as soon as `done` is cancelled (the app's
/// future is then dropped: its handler is withdrawn).
fn completed_by(app: Option<UrlAnswer>, done: Option<CancellationToken>) -> UrlAnswer {
    let accept = || json!({ "action": "accept" });
    match (app, done) {
        (Some(app), None) => app,
        (Some(app), Some(done)) => Box::pin(async move {
            tokio::select! {
                answer = app => answer,
                () = done.cancelled_owned() => Ok(accept()),
            }
        }),
        (None, Some(done)) => Box::pin(async move {
            done.cancelled_owned().await;
            Ok(accept())
        }),
        (None, None) => Box::pin(std::future::pending()),
    }
}

/// The MCP result of a URL elicitation's answer: rmcp's `ElicitResult`
/// with its `action`, `content` left out (the spec: "For URL mode: the
/// `content` field is omitted").
pub(crate) fn url_result(answer: Value) -> Result<ElicitResult, ErrorData> {
    let mut result: ElicitResult = serde_json::from_value(answer).map_err(|e| {
        ErrorData::internal_error(
            format!("elicitation/create handler returned an invalid result: {e}"),
            None,
        )
    })?;
    result.content = None;
    Ok(result)
}
