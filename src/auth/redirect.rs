//! Where the browser returns in an authorization code sign-in, and how the
//! host gets the callback URL (the redirect with `code`, `state`, `iss` or
//! `error`):
//!
//! - [`Redirect::Loopback`]: the one-shot listener on 127.0.0.1 (RFC 8252
//!   §7.3, [`super::callback`]); the app may also hand the callback URL
//!   over itself (a user on another machine pastes the URL the browser
//!   could not load: Claude Code's pasted callback), whichever comes first;
//! - [`Redirect::App`]: a redirect URI the app handles (a private-use URI
//!   scheme, RFC 8252 §7.1; a claimed `https` URL, §7.2; a loopback
//!   listener of its own, §7.3): no listener is opened, and the callback
//!   URL comes back only from the app.
//!
//! Either way the callback goes through the same checks (rmcp's `state`
//! and RFC 9207 `iss` checks, then the code exchange), so a pasted URL is
//! held to exactly what a redirect to the listener is.

use std::time::Duration;

use tokio::sync::mpsc;
use url::Url;

use super::callback::CallbackListener;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::MAX_REDIRECT_URI_BYTES;

/// Schemes a redirect URI may not use: the browser's own (RFC 8252 §8.1
/// and the URL Standard's local schemes), which no app can receive.
const REFUSED_SCHEMES: [&str; 8] = [
    "javascript",
    "data",
    "file",
    "blob",
    "about",
    "vbscript",
    "ws",
    "wss",
];

/// Where the browser returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// The loopback listener on 127.0.0.1:`port` (0: a random free port).
    Loopback {
        /// The port; 0 = random.
        port: u16,
    },
    /// A redirect URI the app handles; no listener is opened.
    App(Url),
}

impl Redirect {
    /// An app-chosen redirect URI (`authorize({redirectUri})`), checked:
    /// at most [`MAX_REDIRECT_URI_BYTES`], an absolute URL without a
    /// fragment (RFC 6749 §3.1.2) or userinfo, `https`, `http` only to a
    /// loopback host (RFC 8252 §7.3), or a private-use scheme (§7.1: any
    /// other than the browser's own `javascript`, `data`, `file`, `blob`,
    /// `about`, `vbscript`, `ws`, `wss`).
    ///
    /// # Errors
    /// `invalid_argument` naming `options.redirectUri` and the rule (never
    /// the URI's query).
    pub fn app(uri: &str) -> HostResult<Self> {
        let refuse = |why: &str| {
            HostError::new(
                ErrorCode::InvalidArgument,
                format!("options.redirectUri: {why}"),
            )
        };
        if uri.len() > MAX_REDIRECT_URI_BYTES {
            return Err(refuse(&format!(
                "longer than {MAX_REDIRECT_URI_BYTES} bytes"
            )));
        }
        let url = Url::parse(uri).map_err(|e| refuse(&format!("not an absolute URI ({e})")))?;
        if url.fragment().is_some() {
            return Err(refuse("must not have a fragment (RFC 6749 §3.1.2)"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refuse("must not have userinfo"));
        }
        let loopback = matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => {
                return Err(refuse(
                    "http is allowed only to a loopback host (RFC 8252 §7.3); use https or a private-use scheme",
                ))
            }
            scheme if REFUSED_SCHEMES.contains(&scheme) => {
                return Err(refuse(&format!(
                    "the {scheme}: scheme cannot receive a redirect (RFC 8252 §8.1)"
                )))
            }
            _ => {}
        }
        Ok(Self::App(url))
    }
}

/// Where the callback of one sign-in arrives: its listener (loopback mode)
/// and the callback URLs the app hands over.
pub struct Callbacks {
    listener: Option<CallbackListener>,
    pasted: mpsc::Receiver<Url>,
    /// The redirect URI registered and sent in the authorization request.
    pub redirect_uri: String,
}

impl Callbacks {
    /// Opens the listener of `redirect` (none for [`Redirect::App`]);
    /// `pasted` brings the URLs the app hands over.
    ///
    /// # Errors
    /// `internal` when the loopback port cannot be bound.
    pub async fn open(redirect: &Redirect, pasted: mpsc::Receiver<Url>) -> HostResult<Self> {
        Ok(match redirect {
            Redirect::Loopback { port } => {
                let listener = CallbackListener::bind(*port).await?;
                Self {
                    redirect_uri: listener.redirect_uri.clone(),
                    listener: Some(listener),
                    pasted,
                }
            }
            Redirect::App(url) => Self {
                redirect_uri: url.to_string(),
                listener: None,
                pasted,
            },
        })
    }

    /// The first callback URL: the redirect to the listener or a URL the
    /// app handed over, within `timeout`. The listener closes (its port is
    /// free) and later URLs of the app are refused once this returns.
    ///
    /// # Errors
    /// `timeout` when none came in time; `cancelled` when, in app mode, a
    /// newer sign-in of the same server took over the app's callbacks.
    pub async fn wait(self, timeout: Duration) -> HostResult<Url> {
        let Self {
            listener,
            mut pasted,
            ..
        } = self;
        if let Some(listener) = listener {
            return tokio::select! {
                redirected = listener.wait(timeout) => redirected,
                Some(url) = pasted.recv() => Ok(url),
            };
        }
        match tokio::time::timeout(timeout, pasted.recv()).await {
            Ok(Some(url)) => Ok(url),
            Ok(None) => Err(HostError::new(
                ErrorCode::Cancelled,
                "a newer sign-in of this server took over the callback",
            )),
            Err(_) => Err(HostError::new(
                ErrorCode::Timeout,
                format!(
                    "no callback URL was handed back within {} s",
                    timeout.as_secs()
                ),
            )),
        }
    }
}

