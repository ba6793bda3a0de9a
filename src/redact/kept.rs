//! The secret values this process holds, so that no text it shows carries
//! one, whoever wrote the text.
//!
//! A server can echo what it was sent: a Streamable HTTP server's JSON-RPC
//! error that quotes the request line (`POST /mcp?token=…`), a 404 page
//! naming the path and query, an `invalid token sk-…` log message, an
//! authorization server's `error_description` repeating the client
//! secret. URL scrubbing ([`super::shown_urls`]) cannot see those (they are
//! not whole URLs), so the values themselves are kept here while something
//! of the host holds them ([`KeptSecret`]: a server's configured header
//! values, its URL's query, fragment and userinfo, its OAuth client
//! secret, a pushed or stored token), and [`hidden`] replaces each with
//! `[redacted]` in every text the host shows: [`super::shown`] runs at the
//! same places URL scrubbing does (`HostError::new`, `events::log`, server
//! log records, the server states of `crate::session`), and JSON-RPC error
//! `data` goes through [`hidden_in_value`].
//!
//! The set is process-wide: two hosts in one process hide each other's
//! values too, which costs nothing but a redaction that was not needed.
//! Values shorter than [`MIN_KEPT_SECRET_BYTES`] are not kept (a header
//! value `1` or a query `v=2` would otherwise redact every such word); the
//! set holds one entry per [`KeptSecret`] alive, so it is bounded by what
//! holds them (the configured servers and their tokens).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use crate::limits::MIN_KEPT_SECRET_BYTES;

/// What a hidden value is shown as.
const REDACTED: &str = "[redacted]";

/// The live values, by the id of the [`KeptSecret`] that holds each, and
/// the same values longest first (what [`hidden`] reads), rebuilt on every
/// change (rare: a server added or removed, a token replaced).
#[derive(Default)]
struct Kept {
    /// Each value with the [`generation`] it was kept at.
    by_id: BTreeMap<u64, (u64, Arc<str>)>,
    longest_first: Arc<Vec<Arc<str>>>,
}

static KEPT: RwLock<Option<Kept>> = RwLock::new(None);
/// How many values are kept: [`hidden`] reads nothing else while it is 0.
static COUNT: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Counts the values added to the set (see [`generation`]).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// How many values have been kept so far: a text checked when this was `g`
/// holds no value kept up to `g`; once it grows, the text may hold a value
/// kept since (a tool definition a server listed before another server's
/// configuration made that string a secret), so what was checked before is
/// checked again (`crate::catalogue`).
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// `f`'s result from a run during which no value was kept, running it
/// again (at most 1000 times) while one was. For tests that count how many
/// checked tools a re-list reused: a value another test keeps meanwhile
/// makes a cut description be checked in full, which is right, but not
/// what they count.
///
/// # Panics
/// When a value was kept during each of the 1000 runs.
#[cfg(test)]
pub(crate) fn undisturbed<T>(mut f: impl FnMut() -> T) -> T {
    for _ in 0..1000 {
        let at = generation();
        let out = f();
        if generation() == at {
            return out;
        }
    }
    panic!("a value was kept during each of 1000 runs");
}

/// One secret value held by the host: while it lives, [`hidden`] takes the
/// value out of every text. Dropping it forgets the value (unless another
/// `KeptSecret` holds the same one).
pub struct KeptSecret {
    id: u64,
}

impl KeptSecret {
    /// Keeps `value`; `None` when it is shorter than
    /// [`MIN_KEPT_SECRET_BYTES`] (not kept, see the module documentation).
    pub fn new(value: &str) -> Option<Self> {
        if value.len() < MIN_KEPT_SECRET_BYTES {
            return None;
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        change(|kept| {
            // Under the write lock: whoever reads the new generation hides
            // the value (a forgotten value needs no new check).
            let generation = GENERATION.fetch_add(1, Ordering::AcqRel) + 1;
            kept.by_id.insert(id, (generation, Arc::from(value)));
        });
        Some(Self { id })
    }

    /// Keeps every value of `values` that is long enough.
    pub fn all<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Self> {
        values.into_iter().filter_map(Self::new).collect()
    }
}

impl Drop for KeptSecret {
    fn drop(&mut self) {
        let id = self.id;
        change(|kept| {
            kept.by_id.remove(&id);
        });
    }
}

impl std::fmt::Debug for KeptSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeptSecret(#{})", self.id)
    }
}

