//! URL-mode elicitation (SEP-1036; MCP 2025-11-25 and 2026-07-28 "Client
//! Features › Elicitation › URL Mode"), the pure parts: the checked request
//! ([`UrlElicitation`]: an `http`/`https` URL without userinfo, at most
//! [`MAX_ELICITATION_URL_BYTES`], and its origin), the `data.elicitations`
//! of a `-32042` "URL elicitation required" error ([`required`]), the
//! `elicitationId` of `notifications/elicitation/complete`
//! ([`completed_id`]), and what of such an error may be shown
//! ([`hidden_in_required`], [`hidden_in_error_data`]).
//!
//! The host never opens or fetches the URL ("Safe URL Handling": no
//! pre-fetch, no opening without consent). The URL goes only where the user
//! must see it to open it: the AHP `ChatInputRequest.url` and the app's
//! `elicitation` handler. Its query may carry secrets (a one-time code, a
//! session binding), so error texts, error `data` and logs name the
//! [`UrlElicitation::origin`] only.

use rmcp::model::ElicitRequestParams;
use serde_json::{json, Value};
use url::Url;

use crate::limits::{MAX_ELICITATION_URL_BYTES, MAX_REQUIRED_URL_ELICITATIONS};

/// The JSON-RPC error code of `URLElicitationRequiredError` (MCP
/// 2025-11-25 "Elicitation › URL Elicitation Required Error"): `-32042`.
pub const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The method of the completion notification (MCP 2025-11-25 "Elicitation ›
/// Completion Notifications for URL Mode Elicitation").
pub const ELICITATION_COMPLETE_METHOD: &str = "notifications/elicitation/complete";

/// A checked URL-mode elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlElicitation {
    /// The server's `message` (why the user should open the URL).
    pub message: String,
    /// The URL exactly as the server sent it (checked by [`UrlElicitation::check`]).
    pub url: String,
    /// Its origin, `scheme://host[:port]`, the host in ASCII (an IDN shows
    /// as Punycode, `xn--…`), as the WHATWG URL parser serializes it.
    pub origin: String,
    /// The server's `elicitationId` (empty at 2026-07-28, which dropped it).
    pub elicitation_id: String,
}

impl UrlElicitation {
    /// Checks a URL-mode elicitation: `url` must parse, be `http` or
    /// `https`, carry no userinfo (`user:password@`, which can disguise the
    /// site) and be at most [`MAX_ELICITATION_URL_BYTES`].
    ///
    /// # Errors
    /// Why it is refused, naming the field, never the URL.
    pub fn check(message: &str, url: &str, elicitation_id: &str) -> Result<Self, String> {
        if url.len() > MAX_ELICITATION_URL_BYTES {
            return Err(format!(
                "url is {} bytes, over the host's bound of {MAX_ELICITATION_URL_BYTES} \
                 (MAX_ELICITATION_URL_BYTES)",
                url.len()
            ));
        }
        let parsed = Url::parse(url).map_err(|e| format!("url is not a valid URL ({e})"))?;
        let scheme = parsed.scheme();
        if scheme != "http" && scheme != "https" {
            let shown: String = scheme.chars().take(32).collect();
            return Err(format!(
                "url has scheme {shown:?}: only http and https URLs are shown to the user"
            ));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(
                "url carries userinfo (user:password@), which can disguise the site: \
                        refused"
                    .to_owned(),
            );
        }
        Ok(Self {
            message: message.to_owned(),
            url: url.to_owned(),
            origin: parsed.origin().ascii_serialization(),
            elicitation_id: elicitation_id.to_owned(),
        })
    }

    /// The URL-mode elicitation of rmcp's typed `elicitation/create`
    /// params; `None` for form mode.
    ///
    /// # Errors
    /// See [`UrlElicitation::check`].
    pub fn of_params(params: &ElicitRequestParams) -> Option<Result<Self, String>> {
        match params {
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => Some(Self::check(message, url, elicitation_id)),
            _ => None,
        }
    }

    /// The MCP `elicitation/create` params, as the app's handler receives
    /// them: `{mode: "url", message, url, elicitationId?}`.
    pub fn params(&self) -> Value {
        let mut params = json!({ "mode": "url", "message": self.message, "url": self.url });
        if !self.elicitation_id.is_empty() {
            params["elicitationId"] = json!(self.elicitation_id);
        }
        params
    }

