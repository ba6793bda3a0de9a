//! The `mcpServers` formats: Claude Code `.mcp.json` (sample:
//! <https://code.claude.com/docs/en/mcp>), Claude Desktop
//! `claude_desktop_config.json` (<https://modelcontextprotocol.io/quickstart/user>)
//! and Cursor `mcp.json` (<https://cursor.com/docs/context/mcp>); and the
//! entry mapping VS Code's `servers` shares ([`json_entry`]).

use serde_json::{Map, Value};

use super::entry::{
    check_fields, oauth_client, report_field, transport, wrong, Building, Extra, FieldError,
    OAuthKeys,
};
use super::located::{Member, Node};
use super::report::{At, Report};
use super::vars::{EntryVars, Syntax};
use super::{ImportFormat, ImportVariable, ImportedOAuth};

/// How one format's entries read.
pub(super) struct Rules<'a> {
    /// Its `${…}` forms.
    pub syntax: Syntax,
    /// VS Code's declared inputs.
    pub inputs: &'a [ImportVariable],
    /// The fields it defines that are mapped.
    pub fields: &'a [&'a str],
    /// The fields it defines that this host does not take, with why.
    pub unsupported: &'a [(&'a str, &'a str)],
    /// The OAuth object and its keys (`oauth.clientId`, Cursor `auth.CLIENT_ID`).
    pub oauth: Option<OAuthKeys<'a>>,
}

const HEADERS_HELPER: &str = " (dynamic headers come from the app's header provider)";

/// Claude Code `.mcp.json` entries.
const CLAUDE_CODE: Rules<'static> = Rules {
    syntax: Syntax::Claude,
    inputs: &[],
    fields: &["type", "command", "args", "env", "url", "headers", "oauth"],
    unsupported: &[("headersHelper", HEADERS_HELPER)],
    oauth: Some(OAuthKeys {
        object: "oauth",
        client_id: "clientId",
        callback_port: Some("callbackPort"),
        metadata_url: Some("authServerMetadataUrl"),
        scopes: Some("scopes"),
    }),
};

/// Claude Desktop entries: stdio only, no variables.
const CLAUDE_DESKTOP: Rules<'static> = Rules {
    syntax: Syntax::Literal,
    inputs: &[],
    fields: &["command", "args", "env"],
    unsupported: &[],
    oauth: None,
};

/// Cursor `mcp.json` entries.
const CURSOR: Rules<'static> = Rules {
    syntax: Syntax::Cursor,
    inputs: &[],
    fields: &[
        "type", "command", "args", "env", "cwd", "url", "headers", "auth",
    ],
    unsupported: &[("envFile", " (give the variables in \"env\")")],
    oauth: Some(OAuthKeys::client_only("auth", "CLIENT_ID")),
};

/// Imports a `{"mcpServers": {…}}` file of `out.format`.
pub(super) fn import(root: &Node, out: &mut Report<'_>) {
    let Some(top) = out.top_members(root) else {
        return;
    };
    let rules = match out.format {
        ImportFormat::ClaudeDesktop => &CLAUDE_DESKTOP,
        ImportFormat::Cursor => &CURSOR,
        _ => &CLAUDE_CODE,
    };
    // Claude Desktop's file also holds the app's own settings: not MCP's.
    if out.format != ImportFormat::ClaudeDesktop {
        for m in top.iter().filter(|m| m.key != "mcpServers") {
            let at = At {
                at: m.key_at,
                server: None,
                field: Some(&m.key),
            };
            out.unknown_field(&at);
        }
    }
    servers(root, "mcpServers", out, rules);
}

/// Every member of the `key` object of `root`, through [`json_entry`].
pub(super) fn servers(root: &Node, key: &str, out: &mut Report<'_>, rules: &Rules<'_>) {
    let Some(servers) = root.get(key) else {
        return out.file_error(root.at, &format!("{key:?} is required"));
    };
    let Some(members) = servers.members() else {
        let message = format!("{key:?} must be an object, got {}", servers.type_name());
        return out.file_error(servers.at, &message);
    };
    for member in members {
        json_entry(out, member, rules);
    }
}

