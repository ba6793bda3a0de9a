//! The sandbox profile of a stdio server (issue 32): what it may read and
//! write, and where it may connect. Pure: the options as the app gives them
//! ([`SandboxOptions`], checked by [`SandboxOptions::new`]), the host
//! default and a server's own setting folded into one profile
//! ([`effective_profile`]), path entries expanded at each start
//! ([`expand_path`]) and host-name rules ([`HostRule`]). Applying a profile
//! is `transport::sandbox`'s job.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::vars::PluginVars;
use crate::error::{ErrorCode, HostError};
use crate::limits::{
    MAX_SANDBOX_HOSTS, MAX_SANDBOX_HOST_BYTES, MAX_SANDBOX_PATHS, MAX_SANDBOX_PATH_BYTES,
};

/// Where a sandboxed server may connect (JS `SandboxNetwork`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxNetwork {
    /// `'none'`: no TCP connection and no TCP listening socket.
    None,
    /// `'loopback'`: TCP through the host's proxy to loopback
    /// destinations only (`localhost`, `127.0.0.0/8`, `[::1]`).
    Loopback,
    /// `{allowHosts}`: TCP through the host's proxy to these hosts only.
    Hosts(Vec<HostRule>),
}

impl SandboxNetwork {
    /// Whether the server reaches the network through the host's proxy.
    pub fn uses_proxy(&self) -> bool {
        !matches!(self, Self::None)
    }

    /// Whether the proxy lets the server reach `host:port` (`host` as the
    /// client named it: a name, an IPv4 literal or a bracketed IPv6 one).
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = normalized_host(host);
        match self {
            Self::None => false,
            Self::Loopback => is_loopback_name(&host),
            Self::Hosts(rules) => rules.iter().any(|r| r.matches(&host, port)),
        }
    }
}

impl Serialize for SandboxNetwork {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::None => s.serialize_str("none"),
            Self::Loopback => s.serialize_str("loopback"),
            Self::Hosts(rules) => {
                let hosts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
                serde_json::json!({ "allowHosts": hosts }).serialize(s)
            }
        }
    }
}

/// One `allowHosts` entry: `example.com` (that name only), `*.example.com`
/// (its subdomains, not the name itself), an IPv4 literal or a bracketed
/// IPv6 literal (`[::1]`), each optionally with `:port` (any port without).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    /// The entry as given, lowercased.
    pub text: String,
    /// The name (without `*.`) or the literal (IPv6 with brackets).
    host: String,
    /// `*.`: subdomains only.
    wildcard: bool,
    /// Only this port; `None`: any.
    port: Option<u16>,
}

impl HostRule {
    /// Parses one entry.
    ///
    /// # Errors
    /// The reason, for the caller to prefix with the field: empty, too
    /// long, a scheme or path, a malformed name, label or port.
    pub fn parse(entry: &str) -> Result<Self, String> {
        if entry.is_empty() || entry.len() > MAX_SANDBOX_HOST_BYTES {
            return Err(format!(
                "a host name of 1 to {MAX_SANDBOX_HOST_BYTES} bytes"
            ));
        }
        let text = entry.to_ascii_lowercase();
        if text.contains("://") || text.contains('/') {
            return Err("a host name, not a URL (no scheme or path)".to_owned());
        }
        let (host, port) = split_port(&text)?;
        let (host, wildcard) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        let literal = host.starts_with('[') || host.parse::<IpAddr>().is_ok();
        if literal && wildcard {
            return Err("a wildcard (*.) applies to names, not IP addresses".to_owned());
        }
        if !literal {
            check_name(host)?;
        } else if host.starts_with('[') {
            let inner = host.trim_start_matches('[').trim_end_matches(']');
            if !host.ends_with(']') || inner.parse::<std::net::Ipv6Addr>().is_err() {
                return Err("an IPv6 address in brackets, e.g. [::1]".to_owned());
            }
        }
        let host = match host.parse::<std::net::Ipv6Addr>() {
            Ok(_) => format!("[{host}]"),
            Err(_) => host.to_owned(),
        };
        Ok(Self {
            host,
            text,
            wildcard,
            port,
        })
    }

    /// Whether `host` (normalized) and `port` match this rule.
    fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match self.wildcard {
            true => host
                .strip_suffix(self.host.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            false => host == self.host,
        }
    }
}

/// `host[:port]` of an entry; an IPv6 literal keeps its brackets.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let (host, port) = if let Some(end) = text.find(']') {
        let (host, rest) = text.split_at(end + 1);
        (host, rest.strip_prefix(':'))
    } else if text.matches(':').count() == 1 {
        let (host, port) = text.split_once(':').unwrap_or((text, ""));
        (host, Some(port))
    } else {
        (text, None)
    };
    let port = match port {
        None => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(format!("port {p:?} is not 1 to 65535")),
        },
    };
    Ok((host, port))
}

