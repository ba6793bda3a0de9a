//! Where OAuth credentials live: a key/value secret store, bridged to rmcp's
//! `CredentialStore`: the app's (for example VS Code `SecretStorage`), the
//! OS keychain ([`super::keychain::OsSecretStore`], `credentials: 'os'`),
//! or memory (the default). A store's error fails the OAuth step that
//! needed it (`credential store: <its text>`, `credential_store_failed`).
//!
//! Key format: `ahp-mcp-host/oauth/v1 <issuer> <resource>` — the
//! authorization server's issuer and the MCP server's resource URL (both
//! without a trailing `/`), separated by single spaces. The value is JSON of
//! rmcp's `StoredCredentials`: `client_id` (pre-registered, CIMD or
//! dynamically registered), the token response (access token, refresh token,
//! expiry, scopes), `granted_scopes`, `token_received_at` (Unix seconds) and
//! `issuer`. Client secrets of pre-registered clients are not stored (they
//! come from configuration).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use crate::redact::KeptSecret;

/// An async key/value store for secrets. Implementations must not log values.
pub trait SecretStore: Send + Sync + 'static {
    /// The value under `key`, if any.
    fn get(&self, key: String) -> BoxFuture<'static, Result<Option<String>, String>>;
    /// Stores `value` under `key`.
    fn set(&self, key: String, value: String) -> BoxFuture<'static, Result<(), String>>;
    /// Removes `key`.
    fn delete(&self, key: String) -> BoxFuture<'static, Result<(), String>>;
}

/// The default store: process memory only.
#[derive(Default)]
pub struct MemorySecretStore {
    values: Mutex<HashMap<String, String>>,
}

impl SecretStore for MemorySecretStore {
    fn get(&self, key: String) -> BoxFuture<'static, Result<Option<String>, String>> {
        let v = self
            .values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        Box::pin(async move { Ok(v) })
    }
    fn set(&self, key: String, value: String) -> BoxFuture<'static, Result<(), String>> {
        self.values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, value);
        Box::pin(async { Ok(()) })
    }
    fn delete(&self, key: String) -> BoxFuture<'static, Result<(), String>> {
        self.values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        Box::pin(async { Ok(()) })
    }
}

/// The store key for credentials issued by `issuer` for `resource`.
pub fn credential_key(issuer: &str, resource: &str) -> String {
    format!(
        "ahp-mcp-host/oauth/v1 {} {}",
        issuer.trim_end_matches('/'),
        resource.trim_end_matches('/')
    )
}

/// Serializes refreshes per key inside this process, so rotated refresh
/// tokens are saved before anyone else can refresh.
#[derive(Default)]
pub struct RefreshLocks {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl RefreshLocks {
    fn lock_for(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.to_owned())
            .or_default()
            .clone()
    }
}

/// rmcp `CredentialStore` over a [`SecretStore`] entry.
pub struct BridgedCredentialStore {
    store: Arc<dyn SecretStore>,
    key: String,
    locks: Arc<RefreshLocks>,
    /// The tokens last loaded or saved, hidden from every text the host
    /// shows while this store is in use (`crate::redact`).
    kept: Mutex<Vec<KeptSecret>>,
}

impl BridgedCredentialStore {
    /// The credentials of (`issuer`, `resource`) in `store`.
    pub fn new(
        store: Arc<dyn SecretStore>,
        locks: Arc<RefreshLocks>,
        issuer: &str,
        resource: &str,
    ) -> Self {
        Self {
            store,
            key: credential_key(issuer, resource),
            locks,
            kept: Mutex::default(),
        }
    }

    /// Keeps the access and refresh tokens of `credentials` (replacing the
    /// ones kept before).
    fn keep(&self, credentials: &StoredCredentials) {
        use oauth2::TokenResponse;
        let Some(tokens) = &credentials.token_response else {
            return;
        };
        let access = tokens.access_token().secret().as_str();
        let refresh = tokens.refresh_token().map(|t| t.secret().as_str());
        let kept = KeptSecret::all(std::iter::once(access).chain(refresh));
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = kept;
    }
}

fn store_error(e: String) -> AuthError {
    AuthError::CredentialStoreError(format!("credential store: {e}"))
}

fn access_token(c: &StoredCredentials) -> Option<String> {
    use oauth2::TokenResponse;
    c.token_response
        .as_ref()
        .map(|t| t.access_token().secret().clone())
}

#[async_trait::async_trait]
impl CredentialStore for BridgedCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match self
            .store
            .get(self.key.clone())
            .await
            .map_err(store_error)?
        {
            None => Ok(None),
            // An unreadable entry is treated as absent (it will be replaced).
            Some(json) => {
                let credentials: Option<StoredCredentials> = serde_json::from_str(&json).ok();
                if let Some(credentials) = &credentials {
                    self.keep(credentials);
                }
                Ok(credentials)
            }
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.keep(&credentials);
        let json = serde_json::to_string(&credentials).map_err(|e| store_error(e.to_string()))?;
        self.store
            .set(self.key.clone(), json)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .delete(self.key.clone())
            .await
            .map_err(store_error)
    }

    /// `invalid_grant`: forget the stored token only if it is still the one that failed.
    async fn on_refresh_token_rejected(&self, failed: &StoredCredentials) -> Result<(), AuthError> {
        let current = self.load().await?;
        if current.as_ref().and_then(access_token) == access_token(failed) {
            self.clear().await?;
        }
        Ok(())
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self.locks.lock_for(&self.key).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_issuer_and_resource_without_trailing_slashes() {
        assert_eq!(
            credential_key("https://as.test/", "https://mcp.test/mcp/"),
            "ahp-mcp-host/oauth/v1 https://as.test https://mcp.test/mcp"
        );
    }

    #[tokio::test]
    async fn round_trips_and_clears_only_the_failed_token() {
        let store: Arc<dyn SecretStore> = Arc::new(MemorySecretStore::default());
        let creds = BridgedCredentialStore::new(
            store.clone(),
            Arc::default(),
            "https://as.test",
            "https://mcp.test/mcp",
        );
        assert!(creds.load().await.unwrap_or_default().is_none());
        let saved = StoredCredentials::new("client-1".into(), None, vec!["a".into()], Some(1));
        creds
            .save(saved.clone())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let loaded = creds
            .load()
            .await
            .unwrap_or_default()
            .unwrap_or_else(|| panic!("missing"));
        assert_eq!(
            (loaded.client_id.as_str(), loaded.granted_scopes.clone()),
            ("client-1", vec!["a".to_owned()])
        );
        // Same (absent) token as the failed one → cleared.
        creds
            .on_refresh_token_rejected(&saved)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(creds.load().await.unwrap_or_default().is_none());
    }
}
