//! Skills (SEP-2640, `io.modelcontextprotocol/skills`): `listSkills` and
//! `loadSkill`.
//!
//! `list_skills` answers from the entries each server listed after connect
//! ([`crate::mcp::skills`]); it sends nothing. `load_skill` is the
//! host's skill-loading path (SEP-2640 "Reading Skill Content",
//! "Integrity and Verification"):
//!
//! 1. the entry: the server's listed one for `uri`, else `skills/get`
//!    (a skill absent from a partial listing is still loadable); an entry
//!    that breaks the spec's rules or limits fails `invalid_entry`;
//! 2. an entry whose `resources` is `"dynamic"` fails `not_supported`:
//!    such a skill offers no content integrity and cannot be bound to
//!    what was listed, so this host declines to load it (SEP-2640 allows
//!    it); it is listed, not published;
//! 3. `SKILL.md` is read first (`resources/read`), its size and `sha256:`
//!    digest checked against the entry, then its YAML frontmatter parsed
//!    (bounded, see [`crate::skills::frontmatter`]) and compared field by
//!    field with the entry's `frontmatter`; any mismatch fails
//!    `skill_verification_failed` naming the file, and no other file is read;
//! 4. each other file of the manifest, in manifest order, read and checked
//!    the same way (size and digest); only listed files are ever read.
//!
//! The digest covers the raw bytes: a `text` content's UTF-8 bytes, a
//! `blob`'s base64-decoded bytes.

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult};
use crate::skills::content::{file_content, verify, FileContent};
use crate::skills::{entry_of, frontmatter, ListedSkill};
use rmcp::model::{Skill, SkillResource, SkillResources};

impl Host {
    /// The skill entries of server `server_id` (every server's, by server
    /// id, when `None`), as listed after connect: `SkillEntry` objects
    /// (`{serverId, uri, name, description, frontmatter, resources,
    /// problem?}`). Sends nothing.
    ///
    /// # Errors
    /// `not_found` (no such server), `disposed`.
    pub fn list_skills(&self, server_id: Option<&str>) -> HostResult<Vec<Value>> {
        self.check_live()?;
        let servers = match server_id {
            Some(id) => {
                self.server(id)?;
                vec![(id.to_owned(), self.shared.skills().of(id))]
            }
            None => self.shared.skills().all(),
        };
        Ok(servers
            .iter()
            .flat_map(|(id, entries)| entries.iter().map(move |e| e.to_json(id)))
            .collect())
    }

    /// Loads skill `uri` of server `server_id` (see the module doc): the
    /// `LoadedSkill` `{serverId, uri, name, frontmatter, files: [{uri, size,
    /// digest, mimeType?, text | blob}]}`, `SKILL.md` first.
    ///
    /// # Errors
    /// `not_found` (no such server; the server does not serve `uri`:
    /// `skills/get` answered -32602), `server_not_ready`, `not_supported`
    /// (the server did not declare the skills extension; a `"dynamic"`
    /// skill), `invalid_entry` (the entry breaks SEP-2640's rules or
    /// limits), `skill_verification_failed` (size, digest or frontmatter;
    /// `data` `{serverId, uri, file, reason}`), and those of
    /// `readResource` for a file read (`protocol_error`, `timeout`,
    /// `limit_exceeded`, `cancelled`, `disposed`, …).
    pub async fn load_skill(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        let skill = self.skill_entry(server_id, uri, abort).await?;
        let SkillResources::Files(files) = &skill.resources else {
            return Err(HostError::new(
                ErrorCode::NotSupported,
                format!(
                    "skill {uri} of server {server_id} has \"dynamic\" resources (no digests); \
                     this host loads only skills with a file manifest"
                ),
            ));
        };
        let loader = Loader {
            host: self,
            server_id,
            uri,
            abort,
        };
        let main = files.iter().find(|f| f.uri == skill.uri);
        let main = main.ok_or_else(|| invalid(server_id, uri, "SKILL.md is not listed"))?;
        let content = loader.read(main).await?;
        loader.check_frontmatter(&skill, &content)?;
        let mut out = vec![file_json(main, &content)];
        for file in files.iter().filter(|f| f.uri != skill.uri) {
            let content = loader.read(file).await?;
            out.push(file_json(file, &content));
        }
        Ok(json!({
            "serverId": server_id,
            "uri": skill.uri,
            "name": skill.frontmatter.name,
            "frontmatter": skill.frontmatter,
            "files": out,
        }))
    }