/// A DNS name: labels of 1 to 63 letters, digits and `-` (not at either
/// end), `_` allowed (service names), at most 253 bytes.
fn check_name(name: &str) -> Result<(), String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let bad_label = |l: &str| {
        l.is_empty()
            || l.len() > 63
            || l.starts_with('-')
            || l.ends_with('-')
            || !l
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.is_empty() || name.len() > 253 || name.split('.').any(bad_label) {
        return Err(format!(
            "{name:?} is not a host name (letters, digits, '-' and '.'; a leading '*.' for subdomains)"
        ));
    }
    Ok(())
}

/// A host as a client named it, lowercased, without a trailing dot.
fn normalized_host(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    host.strip_suffix('.').map(str::to_owned).unwrap_or(host)
}

/// `localhost` (and its subdomains), `127.0.0.0/8` or `[::1]`.
pub fn is_loopback_name(host: &str) -> bool {
    let host = normalized_host(host);
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a host that cannot be fully sandboxed still runs (`enforce`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// `'best-effort'` (default): what the platform cannot enforce is left
    /// out, reported in `serverInfo.sandbox.unenforced` and a `warn` log.
    #[default]
    BestEffort,
    /// `'required'`: the start fails `sandbox_unavailable` unless every
    /// part of the profile is enforced.
    Required,
}

/// Sandbox options as the app gives them (the host's `sandbox` option, a
/// server's `sandbox` object): each field left out falls back to the
/// host's, then to the built-in default ([`effective_profile`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    /// `filesystem.read`: more readable paths.
    pub read: Option<Vec<String>>,
    /// `filesystem.write`: more writable (and readable) paths.
    pub write: Option<Vec<String>>,
    /// `network`.
    pub network: Option<SandboxNetwork>,
    /// `enforce`.
    pub enforce: Option<Enforcement>,
}

impl SandboxOptions {
    /// Checks the path lists (see [`check_path_entry`]) and bounds.
    ///
    /// # Errors
    /// `invalid_argument`, the message starting with the field
    /// (`sandbox.filesystem.read[2]: …`).
    pub fn new(
        read: Option<Vec<String>>,
        write: Option<Vec<String>>,
        network: Option<SandboxNetwork>,
        enforce: Option<Enforcement>,
    ) -> Result<Self, HostError> {
        for (field, list) in [("read", &read), ("write", &write)] {
            let Some(list) = list else { continue };
            let bad = |what: String| {
                let msg = format!("sandbox.filesystem.{field}{what}");
                HostError::new(ErrorCode::InvalidArgument, msg)
            };
            if list.len() > MAX_SANDBOX_PATHS {
                return Err(bad(format!(": at most {MAX_SANDBOX_PATHS} paths")));
            }
            for (i, entry) in list.iter().enumerate() {
                check_path_entry(entry).map_err(|m| bad(format!("[{i}]: {m}")))?;
            }
        }
        Ok(Self {
            read,
            write,
            network,
            enforce,
        })
    }
}

/// Parses the `network` option: `'none'`, `'loopback'`, or the entries
/// of `allowHosts`.
///
/// # Errors
/// `invalid_argument` naming `sandbox.network` or the entry.
pub fn parse_network(
    mode: Option<&str>,
    hosts: Option<&[String]>,
) -> Result<SandboxNetwork, HostError> {
    let bad = |msg: String| HostError::new(ErrorCode::InvalidArgument, msg);
    match (mode, hosts) {
        (Some("none"), None) => Ok(SandboxNetwork::None),
        (Some("loopback"), None) => Ok(SandboxNetwork::Loopback),
        (None, Some(hosts)) => {
            if hosts.len() > MAX_SANDBOX_HOSTS {
                let msg = format!("sandbox.network.allowHosts: at most {MAX_SANDBOX_HOSTS} hosts");
                return Err(bad(msg));
            }
            let rule = |(i, h): (usize, &String)| {
                HostRule::parse(h).map_err(|m| bad(format!("sandbox.network.allowHosts[{i}]: {m}")))
            };
            hosts
                .iter()
                .enumerate()
                .map(rule)
                .collect::<Result<_, _>>()
                .map(SandboxNetwork::Hosts)
        }
        (Some(other), _) => Err(bad(format!(
            "sandbox.network: {other:?} is not 'none', 'loopback' or {{allowHosts: [...]}}"
        ))),
        (None, None) => Err(bad(
            "sandbox.network: 'none', 'loopback' or {allowHosts: [...]}".to_owned(),
        )),
    }
}

