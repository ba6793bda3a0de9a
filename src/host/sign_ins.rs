//! The host-run sign-ins that take a callback URL from the app
//! ([`Host::complete_authorization`]: a URL the user pasted, or one the
//! app's own redirect URI received): one per server, the newest
//! `authorize` of it. A sign-in takes callbacks from the moment its
//! authorization URL is handed out until its first callback arrived (from
//! the app or at the loopback listener); the app's call then settles with
//! the sign-in's outcome.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, watch};
use url::Url;

use super::Host;
use crate::auth::redirect::check_callback;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::MAX_CALLBACK_URL_BYTES;

/// A sign-in's outcome as its waiters see it: `None` while it runs.
type Outcome = watch::Receiver<Option<HostResult<()>>>;

/// The sign-ins of a host that may take a callback URL (a leaf lock).
#[derive(Default)]
pub(super) struct SignIns {
    waiting: Mutex<HashMap<String, Waiting>>,
    next: AtomicU64,
}

/// One sign-in that may take a callback URL.
struct Waiting {
    /// Which `authorize` it is (a newer one of the server replaces it).
    ticket: u64,
    /// The redirect URI a callback must match; `None` until the
    /// authorization URL was handed out (and for a device grant).
    redirect_uri: Option<String>,
    /// Where its callback goes.
    callbacks: mpsc::Sender<Url>,
    /// Its outcome.
    outcome: Outcome,
}

/// An `authorize`'s place in [`SignIns`]; dropped (or finished) when the
/// sign-in ends, which removes it.
pub(super) struct Ticket {
    id: u64,
    server_id: String,
    sign_ins: Arc<SignIns>,
    outcome: watch::Sender<Option<HostResult<()>>>,
}

impl SignIns {
    /// Registers a sign-in of `server_id`, replacing an older one's place
    /// (whose app callbacks then end); its ticket and the receiver of the
    /// callback URLs handed to it.
    pub(super) fn open(self: &Arc<Self>, server_id: &str) -> (Ticket, mpsc::Receiver<Url>) {
        let (callbacks, received) = mpsc::channel(1);
        let (outcome, watched) = watch::channel(None);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let waiting = Waiting {
            ticket: id,
            redirect_uri: None,
            callbacks,
            outcome: watched,
        };
        self.lock().insert(server_id.to_owned(), waiting);
        let ticket = Ticket {
            id,
            server_id: server_id.to_owned(),
            sign_ins: self.clone(),
            outcome,
        };
        (ticket, received)
    }

    /// The sign-in `ticket` of `server_id` handed out `authorization_url`:
    /// from now on it takes callbacks to its `redirect_uri`.
    pub(super) fn ready(&self, server_id: &str, ticket: u64, authorization_url: &str) {
        let redirect_uri = Url::parse(authorization_url).ok().and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "redirect_uri")
                .map(|(_, v)| v.into_owned())
        });
        if let Some(waiting) = self.lock().get_mut(server_id) {
            if waiting.ticket == ticket {
                waiting.redirect_uri = redirect_uri;
            }
        }
    }

    /// Hands `url` to the sign-in of `server_id` (see
    /// [`Host::complete_authorization`]); its outcome to wait for.
    ///
    /// # Errors
    /// `not_found` when no sign-in of the server takes a callback (none,
    /// not handed out yet, a device grant, or one that already got its
    /// callback); `invalid_argument` when `url` is not a callback to its
    /// redirect URI (the sign-in goes on waiting).
    fn hand_over(&self, server_id: &str, url: Url) -> HostResult<Outcome> {
        let none = || {
            HostError::new(
                ErrorCode::NotFound,
                format!("no sign-in of {server_id} is waiting for a callback URL"),
            )
        };
        let mut waiting = self.lock();
        let redirect_uri = waiting
            .get(server_id)
            .and_then(|w| w.redirect_uri.clone())
            .ok_or_else(none)?;
        check_callback(&url, &redirect_uri)?;
        let taken = waiting.remove(server_id).ok_or_else(none)?;
        drop(waiting);
        taken.callbacks.try_send(url).map_err(|_| none())?;
        Ok(taken.outcome)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Ticket {
    /// This sign-in's id (for [`SignIns::ready`]).
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// Ends the sign-in with `outcome`, which the app's waiting
    /// `complete_authorization` returns.
    pub(super) fn finish(self, outcome: &HostResult<()>) {
        self.outcome.send_replace(Some(outcome.clone()));
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut waiting = self.sign_ins.lock();
        if waiting.get(&self.server_id).map(|w| w.ticket) == Some(self.id) {
            waiting.remove(&self.server_id);
        }
    }
}

impl Host {
    /// Finishes a host-run sign-in of server `server_id` with the callback
    /// URL the browser was redirected to (`…?code=…&state=…&iss=…`, or
    /// `…?error=…`): a URL the user pasted (the browser ran on another
    /// machine than the loopback listener), or one the app's own redirect
    /// URI received (`authorize({redirectUri})`). The URL is checked
    /// exactly as a redirect to the loopback listener is (rmcp: `state`,
    /// RFC 9207 `iss`, then the code exchange with the PKCE verifier), and
    /// it is the sign-in's one callback: the listener closes. Resolves with
    /// the sign-in's outcome: once the server is `ready`, or with the error
    /// `authorize` rejects with.
    ///
    /// # Errors
    /// `not_found` (no such server; no sign-in of it waiting for a
    /// callback: none started, its URL not handed out yet, a device grant,
    /// or its callback already came); `invalid_argument` (longer than
    /// [`MAX_CALLBACK_URL_BYTES`], not an absolute URL, not a redirect to
    /// the sign-in's redirect URI, neither `code` and `state` nor `error`:
    /// the sign-in goes on waiting); then the sign-in's own: `auth_failed`
    /// (wrong `state` or `iss`, a refused exchange), `auth_denied` (an
    /// `error` callback), `auth_required`, `timeout`, `cancelled`,
    /// `disposed`. No error carries the URL's query.
    pub async fn complete_authorization(
        &self,
        server_id: &str,
        callback_url: &str,
    ) -> HostResult<()> {
        self.check_live()?;
        self.server(server_id)?;
        let invalid =
            |why: &str| HostError::new(ErrorCode::InvalidArgument, format!("callbackUrl: {why}"));
        if callback_url.len() > MAX_CALLBACK_URL_BYTES {
            return Err(invalid(&format!(
                "longer than {MAX_CALLBACK_URL_BYTES} bytes"
            )));
        }
        let url = Url::parse(callback_url).map_err(|e| invalid(&format!("not a URL ({e})")))?;
        let mut outcome = self.sign_ins.hand_over(server_id, url)?;
        let settled = async move {
            loop {
                if let Some(result) = outcome.borrow_and_update().clone() {
                    return result;
                }
                if outcome.changed().await.is_err() {
                    return Err(HostError::new(
                        ErrorCode::Cancelled,
                        "the sign-in ended before it completed",
                    ));
                }
            }
        };
        self.until_disposed(settled).await
    }
}
