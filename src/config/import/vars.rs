//! The variables of the imported formats, rewritten to canonical
//! placeholders (`${env:X}`, `${input:id}`, `${workspaceFolder}`) and
//! described as [`ImportVariable`]s. Nothing is resolved here.

use super::{ImportVariable, VariableKind};
use crate::limits::MAX_ECHOED_VARIABLE_NAME_BYTES;

/// Which `${…}` forms a format expands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// VS Code: `${env:X}`, `${input:id}`, predefined `${workspaceFolder}`, …
    VsCode,
    /// Cursor: `${env:X}` and predefined `${userHome}`, `${workspaceFolder}`, …
    Cursor,
    /// Claude Code: `${VAR}` and `${VAR:-default}`, from the environment.
    Claude,
    /// None (Claude Desktop, Codex): `${` is literal text.
    Literal,
}

/// The variables one entry uses, as it is rewritten.
pub(super) struct EntryVars<'a> {
    /// The format's syntax.
    pub syntax: Syntax,
    /// VS Code's declared `inputs`.
    pub inputs: &'a [ImportVariable],
    /// Found so far, in first-use order.
    pub used: Vec<ImportVariable>,
    /// The fields (path, text) of a format without variables whose text
    /// holds `${`: passed verbatim (a warning), unless it would be taken
    /// for a placeholder of the entry (an error).
    pub literal: Vec<(String, String)>,
}

impl<'a> EntryVars<'a> {
    pub(super) fn new(syntax: Syntax, inputs: &'a [ImportVariable]) -> Self {
        Self {
            syntax,
            inputs,
            used: Vec::new(),
            literal: Vec::new(),
        }
    }

    /// Notes `variable` (once per id; a secret use makes it secret, a use
    /// without a default makes it required).
    pub(super) fn note(&mut self, variable: ImportVariable) {
        match self.used.iter_mut().find(|v| v.id == variable.id) {
            Some(known) => {
                known.secret |= variable.secret;
                known.required |= variable.required;
            }
            None => self.used.push(variable),
        }
    }

    /// `s` with its variables as canonical placeholders; `secret`: the
    /// field holds a secret (a header value), so its variables are too.
    ///
    /// # Errors
    /// A form the format does not expand here (`${config:…}`, an input
    /// that `inputs` does not declare, …), naming it, never `s`.
    pub(super) fn rewrite(&mut self, s: &str, secret: bool) -> Result<String, String> {
        if self.syntax == Syntax::Literal {
            return Ok(s.to_owned());
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let (mut variable, default) = self.variable(&after[..end])?;
            variable.secret |= secret;
            match default {
                Some(default) => out.push_str(&format!("${{{}:-{default}}}", variable.id)),
                None => out.push_str(&format!("${{{}}}", variable.id)),
            }
            self.note(variable);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The variable `${inner}` names in this syntax, and the default of
    /// this use (Claude Code `${VAR:-default}`: each use keeps its own, in
    /// its placeholder `${env:VAR:-default}`; the variable has none).
    fn variable(&self, inner: &str) -> Result<(ImportVariable, Option<String>), String> {
        if self.syntax == Syntax::Claude {
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default.to_owned())),
                None => (inner, None),
            };
            let mut variable = env_variable(checked(name, inner)?, None);
            variable.required = default.is_none();
            return Ok((variable, default));
        }
        let variable = match inner.split_once(':') {
            Some(("env", name)) => env_variable(checked(name, inner)?, None),
            Some(("input", id)) if self.syntax == Syntax::VsCode => {
                let declared = self.inputs.iter().find(|v| v.name == id);
                declared
                    .cloned()
                    .ok_or_else(|| format!("{} is not declared in \"inputs\"", shown(inner)))?
            }
            Some(_) => {
                return Err(format!(
                    "{} is not a variable this host can ask the app for",
                    shown(inner)
                ))
            }
            None => predefined(checked(inner, inner)?),
        };
        Ok((variable, None))
    }
}

/// `name` when it is a plausible variable name (letters, digits, `_`, `-`,
/// `.`, `/`; at most [`MAX_ECHOED_VARIABLE_NAME_BYTES`]).
fn checked<'n>(name: &'n str, inner: &str) -> Result<&'n str, String> {
    let plausible = !name.is_empty()
        && name.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if plausible {
        Ok(name)
    } else {
        Err(format!("{} is not a variable name", shown(inner)))
    }
}

/// `${inner}` for a message, or `${…}` when it does not look like a name.
fn shown(inner: &str) -> String {
    let plausible = inner.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && inner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/'));
    match plausible {
        true => format!("${{{inner}}}"),
        false => "${…}".to_owned(),
    }
}

/// An environment variable of the source host (`env:<name>`).
pub(super) fn env_variable(name: &str, default: Option<String>) -> ImportVariable {
    ImportVariable {
        id: format!("env:{name}"),
        name: name.to_owned(),
        kind: VariableKind::Env,
        secret: false,
        required: default.is_none(),
        description: None,
        default,
        choices: Vec::new(),
    }
}

/// A value the user gives (`input:<name>`).
pub(super) fn input_variable(name: &str) -> ImportVariable {
    ImportVariable {
        id: format!("input:{name}"),
        name: name.to_owned(),
        kind: VariableKind::Input,
        secret: false,
        required: true,
        description: None,
        default: None,
        choices: Vec::new(),
    }
}

/// A value the source host knows (`workspaceFolder`, `userHome`, …).
fn predefined(name: &str) -> ImportVariable {
    ImportVariable {
        id: name.to_owned(),
        name: name.to_owned(),
        kind: VariableKind::Predefined,
        secret: false,
        required: true,
        description: None,
        default: None,
        choices: Vec::new(),
    }
}
