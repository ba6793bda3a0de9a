//! The inputs of a registry `server.json` (arguments, environment
//! variables, headers, `{name}` references to `variables`): their text, or
//! an `input:` variable described by the input's fields. Wrongly typed
//! fields are named in warnings (an `isSecret` that is not a boolean is
//! taken as `true`); a name that cannot be a placeholder's is an error.

use serde_json::{Map, Value};

use super::entry::{Building, FieldError};
use super::located::{Node, Val};
use super::vars::input_variable;
use super::ImportVariable;
use crate::config::vars::quote_cut;
use crate::limits::MAX_ECHOED_VARIABLE_NAME_BYTES;

/// `environmentVariables`: each `name` with its value or an input.
pub(super) fn environment(
    b: &mut Building<'_>,
    node: &Node,
) -> Result<Map<String, Value>, FieldError> {
    let mut env = Map::new();
    for (field, name, item) in named(node, "environmentVariables")? {
        check_input(b, &field, item, KEY_VALUE_FIELDS);
        // An env value is the host's secret: so is an input put there.
        env.insert(
            name.to_owned(),
            input_value(b, &field, item, name, true)?.into(),
        );
    }
    Ok(env)
}

/// The items of list `key` of `node` (`KeyValueInput`s) with their field
/// path and `name`.
///
/// # Errors
/// `key` is not an array, or an item has no string `name`.
pub(super) fn named<'n>(
    node: &'n Node,
    key: &str,
) -> Result<Vec<(String, &'n str, &'n Node)>, FieldError> {
    let mut out = Vec::new();
    for (i, item) in list(node, key)?.iter().enumerate() {
        let field = format!("{key}[{i}]");
        match item.get("name").and_then(Node::str) {
            Some(name) => out.push((field, name, item)),
            None => return Err((field, "needs a string \"name\"".to_owned())),
        }
    }
    Ok(out)
}

fn list<'n>(node: &'n Node, key: &str) -> Result<&'n [Node], FieldError> {
    match node.get(key).map(|n| &n.val) {
        None => Ok(&[]),
        Some(Val::Arr(items)) => Ok(items),
        Some(_) => Err((key.to_owned(), "must be an array".to_owned())),
    }
}

/// Positional and named arguments.
pub(super) fn arguments(
    b: &mut Building<'_>,
    key: &str,
    node: &Node,
) -> Result<Vec<Value>, FieldError> {
    let Val::Arr(items) = &node.val else {
        return Err((key.to_owned(), "must be an array".to_owned()));
    };
    let mut args = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("{key}[{i}]");
        let kind = match item.get("type") {
            None => "positional",
            Some(t) => match t.str() {
                Some(kind @ ("positional" | "named")) => kind,
                _ => {
                    let why = "must be \"positional\" or \"named\"";
                    return Err((format!("{field}.type"), why.to_owned()));
                }
            },
        };
        check_input(b, &field, item, ARGUMENT_FIELDS);
        if kind == "named" {
            let name = item
                .get("name")
                .and_then(Node::str)
                .ok_or((field.clone(), "needs a string \"name\"".to_owned()))?;
            b.text(&format!("{field}.name"), name)?;
            args.push(Value::from(name));
            if item.get("value").is_some()
                || item.get("default").is_some()
                || flag(item, "isRequired")
            {
                args.push(
                    input_value(b, &field, item, name.trim_start_matches('-'), false)?.into(),
                );
            }
        } else {
            let hint = item.get("valueHint").and_then(Node::str).unwrap_or("value");
            args.push(input_value(b, &field, item, hint, false)?.into());
        }
    }
    Ok(args)
}

