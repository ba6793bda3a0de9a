//! How one value lies in the OS keychain: under the entry (service
//! [`KEYCHAIN_SERVICE`], user = the key) as it is, or, when longer than the
//! store's part size (the Windows Credential Manager takes 2560 bytes), in
//! parts: the entries `<key> #1` … `<key> #n` hold the bytes in order and
//! the entry `<key>` holds `ahp-mcp-host/parts/v1 <n> <SHA-256 of the
//! value, hex>`.
//!
//! Parts are written before the entry naming them, so a reader never
//! follows it to parts not written yet; a value whose parts are missing or
//! do not match the digest (a write interrupted, two writers) reads as
//! absent, as an unreadable entry does. Parts of a longer value written
//! before are deleted after the new value is in place.

use keyring_core::{CredentialStore, Entry, Error};
use sha2::{Digest, Sha256};

use crate::limits::MAX_KEYCHAIN_PARTS;

/// The keychain service every entry of the host has (the `service`
/// attribute of a Secret Service item, the Keychain item's service, the
/// Windows target name's suffix `.ahp-mcp-host`).
pub const KEYCHAIN_SERVICE: &str = "ahp-mcp-host";

/// How the entry naming the parts of a split value starts.
const PARTS_MARKER: &str = "ahp-mcp-host/parts/v1 ";

/// The entry of `user`.
fn entry(store: &CredentialStore, user: &str) -> Result<Entry, Error> {
    store.build(KEYCHAIN_SERVICE, user, None)
}

/// The entry of part `index` (from 1) of `key`'s value.
fn part_user(key: &str, index: usize) -> String {
    format!("{key} #{index}")
}

/// The bytes under `user`; `None` when there is no entry.
fn get(store: &CredentialStore, user: &str) -> Result<Option<Vec<u8>>, Error> {
    match entry(store, user)?.get_secret() {
        Ok(bytes) => Ok(Some(bytes)),
        Err(Error::NoEntry) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deletes `user`'s entry; `false` when there was none.
fn remove(store: &CredentialStore, user: &str) -> Result<bool, Error> {
    match entry(store, user)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(Error::NoEntry) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The part count and digest an entry's bytes name, if they name parts.
fn parts_named(head: &[u8]) -> Option<(usize, String)> {
    let text = std::str::from_utf8(head).ok()?.strip_prefix(PARTS_MARKER)?;
    let (count, digest) = text.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    (1..=MAX_KEYCHAIN_PARTS)
        .contains(&count)
        .then(|| (count, digest.to_owned()))
}

fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The value stored under `key`; `None` when there is none, or when what
/// is there is not a whole value (not UTF-8, a part missing, a digest that
/// does not match).
///
/// # Errors
/// The store's (unreachable, locked, access refused).
pub fn read(store: &CredentialStore, key: &str) -> Result<Option<String>, Error> {
    let Some(head) = get(store, key)? else {
        return Ok(None);
    };
    let bytes = match parts_named(&head) {
        None if head.starts_with(PARTS_MARKER.as_bytes()) => return Ok(None),
        None => head,
        Some((count, digest)) => {
            let mut value = Vec::new();
            for index in 1..=count {
                match get(store, &part_user(key, index))? {
                    Some(part) => value.extend_from_slice(&part),
                    None => return Ok(None),
                }
            }
            if hex_digest(&value) != digest {
                return Ok(None);
            }
            value
        }
    };
    Ok(String::from_utf8(bytes).ok())
}

/// Stores `value` under `key`, in parts of at most `part_bytes` bytes when
/// it is longer (or when it starts like an entry naming parts), then
/// deletes the parts of a longer value stored before.
///
/// # Errors
/// The store's; parts written before a failure are left for the next
/// write or delete to sweep.
pub fn write(
    store: &CredentialStore,
    key: &str,
    value: &str,
    part_bytes: usize,
) -> Result<(), Error> {
    let before = get(store, key)?.and_then(|head| parts_named(&head));
    let bytes = value.as_bytes();
    let count = if bytes.len() <= part_bytes && !value.starts_with(PARTS_MARKER) {
        entry(store, key)?.set_secret(bytes)?;
        0
    } else {
        let parts: Vec<&[u8]> = bytes.chunks(part_bytes.max(1)).collect();
        if parts.len() > MAX_KEYCHAIN_PARTS {
            return Err(Error::TooLong("value".to_owned(), part_bytes as u32));
        }
        for (i, part) in parts.iter().enumerate() {
            entry(store, &part_user(key, i + 1))?.set_secret(part)?;
        }
        let head = format!("{PARTS_MARKER}{} {}", parts.len(), hex_digest(bytes));
        entry(store, key)?.set_secret(head.as_bytes())?;
        parts.len()
    };
    if let Some((old, _)) = before {
        sweep(store, key, count + 1, old)?;
    }
    Ok(())
}

/// Deletes parts `from`… of `key`: at least up to `known`, then on while
/// they exist (the parts of an older value a failed write left behind).
fn sweep(store: &CredentialStore, key: &str, from: usize, known: usize) -> Result<(), Error> {
    for index in from..=MAX_KEYCHAIN_PARTS {
        if !remove(store, &part_user(key, index))? && index > known {
            break;
        }
    }
    Ok(())
}

/// Deletes `key`'s value and its parts (none stored is no error).
///
/// # Errors
/// The store's.
pub fn delete(store: &CredentialStore, key: &str) -> Result<(), Error> {
    let before = get(store, key)?.and_then(|head| parts_named(&head));
    remove(store, key)?;
    if let Some((old, _)) = before {
        sweep(store, key, 1, old)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
