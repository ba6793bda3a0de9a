//! The forms of a stdio `command` (Agent Plugins "MCP runtime", seed 002,
//! *Launch stdio servers*): a bare name, a `./` path inside the plugin root
//! or an absolute path. Stage 2 ([`super::validate_entry_value`]) checks the
//! form, [`super::launch::resolve_stdio`] resolves it; both read it here.

/// Path separators in `command`: `/`, and also `\` on Windows.
pub(crate) fn is_separator(c: char) -> bool {
    c == '/' || (cfg!(windows) && c == '\\')
}

/// For a `./x` command (also `.\x` on Windows) returns `x`.
pub(crate) fn dot_relative(command: &str) -> Option<&str> {
    let rest = command.strip_prefix('.')?;
    let mut chars = rest.chars();
    match chars.next() {
        Some(c) if is_separator(c) => Some(chars.as_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_relative_forms() {
        assert_eq!(dot_relative("./a/b"), Some("a/b"));
        assert_eq!(dot_relative("../a"), None);
        assert_eq!(dot_relative(".a"), None);
        assert_eq!(dot_relative("a"), None);
    }
}
