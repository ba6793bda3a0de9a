//! VS Code `mcp.json` (user or `.vscode/mcp.json`; JSONC), per
//! <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>:
//! `servers` (entries mapped by [`super::claude::json_entry`]) and
//! `inputs` (`promptString` / `pickString`), whose `${input:id}` uses
//! become [`ImportVariable`]s with the input's description, `password`
//! (secret), `default` and `options`.

use super::claude::{servers, Rules};
use super::entry::OAuthKeys;
use super::located::{Node, Val};
use super::report::{At, Report};
use super::vars::{input_variable, Syntax};
use super::ImportVariable;
use crate::config::vars::quote_cut;

const SANDBOX: &str = " (no sandbox for stdio servers here)";

/// Imports a VS Code `mcp.json`.
pub(super) fn import(root: &Node, out: &mut Report<'_>) {
    let Some(top) = out.top_members(root) else {
        return;
    };
    for m in top
        .iter()
        .filter(|m| m.key != "servers" && m.key != "inputs")
    {
        let at = At {
            at: m.key_at,
            server: None,
            field: Some(&m.key),
        };
        out.unknown_field(&at);
    }
    let inputs = root
        .get("inputs")
        .map(|n| inputs(n, out))
        .unwrap_or_default();
    let rules = Rules {
        syntax: Syntax::VsCode,
        inputs: &inputs,
        fields: &[
            "type", "command", "args", "env", "cwd", "url", "headers", "oauth",
        ],
        unsupported: &[
            ("envFile", " (give the variables in \"env\")"),
            ("sandboxEnabled", SANDBOX),
            ("sandbox", SANDBOX),
            ("dev", " (development mode: watch and debug)"),
        ],
        oauth: Some(OAuthKeys::client_only("oauth", "clientId")),
    };
    servers(root, "servers", out, &rules);
}

/// The declared inputs; one that cannot be used is reported (its
/// `${input:…}` uses then make their entries invalid).
fn inputs(node: &Node, out: &mut Report<'_>) -> Vec<ImportVariable> {
    let Val::Arr(items) = &node.val else {
        let at = At {
            at: node.at,
            server: None,
            field: Some("inputs"),
        };
        out.bad_entry(&at, &format!("must be an array, got {}", node.type_name()));
        return Vec::new();
    };
    let mut inputs: Vec<ImportVariable> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(input) = input(item, i, out) else {
            continue;
        };
        if inputs.iter().any(|known| known.id == input.id) {
            let field = format!("inputs[{i}].id");
            let at = At {
                at: item.at,
                server: None,
                field: Some(&field),
            };
            out.warning(
                &at,
                "duplicates the id of an earlier input; the first is used",
            );
            continue;
        }
        inputs.push(input);
    }
    inputs
}

/// The fields of a `promptString` / `pickString` input.
const INPUT_FIELDS: &[&str] = &[
    "type",
    "id",
    "description",
    "password",
    "default",
    "options",
];

fn input(item: &Node, i: usize, out: &mut Report<'_>) -> Option<ImportVariable> {
    let field = format!("inputs[{i}]");
    let at = At {
        at: item.at,
        server: None,
        field: Some(&field),
    };
    let text = |key: &str| item.get(key).and_then(Node::str).map(str::to_owned);
    let (Some(kind), Some(id)) = (text("type"), text("id")) else {
        out.bad_entry(&at, "an input needs a string \"type\" and \"id\"");
        return None;
    };
    if kind != "promptString" && kind != "pickString" {
        out.not_supported(&at, &format!(" (input type {})", quote_cut(&kind)));
        return None;
    }
    for m in item.members().into_iter().flatten() {
        if !INPUT_FIELDS.contains(&m.key.as_str()) {
            let field = format!("{field}.{}", m.key);
            let at = At {
                at: m.key_at,
                server: None,
                field: Some(&field),
            };
            out.unknown_field(&at);
        }
    }
    let mut variable = input_variable(&id);
    variable.description = text("description");
    variable.default = text("default");
    variable.required = variable.default.is_none();
    variable.secret = match item.get("password") {
        None
        | Some(Node {
            val: Val::Bool(false),
            ..
        }) => false,
        Some(Node {
            val: Val::Bool(true),
            ..
        }) => true,
        Some(other) => {
            let field = format!("{field}.password");
            let at = At {
                at: other.at,
                server: None,
                field: Some(&field),
            };
            let why = format!(
                "must be a boolean, got {}; taken as true (a secret)",
                other.type_name()
            );
            out.warning(&at, &why);
            true
        }
    };
    if let Some(Val::Arr(options)) = item.get("options").map(|n| &n.val) {
        variable.choices = options.iter().filter_map(option_value).collect();
    }
    Some(variable)
}

/// A `pickString` option: a string, or `{value, label}`.
fn option_value(option: &Node) -> Option<String> {
    option
        .str()
        .or_else(|| option.get("value").and_then(Node::str))
        .map(str::to_owned)
}
