//! One JSON object read one level deep: its members as (key, raw value
//! text) pairs in the sender's order ([`Members`]), each value left as the
//! text the sender wrote ([`RawValue`]). A `tools/list` page and each of
//! its entries are read this way, so that an entry the catalogue already
//! checked is recognized by its text without building its tree (issue 28).
//!
//! A key written more than once keeps every occurrence here; [`Members::get`]
//! returns the last, as a full parse into a `serde_json::Map` keeps the last.
//! A list page is read the same way in one pass ([`ListPage`]).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
        deserializer.deserialize_map(Borrowing::<Self>(PhantomData))
    }
}

/// The visitor that reads a `T` borrowing from the text (`'a`).
struct Borrowing<'a, T>(PhantomData<&'a T>);

impl<'de: 'a, 'a> Visitor<'de> for Borrowing<'a, Members<'a>> {
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

/// One page of a list result (`{"tools": [...], "nextCursor": …}`) read
/// in one pass, one level deep: the items under its list member, each the
/// text the sender wrote, and the raw `nextCursor`. As in [`Members`], a
/// repeated member counts by its last occurrence.
#[derive(Debug)]
pub struct ListPage<'a> {
    /// The items, when the list member's (last) value is an array.
    pub items: Option<Vec<&'a RawValue>>,
    /// `nextCursor`'s text, when present.
    pub cursor: Option<&'a RawValue>,
}

impl<'a> ListPage<'a> {
    /// `text` read as a page whose items are under member `key`; `None`
    /// when it is not a JSON object.
    #[must_use]
    pub fn read(text: &'a str, key: &str) -> Option<Self> {
        use serde::de::DeserializeSeed;
        if !text.trim_start().starts_with('{') {
            return None;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let page = PageSeed(key).deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(page)
    }
}

/// Reads a [`ListPage`] whose items are under the member it names.
struct PageSeed<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for PageSeed<'_> {
    type Value = ListPage<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_> {
    type Value = ListPage<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list page")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut page = ListPage {
            items: None,
            cursor: None,
        };
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if key.0 == self.0 {
                page.items = map.next_value::<MaybeItems<'de>>()?.0;
            } else if key.0 == "nextCursor" {
                page.cursor = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(page)
    }
}

/// A member's value: its items' texts when it is an array, else `None`
/// (the value skipped).
struct MaybeItems<'a>(Option<Vec<&'a RawValue>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeItems<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Borrowing::<Self>(PhantomData))
    }
}

/// `visit_…` methods that take a value of any other kind as no items.
macro_rules! no_items {
    ($($visit:ident($($arg:ty)?)),*) => {$(
        fn $visit<E>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(MaybeItems(None))
        }
    )*};
}

impl<'de: 'a, 'a> Visitor<'de> for Borrowing<'a, MaybeItems<'a>> {
    type Value = MaybeItems<'a>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(64));
        while let Some(item) = seq.next_element::<&'a RawValue>()? {
            items.push(item);
        }
        Ok(MaybeItems(Some(items)))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(MaybeItems(None))
    }
    no_items!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_unit()
    );
}

/// A member key, borrowed unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Borrowing::<Self>(PhantomData))
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Borrowing<'a, Key<'a>> {
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

#[cfg(test)]
mod tests {
    use super::{ListPage, Members};

    #[test]
    fn a_page_gives_its_items_and_cursor_in_one_pass() {
        let page = ListPage::read(
            r#"{"ttlMs":5,"tools":[{"name":"a"}, 2 ,"x"],"nextCursor":"c","more":{"tools":1}}"#,
            "tools",
        )
        .expect("a page");
        let items: Vec<&str> = page
            .items
            .expect("an array")
            .iter()
            .map(|i| i.get())
            .collect();
        assert_eq!(items, [r#"{"name":"a"}"#, "2", r#""x""#]);
        assert_eq!(page.cursor.map(|c| c.get()), Some(r#""c""#));
        // The last of a repeated member counts; a non-array is no items.
        for (text, has_items) in [
            (r#"{"tools":[],"tools":{"a":[1]}}"#, false),
            (r#"{"tools":7,"tools":[1]}"#, true),
            (r#"{"tools":null}"#, false),
            (r#"{"prompts":[]}"#, false),
        ] {
            let page = ListPage::read(text, "tools").expect(text);
            assert_eq!(page.items.is_some(), has_items, "{text}");
            assert!(page.cursor.is_none());
        }
        for text in ["[]", "{", r#"{"tools":[}"#, "{} x"] {
            assert!(ListPage::read(text, "tools").is_none(), "{text}");
        }
    }

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
