//! The bounds of sign-ins on remote and headless hosts (issue 31 item 5):
//! callback URLs the app hands back (a pasted or app-received redirect),
//! app-chosen redirect URIs, and the RFC 8628 device authorization grant
//! (see `auth::redirect` and `auth::device`).

/// Longest callback URL [`crate::host::Host::complete_authorization`] takes
/// (bytes): 16 KiB, the loopback listener's request-head bound. A longer
/// one is refused (`invalid_argument`) and the sign-in goes on waiting.
pub const MAX_CALLBACK_URL_BYTES: usize = 16 * 1024;
/// Longest app-chosen redirect URI (`authorize({redirectUri})`, bytes):
/// 2 KiB. A longer one is refused (`invalid_argument`).
pub const MAX_REDIRECT_URI_BYTES: usize = 2 * 1024;
/// Longest wait for the user of a device authorization grant (RFC 8628
/// §3.2 `expires_in`, seconds): 30 min. A device code the authorization
/// server says lives longer is polled for this long at most; the sign-in's
/// `timeoutMs` (default 5 min) bounds it too, whichever ends first.
pub const MAX_DEVICE_CODE_WAIT_SECS: u64 = 30 * 60;
/// Shortest wait between two polls of the token endpoint in a device
/// authorization grant (ms): 1 s. RFC 8628 §3.5: the client waits the
/// response's `interval` (5 s when absent) and 5 s more after each
/// `slow_down`; an `interval` under this floor is raised to it.
pub const MIN_DEVICE_POLL_INTERVAL_MS: u64 = 1_000;
/// Longest wait between two polls after the token endpoint could not be
/// reached (seconds): 30. The wait doubles after each such failure (RFC
/// 8628 §3.5 "exponential backoff") up to this bound, and stays where it
/// got to; a `slow_down` answer adds 5 s to it.
pub const MAX_DEVICE_POLL_BACKOFF_SECS: u64 = 30;
/// Longest `user_code` (characters) and `verification_uri` (bytes) a device
/// authorization response may carry to be shown to the user: 64 and 2 KiB.
/// A longer one fails the sign-in (`auth_failed`) before anything is shown.
pub const MAX_DEVICE_USER_CODE_CHARS: usize = 64;
/// See [`MAX_DEVICE_USER_CODE_CHARS`].
pub const MAX_DEVICE_VERIFICATION_URI_BYTES: usize = 2 * 1024;
