//! The rmcp `ClientHandler` of one server connection: our `clientInfo`, and
//! server notifications routed to the server's actor or to `log` events.

use std::sync::Arc;

use rmcp::handler::client::ClientHandler;
#[allow(deprecated)] // MCP logging (SEP-2577 deprecates it; servers still send it)
use rmcp::model::{ClientConfig, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

use crate::events::{log, EventSink, LogLevel};

/// A server notification the actor acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
}

/// Per-connection client handler.
#[derive(Clone)]
pub struct HostClient {
    pub(crate) info: ClientConfig,
    pub(crate) server_id: String,
    pub(crate) notices: mpsc::UnboundedSender<Notice>,
    pub(crate) sink: Arc<dyn EventSink>,
}

impl ClientHandler for HostClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::ToolsChanged);
    }

    #[allow(deprecated)]
    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _context: NotificationContext<RoleClient>) {
        let level = match params.level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info | LoggingLevel::Notice => LogLevel::Info,
            LoggingLevel::Warning => LogLevel::Warn,
            _ => LogLevel::Error,
        };
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = match &params.logger {
            Some(logger) => format!("[{logger}] {text}"),
            None => text,
        };
        self.sink.send(log(level, "server.log", Some(&self.server_id), text));
    }
}
