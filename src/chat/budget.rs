//! The model-facing output budget of a chat tool call (issue 29 item 5): how
//! much of a finished tool call's AHP `ToolCallResult` goes into the chat
//! state (`chat/toolCallComplete`, AHP 1.0 "Chat channel › Tool calls"),
//! which AHP clients hand to the model. Pure; the whole result is kept by
//! [`super::spill`].
//!
//! The budget is counted in characters (Unicode scalar values, Rust
//! `char`s; about 4 make one model token), shared by everything the result
//! puts in the state, in order:
//!
//! - `text` blocks: their characters. The block that crosses the budget is
//!   cut at a character boundary (never inside a UTF-8 sequence, and so
//!   never inside a UTF-16 surrogate pair); later text blocks are left out.
//! - `embeddedResource` blocks (MCP `image`, `audio`, embedded resources):
//!   the characters of their base64 `data` and `contentType`. Binary is
//!   never cut: a block that does not fit whole is left out.
//! - any other block (a `resource` link, an AHP block kept verbatim): the
//!   characters of its JSON; one that does not fit whole is left out.
//! - `structuredContent`: the characters of its JSON text; left out
//!   whole when it does not fit (MCP 2025-11-25 "Tools › Structured
//!   content": a server should repeat it in a text block).
//!
//! A result over the budget ends with one `text` block, the marker
//! `[… <n> of <total> characters left out (<what>); the whole result is in
//! <file URI>]` (or `…; the whole result was not kept: <why>]`), followed by
//! an AHP `resource` block (`{uri, sizeHint, contentType:
//! "application/json"}`, AHP `ToolResultResourceContent`: "a reference to a
//! resource stored outside the tool result") linking the spill file. The
//! marker and link come on top of the budget. An `isError` result's
//! `error.message` (its text blocks joined) is cut to the budget on its
//! own, with a shorter marker.

use ahp_types::state::{ToolCallResult, ToolResultContent, ToolResultResourceContent};
use ahp_types::state::{ToolResultEmbeddedResourceContent, ToolResultTextContent};
use serde_json::Value;

/// `contentType` of the spill file a marker links.
pub const SPILL_CONTENT_TYPE: &str = "application/json";

/// Where the whole result of a cut one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// In the spill file at `uri` (`file://`), `bytes` long.
    File {
        /// The file's `file://` URI.
        uri: String,
        /// Its size in bytes (the link's `sizeHint`).
        bytes: u64,
    },
    /// Nowhere: why (e.g. "it is 30 MiB, more than the 20 MiB a spill file
    /// may hold"), said in the marker.
    Not(String),
}

/// What a budget left out of one result (see [`cut`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Characters left out, of every kind.
    pub chars: usize,
    /// Characters the result has in all.
    pub total: usize,
    /// A text block was cut or left out.
    pub text: bool,
    /// `embeddedResource` blocks left out (binary, never inlined past the budget).
    pub binary: usize,
    /// Other blocks left out.
    pub other: usize,
    /// `structuredContent` was left out.
    pub structured: bool,
}

/// Whether `result` puts more than `max_chars` characters into the chat
/// state (see the module doc for what counts). An `isError` result's
/// `error.message` is not looked at: it is its text blocks joined, so it
/// is over the budget only by its newlines when they are not.
pub fn over_budget(result: &ToolCallResult, max_chars: usize) -> bool {
    let mut left = max_chars;
    let mut take = |n: usize| match left.checked_sub(n) {
        Some(rest) => {
            left = rest;
            true
        }
        None => false,
    };
    let blocks = result.content.iter().flatten();
    let content_fits = blocks.map(block_chars).all(&mut take);
    let fits = content_fits
        && result
            .structured_content
            .as_ref()
            .is_none_or(|s| take(json_chars(s)));
    !fits
}