/// An input's text: its `value` (with `{name}` references to its
/// `variables` as `${input:name}`), else `${input:<fallback>}`.
pub(super) fn input_value(
    b: &mut Building<'_>,
    field: &str,
    item: &Node,
    fallback: &str,
    secret: bool,
) -> Result<String, FieldError> {
    let Some(value) = item.get("value") else {
        usable_name(field, fallback)?;
        let mut variable = described(input_variable(fallback), item);
        variable.secret |= secret;
        let id = variable.id.clone();
        b.vars.note(variable);
        return Ok(format!("${{{id}}}"));
    };
    let text = value
        .str()
        .ok_or((format!("{field}.value"), "must be a string".to_owned()))?;
    let shown = match field {
        "url" => "url".to_owned(),
        _ => format!("{field}.value"),
    };
    b.text(&shown, text)?;
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start + 1..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        match item.get("variables").and_then(|v| v.get(name)) {
            Some(spec) => {
                let at = format!("{field}.variables.{name}");
                usable_name(&at, name)?;
                check_input(b, &at, spec, INPUT_FIELDS);
                let mut variable = described(input_variable(name), spec);
                variable.secret |= secret || flag(item, "isSecret");
                out.push_str(&format!("${{{}}}", variable.id));
                b.vars.note(variable);
            }
            None => {
                let why = "a {…} reference has no entry in \"variables\": sent as written";
                b.notes.push((shown.clone(), why.to_owned()));
                out.push_str(&rest[start..=start + 1 + len]);
            }
        }
        rest = &rest[start + 2 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `variable` with the `Input` fields of `spec`.
fn described(mut variable: ImportVariable, spec: &Node) -> ImportVariable {
    let text = |key: &str| spec.get(key).and_then(Node::str).map(str::to_owned);
    variable.description = text("description");
    variable.default = text("default");
    variable.secret = flag(spec, "isSecret");
    variable.required = variable.default.is_none();
    if let Some(Val::Arr(choices)) = spec.get("choices").map(|n| &n.val) {
        variable.choices = choices
            .iter()
            .filter_map(Node::str)
            .map(str::to_owned)
            .collect();
    }
    variable
}

/// Boolean field `key` of `node`: `true`, or present but not a boolean
/// (`"true"`, `1`: taken as `true`, with a warning from [`check_input`]).
fn flag(node: &Node, key: &str) -> bool {
    match node.get(key).map(|n| &n.val) {
        None | Some(Val::Bool(false)) => false,
        Some(_) => true,
    }
}

/// The fields of an `Input`.
const INPUT_FIELDS: &[&str] = &[
    "description",
    "isRequired",
    "format",
    "value",
    "isSecret",
    "default",
    "placeholder",
    "choices",
];
/// Those of a positional or named argument (`InputWithVariables`).
const ARGUMENT_FIELDS: &[&str] = &["type", "name", "valueHint", "isRepeated", "variables"];
/// Those of a `KeyValueInput` (an environment variable, a header).
pub(super) const KEY_VALUE_FIELDS: &[&str] = &["name", "variables"];

/// Notes (warnings, reported if the entry is taken) on input `item` at
/// `field`: a field that is neither an `Input`'s nor one of `own`
/// (ignored); `isSecret` / `isRequired` not a boolean (taken as `true`);
/// `description`, `default`, `valueHint` not a string, `choices` not an
/// array of strings, `variables` not an object (ignored).
pub(super) fn check_input(b: &mut Building<'_>, field: &str, item: &Node, own: &[&str]) {
    let Some(members) = item.members() else {
        return;
    };
    for m in members {
        let key = m.key.as_str();
        let why = match (key, &m.value.val) {
            _ if !INPUT_FIELDS.contains(&key) && !own.contains(&key) => {
                "is not a field of an input: ignored"
            }
            ("isSecret" | "isRequired", Val::Bool(_)) => continue,
            ("isSecret" | "isRequired", _) => "must be a boolean: taken as true",
            ("description" | "default" | "valueHint", v) if !matches!(v, Val::Str(_)) => {
                "must be a string: ignored"
            }
            ("choices", Val::Arr(items)) if items.iter().all(|i| i.str().is_some()) => continue,
            ("choices", _) => "must be an array of strings: ignored",
            ("variables", v) if !matches!(v, Val::Obj(_)) => "must be an object: ignored",
            _ => continue,
        };
        let at = format!("{field}.{}", quote_cut(key).trim_matches('"'));
        b.notes.push((at, why.to_owned()));
    }
}

/// `name` when it can be an input's name in a placeholder
/// (`${input:<name>}`): not empty, at most
/// [`MAX_ECHOED_VARIABLE_NAME_BYTES`], without `{`, `}`, `$`, `:` (which
/// would end the placeholder or start a default) or control characters.
///
/// # Errors
/// Naming `field`, never the name.
fn usable_name(field: &str, name: &str) -> Result<(), FieldError> {
    let usable = !name.is_empty()
        && name.len() <= MAX_ECHOED_VARIABLE_NAME_BYTES
        && !name.contains(['{', '}', '$', ':'])
        && !name.chars().any(char::is_control);
    match usable {
        true => Ok(()),
        false => Err((
            field.to_owned(),
            format!(
                "the input's name cannot be a variable name: it is empty, longer than \
                 {MAX_ECHOED_VARIABLE_NAME_BYTES} bytes, or holds {{, }}, $, : or a control \
                 character"
            ),
        )),
    }
}
