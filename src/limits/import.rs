//! The bounds of `importConfig` on what a file gives (the resolve phase's
//! are [`super::Limits::max_config_file_bytes`] and
//! [`super::Limits::import_resolve_timeout_ms`]).

/// Longest server name an import takes (bytes of UTF-8): 256. A longer
/// one leaves its entry out (an `invalid_entry` error).
pub const MAX_IMPORTED_SERVER_NAME_BYTES: usize = 256;

/// Characters of a file's text (a `type`, a key) shown in an import
/// diagnostic: 64; a longer text is cut, with `…`.
pub const MAX_ECHOED_IMPORT_TEXT_CHARS: usize = 64;

/// Checks of a registry `docker` entry's `runtimeArguments` with one
/// publisher-written `choices` value in (choices × arguments): 100 000. A
/// file whose choices would take more leaves its entry out (an
/// `invalid_entry` error naming `runtimeArguments`).
pub const MAX_DOCKER_CHOICE_CHECKS: usize = 100_000;
