//! Values a parse error echoes, taken out of the text of a sign-in failure.
//!
//! rmcp words a token response it cannot parse with serde's own message,
//! which quotes the value of the wrongly typed field (`invalid type: string
//! "…", expected u64` for an `expires_in` sent as a string): an
//! authorization server that puts a token or code in the wrong member would
//! have it echoed into `authRequired.description` and `getState()`. The
//! failure text keeps serde's shape (which field, what was expected) and
//! names the kind of value only: `string "…"` becomes `a string`, and a
//! backquoted value after `integer`, `floating point`, `character`, `variant`
//! or `value` becomes `…`; field names (`missing field `access_token``)
//! stay.

/// `text` with the values serde quotes taken out (see the module
/// documentation).
pub fn without_echoed_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("string \"") {
            out.push_str("a string");
            rest = skip_quoted(after);
            continue;
        }
        if let Some((kind, after)) = backquoted_value(rest) {
            out.push_str(kind);
            out.push_str(" `…`");
            rest = after;
            continue;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// What follows a Rust debug-quoted string's closing quote (`\"` escapes
/// skipped); the empty string when it never closes.
fn skip_quoted(text: &str) -> &str {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return &text[i + 1..],
            _ => escaped = false,
        }
    }
    ""
}

/// A value serde quotes in backquotes (`integer `5``, `unknown variant
/// `x``): the kind's words and what follows the closing backquote.
fn backquoted_value(text: &str) -> Option<(&'static str, &str)> {
    const KINDS: [&str; 5] = ["integer", "floating point", "character", "variant", "value"];
    let kind = KINDS
        .into_iter()
        .find(|k| text.starts_with(&format!("{k} `")))?;
    let after = &text[kind.len() + 2..];
    let end = after.find('`')?;
    Some((kind, &after[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_go_field_names_stay() {
        let serde = r#"invalid type: string "CANARY\"-7", expected u64 at line 1 column 80"#;
        assert_eq!(
            without_echoed_values(serde),
            "invalid type: a string, expected u64 at line 1 column 80"
        );
        assert_eq!(
            without_echoed_values("unknown variant `CANARY`, expected `bearer` or `dpop`"),
            "unknown variant `…`, expected `bearer` or `dpop`"
        );
        assert_eq!(
            without_echoed_values("invalid type: integer `123456`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            without_echoed_values("missing field `access_token` at line 1 column 2"),
            "missing field `access_token` at line 1 column 2"
        );
    }
}