/// Applies `edit` to the set and rebuilds its longest-first list.
fn change(edit: impl FnOnce(&mut Kept)) {
    let mut guard = KEPT.write().unwrap_or_else(PoisonError::into_inner);
    let kept = guard.get_or_insert_with(Kept::default);
    edit(kept);
    let mut values: Vec<Arc<str>> = kept.by_id.values().map(|(_, v)| v.clone()).collect();
    values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    COUNT.store(values.len(), Ordering::Release);
    kept.longest_first = Arc::new(values);
}

/// The kept values, longest first (so a value inside another is not left
/// half shown).
fn values() -> Option<Arc<Vec<Arc<str>>>> {
    if COUNT.load(Ordering::Acquire) == 0 {
        return None;
    }
    let guard = KEPT.read().unwrap_or_else(PoisonError::into_inner);
    guard.as_ref().map(|kept| kept.longest_first.clone())
}

/// Whether `text` holds a value kept after `generation` (see
/// [`generation`]), as it is or as JSON writes it inside a string (quotes,
/// backslashes and control characters escaped): what a JSON text checked
/// when the generation was `generation` may still show.
pub fn kept_since(generation: u64, text: &str) -> bool {
    if generation >= GENERATION.load(Ordering::Acquire) {
        return false;
    }
    let guard = KEPT.read().unwrap_or_else(PoisonError::into_inner);
    let Some(kept) = guard.as_ref() else {
        return false;
    };
    (kept.by_id.values())
        .filter(|(added, _)| *added > generation)
        .any(|(_, value)| {
            text.contains(&**value) || json_escaped(value).is_some_and(|e| text.contains(&*e))
        })
}

/// `value` as JSON writes it inside a string, when that differs from it.
fn json_escaped(value: &str) -> Option<String> {
    let quoted = serde_json::to_string(value).ok()?;
    let inner = quoted.get(1..quoted.len().saturating_sub(1))?;
    (inner != value).then(|| inner.to_owned())
}

/// `text` with every kept value replaced by [`REDACTED`]; returned as is
/// (no copy) when it holds none. Every occurrence of every value is found
/// in `text` first and overlapping or touching ones are redacted as one
/// span, so no part of a value overlapping another is left shown.
pub fn hidden(text: &str) -> Cow<'_, str> {
    let Some(values) = values() else {
        return Cow::Borrowed(text);
    };
    let mut spans: Vec<(usize, usize)> = values
        .iter()
        .flat_map(|value| {
            text.match_indices(&**value)
                .map(|(at, found)| (at, at + found.len()))
        })
        .collect();
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut shown_to = 0;
    let mut spans = spans.into_iter().peekable();
    while let Some((start, mut end)) = spans.next() {
        while let Some(&(next, next_end)) = spans.peek() {
            if next > end {
                break;
            }
            end = end.max(next_end);
            spans.next();
        }
        out.push_str(&text[shown_to..start]);
        out.push_str(REDACTED);
        shown_to = end;
    }
    out.push_str(&text[shown_to..]);
    Cow::Owned(out)
}

/// [`hidden`] for a text that was cut (a bounded read of a body): besides
/// every whole value, a tail that is the start of a kept value (at least
/// [`MIN_CUT_PIECE`] bytes of it) is redacted, so a value the cut split is
/// not shown either.
pub fn hidden_cut(text: &str) -> Cow<'_, str> {
    let hidden = hidden(text);
    match values().and_then(|values| cut_piece(&values, &hidden, Edge::End)) {
        Some(k) => Cow::Owned(format!("{}{REDACTED}", &hidden[..hidden.len() - k])),
        None => hidden,
    }
}

/// [`hidden`] for a text whose start was cut (the kept tail of a stream):
/// besides every whole value, a head that is the end of a kept value (at
/// least [`MIN_CUT_PIECE`] bytes of it) is redacted.
pub fn hidden_cut_start(text: &str) -> Cow<'_, str> {
    let hidden = hidden(text);
    match values().and_then(|values| cut_piece(&values, &hidden, Edge::Start)) {
        Some(k) => Cow::Owned(format!("{REDACTED}{}", &hidden[k..])),
        None => hidden,
    }
}