/// A server's own sandbox setting (`addServer` / plugin override `sandbox`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SandboxSetting {
    /// Not given: the host's default (`McpHostOptions.sandbox`).
    #[default]
    Inherit,
    /// `false`: never sandboxed.
    Off,
    /// `true` (no options) or an options object, laid over the host's.
    On(SandboxOptions),
}

/// The profile a server runs with: every field decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxProfile {
    /// Extra readable path entries (unexpanded).
    pub read: Vec<String>,
    /// Extra writable path entries (unexpanded).
    pub write: Vec<String>,
    /// Where it may connect.
    pub network: SandboxNetwork,
    /// What happens when the platform cannot enforce it all.
    pub enforce: Enforcement,
}

impl SandboxProfile {
    /// The profile as the customization's `_meta["ahp-mcp-host/sandbox"]`
    /// shows it: `{filesystem: {read, write}, network, enforce}`, the
    /// path entries as given (unexpanded).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "filesystem": {"read": self.read, "write": self.write},
            "network": self.network,
            "enforce": self.enforce,
        })
    }
}

/// The profile of a server from its own setting and the host default
/// (`None`: the host sandboxes nothing by default): `Off` or `Inherit`
/// of no host default is unsandboxed; otherwise each field is the
/// server's, else the host's, else the built-in default (no extra
/// paths, network `none`, `best-effort`).
pub fn effective_profile(
    server: &SandboxSetting,
    host: Option<&SandboxOptions>,
) -> Option<SandboxProfile> {
    let own = match server {
        SandboxSetting::Off => return None,
        SandboxSetting::Inherit => host?,
        SandboxSetting::On(own) => own,
    };
    let pick = |f: fn(&SandboxOptions) -> Option<&Vec<String>>| {
        f(own)
            .or_else(|| host.and_then(f))
            .cloned()
            .unwrap_or_default()
    };
    Some(SandboxProfile {
        read: pick(|o| o.read.as_ref()),
        write: pick(|o| o.write.as_ref()),
        network: own
            .network
            .clone()
            .or_else(|| host.and_then(|h| h.network.clone()))
            .unwrap_or(SandboxNetwork::None),
        enforce: own
            .enforce
            .or_else(|| host.and_then(|h| h.enforce))
            .unwrap_or_default(),
    })
}

const ROOT_VAR: &str = "${PLUGIN_ROOT}";
const DATA_VAR: &str = "${PLUGIN_DATA}";

/// Checks one path entry: an absolute path, `~` or `~/…` (the user's
/// home), or `${PLUGIN_ROOT}` / `${PLUGIN_DATA}` optionally followed by
/// `/…`; at most [`MAX_SANDBOX_PATH_BYTES`].
///
/// # Errors
/// The reason, for the caller to prefix with the field.
pub fn check_path_entry(entry: &str) -> Result<(), String> {
    if entry.is_empty() || entry.len() > MAX_SANDBOX_PATH_BYTES || entry.contains('\0') {
        return Err(format!(
            "a path of 1 to {MAX_SANDBOX_PATH_BYTES} bytes without NUL"
        ));
    }
    let rest_ok = |rest: &str| rest.is_empty() || rest.starts_with(['/', '\\']);
    let known = Path::new(entry).is_absolute()
        || entry == "~"
        || entry.starts_with("~/")
        || entry.strip_prefix(ROOT_VAR).is_some_and(rest_ok)
        || entry.strip_prefix(DATA_VAR).is_some_and(rest_ok);
    match known {
        true => Ok(()),
        false => Err(format!(
            "{entry:?} is not an absolute path, ~/…, ${{PLUGIN_ROOT}}/… or ${{PLUGIN_DATA}}/…"
        )),
    }
}