/// One entry: mapped, checked, added (or reported).
pub(super) fn json_entry(out: &mut Report<'_>, member: &Member, rules: &Rules<'_>) {
    let name = member.key.as_str();
    let Some(fields) = out.entry_members(member, "an object") else {
        return;
    };
    check_fields(out, name, fields, rules.fields, rules.unsupported);
    let mut b = Building::new(
        name,
        member.key_at,
        EntryVars::new(rules.syntax, rules.inputs),
    );
    let built = host_config(&mut b, &member.value, rules).and_then(|config| {
        let oauth = oauth_settings(out, name, &member.value, rules)?;
        Ok((config, oauth))
    });
    let (config, (oauth_client_id, oauth)) = match built {
        Ok(built) => built,
        Err(e) => return report_field(out, name, field_at(&member.value, &e.0), e),
    };
    let extra = Extra {
        oauth_client_id,
        oauth,
        ..Extra::enabled()
    };
    if let Some(server) = b.finish(out, config, extra) {
        out.server(server);
    }
}

/// Where field path `field` of `entry` starts (its first segment), else the entry.
pub(super) fn field_at(entry: &Node, field: &str) -> usize {
    let head = field.split(['.', '[']).next().unwrap_or(field);
    entry.get(head).map_or(entry.at, |n| n.at)
}

/// The host entry of `entry`: the transport from `type` (or `url` without
/// `command`), then its fields.
fn host_config(b: &mut Building<'_>, entry: &Node, rules: &Rules<'_>) -> Result<Value, FieldError> {
    let kind = match entry.get("type").filter(|_| rules.fields.contains(&"type")) {
        Some(n) => n.str().ok_or_else(|| wrong("type", "a string", n))?,
        None if rules.fields.contains(&"url")
            && entry.get("command").is_none()
            && entry.get("url").is_some() =>
        {
            "http"
        }
        None => "stdio",
    };
    let kind = transport(kind).map_err(|why| ("type".to_owned(), why))?;
    let mut config = Map::new();
    config.insert("type".into(), kind.into());
    let (own, other): (&[&str], &[&str]) = match kind {
        "stdio" => (&["command", "args", "env", "cwd"], &["url", "headers"]),
        _ => (&["url", "headers"], &["command", "args", "env", "cwd"]),
    };
    let defined = |f: &&&str| rules.fields.contains(*f);
    if let Some(field) = other
        .iter()
        .filter(defined)
        .find(|f| entry.get(f).is_some())
    {
        return Err((
            field.to_string(),
            format!("does not apply to a {kind} server"),
        ));
    }
    let required = own[0];
    if entry.get(required).is_none() {
        return Err((
            required.to_owned(),
            format!("is required for a {kind} server"),
        ));
    }
    for field in own.iter().filter(|f| rules.fields.contains(f)) {
        let Some(node) = entry.get(field) else {
            continue;
        };
        let value = match *field {
            "args" => Value::Array(b.strings(field, node)?),
            // An env value is the host's secret: so is a variable put there.
            "env" => Value::Object(b.string_map(field, node, true)?),
            "headers" => Value::Object(b.string_map(field, node, true)?),
            _ => Value::String(b.string(field, node, false)?),
        };
        config.insert((*field).to_owned(), value);
    }
    Ok(Value::Object(config))
}

/// The OAuth client id and settings of `entry` by the format's rules.
fn oauth_settings(
    out: &mut Report<'_>,
    server: &str,
    entry: &Node,
    rules: &Rules<'_>,
) -> Result<(Option<String>, ImportedOAuth), FieldError> {
    match rules.oauth {
        Some(keys) => oauth_client(out, server, entry, keys),
        None => Ok((None, ImportedOAuth::default())),
    }
}
