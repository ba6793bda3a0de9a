//! The response cache of one connection: cacheable results (SEP-2549, MCP
//! 2026-07-28 "Server Utilities › Caching") kept while they are fresh.
//!
//! The host sends list and read requests as raw JSON (see [`super::request`]),
//! past rmcp's typed response cache, so it honours the hints itself:
//!
//! - Cacheable methods: `tools/list`, `prompts/list`, `resources/list`,
//!   `resources/templates/list` (each page by its cursor) and
//!   `resources/read` (by URI). A result is kept for its `ttlMs` (at most
//!   [`MAX_CACHE_TTL_MS`]); an absent, zero or negative `ttlMs` keeps nothing.
//!   A fresh entry is served without a request, with `ttlMs` set to the time
//!   it has left.
//! - A change notification (either era: `notifications/*/list_changed`,
//!   `notifications/resources/updated`, free-standing or on a
//!   `subscriptions/listen` stream) drops what it makes stale before the
//!   host acts on it ([`ResponseCache::invalidate`]); a response that was in
//!   flight during an invalidation is not kept ([`Generation`]).
//! - `cacheScope`: the cache belongs to one connection, so to one
//!   authorization context; `private` (and an absent scope) entries are
//!   dropped when the connection's token is replaced
//!   ([`ResponseCache::drop_private`]); `public` ones stay.
//! - Bounds: [`MAX_CACHE_ENTRIES`] entries and [`MAX_CACHE_BYTES`] bytes of
//!   JSON per connection, the oldest entry going first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::json::json_len;
use crate::limits::{MAX_CACHE_BYTES, MAX_CACHE_ENTRIES, MAX_CACHE_TTL_MS};

/// The methods whose results are cacheable (SEP-2549), each with the list it
/// belongs to.
const CACHEABLE: [(&str, Invalidation); 5] = [
    ("tools/list", Invalidation::Tools),
    ("prompts/list", Invalidation::Prompts),
    ("resources/list", Invalidation::Resources),
    ("resources/templates/list", Invalidation::Resources),
    ("resources/read", Invalidation::Resources),
];

/// What a change makes stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidation {
    /// `notifications/tools/list_changed`: every `tools/list` page.
    Tools,
    /// `notifications/prompts/list_changed`: every `prompts/list` page.
    Prompts,
    /// `notifications/resources/list_changed`: every `resources/list` and
    /// `resources/templates/list` page (reads stay).
    Resources,
    /// `notifications/resources/updated` for this URI: its `resources/read`.
    Resource(String),
    /// Every entry (a listen stream was reopened: changes may have been missed).
    All,
}

/// The cache's state when a request left; a response is kept only if no
/// invalidation happened since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

/// One connection's cache (cheap to clone: shared).
#[derive(Clone, Default)]
pub struct ResponseCache(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    bytes: usize,
    generation: u64,
    /// Insertion counter: the smallest `seq` is the oldest entry.
    next_seq: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: &'static str,
    params: String,
}

struct Entry {
    value: Value,
    bytes: usize,
    seq: u64,
    expires: Instant,
    public: bool,
}

impl ResponseCache {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key of `method` with `params`; `None` for a method that is not cacheable.
    fn key(method: &str, params: &Value) -> Option<Key> {
        let (method, _) = CACHEABLE.iter().find(|(m, _)| *m == method)?;
        Some(Key {
            method,
            params: params.to_string(),
        })
    }

    /// The current generation, taken before a request is sent.
    pub fn generation(&self) -> Generation {
        Generation(self.state().generation)
    }

