//! Plugin variables: `${PLUGIN_ROOT}` and `${PLUGIN_DATA}`.
//!
//! Agent Plugins "MCP runtime" (seed 002), *Launch stdio servers*: plugin
//! variables are expanded only in `args`, `env` values and `cwd` — never in
//! `command`, `url` or `headers`. Only these two names exist; any other
//! `${NAME}` is a validation error ([`check_variables`]). A `$` that is not
//! followed by `{` is literal text. There is no escape syntax.

use std::path::PathBuf;

use crate::limits::MAX_ECHOED_VARIABLE_NAME_BYTES;

/// Name of the variable holding the plugin's installation directory.
pub const PLUGIN_ROOT: &str = "PLUGIN_ROOT";
/// Name of the variable holding the plugin's dedicated writable data directory.
pub const PLUGIN_DATA: &str = "PLUGIN_DATA";

/// Values substituted for the plugin variables when a stdio server is launched.
///
/// Both are absolute directory paths chosen by the host. They are also exported
/// to the server process as the environment variables `PLUGIN_ROOT` and
/// `PLUGIN_DATA` (see [`crate::config::launch::resolve_stdio`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginVars {
    /// The plugin's root directory (`${PLUGIN_ROOT}`); `./` commands and a
    /// relative `cwd` resolve against it.
    pub plugin_root: PathBuf,
    /// The plugin's persistent data directory (`${PLUGIN_DATA}`), created by the
    /// caller (see [`crate::config::launch::ensure_plugin_data_dir`]).
    pub plugin_data: PathBuf,
}

/// One `${…}` reference found in a string.
enum Token<'a> {
    /// Literal text.
    Text(&'a str),
    /// `${NAME}` with the name between the braces.
    Var(&'a str),
    /// `${` with no closing `}`; holds the rest of the string after `${`.
    Unterminated(&'a str),
}

/// Splits `s` into literal text and `${NAME}` references, left to right.
fn tokens(s: &str) -> impl Iterator<Item = Token<'_>> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(start) = rest.find("${") else {
            let text = rest;
            rest = "";
            return Some(Token::Text(text));
        };
        if start > 0 {
            let text = &rest[..start];
            rest = &rest[start..];
            return Some(Token::Text(text));
        }
        let after = &rest[2..];
        if let Some(end) = after.find('}') {
            rest = &after[end + 1..];
            return Some(Token::Var(&after[..end]));
        }
        rest = "";
        Some(Token::Unterminated(after))
    })
}

/// Checks that every `${…}` in `s` is `${PLUGIN_ROOT}` or `${PLUGIN_DATA}`.
///
/// `field` names the JSON field for the message (e.g. `args[1]`, `env.TOKEN`,
/// `cwd`).
///
/// # Errors
/// An unknown name or a `${` without `}` gives a message of the form
/// `field "args[1]": unknown variable ${HOME} (only ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded)`
/// or `field "cwd": unterminated variable reference ("${" without a closing "}")`.
/// The variable name is echoed only when it looks like one (`[A-Za-z0-9_]{1,64}`,
/// see [`MAX_ECHOED_VARIABLE_NAME_BYTES`]), otherwise `${…}` is shown: the
/// rest of the string is never echoed, since `env` values may hold secrets.
/// Callers prefix the message with the server name. Spec: seed 002, *Launch
/// stdio servers*.
pub fn check_variables(field: &str, s: &str) -> Result<(), String> {
    for token in tokens(s) {
        match token {
            Token::Text(_) => {}
            Token::Var(name) if is_known(name) => {}
            Token::Var(name) => {
                return Err(format!(
                    "field {}: unknown variable {} (only ${{PLUGIN_ROOT}} and ${{PLUGIN_DATA}} are expanded)",
                    quote(field),
                    display_reference(name)
                ))
            }
            Token::Unterminated(_) => {
                return Err(format!(
                    "field {}: unterminated variable reference (\"${{\" without a closing \"}}\")",
                    quote(field)
                ))
            }
        }
    }
    Ok(())
}

/// Replaces `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` in `s` with the paths in `vars`.
///
/// Single pass, left to right: substituted text is never scanned again, so a
/// path that itself contains `${PLUGIN_DATA}` stays as is. Any other `${…}`
/// (which [`check_variables`] rejects) is copied unchanged. Paths that are not
/// valid Unicode are converted lossily (U+FFFD). Never fails.
#[must_use]
pub fn expand(s: &str, vars: &PluginVars) -> String {
    let mut out = String::with_capacity(s.len());
    for token in tokens(s) {
        match token {
            Token::Text(text) => out.push_str(text),
            Token::Var(PLUGIN_ROOT) => out.push_str(&vars.plugin_root.to_string_lossy()),
            Token::Var(PLUGIN_DATA) => out.push_str(&vars.plugin_data.to_string_lossy()),
            Token::Var(other) => {
                out.push_str("${");
                out.push_str(other);
                out.push('}');
            }
            Token::Unterminated(rest) => {
                out.push_str("${");
                out.push_str(rest);
            }
        }
    }
    out
}

