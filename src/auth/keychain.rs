//! The OS keychain as the host's credential store (host option
//! `credentials: 'os'`): the Secret Service on Linux, the login keychain on
//! macOS, the Credential Manager on Windows (`crate::platform::open_keychain`,
//! the keyring project's store crates).
//!
//! Same keys as every [`SecretStore`] (`ahp-mcp-host/oauth/v1 <issuer>
//! <resource>`, see [`super::store`]), one keychain entry per key: service
//! [`KEYCHAIN_SERVICE`], user (account) the key, the value the JSON text,
//! stored as its UTF-8 bytes. A value longer than the OS takes in one entry
//! is split ([`parts`]); one over [`MAX_KEYCHAIN_VALUE_BYTES`] is refused.
//!
//! Keychain calls block (D-Bus round trips, a prompt the OS may show): each
//! runs on tokio's blocking pool, one at a time in the process, and is
//! awaited at most [`KEYCHAIN_CALL_TIMEOUT_MS`]. The store is opened at its
//! first use, never when the host is made, and opened again after a
//! failure of the platform (a keyring daemon that restarted).
//!
//! Every failure is an error naming the store (`OS keychain (Secret
//! Service): …`) that fails the OAuth step that needed it: nothing falls
//! back to memory or to a file. An entry that is not a whole value reads as
//! absent, as the app's stores do.

mod parts;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use keyring_core::{CredentialStore, Error};

pub use parts::KEYCHAIN_SERVICE;

use super::store::SecretStore;
use crate::limits::{KEYCHAIN_CALL_TIMEOUT_MS, KEYCHAIN_PART_BYTES, MAX_KEYCHAIN_VALUE_BYTES};
use crate::platform::{open_keychain, KEYCHAIN_NAME};

/// One keychain call at a time in the process: the Windows Credential
/// Manager does not order calls on one entry from several threads.
static KEYCHAIN_CALLS: Mutex<()> = Mutex::new(());

/// Opens a store (the OS keychain; a mock in tests).
type Opener = fn() -> Result<Arc<CredentialStore>, Error>;

/// A [`SecretStore`] over the OS keychain (host option `credentials: 'os'`).
pub struct OsSecretStore {
    keychain: Arc<Keychain>,
}

struct Keychain {
    open: Opener,
    /// Shown in errors: `OS keychain (<name>)`.
    name: &'static str,
    opened: Mutex<Option<Arc<CredentialStore>>>,
    part_bytes: usize,
    timeout: Duration,
}

/// What a keychain call failed at.
#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
    Delete,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Self::Read => "reading",
            Self::Write => "writing",
            Self::Delete => "deleting",
        }
    }
}

/// Why a call failed: opening the store, or the call itself.
enum Failure {
    Open(Error),
    Call(Error),
}

impl Default for OsSecretStore {
    fn default() -> Self {
        Self::new()
    }
}

impl OsSecretStore {
    /// The OS keychain of this machine; nothing is opened until the first
    /// call.
    pub fn new() -> Self {
        Self::with(open_keychain, KEYCHAIN_NAME, KEYCHAIN_PART_BYTES)
    }

    fn with(open: Opener, name: &'static str, part_bytes: usize) -> Self {
        Self {
            keychain: Arc::new(Keychain {
                open,
                name,
                opened: Mutex::new(None),
                part_bytes,
                timeout: Duration::from_millis(KEYCHAIN_CALL_TIMEOUT_MS),
            }),
        }
    }

    /// Runs `call` on the blocking pool with the opened store, within the
    /// call timeout.
    fn run<T: Send + 'static>(
        &self,
        op: Op,
        call: impl FnOnce(&Keychain, &CredentialStore) -> Result<T, Error> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, String>> {
        let keychain = self.keychain.clone();
        Box::pin(async move {
            let (name, timeout) = (keychain.name, keychain.timeout);
            let task = tokio::task::spawn_blocking(move || {
                let _one = KEYCHAIN_CALLS
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let store = keychain.store().map_err(Failure::Open)?;
                let result = call(&keychain, &*store);
                if let Err(Error::PlatformFailure(_)) = &result {
                    keychain.forget();
                }
                result.map_err(Failure::Call)
            });
            match tokio::time::timeout(timeout, task).await {
                Ok(Ok(result)) => result.map_err(|f| failure_text(name, op, &f)),
                Ok(Err(_)) => Err(format!(
                    "OS keychain ({name}): {} failed: the keychain call panicked",
                    op.as_str()
                )),
                Err(_) => Err(format!(
                    "OS keychain ({name}): {} failed: no answer within {} ms",
                    op.as_str(),
                    timeout.as_millis()
                )),
            }
        })
    }
}

impl Keychain {
    /// The opened store, opening it first when needed.
    fn store(&self) -> Result<Arc<CredentialStore>, Error> {
        let mut opened = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(store) = &*opened {
            return Ok(store.clone());
        }
        let store = (self.open)()?;
        *opened = Some(store.clone());
        Ok(store)
    }

    /// Drops the opened store, so the next call opens it again.
    fn forget(&self) {
        *self.opened.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The text of a failure: the store, the operation, the cause (never a
/// value: a keyring error's bytes are not shown).
fn failure_text(name: &str, op: Op, failure: &Failure) -> String {
    match failure {
        Failure::Open(e) => format!("OS keychain ({name}) is not reachable: {}", cause(e)),
        Failure::Call(e) => format!("OS keychain ({name}): {} failed: {}", op.as_str(), cause(e)),
    }
}

/// A keyring error in words, without the bytes some variants carry.
fn cause(e: &Error) -> String {
    match e {
        Error::PlatformFailure(source) => source.to_string(),
        Error::NoStorageAccess(source) => {
            format!("access refused (the keychain is locked or denied access): {source}")
        }
        Error::NoEntry => "no entry".to_owned(),
        Error::BadEncoding(_) | Error::BadDataFormat(..) => "the entry is not text".to_owned(),
        Error::BadStoreFormat(reason) => format!("the store is malformed: {reason}"),
        Error::TooLong(what, limit) => {
            format!("the {what} is longer than the keychain takes ({limit})")
        }
        Error::Invalid(what, reason) => format!("invalid {what}: {reason}"),
        Error::Ambiguous(entries) => format!("{} entries match the key", entries.len()),
        Error::NoDefaultStore => "no keychain store on this system".to_owned(),
        Error::NotSupportedByStore(what) => format!("not supported: {what}"),
        other => other.to_string(),
    }
}

impl SecretStore for OsSecretStore {
    fn get(&self, key: String) -> BoxFuture<'static, Result<Option<String>, String>> {
        self.run(Op::Read, move |_, store| parts::read(store, &key))
    }

    fn set(&self, key: String, value: String) -> BoxFuture<'static, Result<(), String>> {
        if value.len() > MAX_KEYCHAIN_VALUE_BYTES {
            let name = self.keychain.name;
            let text = format!(
                "OS keychain ({name}): writing failed: the value is {} bytes, over the {MAX_KEYCHAIN_VALUE_BYTES}-byte limit",
                value.len()
            );
            return Box::pin(async move { Err(text) });
        }
        self.run(Op::Write, move |keychain, store| {
            parts::write(store, &key, &value, keychain.part_bytes)
        })
    }

    fn delete(&self, key: String) -> BoxFuture<'static, Result<(), String>> {
        self.run(Op::Delete, move |_, store| parts::delete(store, &key))
    }
}

#[cfg(test)]
mod tests;
