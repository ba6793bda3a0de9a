//! One JSON object read one level deep: its members as (key, raw value
//! text) pairs in the sender's order ([`Members`]), each value left as the
//! text the sender wrote ([`RawValue`]). A `tools/list` page and each of
//! its entries are read this way, so that an entry the catalogue already
//! checked is recognized by its text without building its tree (issue 28).
//!
//! A key written more than once keeps every occurrence here; [`Members::get`]
//! returns the last, as a full parse into a `serde_json::Map` keeps the last.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The members of one JSON object, borrowed from its text.
#[derive(Debug, Default)]
pub struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// `text`'s members when it is a JSON object; `None` for any other JSON
    /// value or text that is not JSON.
    #[must_use]
    pub fn of(text: &'a str) -> Option<Self> {
        if !text.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(text).ok()
    }

    /// The raw text of member `key` (its last occurrence).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// Every member, in the sender's order (repeated keys included).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &'a RawValue)> + '_ {
        self.0.iter().map(|(k, v)| (k.as_ref(), *v))
    }

    /// Member `key` as a string, when it is one.
    #[must_use]
    pub fn string(&self, key: &str) -> Option<String> {
        serde_json::from_str(self.get(key)?.get()).ok()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Walk<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Walk<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    members.push((key.0, map.next_value::<&'a RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Walk(std::marker::PhantomData))
    }
}

/// A member key, borrowed unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Text<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Text(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::Members;

    #[test]
    fn members_keep_their_order_text_and_repeats() {
        let text = r#" {"name":"t","na\u006de":"u","inputSchema":{ "type" : "object" },"n":1.50}"#;
        let m = Members::of(text).expect("an object");
        let keys: Vec<&str> = m.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["name", "name", "inputSchema", "n"]);
        assert_eq!(
            m.get("name").map(|v| v.get()),
            Some(r#""u""#),
            "the last one"
        );
        assert_eq!(m.string("name").as_deref(), Some("u"));
        assert_eq!(
            m.get("inputSchema").map(|v| v.get()),
            Some(r#"{ "type" : "object" }"#)
        );
        assert_eq!(m.get("n").map(|v| v.get()), Some("1.50"));
        assert_eq!(m.string("n"), None, "not a string");
        assert!(m.get("absent").is_none());
    }

    #[test]
    fn anything_but_an_object_is_refused() {
        for text in ["[]", "1", "\"x\"", "null", "{", "{\"a\":}", "{} x", ""] {
            assert!(Members::of(text).is_none(), "{text}");
        }
        assert!(Members::of("{}").is_some_and(|m| m.iter().next().is_none()));
    }
}