/// The `${…}` placeholders of `s`, left to right, as they may be shown:
/// for a field where Agent Plugins expands nothing (`url`, `headers`), so
/// each one reaches the server as literal text.
///
/// Each is shown by its name, with what other hosts put around one
/// (`${env:TOKEN}`, `${input:api-key}`, `${TOKEN:-…}`: a default is never
/// shown); a name that does not look like one (more than
/// [`MAX_ECHOED_VARIABLE_NAME_BYTES`] bytes, or a character other than
/// ASCII letters, digits, `_`, `-`, `.` and `:`) is shown as `${…}`, so no
/// other text of `s` (possibly a secret) is ever echoed. An unterminated
/// `${` is not a placeholder. Spec: seed 002, *Launch stdio servers*
/// (variables are never expanded in `url` or `headers`).
#[must_use]
pub fn literal_placeholders(s: &str) -> Vec<String> {
    tokens(s)
        .filter_map(|token| match token {
            Token::Var(name) => Some(shown_placeholder(name)),
            Token::Text(_) | Token::Unterminated(_) => None,
        })
        .collect()
}

/// `${NAME}` or `${NAME:-…}` for a plausible name (see
/// [`literal_placeholders`]), `${…}` otherwise.
fn shown_placeholder(inner: &str) -> String {
    let (name, default) = match inner.split_once(":-") {
        Some((name, _)) => (name, ":-…"),
        None => (inner, ""),
    };
    let plausible = !name.is_empty()
        && name.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
        && !looks_like_a_credential(name);
    if plausible {
        format!("${{{name}{default}}}")
    } else {
        "${…}".to_string()
    }
}

/// `${NAME}` for a plausible variable name; a placeholder otherwise, so that
/// arbitrary text between braces (possibly part of a secret) is never echoed.
fn display_reference(name: &str) -> String {
    let plausible = !name.is_empty()
        && name.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !looks_like_a_credential(name);
    if plausible {
        format!("${{{name}}}")
    } else {
        "${…}".to_string()
    }
}

/// Whether the text between `${` and `}` looks like a pasted credential
/// (`${ghp_…}`, `${sk-proj-…}`) rather than a variable's name: upper- and
/// lower-case letters and digits mixed, or longer than 24 bytes with digits
/// and lower-case letters. Names such as `TOKEN`, `GITHUB_PERSONAL_ACCESS_TOKEN`,
/// `workspaceFolder` or `input:api-key` do not; such text is never echoed.
fn looks_like_a_credential(name: &str) -> bool {
    let has = |f: fn(&u8) -> bool| name.bytes().any(|b| f(&b));
    let (lower, upper, digit) = (
        has(u8::is_ascii_lowercase),
        has(u8::is_ascii_uppercase),
        has(u8::is_ascii_digit),
    );
    digit && lower && (upper || name.len() > 24)
}

fn is_known(name: &str) -> bool {
    name == PLUGIN_ROOT || name == PLUGIN_DATA
}

/// JSON-quotes `s` for messages (escapes quotes and control characters).
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// [`quote`] of at most [`MAX_ECHOED_IMPORT_TEXT_CHARS`] characters of
/// `s`, then `…` when it was cut: a file's text (a `type`, a key) in an
/// import diagnostic.
///
/// [`MAX_ECHOED_IMPORT_TEXT_CHARS`]: crate::limits::import::MAX_ECHOED_IMPORT_TEXT_CHARS
pub(crate) fn quote_cut(s: &str) -> String {
    let shown = shown_cut(s);
    match shown.strip_suffix('…') {
        Some(cut)
            if shown.chars().count() > crate::limits::import::MAX_ECHOED_IMPORT_TEXT_CHARS =>
        {
            format!("{}…", quote(cut))
        }
        _ => quote(&shown),
    }
}

/// `s` with each control or bidirectional-formatting character written as
/// `\u{…}`, at most [`MAX_ECHOED_IMPORT_TEXT_CHARS`] characters of that,
/// then `…` when it was cut: a file's key in an import diagnostic's
/// `field`, shown unquoted.
///
/// [`MAX_ECHOED_IMPORT_TEXT_CHARS`]: crate::limits::import::MAX_ECHOED_IMPORT_TEXT_CHARS
pub(crate) fn shown_cut(s: &str) -> String {
    let max = crate::limits::import::MAX_ECHOED_IMPORT_TEXT_CHARS;
    // Past `max` characters the rest is not read (a key may be long).
    let head = match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    };
    let shown = escaped(head);
    match shown.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &shown[..at]),
        None if head.len() < s.len() => format!("{shown}…"),
        None => shown,
    }
}

