//! Model-safe tool names.
//!
//! Model APIs accept tool names matching `^[A-Za-z0-9_-]{1,64}$`. MCP tool
//! names are looser (MCP 2025-11-25 "Tools › Tool names" allows `.` and `/`,
//! and servers send anything). Every catalogue entry therefore gets a name of
//! the form `mcp__<server>__<tool>` where `<server>` is the customization id
//! and `<tool>` the server's tool name, each with every byte outside
//! `[A-Za-z0-9_-]` replaced by `_`.
//!
//! When that name is longer than 64 characters, or equals the name of another
//! entry in the catalogue, it is cut to 53 characters and a stable suffix
//! `_<10 hex>` is appended: the first 40 bits of SHA-256 over
//! `customization id \0 tool name`. The result depends only on the two
//! original strings (and on whether they collide), so it is the same after a
//! restart, and `admin.tools.list` / `admin_tools_list` stay apart.

use std::collections::HashMap;

use sha2::Digest;

use super::short_sha256;
use crate::limits::MAX_MODEL_TOOL_NAME_CHARS;
/// Length of the hex hash suffix, without its `_` separator.
const HASH_HEX: usize = 10;

/// Appends `s` with every byte outside `[A-Za-z0-9_-]` replaced by `_` to
/// `out`. Multi-byte characters become one `_` each.
fn push_sanitized(out: &mut String, s: &str) {
    out.extend(s.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    }));
}

/// The plain model name `mcp__<server>__<tool>` before length and collision
/// handling (one allocation).
pub fn plain_name(server_id: &str, tool: &str) -> String {
    let mut name = String::with_capacity(7 + server_id.len() + tool.len());
    name.push_str("mcp__");
    push_sanitized(&mut name, server_id);
    name.push_str("__");
    push_sanitized(&mut name, tool);
    name
}

/// The hashed form: [`plain_name`] cut so that `_<hash>` fits in 64 characters.
pub fn hashed_name(server_id: &str, tool: &str) -> String {
    let hex: [u8; HASH_HEX] = short_sha256(|h| {
        h.update(server_id.as_bytes());
        h.update([0u8]);
        h.update(tool.as_bytes());
    });
    let mut name = plain_name(server_id, tool);
    name.truncate(MAX_MODEL_TOOL_NAME_CHARS - HASH_HEX - 1);
    name.push('_');
    // Only hex digits are written (see `short_sha256`).
    name.push_str(std::str::from_utf8(&hex).unwrap_or_default());
    name
}

/// Assigns a model-safe, distinct name to every `(server id, tool name)`
/// pair, in input order. Pairs must be distinct (the catalogue drops
/// duplicate tool names inside one server before naming).
pub fn assign(pairs: &[(&str, &str)]) -> Vec<String> {
    let mut names: Vec<String> = pairs.iter().map(|(s, t)| plain_name(s, t)).collect();
    let mut count: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for name in &names {
        *count.entry(name.as_str()).or_default() += 1;
    }
    // Whether each name stays plain (moved as it is, not copied) or is hashed.
    let mut plain: Vec<bool> = (names.iter())
        .map(|p| p.len() <= MAX_MODEL_TOOL_NAME_CHARS && count[p.as_str()] == 1)
        .collect();
    drop(count);
    for ((name, (s, t)), _) in (names.iter_mut().zip(pairs).zip(&plain)).filter(|(_, p)| !**p) {
        *name = hashed_name(s, t);
    }
    // A hashed name could, in theory, equal another entry's plain name:
    // such an entry is hashed too, repeatedly, until all names are distinct.
    loop {
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(names.len());
        let mut clash = None;
        for (i, n) in names.iter().enumerate() {
            if let Some(&first) = seen.get(n.as_str()) {
                clash = Some(if plain[first] { first } else { i });
                break;
            }
            seen.insert(n, i);
        }
        match clash {
            None => return names,
            Some(i) if names[i] != hashed_name(pairs[i].0, pairs[i].1) => {
                names[i] = hashed_name(pairs[i].0, pairs[i].1);
                plain[i] = false;
            }
            // Two hashes equal: 40-bit collision; add the index to separate them.
            Some(i) => {
                names[i] = format!(
                    "{}{i}",
                    &names[i][..MAX_MODEL_TOOL_NAME_CHARS - i.to_string().len()]
                )
            }
        }
    }
}

/// True when `name` is acceptable to model APIs.
#[cfg(test)]
pub fn is_model_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_MODEL_TOOL_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_names_stay_readable() {
        assert_eq!(assign(&[("fs", "read_file")]), ["mcp__fs__read_file"]);
    }

    #[test]
    fn plugin_server_ids_are_sanitized() {
        assert_eq!(
            plain_name("my-plugin/github", "search"),
            "mcp__my-plugin_github__search"
        );
    }

    #[test]
    fn collisions_after_sanitizing_get_distinct_stable_hashes() {
        let names = assign(&[
            ("a", "admin.tools.list"),
            ("a", "admin_tools_list"),
            ("b", "x"),
        ]);
        assert!(
            names[0].starts_with("mcp__a__admin_tools_list_")
                && names[1].starts_with("mcp__a__admin_tools_list_")
        );
        assert_ne!(names[0], names[1]);
        assert_eq!(names[2], "mcp__b__x");
        assert_eq!(
            names,
            assign(&[
                ("a", "admin.tools.list"),
                ("a", "admin_tools_list"),
                ("b", "x")
            ])
        );
        assert!(names.iter().all(|n| is_model_safe(n)));
    }

    #[test]
    fn server_ids_that_sanitize_alike_stay_apart() {
        let names = assign(&[("p/s", "t"), ("p_s", "t")]);
        assert_ne!(names[0], names[1]);
    }

    #[test]
    fn long_and_unicode_names_are_cut_and_hashed() {
        let long = "a".repeat(100);
        let names = assign(&[("srv", &long), ("srv", "café/日本")]);
        assert_eq!(names[0].len(), 64);
        assert!(is_model_safe(&names[0]) && is_model_safe(&names[1]));
        assert_eq!(names[1], "mcp__srv__caf____");
        // Deterministic: the suffix depends only on the pair.
        assert_eq!(names[0], hashed_name("srv", &long));
        assert_ne!(
            hashed_name("srv", &long),
            hashed_name("srv", &"a".repeat(99))
        );
    }

    #[test]
    fn hash_suffix_is_sha256_of_server_nul_tool() {
        // First 40 bits of SHA-256("srv\0" + "a" * 100): fixed forever, since
        // model names must not change between releases.
        let long = "a".repeat(100);
        assert!(
            hashed_name("srv", &long).ends_with("_ac2f96a1c4"),
            "{}",
            hashed_name("srv", &long)
        );
    }
}