    /// What of it may be shown in an error's `data`: `{elicitationId,
    /// message, origin}` (never the URL: its query may hold a secret).
    pub fn shown(&self) -> Value {
        json!({
            "elicitationId": self.elicitation_id,
            "message": self.message,
            "origin": self.origin,
        })
    }

    /// The AHP `ChatInputRequest.message` of it: the server's message, a
    /// blank line, then `Site: <origin>`, so every AHP client shows the
    /// site whatever it does with `url` ("clearly display the target
    /// domain").
    pub fn ahp_message(&self) -> String {
        if self.message.is_empty() {
            return format!("Site: {}", self.origin);
        }
        format!("{}\n\nSite: {}", self.message, self.origin)
    }
}

/// The elicitations of a `-32042` error's `data` (`{elicitations: [...]}`,
/// each a URL-mode `elicitation/create` params object with an
/// `elicitationId`), decoded with rmcp's `ElicitRequestParams` and checked
/// ([`UrlElicitation::check`]).
///
/// # Errors
/// What is wrong (no list, an empty list or more than
/// [`MAX_REQUIRED_URL_ELICITATIONS`], an entry that is not a URL-mode
/// elicitation with an `elicitationId`, a refused URL), never a URL.
pub fn required(data: Option<&Value>) -> Result<Vec<UrlElicitation>, String> {
    let Some(list) = data
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
    else {
        return Err("its data has no elicitations list".to_owned());
    };
    if list.is_empty() || list.len() > MAX_REQUIRED_URL_ELICITATIONS {
        return Err(format!(
            "its data lists {} elicitations (1 to {MAX_REQUIRED_URL_ELICITATIONS} are taken, \
             MAX_REQUIRED_URL_ELICITATIONS)",
            list.len()
        ));
    }
    let mut checked = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let not_url = || {
            format!(
                "data.elicitations[{i}] is not a URL-mode elicitation with message, url and \
                 elicitationId"
            )
        };
        let params: ElicitRequestParams =
            serde_json::from_value(entry.clone()).map_err(|_| not_url())?;
        let one = UrlElicitation::of_params(&params)
            .ok_or_else(not_url)?
            .map_err(|why| format!("data.elicitations[{i}]: {why}"))?;
        if one.elicitation_id.is_empty() {
            return Err(not_url());
        }
        checked.push(one);
    }
    Ok(checked)
}

/// The `elicitationId` of a `notifications/elicitation/complete`'s params.
pub fn completed_id(params: Option<&Value>) -> Option<&str> {
    params?.get("elicitationId")?.as_str()
}

/// The `data` of a JSON-RPC error answer with `code` as the host may show
/// it: without the secret values the host holds
/// (`redact::hidden_in_value`) and, for `-32042`
/// ([`URL_ELICITATION_REQUIRED`]), with its URLs shown as their origins
/// ([`hidden_in_required`]). Used where such an error is passed on as a
/// `protocol_error`'s `data` (a request other than `tools/call`, which goes
/// through the URL flow instead).
pub fn hidden_in_error_data(code: i32, data: &mut Value) {
    crate::redact::hidden_in_value(data);
    if code == URL_ELICITATION_REQUIRED {
        hidden_in_required(data);
    }
}

