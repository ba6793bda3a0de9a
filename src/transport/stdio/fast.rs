//! A typed fast path for `tools/call` results.
//!
//! rmcp decodes a server message as the untagged [`ServerJsonRpcMessage`]:
//! the whole line is first buffered into serde's `Content` tree, then
//! matched against `Request`, `Response`, `Notification` and `Error`, and a
//! response's `result` against the untagged [`ServerResult`]'s variants in
//! order, `CallToolResult` the 16th, each failed try building an error. For
//! a response `{"jsonrpc", "id", "result"}` (in any order, no other member)
//! whose `result` has only members `CallToolResult` reads (`content`,
//! `structuredContent`, `isError`, `resultType`, `_meta`), [`decode`] reads
//! the result straight into [`CallToolResult`] from the text, in one pass.
//!
//! Why that is the same answer: the `Response` shape is the only one of a
//! message with `result` and without `method` and `error`, and every
//! [`ServerResult`] variant before `CallToolResult` requires a member
//! outside that list (rmcp 3.11): `DiscoverResult` `supportedVersions`,
//! `InitializeResult` `protocolVersion`, `CompleteResult` `completion`,
//! `GetPromptResult` `messages`, `ListPromptsResult` `prompts`,
//! `ListResourcesResult` `resources`, `ListResourceTemplatesResult`
//! `resourceTemplates`, `ReadResourceResult` `contents`, `ListToolsResult`
//! `tools`, `ListSkillsResult` `skills`, `GetSkillResult` `skill`,
//! `ElicitResult` `action`, `CreateTaskResult` and `GetTaskResult` `taskId`,
//! except `SubscriptionsListenResult`, which requires only `resultType` and
//! an `_meta` holding `io.modelcontextprotocol/subscriptionId`: such a
//! result takes the full decode. The nesting limit is the parser's own, as
//! in the full decode: every value is read through the one parser (no
//! member is skipped unparsed). Anything else, and any error on the fast
//! path, falls back to the full decode, whose answer (or error) is rmcp's.
//! `tests` compares both decodes over every result kind.

use std::fmt;

use rmcp::model::{
    CallToolResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer as _};

/// The `_meta` key that makes a result a `SubscriptionsListenResult`.
const SUBSCRIPTION_ID_META_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Members of a result the fast path reads (those of `CallToolResult`).
const CALL_TOOL_RESULT_KEYS: [&str; 5] = [
    "content",
    "structuredContent",
    "isError",
    "resultType",
    "_meta",
];

/// Decodes one line (without `\n`, `\r` and byte order mark) as rmcp does:
/// a `tools/call` result on the fast path, anything else with
/// `serde_json::from_slice::<ServerJsonRpcMessage>`; a `tools/list` result
/// with `execution` members as the raw result
/// ([`crate::transport::raw_tools::keep_raw_result`]).
///
/// # Errors
/// The full decode's error when the line is not a message rmcp decodes.
pub fn decode(line: &[u8]) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    match call_tool_response(line) {
        Some(message) => Ok(message),
        None => full_decode(line).map(|m| crate::transport::raw_tools::keep_raw_result(line, m)),
    }
}

/// rmcp's own decode of a line.
///
/// # Errors
/// When the line is not a message rmcp decodes.
pub fn full_decode(line: &[u8]) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    serde_json::from_slice(line)
}

/// The line as a `tools/call` response, when it has that shape (see the
/// module documentation).
pub fn call_tool_response(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let (id, result) = de.deserialize_map(EnvelopeVisitor).ok()?;
    de.end().ok()?;
    let shadowed = result.result_type.is_some()
        && result
            .meta
            .as_ref()
            .is_some_and(|meta| meta.contains_key(SUBSCRIPTION_ID_META_KEY));
    if shadowed {
        return None;
    }
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}

/// The members of a JSON-RPC response object.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Result,
    #[serde(other)]
    Other,
}

/// Reads `{"jsonrpc":"2.0","id":…,"result":{…}}` (members in any order),
/// the result as a [`CallToolResult`]; fails on any other member.
struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = (RequestId, CallToolResult);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC response")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut version, mut id, mut result) = (None, None, None);
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc if version.is_none() => {
                    version = Some(map.next_value::<JsonRpcVersion2_0>()?);
                }
                Member::Id if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                Member::Result if result.is_none() => {
                    result = Some(map.next_value_seed(ResultSeed)?);
                }
                _ => return Err(de::Error::custom("not a plain response")),
            }
        }
        match (version, id, result) {
            (Some(_), Some(id), Some(result)) => Ok((id, result)),
            _ => Err(de::Error::custom("not a whole response")),
        }
    }
}

/// Reads a result object as a [`CallToolResult`] (its own `Deserialize`),
/// failing at the first member outside [`CALL_TOOL_RESULT_KEYS`].
struct ResultSeed;

impl<'de> DeserializeSeed<'de> for ResultSeed {
    type Value = CallToolResult;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ResultSeed {
    type Value = CallToolResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tools/call result")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        CallToolResult::deserialize(de::value::MapAccessDeserializer::new(KnownMembers(map)))
    }
}

/// A map whose keys must be in [`CALL_TOOL_RESULT_KEYS`].
struct KnownMembers<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for KnownMembers<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.0.next_key::<String>()? else {
            return Ok(None);
        };
        if !CALL_TOOL_RESULT_KEYS.contains(&key.as_str()) {
            return Err(de::Error::custom("not a tools/call result member"));
        }
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}
