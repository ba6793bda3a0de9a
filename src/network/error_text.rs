//! What went wrong on the wire, in words: the cause of a failed HTTP
//! exchange found in an error chain (refused, reset, timed out, DNS
//! failure, TLS failure with the certificate problem), for the messages of
//! `connect_failed` and of OAuth fetches.
//!
//! rmcp cuts `std::error::Error::source()` chains in two places (its
//! `ClientInitializeError::TransportError` and `StreamableHttpError::Client`
//! carry the transport error without exposing it as a source), and
//! `std::io::Error::source()` skips the error it wraps; [`causes`] follows
//! those links too. Texts name the kind of failure and the URL's origin;
//! they never include header values (reqwest errors carry none) and never
//! the URL's path, query or credentials.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rustls::CertificateError;
use url::Url;

use crate::redact::origin;

type Cause<'a> = &'a (dyn Error + 'static);

/// Every error in the chain of `e`, outermost first (at most 32).
pub fn causes(e: Cause<'_>) -> Vec<Cause<'_>> {
    let mut out = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur.filter(|_| out.len() < 32) {
        out.push(err);
        cur = hidden_source(err).or_else(|| err.source());
    }
    out
}

/// The link rmcp and `std::io::Error` keep out of `source()`.
fn hidden_source<'a>(e: Cause<'a>) -> Option<Cause<'a>> {
    if let Some(ClientInitializeError::TransportError { error, .. }) = e.downcast_ref() {
        return Some(error);
    }
    if let Some(StreamableHttpError::<reqwest::Error>::Client(inner)) = e.downcast_ref() {
        return Some(inner);
    }
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        return io.get_ref().map(|inner| inner as Cause<'a>);
    }
    None
}

/// What happened, in a few words (`None`: nothing this module recognises,
/// e.g. an HTTP status or a protocol error, which their own texts say).
pub fn what_happened(e: Cause<'_>) -> Option<String> {
    let chain = causes(e);
    let refused = chain
        .iter()
        .find_map(|c| c.downcast_ref::<super::address_policy::AddressRefused>());
    if let Some(refused) = refused {
        return Some(refused.to_string());
    }
    let tls = chain.iter().find_map(|c| c.downcast_ref::<rustls::Error>());
    if let Some(tls) = tls {
        return Some(tls_text(tls));
    }
    for cause in &chain {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if let Some(text) = io_text(io) {
                return Some(text.to_owned());
            }
        }
    }
    for cause in &chain {
        if cause
            .downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
        {
            return Some("timed out".to_owned());
        }
        if cause.to_string().eq_ignore_ascii_case("dns error") {
            let why = chain.last().map(|c| c.to_string()).unwrap_or_default();
            return Some(format!("DNS lookup failed ({why})"));
        }
    }
    None
}

fn io_text(io: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind as K;
    Some(match io.kind() {
        K::ConnectionRefused => "connection refused",
        K::ConnectionReset => "connection reset",
        K::ConnectionAborted => "connection aborted",
        K::TimedOut => "timed out",
        K::NotConnected | K::BrokenPipe => "connection closed",
        K::HostUnreachable => "host unreachable",
        K::NetworkUnreachable => "network unreachable",
        K::AddrNotAvailable => "address not available",
        _ => return None,
    })
}

/// A TLS failure, naming the certificate problem (RFC 5280 §6 path
/// validation; RFC 6125 name checks).
fn tls_text(e: &rustls::Error) -> String {
    let problem = match e {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer => "unknown issuer (not signed by a trusted CA)",
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => "expired",
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "not valid yet"
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "name mismatch (not valid for this host name)"
            }
            CertificateError::Revoked => "revoked",
            CertificateError::BadSignature => "bad signature",
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                "not valid for server authentication"
            }
            _ => return format!("TLS failure: certificate rejected ({cert:?})"),
        },
        other => return format!("TLS failure: {other}"),
    };
    format!("TLS failure: certificate {problem}")
}

/// `"<what happened> at <origin>"`, plus `" through proxy <proxy origin>"`
/// when the request went through one; `what` is [`what_happened`] or, when
/// that recognises nothing, `fallback`.
pub fn describe(e: Cause<'_>, url: &Url, proxy: Option<&Url>, fallback: &str) -> String {
    let what = what_happened(e).unwrap_or_else(|| fallback.to_owned());
    match proxy {
        Some(p) => format!("{what} at {} through proxy {}", origin(url), origin(p)),
        None => format!("{what} at {}", origin(url)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_kinds_and_tls_problems_are_named() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            what_happened(&refused).as_deref(),
            Some("connection refused")
        );
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        assert!(what_happened(&tls).unwrap().contains("unknown issuer"));
        let url = Url::parse("https://user:pw@mcp.example.com:8443/mcp?token=t").unwrap();
        let proxy = Url::parse("http://u:secret@proxy.example.com:3128").unwrap();
        let text = describe(&refused, &url, Some(&proxy), "failed");
        assert_eq!(
            text,
            "connection refused at https://mcp.example.com:8443 through proxy http://proxy.example.com:3128"
        );
    }
}
