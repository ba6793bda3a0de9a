//! Tool schema checks and normalization (MCP 2025-11-25 "Tools › Tool":
//! `inputSchema` is a JSON Schema object with `type: "object"`;
//! `outputSchema`, when present, too).
//!
//! Model APIs reject anything else, and some servers send it anyway. The
//! rules, each reported as a [`Fix`] or a [`Reject`] reason:
//!
//! | input | result |
//! | --- | --- |
//! | no `inputSchema` (or `null`) | `{"type":"object","properties":{}}` (the tool takes no arguments) |
//! | no `type`, no `anyOf`/`oneOf` | `type: "object"` added |
//! | top-level `anyOf`/`oneOf` without `type`, every branch an object schema | merged: `properties` united (first branch wins a name), `required` = names required by every branch |
//! | top-level `anyOf`/`oneOf` with a non-object branch | tool left out |
//! | `type` other than `"object"` | tool left out |
//! | `required` inside `properties` (an array of strings) | moved to the top-level `required` |
//! | `properties` not an object | tool left out |
//! | `required` not an array of strings | `required` dropped |
//! | `outputSchema` not an object schema | only `outputSchema` dropped |
//!
//! Everything else is kept as the server sent it, keys in the server's order
//! (`properties` order is what the model sees as the argument order).

use serde_json::{json, Map, Value};

use crate::json::type_name as kind;

/// A change the host made to make an input schema usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// `inputSchema` was missing.
    AddedEmptySchema,
    /// `type: "object"` was missing.
    AddedObjectType,
    /// A top-level `anyOf`/`oneOf` of object schemas was merged into one.
    MergedUnion(&'static str),
    /// `required` was found inside `properties` and moved up.
    MovedNestedRequired,
    /// `required` was not an array of strings and was dropped.
    DroppedBadRequired,
}

impl Fix {
    /// A sentence for diagnostics.
    pub fn describe(&self) -> String {
        match self {
            Self::AddedEmptySchema => "inputSchema is missing; using an empty object schema (no arguments)".to_owned(),
            Self::AddedObjectType => "inputSchema has no type; added type \"object\"".to_owned(),
            Self::MergedUnion(k) => format!("inputSchema is a top-level {k} without type \"object\"; merged its object branches into one object schema"),
            Self::MovedNestedRequired => "inputSchema has `required` inside `properties`; moved it to the top level".to_owned(),
            Self::DroppedBadRequired => "inputSchema `required` is not an array of strings; dropped it".to_owned(),
        }
    }
}

/// Why a tool was left out because of its input schema.
pub type Reject = String;

/// Normalizes an input schema by the rules of this module. `Ok` gives the
/// usable schema and the fixes applied; `Err` the reason the tool is left out.
pub fn normalize_input(schema: Option<Value>) -> Result<(Value, Vec<Fix>), Reject> {
    let mut fixes = Vec::new();
    let mut obj = match schema {
        None | Some(Value::Null) => {
            return Ok((
                json!({"type": "object", "properties": {}}),
                vec![Fix::AddedEmptySchema],
            ))
        }
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "inputSchema is a JSON {}, not an object schema",
                kind(&other)
            ))
        }
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Err(format!("inputSchema has type {other}, not \"object\"")),
        None => {
            if let Some(key) = ["anyOf", "oneOf"]
                .into_iter()
                .find(|k| obj.contains_key(*k))
            {
                obj = merge_union(&obj, key)?;
                fixes.push(Fix::MergedUnion(key));
            } else {
                obj.insert("type".to_owned(), json!("object"));
                fixes.push(Fix::AddedObjectType);
            }
        }
    }
    match obj.get_mut("properties") {
        None => {}
        Some(Value::Object(props)) => {
            if let Some(Value::Array(names)) = props.get("required") {
                if names.iter().all(Value::is_string) {
                    let names = names.clone();
                    // `shift_remove`: the other properties keep their order.
                    props.shift_remove("required");
                    let top = obj.entry("required").or_insert_with(|| json!([]));
                    if let Value::Array(top) = top {
                        for n in names {
                            if !top.contains(&n) {
                                top.push(n);
                            }
                        }
                    }
                    fixes.push(Fix::MovedNestedRequired);
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "inputSchema properties is a JSON {}, not an object",
                kind(other)
            ))
        }
    }
    if let Some(required) = obj.get("required") {
        let ok = matches!(required, Value::Array(a) if a.iter().all(Value::is_string));
        if !ok {
            obj.shift_remove("required");
            fixes.push(Fix::DroppedBadRequired);
        }
    }
    Ok((Value::Object(obj), fixes))
}

/// Checks an output schema: `Ok(())` when it is an object schema with
/// `type: "object"`, else the reason it is dropped.
pub fn check_output(schema: &Value) -> Result<(), Reject> {
    match schema {
        Value::Object(m) => match m.get("type") {
            Some(Value::String(t)) if t == "object" => Ok(()),
            Some(other) => Err(format!(
                "outputSchema has type {other}, not \"object\"; dropped it"
            )),
            None => Err("outputSchema has no type \"object\"; dropped it".to_owned()),
        },
        other => Err(format!(
            "outputSchema is a JSON {}, not an object schema; dropped it",
            kind(other)
        )),
    }
}