    /// A fresh result of `method` with `params`, its `ttlMs` set to the
    /// milliseconds it has left; `None` when there is none.
    pub fn get(&self, method: &str, params: &Value) -> Option<Value> {
        let key = Self::key(method, params)?;
        let now = Instant::now();
        let mut state = self.state();
        let left = match state.entries.get(&key) {
            Some(entry) if entry.expires > now => entry.expires - now,
            Some(_) => {
                state.remove(&key);
                return None;
            }
            None => return None,
        };
        let mut value = state.entries.get(&key)?.value.clone();
        if let Some(ttl) = value.get_mut("ttlMs") {
            *ttl = Value::from(u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
        }
        Some(value)
    }

    /// Keeps `result` of `method` with `params` for its `ttlMs`, unless the
    /// cache was invalidated after `since` or the result is not cacheable
    /// (no positive `ttlMs`, larger than [`MAX_CACHE_BYTES`]).
    pub fn put(&self, method: &str, params: &Value, result: &Value, since: Generation) {
        let Some(key) = Self::key(method, params) else {
            return;
        };
        let Some(ttl) = ttl_of(result) else {
            return;
        };
        let bytes = json_len(result);
        if bytes > MAX_CACHE_BYTES {
            return;
        }
        let public = result.get("cacheScope").and_then(Value::as_str) == Some("public");
        let mut state = self.state();
        if state.generation != since.0 {
            return;
        }
        state.remove(&key);
        while !state.entries.is_empty()
            && (state.entries.len() >= MAX_CACHE_ENTRIES || state.bytes + bytes > MAX_CACHE_BYTES)
        {
            state.remove_oldest();
        }
        let entry = Entry {
            value: result.clone(),
            bytes,
            seq: state.next_seq,
            expires: Instant::now() + ttl,
            public,
        };
        state.next_seq += 1;
        state.bytes += bytes;
        state.entries.insert(key, entry);
    }

    /// Drops what `what` makes stale; responses in flight are not kept.
    pub fn invalidate(&self, what: &Invalidation) {
        let mut state = self.state();
        state.generation += 1;
        state.retain(|key| match what {
            Invalidation::All => false,
            Invalidation::Resource(uri) => {
                key.method != "resources/read"
                    || serde_json::from_str::<Value>(&key.params)
                        .ok()
                        .and_then(|p| p.get("uri").cloned())
                        != Some(Value::String(uri.clone()))
            }
            list => !CACHEABLE
                .iter()
                .any(|(m, l)| *m == key.method && l == list && *m != "resources/read"),
        });
    }

    /// Drops every `private` entry (and every entry without a scope): the
    /// connection's authorization context changed.
    pub fn drop_private(&self) {
        let mut state = self.state();
        state.generation += 1;
        let public: Vec<Key> = state
            .entries
            .iter()
            .filter(|(_, e)| e.public)
            .map(|(k, _)| k.clone())
            .collect();
        state.retain(|key| public.contains(key));
    }

    /// How many entries are kept (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.state().entries.len()
    }
}

impl State {
    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.entries.remove(key) {
            self.bytes -= entry.bytes;
        }
    }

    fn remove_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .min_by_key(|(_, e)| e.seq)
            .map(|(k, _)| k.clone());
        if let Some(key) = oldest {
            self.remove(&key);
        }
    }

    fn retain(&mut self, keep: impl Fn(&Key) -> bool) {
        let gone: Vec<Key> = self.entries.keys().filter(|k| !keep(k)).cloned().collect();
        for key in gone {
            self.remove(&key);
        }
    }
}

