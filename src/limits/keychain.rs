//! The bounds of the OS keychain credential store (host option
//! `credentials: 'os'`; see `auth::keychain`).

/// Longest value the OS keychain store keeps under one key (bytes): 64 KiB,
/// far above an OAuth token response with its refresh and ID tokens. A
/// longer one is refused (`credential_store_failed`), nothing written.
pub const MAX_KEYCHAIN_VALUE_BYTES: usize = 64 * 1024;

/// Largest value written to one keychain entry (bytes): a longer value is
/// split into parts (entries `<key> #1` … `<key> #n`, the entry `<key>`
/// naming them). On Windows 2560, the Credential Manager's
/// `CRED_MAX_CREDENTIAL_BLOB_SIZE` (5 × 512 bytes), which many token
/// responses exceed; the Secret Service and the macOS Keychain have no
/// such limit, so a value there is one entry.
#[cfg(windows)]
pub const KEYCHAIN_PART_BYTES: usize = 5 * 512;
/// Largest value written to one keychain entry (bytes): the Secret Service
/// and the macOS Keychain take [`MAX_KEYCHAIN_VALUE_BYTES`] in one entry.
#[cfg(not(windows))]
pub const KEYCHAIN_PART_BYTES: usize = MAX_KEYCHAIN_VALUE_BYTES;

/// Most parts of one split value (a count): 32, more than
/// [`MAX_KEYCHAIN_VALUE_BYTES`] needs at the smallest part size; an entry
/// naming more is read as absent, and a delete sweeps no further.
pub const MAX_KEYCHAIN_PARTS: usize = 32;

/// Time one OS keychain call may take (ms): 30 s, room for the user to
/// answer a keychain prompt (an unlock or an access dialog). A call still
/// running then fails `credential_store_failed` ("did not answer"); it is
/// left to finish on its blocking thread.
pub const KEYCHAIN_CALL_TIMEOUT_MS: u64 = 30_000;
