//! Whether a secret variable would land in an imported entry's URL scheme,
//! userinfo, host or port (a host is shown, lowercased, wherever the
//! server is named: in logs, the state, the server's id).
//!
//! The URL is read as it will be used, by the `url` crate (which also
//! reads `https:/h`, `https:///h` and `https:/\h` as host `h`): each secret
//! variable's placeholder is replaced by a unique ASCII marker, every other
//! variable by its value, and the parsed URL's parts are searched for the
//! markers. A URL that does not parse with the markers in it, or that is
//! not `http`/`https` (a non-special URL's path can become a host once the
//! real value is in), is refused when it holds any secret variable.

use std::collections::BTreeMap;

use serde_json::Value;

/// The first secret variable (of `variables`, ids in `secret`) that the URL
/// of `config` (values of the other variables from `values`) would put
/// into its scheme, userinfo, host or port; `None` when there is no URL, no
/// secret variable in it, or a non-secret variable has no value (that is
/// refused on its own). `replaced_all` puts values into a text: the
/// resolver's own pass, `None` when a variable has no value.
pub(super) fn secret_in_url_head<'v>(
    config: &Value,
    (variables, values, secret): (&'v [String], &BTreeMap<String, String>, &[String]),
    replaced_all: impl Fn(&str, &[&str], &BTreeMap<String, String>) -> Option<String>,
) -> Option<&'v str> {
    let url = config.get("url")?.as_str()?;
    let secrets: Vec<&'v String> = variables.iter().filter(|id| secret.contains(id)).collect();
    if secrets.is_empty() {
        return None;
    }
    // A prefix the URL does not hold, so a marker can only come from a
    // replaced placeholder.
    let mut prefix = String::from("zqsecretq");
    while url.to_ascii_lowercase().contains(&prefix) {
        prefix.push('q');
    }
    let marker = |i: usize| format!("{prefix}{i}x");
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for id in variables {
        match secrets.iter().position(|s| *s == id) {
            Some(i) => {
                map.insert(id.clone(), marker(i));
            }
            None => {
                if let Some(v) = values.get(id) {
                    map.insert(id.clone(), v.clone());
                }
            }
        }
    }
    let ids: Vec<&str> = variables.iter().map(String::as_str).collect();
    // A variable without a value is refused on its own, after this.
    let text = replaced_all(url, &ids, &map)?;
    let present: Vec<usize> = (0..secrets.len())
        .filter(|&i| text.contains(&marker(i)))
        .collect();
    let first = present.first()?;
    let Some(parsed) = url::Url::parse(&text)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
    else {
        return Some(secrets[*first].as_str());
    };
    let head = [
        parsed.scheme().to_owned(),
        parsed.username().to_owned(),
        parsed.password().unwrap_or("").to_owned(),
        parsed.host_str().unwrap_or("").to_owned(),
        parsed.port().map(|p| p.to_string()).unwrap_or_default(),
    ]
    .join(" ")
    .to_ascii_lowercase();
    present
        .into_iter()
        .find(|&i| head.contains(&marker(i)))
        .map(|i| secrets[i].as_str())
}