/// How long `result` may be kept: its positive `ttlMs`, at most
/// [`MAX_CACHE_TTL_MS`]; `None` when absent, zero, negative or not a number.
fn ttl_of(result: &Value) -> Option<Duration> {
    let ms = result.get("ttlMs")?.as_f64()?;
    if ms.is_nan() || ms < 1.0 {
        return None;
    }
    // Truncation is intended: whole milliseconds, capped.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = (ms.min(MAX_CACHE_TTL_MS as f64)) as u64;
    Some(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(ttl: Value) -> Value {
        json!({ "resources": [{ "uri": "a://1" }], "ttlMs": ttl, "cacheScope": "private" })
    }

    #[test]
    fn a_fresh_result_is_served_with_the_time_it_has_left() {
        let cache = ResponseCache::default();
        let g = cache.generation();
        cache.put("resources/list", &json!({}), &page(json!(60_000)), g);
        let hit = cache
            .get("resources/list", &json!({}))
            .unwrap_or_else(|| panic!("not kept"));
        assert_eq!(hit["resources"], json!([{ "uri": "a://1" }]));
        let left = hit["ttlMs"].as_u64().unwrap_or(0);
        assert!(left > 0 && left <= 60_000, "{left}");
        assert!(cache
            .get("resources/list", &json!({ "cursor": "x" }))
            .is_none());
        assert!(cache.get("prompts/list", &json!({})).is_none());
    }

    #[test]
    fn no_positive_ttl_or_an_uncacheable_method_keeps_nothing() {
        let cache = ResponseCache::default();
        for ttl in [json!(0), json!(-5), json!("60"), Value::Null] {
            cache.put("resources/list", &json!({}), &page(ttl), cache.generation());
        }
        let plain = json!({ "resources": [] });
        cache.put("resources/list", &json!({}), &plain, cache.generation());
        let result = json!({ "messages": [], "ttlMs": 1000 });
        cache.put(
            "prompts/get",
            &json!({ "name": "p" }),
            &result,
            cache.generation(),
        );
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn notifications_drop_what_they_make_stale() {
        let cache = ResponseCache::default();
        let keep = |method: &str, params: Value| {
            cache.put(method, &params, &page(json!(60_000)), cache.generation());
        };
        keep("tools/list", json!({}));
        keep("prompts/list", json!({}));
        keep("resources/list", json!({}));
        keep("resources/templates/list", json!({}));
        keep("resources/read", json!({ "uri": "a://1" }));
        keep("resources/read", json!({ "uri": "a://2" }));
        cache.invalidate(&Invalidation::Resource("a://1".into()));
        assert!(cache
            .get("resources/read", &json!({ "uri": "a://1" }))
            .is_none());
        assert!(cache
            .get("resources/read", &json!({ "uri": "a://2" }))
            .is_some());
        cache.invalidate(&Invalidation::Resources);
        assert!(cache.get("resources/list", &json!({})).is_none());
        assert!(cache.get("resources/templates/list", &json!({})).is_none());
        assert!(cache
            .get("resources/read", &json!({ "uri": "a://2" }))
            .is_some());
        cache.invalidate(&Invalidation::Tools);
        assert!(cache.get("tools/list", &json!({})).is_none());
        assert!(cache.get("prompts/list", &json!({})).is_some());
        cache.invalidate(&Invalidation::All);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn a_response_in_flight_during_an_invalidation_is_not_kept() {
        let cache = ResponseCache::default();
        let before = cache.generation();
        cache.invalidate(&Invalidation::Prompts);
        cache.put("prompts/list", &json!({}), &page(json!(60_000)), before);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn a_new_token_drops_private_entries_only() {
        let cache = ResponseCache::default();
        let public = json!({ "prompts": [], "ttlMs": 60_000, "cacheScope": "public" });
        cache.put("prompts/list", &json!({}), &public, cache.generation());
        cache.put(
            "tools/list",
            &json!({}),
            &page(json!(60_000)),
            cache.generation(),
        );
        let unscoped = json!({ "resources": [], "ttlMs": 60_000 });
        cache.put("resources/list", &json!({}), &unscoped, cache.generation());
        cache.drop_private();
        assert!(cache.get("prompts/list", &json!({})).is_some());
        assert!(cache.get("tools/list", &json!({})).is_none());
        assert!(cache.get("resources/list", &json!({})).is_none());
    }

    #[test]
    fn the_entry_count_is_bounded_oldest_first() {
        let cache = ResponseCache::default();
        for i in 0..=MAX_CACHE_ENTRIES {
            let params = json!({ "uri": format!("a://{i}") });
            cache.put(
                "resources/read",
                &params,
                &page(json!(60_000)),
                cache.generation(),
            );
        }
        assert_eq!(cache.len(), MAX_CACHE_ENTRIES);
        assert!(cache
            .get("resources/read", &json!({ "uri": "a://0" }))
            .is_none());
        let last = json!({ "uri": format!("a://{MAX_CACHE_ENTRIES}") });
        assert!(cache.get("resources/read", &last).is_some());
    }
}