/// The path of a checked entry for one start: `~` → `home` (no home: the
/// entry is dropped, `None`), the plugin variables → `vars`.
pub fn expand_path(entry: &str, vars: &PluginVars, home: Option<&Path>) -> Option<PathBuf> {
    let under = |base: &Path, rest: &str| {
        let rest = rest.trim_start_matches(['/', '\\']);
        match rest.is_empty() {
            true => base.to_path_buf(),
            false => base.join(rest),
        }
    };
    if let Some(rest) = entry.strip_prefix('~') {
        return home.map(|h| under(h, rest));
    }
    if let Some(rest) = entry.strip_prefix(ROOT_VAR) {
        return Some(under(&vars.plugin_root, rest));
    }
    if let Some(rest) = entry.strip_prefix(DATA_VAR) {
        return Some(under(&vars.plugin_data, rest));
    }
    Some(PathBuf::from(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(list: &[&str]) -> SandboxNetwork {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        parse_network(None, Some(&list)).unwrap()
    }

    #[test]
    fn host_rules_match_names_wildcards_literals_and_ports() {
        let net = hosts(&["Example.com", "*.api.test", "127.0.0.1:8080", "[::1]"]);
        assert!(net.allows("example.com", 443));
        assert!(net.allows("EXAMPLE.COM.", 80));
        assert!(!net.allows("www.example.com", 443));
        assert!(net.allows("a.api.test", 1) && net.allows("a.b.api.test", 1));
        assert!(!net.allows("api.test", 1) && !net.allows("xapi.test", 1));
        assert!(net.allows("127.0.0.1", 8080) && !net.allows("127.0.0.1", 8081));
        assert!(net.allows("[::1]", 9));
        assert!(!SandboxNetwork::None.allows("localhost", 80));
        let loopback = SandboxNetwork::Loopback;
        assert!(loopback.allows("localhost", 80) && loopback.allows("127.3.2.1", 1));
        assert!(loopback.allows("[::1]", 1) && !loopback.allows("example.com", 80));
    }

    #[test]
    fn malformed_hosts_and_modes_name_the_field() {
        for bad in [
            "",
            "https://x.test",
            "x.test/p",
            "-x.test",
            "a..b",
            "*.1.2.3.4",
            "x:0",
            "x:70000",
            "[::1",
            "a b",
        ] {
            let list = vec![bad.to_owned()];
            let err = parse_network(None, Some(&list)).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
            assert!(
                err.message.starts_with("sandbox.network.allowHosts[0]: "),
                "{}",
                err.message
            );
        }
        let err = parse_network(Some("internet"), None).unwrap_err();
        assert!(
            err.message.starts_with("sandbox.network: "),
            "{}",
            err.message
        );
    }

    #[test]
    fn path_entries_are_absolute_home_or_plugin_variables() {
        for ok in [
            "/etc/x",
            "~",
            "~/.config/x",
            "${PLUGIN_ROOT}",
            "${PLUGIN_DATA}/cache",
        ] {
            assert!(check_path_entry(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "rel/path",
            "~user/x",
            "${HOME}/x",
            "${PLUGIN_ROOTX}",
            "$PLUGIN_DATA",
        ] {
            assert!(check_path_entry(bad).is_err(), "{bad}");
        }
        let list = Some(vec!["/ok".to_owned(), "nope".to_owned()]);
        let err = SandboxOptions::new(None, list, None, None).unwrap_err();
        assert!(
            err.message.starts_with("sandbox.filesystem.write[1]: "),
            "{}",
            err.message
        );
        let vars = PluginVars {
            plugin_root: "/r".into(),
            plugin_data: "/d".into(),
        };
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            expand_path("~/.npm", &vars, home),
            Some("/home/u/.npm".into())
        );
        assert_eq!(expand_path("~", &vars, None), None);
        assert_eq!(
            expand_path("${PLUGIN_DATA}/c", &vars, home),
            Some("/d/c".into())
        );
        assert_eq!(
            expand_path("${PLUGIN_ROOT}", &vars, home),
            Some("/r".into())
        );
    }

    #[test]
    fn a_server_setting_lays_over_the_host_default() {
        let host = SandboxOptions {
            read: Some(vec!["/h".into()]),
            network: Some(SandboxNetwork::Loopback),
            enforce: Some(Enforcement::Required),
            ..Default::default()
        };
        assert_eq!(effective_profile(&SandboxSetting::Inherit, None), None);
        assert_eq!(effective_profile(&SandboxSetting::Off, Some(&host)), None);
        let inherited = effective_profile(&SandboxSetting::Inherit, Some(&host)).unwrap();
        assert_eq!(inherited.read, ["/h"]);
        assert_eq!(inherited.network, SandboxNetwork::Loopback);
        let own = SandboxOptions {
            read: Some(vec!["/s".into()]),
            network: Some(SandboxNetwork::None),
            ..Default::default()
        };
        let laid = effective_profile(&SandboxSetting::On(own), Some(&host)).unwrap();
        assert_eq!(laid.read, ["/s"]);
        assert_eq!(laid.network, SandboxNetwork::None);
        assert_eq!(laid.enforce, Enforcement::Required);
        let plain = effective_profile(&SandboxSetting::On(Default::default()), None).unwrap();
        assert_eq!(
            (plain.network, plain.enforce),
            (SandboxNetwork::None, Enforcement::BestEffort)
        );
    }
}