/// Cuts `result` to `max_chars` characters (see the module doc), then adds
/// the marker and, when `kept` is a file, its link. Returns what was left
/// out.
pub fn cut(result: &mut ToolCallResult, max_chars: usize, kept: &Kept) -> LeftOut {
    let mut out = LeftOut::default();
    let mut left = max_chars;
    let mut content = Vec::new();
    for block in result.content.take().into_iter().flatten() {
        if let Some(kept_block) = fit_block(block, &mut left, &mut out) {
            content.push(kept_block);
        }
    }
    if let Some(s) = result.structured_content.take() {
        let n = json_chars(&s);
        out.total += n;
        if n <= left {
            result.structured_content = Some(s);
        } else {
            out.chars += n;
            out.structured = true;
        }
    }
    cut_error_message(result, max_chars);
    if out.chars > 0 {
        content.push(text(marker(&out, kept)));
        if let Kept::File { uri, bytes } = kept {
            content.push(ToolResultContent::Resource(ToolResultResourceContent {
                uri: uri.clone(),
                size_hint: i64::try_from(*bytes).ok(),
                content_type: Some(SPILL_CONTENT_TYPE.to_owned()),
                nonce: None,
            }));
        }
    }
    result.content = (!content.is_empty()).then_some(content);
    out
}

/// One block within `left` characters: kept whole, cut (text), or left out
/// (`None`); `out` counts it.
fn fit_block(
    block: ToolResultContent,
    left: &mut usize,
    out: &mut LeftOut,
) -> Option<ToolResultContent> {
    let n = block_chars(&block);
    out.total += n;
    if n <= *left {
        *left -= n;
        return Some(block);
    }
    match block {
        ToolResultContent::Text(mut t) => {
            out.text = true;
            out.chars += n - *left;
            let kept = (*left > 0).then(|| {
                truncate_chars(&mut t.text, *left);
                ToolResultContent::Text(t)
            });
            *left = 0;
            kept
        }
        ToolResultContent::EmbeddedResource(_) => {
            out.chars += n;
            out.binary += 1;
            None
        }
        _ => {
            out.chars += n;
            out.other += 1;
            None
        }
    }
}

/// Characters a block puts into the chat state; an empty text block counts
/// as 1, so a result of countless empty blocks is bounded too.
fn block_chars(block: &ToolResultContent) -> usize {
    match block {
        ToolResultContent::Text(t) => t.text.chars().count().max(1),
        ToolResultContent::EmbeddedResource(ToolResultEmbeddedResourceContent {
            data,
            content_type,
        }) => data.chars().count() + content_type.chars().count(),
        other => json_chars(other),
    }
}

/// Characters of `value`'s JSON text.
fn json_chars<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.chars().count())
}

/// Whether `s` has at most `max` characters (stops counting past it).
fn chars_within(s: &str, max: usize) -> bool {
    s.len() <= max || s.chars().nth(max).is_none()
}

/// Keeps the first `chars` characters of `s`.
fn truncate_chars(s: &mut String, chars: usize) {
    if let Some((at, _)) = s.char_indices().nth(chars) {
        s.truncate(at);
    }
}

/// An `error.message` over `max_chars` cut to it, with `[… <n> characters
/// left out]`.
fn cut_error_message(result: &mut ToolCallResult, max_chars: usize) {
    let Some(Value::String(message)) = result.error.as_mut().and_then(|e| e.get_mut("message"))
    else {
        return;
    };
    if chars_within(message, max_chars) {
        return;
    }
    let n = message.chars().count() - max_chars;
    truncate_chars(message, max_chars);
    message.push_str(&format!("[… {} characters left out]", grouped(n)));
}

/// The marker text (see the module doc).
fn marker(out: &LeftOut, kept: &Kept) -> String {
    let mut what = Vec::new();
    if out.text {
        what.push("text".to_owned());
    }
    match out.binary {
        0 => {}
        1 => what.push("1 binary block".to_owned()),
        n => what.push(format!("{n} binary blocks")),
    }
    match out.other {
        0 => {}
        1 => what.push("1 other block".to_owned()),
        n => what.push(format!("{n} other blocks")),
    }
    if out.structured {
        what.push("structuredContent".to_owned());
    }
    let whole = match kept {
        Kept::File { uri, .. } => format!("the whole result is in {uri}"),
        Kept::Not(why) => format!("the whole result was not kept: {why}"),
    };
    format!(
        "[… {} of {} characters left out ({}); {whole}]",
        grouped(out.chars),
        grouped(out.total),
        what.join(", ")
    )
}

fn text(text: String) -> ToolResultContent {
    ToolResultContent::Text(ToolResultTextContent { text })
}

/// `n` with a comma between each group of three digits (`123,456`).
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
