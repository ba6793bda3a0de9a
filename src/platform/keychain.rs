//! The OS keychain behind host option `credentials: 'os'`: one
//! `keyring-core` credential store per OS (the keyring project's store
//! crates), opened here and nowhere else.
//!
//! | OS | store | crate |
//! | --- | --- | --- |
//! | Linux, the BSDs | the Secret Service on the D-Bus session bus (GNOME Keyring, KWallet, KeePassXC), the default (login) collection | `zbus-secret-service-keyring-store` (pure Rust, no libdbus) |
//! | macOS | the login keychain (Keychain Services) | `apple-native-keyring-store` (`keychain`) |
//! | Windows | the Credential Manager, generic credentials | `windows-native-keyring-store` |

use std::sync::Arc;

use keyring_core::{CredentialStore, Error};

/// The name of this OS's keychain, as errors show it.
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "ios", target_os = "android"))
))]
pub const KEYCHAIN_NAME: &str = "Secret Service";
/// The name of this OS's keychain, as errors show it.
#[cfg(target_os = "macos")]
pub const KEYCHAIN_NAME: &str = "macOS Keychain";
/// The name of this OS's keychain, as errors show it.
#[cfg(windows)]
pub const KEYCHAIN_NAME: &str = "Windows Credential Manager";
/// The name of this OS's keychain, as errors show it.
#[cfg(any(target_os = "ios", target_os = "android"))]
pub const KEYCHAIN_NAME: &str = "OS keychain";

/// Opens this OS's keychain: on Linux this connects to the session bus
/// and opens a Secret Service session (blocking: call it off the async
/// runtime's threads).
///
/// # Errors
/// The store's own: no session bus, no Secret Service on it, access
/// refused; `NotSupportedByStore` on an OS without a keychain store.
pub fn open_keychain() -> Result<Arc<CredentialStore>, Error> {
    #[cfg(all(
        unix,
        not(any(target_os = "macos", target_os = "ios", target_os = "android"))
    ))]
    let store: Arc<CredentialStore> = zbus_secret_service_keyring_store::Store::new()?;
    #[cfg(target_os = "macos")]
    let store: Arc<CredentialStore> = apple_native_keyring_store::keychain::Store::new()?;
    #[cfg(windows)]
    let store: Arc<CredentialStore> = windows_native_keyring_store::Store::new()?;
    #[cfg(any(target_os = "ios", target_os = "android"))]
    let store: Result<Arc<CredentialStore>, Error> = Err(Error::NotSupportedByStore(
        "no OS keychain store on this OS".to_owned(),
    ));
    #[cfg(not(any(target_os = "ios", target_os = "android")))]
    let store = Ok(store);
    store
}
