//! The host's own roots ([`HostRoots`]: the JS `roots` option and
//! `setRoots`) and the request handler that answers `roots/list` from them
//! ([`WithHostRoots`]).
//!
//! Precedence: once the host's roots are set, `roots/list` is answered from
//! them and the app's `roots` handler is no longer called; before that (a
//! host with a `roots` handler and no `roots` option) the handler answers.
//! The `roots` capability, with `listChanged: true`, is declared when either
//! exists: the host then tells servers about every change (see
//! `Host::set_roots`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use futures::future::BoxFuture;
use rmcp::service::{Peer, RoleClient};
use serde_json::{json, Value};

use super::roots::Root;
use super::{HandlerRequest, RequestHandler, ServerRequestKind};

/// The host's roots and the connections that have read roots.
pub struct HostRoots {
    /// Whether the `roots` capability is declared (a `roots` option or a
    /// `roots` handler): only then can roots be set later.
    declared: bool,
    /// `None` until the app sets roots (then `roots/list` goes to the app's
    /// `roots` handler).
    roots: RwLock<Option<Arc<Vec<Root>>>>,
    /// By server id, the connection that last read roots (`roots/list`):
    /// told about a change even before its server is `ready`.
    readers: Mutex<HashMap<String, Peer<RoleClient>>>,
}

impl HostRoots {
    /// The host's roots: `initial` from the `roots` option (`None`: not
    /// set); `declared` when the `roots` capability is declared.
    pub fn new(initial: Option<Vec<Root>>, declared: bool) -> Self {
        Self {
            declared: declared || initial.is_some(),
            roots: RwLock::new(initial.map(Arc::new)),
            readers: Mutex::default(),
        }
    }

    /// Whether the `roots` capability is declared (see [`HostRoots::new`]).
    pub fn declared(&self) -> bool {
        self.declared
    }

    /// The roots, once set.
    pub fn current(&self) -> Option<Arc<Vec<Root>>> {
        self.roots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets the roots; returns whether they differ from the previous ones
    /// (the first set always counts as a change).
    pub fn replace(&self, roots: Vec<Root>) -> bool {
        let mut cell = self.roots.write().unwrap_or_else(PoisonError::into_inner);
        if cell.as_deref() == Some(&roots) {
            return false;
        }
        *cell = Some(Arc::new(roots));
        true
    }

    /// Records that server `server_id`'s connection `peer` reads roots (call
    /// it before answering, so a change made meanwhile reaches it).
    pub fn record_reader(&self, server_id: &str, peer: Peer<RoleClient>) {
        self.lock_readers().insert(server_id.to_owned(), peer);
    }

    /// The connections that read roots and are still open, by server id
    /// (closed ones are forgotten).
    pub fn readers(&self) -> Vec<(String, Peer<RoleClient>)> {
        let mut readers = self.lock_readers();
        readers.retain(|_, peer| !peer.is_transport_closed());
        readers
            .iter()
            .map(|(id, peer)| (id.clone(), peer.clone()))
            .collect()
    }

    fn lock_readers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer<RoleClient>>> {
        self.readers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The request handler a host installs: the app's handler, with `roots/list`
/// answered from [`HostRoots`] once they are set (see the module docs for
/// the precedence).
pub struct WithHostRoots {
    app: Option<Arc<dyn RequestHandler>>,
    roots: Arc<HostRoots>,
}

impl WithHostRoots {
    /// Wraps the app's handler (if any) around the host's roots.
    pub fn new(app: Option<Arc<dyn RequestHandler>>, roots: Arc<HostRoots>) -> Self {
        Self { app, roots }
    }
}

impl RequestHandler for WithHostRoots {
    fn handles(&self, kind: ServerRequestKind) -> bool {
        (kind == ServerRequestKind::Roots && self.roots.declared())
            || self.app.as_ref().is_some_and(|app| app.handles(kind))
    }

    fn request(&self, request: HandlerRequest) -> BoxFuture<'static, Result<Value, String>> {
        let kind = request.kind;
        if kind == ServerRequestKind::Roots {
            if let Some(roots) = self.roots.current() {
                return Box::pin(async move { Ok(json!({ "roots": *roots })) });
            }
        }
        match &self.app {
            Some(app) => app.request(request),
            None => Box::pin(async move { Err(format!("no {} handler", kind.name())) }),
        }
    }

    fn sampling_tools(&self) -> bool {
        self.app.as_ref().is_some_and(|app| app.sampling_tools())
    }

    fn elicitation_url(&self) -> bool {
        self.app.as_ref().is_some_and(|app| app.elicitation_url())
    }

    fn host_roots(&self) -> Option<&HostRoots> {
        Some(&self.roots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::roots::parse_roots;

    struct AppRoots;
    impl RequestHandler for AppRoots {
        fn handles(&self, kind: ServerRequestKind) -> bool {
            kind == ServerRequestKind::Roots
        }
        fn request(&self, _: HandlerRequest) -> BoxFuture<'static, Result<Value, String>> {
            Box::pin(async { Ok(json!({ "roots": [{ "uri": "file:///app" }] })) })
        }
    }

    fn roots(value: Value) -> Vec<Root> {
        parse_roots(&value).unwrap_or_default()
    }

    #[tokio::test]
    async fn host_roots_take_precedence_over_the_handler_once_set() {
        let host = Arc::new(HostRoots::new(None, true));
        let handler = WithHostRoots::new(Some(Arc::new(AppRoots)), host.clone());
        let ask = || {
            handler.request(HandlerRequest::new(
                "s",
                ServerRequestKind::Roots,
                json!({}),
            ))
        };
        assert_eq!(
            ask().await,
            Ok(json!({ "roots": [{ "uri": "file:///app" }] }))
        );
        assert!(host.replace(roots(json!([{ "uri": "/srv" }]))));
        assert!(!host.replace(roots(json!([{ "uri": "file:///srv" }]))));
        assert_eq!(
            ask().await,
            Ok(json!({ "roots": [{ "uri": "file:///srv" }] }))
        );
    }

    #[test]
    fn roots_are_declared_with_an_option_or_a_handler() {
        let none = WithHostRoots::new(None, Arc::new(HostRoots::new(None, false)));
        assert!(!none.handles(ServerRequestKind::Roots));
        assert!(!none.handles(ServerRequestKind::Elicitation));
        let option = WithHostRoots::new(None, Arc::new(HostRoots::new(Some(vec![]), false)));
        assert!(option.handles(ServerRequestKind::Roots));
        assert!(!option.handles(ServerRequestKind::Sampling));
    }
}
