//! The `sandbox` option (host default, `addServer`, a plugin's server
//! overrides): `true`, `false` or `{filesystem?: {read?, write?},
//! network?: 'none' | 'loopback' | {allowHosts}, enforce?}`, read from
//! its JSON value with messages naming the field (`sandbox.network: …`,
//! `sandbox.filesystem.read[2]: …`) and converted into the core's
//! [`SandboxOptions`] / [`SandboxSetting`].

use ahp_mcp_host::config::sandbox::{parse_network, Enforcement, SandboxOptions, SandboxSetting};
use ahp_mcp_host::error::{ErrorCode, HostError};
use ahp_mcp_host::host::field_error;
use serde::Deserialize;
use serde_json::Value;

/// `SandboxOptions` as JS gives it (`network` read by hand).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsSandboxOptions {
    #[serde(default)]
    filesystem: Option<JsSandboxFs>,
    #[serde(default)]
    network: Option<Value>,
    #[serde(default)]
    enforce: Option<JsEnforce>,
}

/// `SandboxOptions.filesystem`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsSandboxFs {
    #[serde(default)]
    read: Option<Vec<String>>,
    #[serde(default)]
    write: Option<Vec<String>>,
}

/// `SandboxOptions.enforce`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum JsEnforce {
    BestEffort,
    Required,
}

fn invalid(message: String) -> HostError {
    HostError::new(ErrorCode::InvalidArgument, message)
}

/// The options of an object `value` (`None` for `true`, `false` handled
/// by the callers).
///
/// # Errors
/// `invalid_argument` whose message starts with `sandbox` and the field.
fn options(value: Value) -> Result<SandboxOptions, HostError> {
    let js: JsSandboxOptions = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        invalid(field_error("sandbox", &path, &e.into_inner().to_string()))
    })?;
    let network = match js.network {
        None => None,
        Some(Value::String(mode)) => Some(parse_network(Some(&mode), None)?),
        Some(Value::Object(mut o)) if o.len() == 1 && o.contains_key("allowHosts") => {
            let hosts: Vec<String> = serde_json::from_value(
                o.remove("allowHosts").unwrap_or_default(),
            )
            .map_err(|_| {
                invalid("sandbox.network.allowHosts: must be an array of strings".to_owned())
            })?;
            Some(parse_network(None, Some(&hosts))?)
        }
        Some(_) => {
            let msg = "sandbox.network: must be 'none', 'loopback' or {allowHosts: string[]}";
            return Err(invalid(msg.to_owned()));
        }
    };
    let (read, write) = js.filesystem.map_or((None, None), |f| (f.read, f.write));
    let enforce = js.enforce.map(|e| match e {
        JsEnforce::BestEffort => Enforcement::BestEffort,
        JsEnforce::Required => Enforcement::Required,
    });
    SandboxOptions::new(read, write, network, enforce)
}

/// The host option: `false` / absent → no default sandbox, `true` → the
/// built-in profile, an object → that profile.
///
/// # Errors
/// `invalid_argument` naming the field (see [`options`]).
pub(crate) fn host_sandbox(value: Option<Value>) -> Result<Option<SandboxOptions>, HostError> {
    match value {
        None | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(SandboxOptions::default())),
        Some(v @ Value::Object(_)) => options(v).map(Some),
        Some(_) => Err(not_a_setting()),
    }
}

/// A server's option: absent → the host's, `false` → off, `true` → on
/// (the host's profile or the built-in one), an object → laid over the
/// host's.
///
/// # Errors
/// `invalid_argument` naming the field (see [`options`]).
pub(crate) fn server_sandbox(value: Option<Value>) -> Result<SandboxSetting, HostError> {
    match value {
        None => Ok(SandboxSetting::Inherit),
        Some(Value::Bool(false)) => Ok(SandboxSetting::Off),
        Some(Value::Bool(true)) => Ok(SandboxSetting::On(SandboxOptions::default())),
        Some(v @ Value::Object(_)) => options(v).map(SandboxSetting::On),
        Some(_) => Err(not_a_setting()),
    }
}

fn not_a_setting() -> HostError {
    invalid("sandbox: must be a boolean or an object (SandboxOptions)".to_owned())
}