/// The `auth_denied` error of a callback carrying `error` (RFC 6749
/// §4.1.2.1: consent refused, …), with its `error_description`.
pub fn denied(callback: &Url) -> Option<HostError> {
    let error = callback
        .query_pairs()
        .find(|(k, _)| k == "error")
        .map(|(_, v)| v.into_owned())?;
    let description = callback
        .query_pairs()
        .find(|(k, _)| k == "error_description")
        .map(|(_, v)| format!(": {v}"))
        .unwrap_or_default();
    Some(HostError::new(
        ErrorCode::AuthDenied,
        format!("authorization was not granted ({error}{description})"),
    ))
}

/// Whether `url` can be the callback of a sign-in whose redirect URI is
/// `redirect_uri`: the same scheme, host, port and path (RFC 6749 §3.1.2:
/// the AS appends its parameters to the registered URI), with `code` and
/// `state`, or `error`.
///
/// # Errors
/// `invalid_argument` saying which (never the URL's query: it holds the
/// code).
pub fn check_callback(url: &Url, redirect_uri: &str) -> HostResult<()> {
    let invalid =
        |why: &str| HostError::new(ErrorCode::InvalidArgument, format!("callbackUrl: {why}"));
    let expected = Url::parse(redirect_uri).map_err(|_| invalid("no redirect URI to match"))?;
    let same = url.scheme() == expected.scheme()
        && url.host_str() == expected.host_str()
        && url.port_or_known_default() == expected.port_or_known_default()
        && url.path() == expected.path();
    if !same {
        return Err(invalid(&format!(
            "not a redirect to this sign-in's redirect URI ({})",
            crate::redact::shown(&shown_uri(&expected))
        )));
    }
    let has = |key: &str| url.query_pairs().any(|(k, v)| k == key && !v.is_empty());
    if !(has("error") || has("code") && has("state")) {
        return Err(invalid(
            "has neither code and state nor error (RFC 6749 §4.1.2)",
        ));
    }
    Ok(())
}

/// A redirect URI as shown in an error: without query and fragment.
fn shown_uri(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_redirect_uris_follow_rfc_8252() {
        for ok in [
            "com.example.app:/oauth/callback",
            "vscode://publisher.ext/callback",
            "https://app.example.com/oauth/redirect",
            "http://127.0.0.1:33418/",
            "http://localhost:8080/cb",
            "http://[::1]:9/cb",
        ] {
            assert!(Redirect::app(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("http://app.example.com/cb", "loopback"),
            ("javascript:alert(1)", "javascript"),
            ("data:text/html,x", "data"),
            ("file:///tmp/x", "file"),
            ("https://app.example.com/cb#frag", "fragment"),
            ("https://user:pw@app.example.com/cb", "userinfo"),
            ("/relative/cb", "absolute"),
        ] {
            let e = Redirect::app(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}");
            assert!(e.message.contains("options.redirectUri"), "{}", e.message);
            assert!(e.message.contains(why), "{bad}: {}", e.message);
        }
        let long = format!("https://a.example/{}", "x".repeat(MAX_REDIRECT_URI_BYTES));
        assert!(Redirect::app(&long).unwrap_err().message.contains("longer"));
    }

    #[test]
    fn a_callback_must_be_a_redirect_to_the_uri_with_a_result() {
        let uri = "com.example.app:/oauth/callback";
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(check_callback(&url(&format!("{uri}?code=c0de&state=s")), uri).is_ok());
        assert!(check_callback(&url(&format!("{uri}?error=access_denied")), uri).is_ok());
        let loopback = "http://127.0.0.1:4000/callback";
        assert!(
            check_callback(&url(&format!("{loopback}?code=c&state=s&iss=x")), loopback).is_ok()
        );
        for bad in [
            format!("{uri}?state=s"),
            format!("{uri}?code=c0de"),
            "com.example.app:/other?code=c0de&state=s".to_owned(),
            "http://127.0.0.1:4001/callback?code=c0de&state=s".to_owned(),
        ] {
            let e = check_callback(
                &url(&bad),
                if bad.starts_with("http") {
                    loopback
                } else {
                    uri
                },
            )
            .unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}");
            assert!(
                !e.message.contains("c0de"),
                "the code leaked: {}",
                e.message
            );
        }
    }

    #[test]
    fn an_error_callback_is_auth_denied_with_its_description() {
        let url = Url::parse("x.y:/cb?error=access_denied&error_description=no+thanks").unwrap();
        let e = denied(&url).unwrap();
        assert_eq!(e.code, ErrorCode::AuthDenied);
        assert!(
            e.message.contains("access_denied: no thanks"),
            "{}",
            e.message
        );
        assert!(denied(&Url::parse("x.y:/cb?code=c&state=s").unwrap()).is_none());
    }
}