/// The shortest piece of a kept value a cut text is redacted for (bytes):
/// shorter ones are too common to say anything of the value.
const MIN_CUT_PIECE: usize = 4;

/// Where a text was cut.
#[derive(Clone, Copy)]
enum Edge {
    Start,
    End,
}

/// The length (bytes) of the longest piece of a kept value, shorter than
/// the value and at least [`MIN_CUT_PIECE`], that `text` ends with as the
/// value's start ([`Edge::End`]) or starts with as the value's end
/// ([`Edge::Start`]); values are tried longest first.
fn cut_piece(values: &[Arc<str>], text: &str, edge: Edge) -> Option<usize> {
    values.iter().find_map(|value| {
        let pieces = MIN_CUT_PIECE..value.len().min(text.len() + 1);
        pieces.rev().find(|&k| match edge {
            Edge::End => value.is_char_boundary(k) && text.ends_with(&value[..k]),
            Edge::Start => {
                let at = value.len() - k;
                value.is_char_boundary(at) && text.starts_with(&value[at..])
            }
        })
    })
}

/// [`hidden`] applied to every string (and object key) inside `value`; a
/// number whose digits hold a kept value becomes the string
/// `"[redacted]"`.
pub fn hidden_in_value(value: &mut Value) {
    if COUNT.load(Ordering::Acquire) == 0 {
        return;
    }
    match value {
        Value::String(text) => {
            if let Cow::Owned(shown) = hidden(text) {
                *text = shown;
            }
        }
        Value::Number(number) => {
            if matches!(hidden(&number.to_string()), Cow::Owned(_)) {
                *value = Value::String(REDACTED.to_owned());
            }
        }
        Value::Array(items) => items.iter_mut().for_each(hidden_in_value),
        Value::Object(members) => {
            members.values_mut().for_each(hidden_in_value);
            // The map is rebuilt only when a key holds a kept value.
            if members
                .keys()
                .any(|key| matches!(hidden(key), Cow::Owned(_)))
            {
                let shown: serde_json::Map<String, Value> = std::mem::take(members)
                    .into_iter()
                    .map(|(key, member)| (hidden(&key).into_owned(), member))
                    .collect();
                *members = shown;
            }
        }
        _ => {}
    }
}