/// A `-32042` error's `data` as the host may show it: each
/// `elicitations[].url` replaced by its origin (the query may hold a
/// secret). Any other data is left as it is.
pub fn hidden_in_required(data: &mut Value) {
    let Some(list) = data.get_mut("elicitations").and_then(Value::as_array_mut) else {
        return;
    };
    for entry in list {
        let Some(url) = entry.get_mut("url") else {
            continue;
        };
        let origin = url
            .as_str()
            .and_then(|u| Url::parse(u).ok())
            .map(|u| u.origin().ascii_serialization());
        *url = match origin {
            Some(origin) if origin != "null" => Value::String(origin),
            _ => Value::String("<url>".to_owned()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_url_is_taken_with_its_origin() {
        let u = UrlElicitation::check(
            "Connect",
            "https://Pay.Example.com:8443/c?code=s3cret",
            "e1",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.origin, "https://pay.example.com:8443");
        assert_eq!(u.url, "https://Pay.Example.com:8443/c?code=s3cret");
        assert_eq!(
            u.ahp_message(),
            "Connect\n\nSite: https://pay.example.com:8443"
        );
        assert_eq!(
            u.params(),
            json!({"mode": "url", "message": "Connect", "url": u.url, "elicitationId": "e1"})
        );
        assert_eq!(
            u.shown(),
            json!({"elicitationId": "e1", "message": "Connect", "origin": u.origin})
        );
        let idn = UrlElicitation::check("", "http://bücher.example/x", "")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(idn.origin, "http://xn--bcher-kva.example");
        assert_eq!(idn.params().get("elicitationId"), None);
    }

    #[test]
    fn other_schemes_userinfo_and_long_urls_are_refused_without_the_url() {
        let refused = |url: &str| {
            UrlElicitation::check("m", url, "e")
                .err()
                .unwrap_or_default()
        };
        assert!(refused("javascript:alert(1)").contains("scheme \"javascript\""));
        assert!(refused("file:///etc/passwd?k=SECRET").contains("scheme \"file\""));
        assert!(refused("data:text/html,hi").contains("only http and https"));
        assert!(refused("not a url").contains("not a valid URL"));
        let userinfo = refused("https://bank.example@evil.example/?k=SECRET");
        assert!(userinfo.contains("userinfo"), "{userinfo}");
        let long = format!(
            "https://a.example/?q={}",
            "x".repeat(MAX_ELICITATION_URL_BYTES)
        );
        assert!(refused(&long).contains("MAX_ELICITATION_URL_BYTES"));
        for url in ["file:///etc/passwd?k=SECRET", "https://u:SECRET@a.example/"] {
            assert!(!refused(url).contains("SECRET"));
        }
    }

    #[test]
    fn a_required_error_lists_checked_url_elicitations() {
        let entry = |id: &str, url: &str| json!({"mode": "url", "elicitationId": id, "url": url, "message": "Authorize"});
        let data = json!({"elicitations": [entry("a", "https://x.example/c?s=1"), entry("b", "http://127.0.0.1:9/")]});
        let list = required(Some(&data)).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<_> = list.iter().map(|u| u.elicitation_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(list[1].origin, "http://127.0.0.1:9");
        let bad = |data: Value| required(Some(&data)).err().unwrap_or_default();
        assert!(bad(json!({})).contains("no elicitations list"));
        assert!(bad(json!({"elicitations": []})).contains("0 elicitations"));
        let form = json!({"elicitations": [{"message": "m", "requestedSchema": {"type": "object", "properties": {}}}]});
        assert!(bad(form).contains("data.elicitations[0] is not a URL-mode"));
        let no_id =
            json!({"elicitations": [{"mode": "url", "url": "https://a.example/", "message": "m"}]});
        assert!(bad(no_id).contains("not a URL-mode"));
        let js = json!({"elicitations": [entry("a", "javascript:alert(1)")]});
        assert!(bad(js).starts_with("data.elicitations[0]: url has scheme"));
        let many: Vec<_> = (0..=MAX_REQUIRED_URL_ELICITATIONS)
            .map(|i| entry(&i.to_string(), "https://a.example/"))
            .collect();
        assert!(bad(json!({ "elicitations": many })).contains("MAX_REQUIRED_URL_ELICITATIONS"));
        assert_eq!(
            required(None).err().as_deref(),
            Some("its data has no elicitations list")
        );
    }

    #[test]
    fn shown_data_keeps_only_origins() {
        let mut data = json!({"elicitations": [
            {"mode": "url", "elicitationId": "a", "url": "https://x.example/c?secret=1", "message": "m"},
            {"mode": "url", "elicitationId": "b", "url": "mailto:a@b?k=SECRET", "message": "m"}
        ], "other": 1});
        hidden_in_required(&mut data);
        assert_eq!(data["elicitations"][0]["url"], "https://x.example");
        assert_eq!(data["elicitations"][1]["url"], "<url>");
        assert_eq!(data["other"], 1);
        assert_eq!(
            completed_id(Some(&json!({"elicitationId": "a"}))),
            Some("a")
        );
        assert_eq!(completed_id(Some(&json!({}))), None);
        assert_eq!(completed_id(None), None);
    }
}