fn merge_union(obj: &Map<String, Value>, key: &'static str) -> Result<Map<String, Value>, Reject> {
    let Some(Value::Array(branches)) = obj.get(key) else {
        return Err(format!("inputSchema {key} is not an array"));
    };
    let mut properties = Map::new();
    let mut required: Option<Vec<Value>> = None;
    for (i, branch) in branches.iter().enumerate() {
        let Value::Object(b) = branch else {
            return Err(format!(
                "inputSchema is a top-level {key} whose branch {i} is not an object schema"
            ));
        };
        let is_object = matches!(b.get("type"), Some(Value::String(t)) if t == "object")
            || (b.get("type").is_none() && b.contains_key("properties"));
        if !is_object {
            return Err(format!(
                "inputSchema is a top-level {key} whose branch {i} is not an object schema"
            ));
        }
        if let Some(Value::Object(p)) = b.get("properties") {
            for (name, schema) in p {
                properties
                    .entry(name.clone())
                    .or_insert_with(|| schema.clone());
            }
        }
        let here: Vec<Value> = match b.get("required") {
            Some(Value::Array(r)) => r.iter().filter(|v| v.is_string()).cloned().collect(),
            _ => Vec::new(),
        };
        required = Some(match required {
            None => here,
            Some(prev) => prev.into_iter().filter(|n| here.contains(n)).collect(),
        });
    }
    if branches.is_empty() {
        return Err(format!("inputSchema is an empty top-level {key}"));
    }
    let mut merged = Map::new();
    merged.insert("type".to_owned(), json!("object"));
    if let Some(d) = obj.get("description") {
        merged.insert("description".to_owned(), d.clone());
    }
    merged.insert("properties".to_owned(), Value::Object(properties));
    let required = required.unwrap_or_default();
    if !required.is_empty() {
        merged.insert("required".to_owned(), Value::Array(required));
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_schema_is_unchanged() {
        let s =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(normalize_input(Some(s.clone())).unwrap(), (s, vec![]));
    }

    #[test]
    fn missing_schema_becomes_empty_object() {
        let (s, fixes) = normalize_input(None).unwrap();
        assert_eq!(s, json!({"type": "object", "properties": {}}));
        assert_eq!(fixes, [Fix::AddedEmptySchema]);
    }

    #[test]
    fn union_of_objects_is_merged() {
        let s = json!({"anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "number"}}, "required": ["a", "b"]}]});
        let (out, fixes) = normalize_input(Some(s.clone())).unwrap();
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["a"]})
        );
        assert_eq!(fixes, [Fix::MergedUnion("anyOf")]);
    }

    #[test]
    fn union_with_scalar_branch_and_non_object_type_are_rejected() {
        assert!(normalize_input(Some(
            json!({"anyOf": [{"type": "string"}, {"type": "object"}]})
        ))
        .unwrap_err()
        .contains("branch 0"));
        assert!(normalize_input(Some(json!({"type": "string"})))
            .unwrap_err()
            .contains("\"string\""));
        assert!(normalize_input(Some(json!([1])))
            .unwrap_err()
            .contains("array"));
    }

    #[test]
    fn nested_required_moves_up_and_missing_type_is_added() {
        let s = json!({"properties": {"x": {"type": "string"}, "required": ["x"]}});
        let (out, fixes) = normalize_input(Some(s.clone())).unwrap();
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]})
        );
        assert_eq!(fixes, [Fix::AddedObjectType, Fix::MovedNestedRequired]);
    }

    #[test]
    fn key_order_is_the_servers() {
        let order = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let want = ["url", "thought", "a", "zeta", "b"];
        let s = json!({"type": "object", "properties": {"url": {}, "thought": {}, "a": {}, "zeta": {}, "b": {}}});
        let (out, _) = normalize_input(Some(s)).unwrap();
        assert_eq!(order(&out), want);
        // A nested `required` in the middle is moved out without reordering the rest.
        let s = json!({"properties": {"url": {}, "thought": {}, "required": ["url"], "a": {}, "zeta": {}, "b": {}}, "title": "t"});
        let (out, _) = normalize_input(Some(s)).unwrap();
        assert_eq!(order(&out), want);
        let top: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(top, ["properties", "title", "type", "required"]);
        // A merged union keeps the first-seen order of its branches' properties.
        let s = json!({"oneOf": [
            {"type": "object", "properties": {"url": {}, "thought": {}, "a": {}}},
            {"type": "object", "properties": {"zeta": {}, "url": {}, "b": {}}}]});
        let (out, _) = normalize_input(Some(s)).unwrap();
        assert_eq!(order(&out), want);
    }

    #[test]
    fn output_schema_must_be_object() {
        assert!(check_output(&json!({"type": "object"})).is_ok());
        assert!(check_output(&json!({"type": "array"})).is_err());
    }
}