    /// The entry for `uri`: the listed one, else `skills/get`'s.
    async fn skill_entry(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Skill> {
        let conn = self.ready_connection(server_id)?;
        let declared = conn.peer_info();
        if !declared.is_some_and(|i| i.capabilities.supports_skills()) {
            return Err(HostError::new(
                ErrorCode::NotSupported,
                format!(
                    "server {server_id} did not declare the io.modelcontextprotocol/skills \
                     extension; no skill was loaded"
                ),
            ));
        }
        let listed = self.shared.skills().of(server_id);
        let entry = match listed.iter().find(|e| e.uri == uri) {
            Some(e) => e.clone(),
            None => self.get_skill(server_id, uri, abort).await?,
        };
        match (entry.skill, entry.problem) {
            (Some(skill), None) => Ok(skill),
            (_, problem) => Err(invalid(
                server_id,
                uri,
                problem.as_deref().unwrap_or("not a skill entry"),
            )),
        }
    }

    /// `skills/get` for `uri`, checked like a listed entry.
    async fn get_skill(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<ListedSkill> {
        let result = self
            .request(server_id, "skills/get", json!({ "uri": uri }), abort)
            .await
            .map_err(|e| match &e.detail {
                ErrorDetail::JsonRpc { code: -32602, .. } => HostError {
                    code: ErrorCode::NotFound,
                    message: format!("server {server_id} serves no skill at {uri}"),
                    detail: e.detail.clone(),
                },
                _ => e,
            })?;
        let raw = result.get("skill").cloned().unwrap_or(Value::Null);
        let entry = entry_of(raw);
        if entry.uri != uri {
            return Err(invalid(server_id, uri, "skills/get answered another skill"));
        }
        Ok(entry)
    }
}

/// One load in progress: where its reads go.
struct Loader<'a> {
    host: &'a Host,
    server_id: &'a str,
    uri: &'a str,
    abort: Option<&'a CancellationToken>,
}

impl Loader<'_> {
    /// Reads listed `file` and checks its size and digest.
    async fn read(&self, file: &SkillResource) -> HostResult<FileContent> {
        let (server_id, uri) = (self.server_id, self.uri);
        let result = self
            .host
            .read_resource(server_id, &file.uri, self.abort)
            .await
            .map_err(|e| HostError {
                message: format!(
                    "loading skill {uri} of server {server_id}: reading {}: {}",
                    file.uri, e.message
                ),
                ..e
            })?;
        let content = file_content(&result, &file.uri).map_err(|what| {
            HostError::new(
                ErrorCode::ProtocolError,
                format!(
                    "loading skill {uri} of server {server_id}: {}: {what}",
                    file.uri
                ),
            )
        })?;
        verify(file, &content.bytes)
            .map_err(|(reason, what)| self.failed(&file.uri, reason, &what))?;
        Ok(content)
    }

    /// The file's frontmatter, parsed and compared with the entry's.
    fn check_frontmatter(&self, skill: &Skill, content: &FileContent) -> HostResult<()> {
        let fail = |what: &str| self.failed(&skill.uri, "frontmatter", what);
        let text = std::str::from_utf8(&content.bytes).map_err(|_| fail("it is not UTF-8"))?;
        let file = frontmatter::parse(text).map_err(|e| fail(&e))?;
        let entry = match serde_json::to_value(&skill.frontmatter) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        frontmatter::compare(&entry, &file).map_err(|e| fail(&format!("frontmatter {e}")))
    }

    fn failed(&self, file: &str, reason: &'static str, what: &str) -> HostError {
        HostError::new(
            ErrorCode::SkillVerificationFailed,
            format!(
                "skill {} of server {}: {file} failed verification ({reason}): {what}; \
                 the skill was not loaded",
                self.uri, self.server_id
            ),
        )
        .with_detail(ErrorDetail::Skill {
            server_id: self.server_id.to_owned(),
            uri: self.uri.to_owned(),
            file: file.to_owned(),
            reason,
        })
    }
}

fn invalid(server_id: &str, uri: &str, what: &str) -> HostError {
    HostError::new(
        ErrorCode::InvalidEntry,
        format!("skill {uri} of server {server_id} cannot be loaded: {what}"),
    )
}

fn file_json(file: &SkillResource, content: &FileContent) -> Value {
    use base64::Engine;
    let mut out = json!({ "uri": file.uri, "size": file.size, "digest": file.digest });
    if let Some(mime) = &content.mime_type {
        out["mimeType"] = json!(mime);
    }
    if content.is_text {
        out["text"] = json!(String::from_utf8_lossy(&content.bytes));
    } else {
        let blob = base64::engine::general_purpose::STANDARD.encode(&content.bytes);
        out["blob"] = json!(blob);
    }
    out
}
