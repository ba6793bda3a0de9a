//! `importConfig` of [`NativeHost`] and `resolveImported` (issue 30): other
//! hosts' MCP configurations through the core's `config::import`.

use std::collections::BTreeMap;

use ahp_mcp_host::config::import::{resolve_entry, ImportFormat, Imported, ImportedEntry};
use ahp_mcp_host::error::{ErrorCode, HostError, HostResult};
use ahp_mcp_host::host::ImportSource;
use napi_derive::napi;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{parse, respond, run, NativeHost};

/// `importConfig` options as JS gives them (`resolve` stays in JS).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsImportArgs {
    format: String,
    text: Option<String>,
    path: Option<String>,
    file: Option<String>,
}

/// One imported server, the app's values for its variables, the ids of
/// the secret ones, and the most text (bytes) the resolved entry may hold.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsResolveArgs {
    name: String,
    config: Value,
    variables: Vec<String>,
    values: BTreeMap<String, String>,
    #[serde(default)]
    secret: Vec<String>,
    docker_options: Option<usize>,
    max_bytes: usize,
}

/// `importConfig`'s answer: the import, and the host's bounds on the JS
/// resolve (taken off by `lib/host/import.js`): the time for all of the
/// resolver's answers (`limits.importResolveTimeoutMs`) and the text the
/// resolved servers may hold together (`limits.maxConfigFileBytes`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsImported {
    #[serde(flatten)]
    imported: Imported,
    resolve_timeout_ms: u64,
    resolved_max_bytes: usize,
}

fn invalid(message: String) -> HostError {
    HostError::new(ErrorCode::InvalidArgument, message)
}

/// The format and source of `args`.
fn source_of(args: JsImportArgs) -> HostResult<(ImportFormat, ImportSource)> {
    let format = ImportFormat::from_name(&args.format).ok_or_else(|| {
        let names: Vec<&str> = ImportFormat::ALL.iter().map(|f| f.name()).collect();
        invalid(format!(
            "options.format: must be one of {}",
            names.join(", ")
        ))
    })?;
    let source = match (args.text, args.path) {
        (Some(text), None) => ImportSource::Text {
            text,
            file: args.file.unwrap_or_else(|| "<text>".to_owned()),
        },
        (None, Some(path)) => ImportSource::Path(path.into()),
        _ => {
            return Err(invalid(
                "options: give exactly one of text and path".to_owned(),
            ))
        }
    };
    Ok((format, source))
}

#[napi]
impl NativeHost {
    /// `importConfig(optionsJson)` → response JSON with the `ImportResult`.
    #[napi]
    pub async fn import_config(&self, options_json: String) -> String {
        let host = self.host.clone();
        run(async move {
            let (format, source) = source_of(parse::<JsImportArgs>("options", &options_json)?)?;
            let imported = host.import_config(format, source).await?;
            Ok(JsImported {
                imported,
                resolve_timeout_ms: host.import_resolve_timeout_ms(),
                resolved_max_bytes: host.import_resolved_max_bytes(),
            })
        })
        .await
    }
}

/// `resolveImported(argsJson)` → response JSON with `{config, secrets,
/// bytes}`: the server's entry, its variables replaced by the app's
/// values, the values of its secret variables, and the text it holds
/// (`invalid_entry` naming the missing variable, the bound or the broken
/// field; never a value).
#[napi(catch_unwind)]
pub fn resolve_imported(args_json: String) -> String {
    respond(parse::<JsResolveArgs>("server", &args_json).and_then(|a| {
        let entry = ImportedEntry {
            name: &a.name,
            config: &a.config,
            variables: &a.variables,
            docker_options: a.docker_options,
        };
        resolve_entry(entry, &a.values, &a.secret, a.max_bytes)
            .map_err(|m| HostError::new(ErrorCode::InvalidEntry, m))
    }))
}
