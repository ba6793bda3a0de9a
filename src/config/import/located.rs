//! One tree for JSON, JSONC and TOML documents, each value with the byte
//! offset where it starts, so every diagnostic of an import can name its
//! line and column. Built from jsonc-parser's AST or toml's spanned
//! `DeTable`; members keep the file's order.

use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use jsonc_parser::CollectOptions;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::config::validate::json_parse_options;
use crate::config::vars::quote_cut;
use crate::limits::MAX_IMPORT_DEPTH;

/// A value of the document.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    /// A string.
    Str(String),
    /// A number, as a float (JSON numbers, TOML integers and floats).
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// JSON `null`.
    Null,
    /// A TOML date or time (no JSON counterpart).
    Datetime,
    /// An array.
    Arr(Vec<Node>),
    /// An object or table, in file order.
    Obj(Vec<Member>),
}

/// A value and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    /// The value.
    pub val: Val,
    /// Byte offset of its first character.
    pub at: usize,
}

/// One member of an object or table.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Member {
    /// The key.
    pub key: String,
    /// Byte offset of the key.
    pub key_at: usize,
    /// The value.
    pub value: Node,
}

impl Node {
    /// The string, if this is one.
    pub(super) fn str(&self) -> Option<&str> {
        match &self.val {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The members, if this is an object or table.
    pub(super) fn members(&self) -> Option<&[Member]> {
        match &self.val {
            Val::Obj(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key`, if this is an object holding one.
    pub(super) fn get(&self, key: &str) -> Option<&Node> {
        let members = self.members()?;
        members.iter().find(|m| m.key == key).map(|m| &m.value)
    }

    /// The JSON name of its type, for messages.
    pub(super) fn type_name(&self) -> &'static str {
        match self.val {
            Val::Str(_) => "string",
            Val::Num(_) => "number",
            Val::Bool(_) => "boolean",
            Val::Null => "null",
            Val::Datetime => "datetime",
            Val::Arr(_) => "array",
            Val::Obj(_) => "object",
        }
    }
}

/// A parse failure: byte offset and what is wrong.
pub(super) type ParseError = (usize, String);

/// Parses JSON; `jsonc` also takes comments and trailing commas (VS Code
/// reads its `mcp.json` as JSONC).
pub(super) fn parse_json(text: &str, jsonc: bool) -> Result<Node, ParseError> {
    let options = json_parse_options(jsonc);
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options)
        .map_err(|e| (e.range().start, format!("invalid JSON: {}", e.kind())))?;
    let root = parsed
        .value
        .ok_or((0, "invalid JSON: no value".to_owned()))?;
    from_ast(&root, 0)
}

fn from_ast(value: &ast::Value<'_>, depth: usize) -> Result<Node, ParseError> {
    let at = value.start();
    if depth > MAX_IMPORT_DEPTH {
        return Err((at, format!("nested deeper than {MAX_IMPORT_DEPTH} levels")));
    }
    let val = match value {
        ast::Value::StringLit(s) => Val::Str(s.value.to_string()),
        ast::Value::NumberLit(n) => Val::Num(n.value.parse().unwrap_or(f64::NAN)),
        ast::Value::BooleanLit(b) => Val::Bool(b.value),
        ast::Value::NullKeyword(_) => Val::Null,
        ast::Value::Array(a) => Val::Arr(
            a.elements
                .iter()
                .map(|v| from_ast(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        ast::Value::Object(o) => Val::Obj(object_members(o, depth)?),
    };
    Ok(Node { val, at })
}

fn object_members(obj: &ast::Object<'_>, depth: usize) -> Result<Vec<Member>, ParseError> {
    let mut members: Vec<Member> = Vec::with_capacity(obj.properties.len());
    for prop in &obj.properties {
        let key = prop.name.as_str().to_owned();
        if members.iter().any(|m| m.key == key) {
            return Err((prop.start(), format!("duplicate key {}", quote_cut(&key))));
        }
        let value = from_ast(&prop.value, depth + 1)?;
        members.push(Member {
            key,
            key_at: prop.start(),
            value,
        });
    }
    Ok(members)
}

/// Parses a TOML document (TOML 1.0/1.1, the `toml` crate).
pub(super) fn parse_toml(text: &str) -> Result<Node, ParseError> {
    let root = DeTable::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let message = e.message().lines().next().unwrap_or("").trim().to_owned();
        (at, format!("invalid TOML: {message}"))
    })?;
    let at = root.span().start;
    Ok(Node {
        val: Val::Obj(table_members(root.get_ref(), 0)?),
        at,
    })
}

fn table_members(table: &DeTable<'_>, depth: usize) -> Result<Vec<Member>, ParseError> {
    table
        .iter()
        .map(|(key, value)| {
            Ok(Member {
                key: key.get_ref().to_string(),
                key_at: key.span().start,
                value: from_toml(value, depth + 1)?,
            })
        })
        .collect()
}

fn from_toml(value: &Spanned<DeValue<'_>>, depth: usize) -> Result<Node, ParseError> {
    let at = value.span().start;
    if depth > MAX_IMPORT_DEPTH {
        return Err((at, format!("nested deeper than {MAX_IMPORT_DEPTH} levels")));
    }
    let val = match value.get_ref() {
        DeValue::String(s) => Val::Str(s.to_string()),
        DeValue::Integer(i) => Val::Num(toml_integer(i.as_str(), i.radix())),
        DeValue::Float(f) => Val::Num(f.as_str().replace('_', "").parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(_) => Val::Datetime,
        DeValue::Array(a) => Val::Arr(
            a.iter()
                .map(|v| from_toml(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        DeValue::Table(t) => Val::Obj(table_members(t, depth)?),
    };
    Ok(Node { val, at })
}

/// A TOML integer's digits (sign and `_` allowed) in `radix`, as a float.
#[allow(clippy::cast_precision_loss)]
fn toml_integer(digits: &str, radix: u32) -> f64 {
    let digits = digits.replace('_', "");
    i64::from_str_radix(&digits, radix).map_or(f64::NAN, |n| n as f64)
}