/// [`hidden`] applied to the strings inside `value`, keeping its shape:
/// object keys, numbers, booleans and the members named in `fixed` (a
/// typed value's discriminant and fixed-vocabulary fields, such as a
/// server state's `kind` or an error's `errorType`) are left as they are,
/// so a kept value equal to a word (`starting`, `message`) cannot turn the
/// value into another variant or rename a field.
pub fn hidden_in_texts(value: &mut Value, fixed: &[&str]) {
    if COUNT.load(Ordering::Acquire) == 0 {
        return;
    }
    match value {
        Value::String(text) => {
            if let Cow::Owned(shown) = hidden(text) {
                *text = shown;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hidden_in_texts(v, fixed)),
        Value::Object(members) => members
            .iter_mut()
            .filter(|(key, _)| !fixed.contains(&key.as_str()))
            .for_each(|(_, member)| hidden_in_texts(member, fixed)),
        _ => {}
    }
}

/// The values of `url` that can carry a secret: its password, its whole
/// query and fragment, each `key=value` pair of the query and each value,
/// as sent (percent-encoded) and decoded.
pub fn url_secrets(url: &url::Url) -> Vec<String> {
    let mut all = Vec::new();
    all.extend(url.password().map(str::to_owned));
    all.extend(url.query().map(str::to_owned));
    all.extend(url.fragment().map(str::to_owned));
    if let Some(query) = url.query() {
        for pair in query.split('&') {
            all.push(pair.to_owned());
            all.extend(pair.split_once('=').map(|(_, v)| v.to_owned()));
        }
    }
    for (key, value) in url.query_pairs() {
        all.push(format!("{key}={value}"));
        all.push(value.into_owned());
    }
    all
}

/// The values of a header value that can carry a secret: the whole value
/// and, for `<scheme> <credentials>` (`Bearer sk-…`, `Basic …`), the
/// credentials alone (a server may quote only those).
pub fn header_secrets(value: &str) -> Vec<String> {
    let mut all = vec![value.to_owned()];
    if let Some((_, credentials)) = value.trim().split_once(' ') {
        all.push(credentials.trim().to_owned());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_value_is_hidden_while_it_lives() {
        let text = "POST /p/mcp?token=KEPTCANARY1 failed";
        let kept = KeptSecret::new("KEPTCANARY1");
        assert!(kept.is_some());
        assert_eq!(hidden(text), "POST /p/mcp?token=[redacted] failed");
        drop(kept);
        assert_eq!(hidden(text), text);
    }

    #[test]
    fn longer_values_go_first_and_short_ones_are_not_kept() {
        let _a = KeptSecret::new("KEPTCANARY2");
        let _b = KeptSecret::new("token=KEPTCANARY2&x=1");
        assert!(KeptSecret::new("short").is_none());
        assert_eq!(
            hidden("q token=KEPTCANARY2&x=1, short"),
            "q [redacted], short"
        );
    }

    #[test]
    fn overlapping_values_are_hidden_as_one_span_and_a_cut_tail_too() {
        let _a = KeptSecret::new("OVLPAAAAAAXYZXYZ");
        let _b = KeptSecret::new("XYZXYZOVLPBBBBBB");
        assert_eq!(hidden("ovl OVLPAAAAAAXYZXYZOVLPBBBBBB."), "ovl [redacted].");
        assert_eq!(hidden_cut("ends with OVLPAAAA"), "ends with [redacted]");
        assert_eq!(hidden_cut("ends with OVL"), "ends with OVL");
        // A text whose start was cut: a head that ends a value goes.
        assert_eq!(hidden_cut_start("BBBBBB starts"), "[redacted] starts");
        assert_eq!(hidden_cut_start("BBB starts"), "BBB starts");
        // Only the head: a piece elsewhere is no cut value.
        assert_eq!(hidden_cut_start("YZ OVLPBBBBBB"), "YZ OVLPBBBBBB");
    }

    #[test]
    fn numbers_holding_a_kept_value_are_hidden() {
        let _a = KeptSecret::new("98765432123");
        let mut value = serde_json::json!({"n": 98765432123_u64, "m": 7});
        hidden_in_value(&mut value);
        assert_eq!(value, serde_json::json!({"n": "[redacted]", "m": 7}));
    }

    #[test]
    fn strings_and_keys_inside_json_are_hidden() {
        let _a = KeptSecret::new("KEPTCANARY3");
        let mut value =
            serde_json::json!({"KEPTCANARY3": ["a KEPTCANARY3", 1, {"b": "KEPTCANARY3"}]});
        hidden_in_value(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"[redacted]": ["a [redacted]", 1, {"b": "[redacted]"}]})
        );
    }

    #[test]
    fn texts_are_hidden_but_keys_numbers_and_fixed_fields_kept() {
        let _a = KeptSecret::new("KEPTCANARY4");
        let mut value = serde_json::json!({"KEPTCANARY4": ["a KEPTCANARY4", 98765],
            "kind": "KEPTCANARY4", "b": {"kind": "KEPTCANARY4", "c": "KEPTCANARY4"}});
        hidden_in_texts(&mut value, &["kind"]);
        assert_eq!(
            value,
            serde_json::json!({"KEPTCANARY4": ["a [redacted]", 98765],
                "kind": "KEPTCANARY4", "b": {"kind": "KEPTCANARY4", "c": "[redacted]"}})
        );
    }

    #[test]
    fn url_and_header_values_include_their_parts() {
        let url = url::Url::parse("https://u:pw@h.test/mcp?api_key=a%20b&v=2#frag").unwrap();
        let all = url_secrets(&url);
        for want in [
            "pw",
            "api_key=a%20b&v=2",
            "frag",
            "api_key=a%20b",
            "a%20b",
            "a b",
        ] {
            assert!(all.iter().any(|v| v == want), "{want}: {all:?}");
        }
        assert_eq!(header_secrets("Bearer sk-1"), ["Bearer sk-1", "sk-1"]);
    }
}