/// `s` with each control character and each bidirectional-formatting one
/// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, and the line
/// and paragraph separators U+2028, U+2029) written as `\u{…}`, so an
/// echoed text can neither move a terminal's cursor nor reorder what
/// follows it.
fn escaped(s: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(
                c,
                '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
            )
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    match s.chars().any(hidden) {
        false => s.to_owned(),
        true => s
            .chars()
            .map(|c| match hidden(c) {
                true => format!("\\u{{{:x}}}", u32::from(c)),
                false => c.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> PluginVars {
        PluginVars {
            plugin_root: "/opt/p".into(),
            plugin_data: "/var/d".into(),
        }
    }

    #[test]
    fn accepts_known_variables_and_plain_text() {
        assert_eq!(
            check_variables("args[0]", "--root=${PLUGIN_ROOT}/x:${PLUGIN_DATA}"),
            Ok(())
        );
        assert_eq!(check_variables("args[0]", "no vars here"), Ok(()));
        assert_eq!(check_variables("args[0]", ""), Ok(()));
    }

    #[test]
    fn dollar_without_brace_is_literal() {
        assert_eq!(check_variables("args[0]", "$HOME $ $$ {x} price$5"), Ok(()));
        assert_eq!(
            expand("$HOME and $PLUGIN_ROOT", &vars()),
            "$HOME and $PLUGIN_ROOT"
        );
    }

    #[test]
    fn rejects_unknown_variable_naming_field_and_variable() {
        let err = check_variables("args[1]", "x${HOME}y").unwrap_err();
        assert_eq!(
            err,
            "field \"args[1]\": unknown variable ${HOME} (only ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded)"
        );
    }

    #[test]
    fn rejects_lowercase_and_empty_names() {
        assert!(check_variables("cwd", "${plugin_root}")
            .unwrap_err()
            .contains("${plugin_root}"));
        assert!(check_variables("cwd", "${}")
            .unwrap_err()
            .contains("unknown variable ${…}"));
    }

    #[test]
    fn never_echoes_odd_text_between_braces() {
        let err = check_variables("env.T", "${s3cr3t value!}").unwrap_err();
        assert!(err.contains("unknown variable ${…}"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
        let err = check_variables("env.T", "x${s3cr3t").unwrap_err();
        assert!(!err.contains("s3cr3t"), "{err}");
    }

    #[test]
    fn rejects_unterminated_reference() {
        let err = check_variables("env.A", "${PLUGIN_ROOT").unwrap_err();
        assert_eq!(
            err,
            "field \"env.A\": unterminated variable reference (\"${\" without a closing \"}\")"
        );
    }

    #[test]
    fn unknown_after_known_is_still_rejected() {
        assert!(check_variables("args[2]", "${PLUGIN_DATA}/${X}")
            .unwrap_err()
            .contains("${X}"));
    }

    #[test]
    fn expands_both_names() {
        assert_eq!(
            expand("${PLUGIN_ROOT}/bin:${PLUGIN_DATA}", &vars()),
            "/opt/p/bin:/var/d"
        );
        assert_eq!(
            expand("${PLUGIN_ROOT}${PLUGIN_ROOT}", &vars()),
            "/opt/p/opt/p"
        );
    }

    #[test]
    fn expansion_is_single_pass() {
        let v = PluginVars {
            plugin_root: "/r/${PLUGIN_DATA}".into(),
            plugin_data: "/d".into(),
        };
        assert_eq!(expand("${PLUGIN_ROOT}", &v), "/r/${PLUGIN_DATA}");
    }

    #[test]
    fn leaves_unknown_and_unterminated_as_text() {
        assert_eq!(
            expand("${HOME}/${PLUGIN_DATA", &vars()),
            "${HOME}/${PLUGIN_DATA"
        );
    }

    #[test]
    fn literal_placeholders_are_named_never_their_surroundings() {
        assert_eq!(literal_placeholders("Bearer ${TOKEN}"), ["${TOKEN}"]);
        assert_eq!(
            literal_placeholders("${env:A}/${input:api-key}?${B:-s3cr3t}"),
            ["${env:A}", "${input:api-key}", "${B:-…}"]
        );
        assert_eq!(literal_placeholders("${s3cr3t value!} x"), ["${…}"]);
        // A credential pasted between braces is not taken for a name.
        let pasted = "Bearer ${ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8}";
        assert_eq!(literal_placeholders(pasted), ["${…}"]);
        assert_eq!(
            literal_placeholders("${sk-proj-abcdef0123456789abcdef}"),
            ["${…}"]
        );
        assert_eq!(
            literal_placeholders(
                "${GITHUB_PERSONAL_ACCESS_TOKEN} ${workspaceFolder} ${API_KEY_V2}"
            ),
            [
                "${GITHUB_PERSONAL_ACCESS_TOKEN}",
                "${workspaceFolder}",
                "${API_KEY_V2}"
            ]
        );
        assert!(literal_placeholders("Bearer abc $TOKEN ${unterminated").is_empty());
        let long = format!("${{{}}}", "A".repeat(MAX_ECHOED_VARIABLE_NAME_BYTES + 1));
        assert_eq!(literal_placeholders(&long), ["${…}"]);
    }

    #[test]
    fn handles_non_ascii_around_variables() {
        assert_eq!(expand("é${PLUGIN_DATA}ü", &vars()), "é/var/dü");
    }
}
