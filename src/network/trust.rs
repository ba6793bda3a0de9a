//! Which certificate authorities a TLS server certificate may chain to:
//! the operating system's trust store (rustls-platform-verifier, as
//! reqwest's `rustls` feature uses it: the system store, `SSL_CERT_FILE` /
//! `SSL_CERT_DIR` on Linux), plus the PEM file named by
//! `NODE_EXTRA_CA_CERTS` (as Node reads it, once, when the host is
//! created), plus the host's `caCertificates` option. Host name checks
//! always stay on.
//!
//! The verifier reads the whole system store when it is made (on Linux
//! every file of `/etc/ssl/certs`), so [`client_tls`] makes the TLS
//! configuration once per host and every HTTP client of the host shares
//! it, instead of each client (two per OAuth server, one per Streamable
//! HTTP connection) reading the store again.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use serde::Deserialize;

use crate::limits::MAX_CA_FILE_BYTES;

/// One trusted CA certificate (DER).
pub type Certificate = CertificateDer<'static>;

/// PEM text of extra trusted CA certificates (the `caCertificates` host
/// option), each entry one or more `-----BEGIN CERTIFICATE-----` blocks.
#[derive(Clone, Default, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct CaCertificates(Vec<Certificate>);

impl std::fmt::Debug for CaCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CaCertificates({} certificates)", self.0.len())
    }
}

/// The certificates of one PEM text: every PEM block must be a
/// `CERTIFICATE` that parses as a trust anchor (what the verifier does with
/// it: a block that is PEM-framed but holds no X.509 certificate would
/// otherwise fail every TLS connection of the host, not only the ones it
/// was meant for; a private key has no place in a trust option).
///
/// # Errors
/// `no PEM certificate` (no PEM block at all), `block <k> of <n> is a
/// <kind>, not a CERTIFICATE`, `block <k> of <n> is not a valid X.509
/// certificate (<why>)` or `block <k>: <PEM error>` (`k` from 1).
fn pem_bundle(pem: &[u8]) -> Result<Vec<Certificate>, String> {
    use rustls::pki_types::pem::{self, SectionKind};
    let mut blocks = Vec::new();
    let mut rest = pem;
    loop {
        match pem::from_buf(&mut rest) {
            Ok(Some(block)) => blocks.push(block),
            Ok(None) => break,
            Err(pem::Error::MissingSectionEnd { .. }) => {
                return Err(format!("block {} has no END line", blocks.len() + 1));
            }
            Err(e) => return Err(format!("block {}: {e}", blocks.len() + 1)),
        }
    }
    if blocks.is_empty() {
        return Err("no PEM certificate".to_owned());
    }
    let n = blocks.len();
    let mut certs = Vec::with_capacity(n);
    for (k, (kind, der)) in (1..).zip(blocks) {
        if kind != SectionKind::Certificate {
            return Err(format!("block {k} of {n} is a {kind:?}, not a CERTIFICATE"));
        }
        let cert = Certificate::from(der);
        rustls::RootCertStore::empty()
            .add(cert.clone())
            .map_err(|e| {
                let why = match e {
                    rustls::Error::InvalidCertificate(why) => format!("{why:?}"),
                    other => other.to_string(),
                };
                format!("block {k} of {n} is not a valid X.509 certificate ({why})")
            })?;
        certs.push(cert);
    }
    Ok(certs)
}

impl TryFrom<Vec<String>> for CaCertificates {
    type Error = String;

    /// Errors: `caCertificates[i]: ` and why its PEM text was refused (no block, a block
    /// that is not a valid X.509 CERTIFICATE, or a block with no END line), surfaced as
    /// `invalid_argument: options: …`.
    fn try_from(pems: Vec<String>) -> Result<Self, String> {
        let mut out = Vec::new();
        for (i, pem) in pems.iter().enumerate() {
            let certs =
                pem_bundle(pem.as_bytes()).map_err(|why| format!("caCertificates[{i}]: {why}"))?;
            out.extend(certs);
        }
        Ok(Self(out))
    }
}

impl CaCertificates {
    /// The certificates.
    pub fn certificates(&self) -> &[Certificate] {
        &self.0
    }
}

/// The certificates of the file named by `NODE_EXTRA_CA_CERTS`, or the
/// warning to log when it is set but unreadable, holds no certificate or
/// one that is not valid (Node warns and goes on without the file).
pub fn node_extra_ca_certs() -> Result<Vec<Certificate>, String> {
    let Some(path) = std::env::var_os("NODE_EXTRA_CA_CERTS").filter(|p| !p.is_empty()) else {
        return Ok(Vec::new());
    };
    let shown = std::path::Path::new(&path).display().to_string();
    let bytes =
        read_bounded(&path).map_err(|e| format!("ignoring NODE_EXTRA_CA_CERTS {shown}: {e}"))?;
    pem_bundle(&bytes).map_err(|why| format!("ignoring NODE_EXTRA_CA_CERTS {shown}: {why}"))
}

/// A regular file of at most [`MAX_CA_FILE_BYTES`]
/// ([`crate::platform::read_regular_bytes`]: a named pipe is refused, never
/// waited on; this runs on the JS thread, in `new McpHost()`).
fn read_bounded(path: &std::ffi::OsStr) -> Result<Vec<u8>, String> {
    use crate::platform::RegularReadError;
    let path = std::path::Path::new(path);
    crate::platform::read_regular_bytes(path, MAX_CA_FILE_BYTES as u64).map_err(|e| match e {
        RegularReadError::TooLarge => format!("larger than {MAX_CA_FILE_BYTES} bytes"),
        other => other.to_string(),
    })
}

/// The TLS configuration every HTTP client of a host shares: TLS 1.2 and
/// 1.3 with the process's rustls crypto provider (aws-lc-rs unless the app
/// installed another), certificates verified by rustls-platform-verifier
/// against the OS store plus `extra`, ALPN `http/1.1` (the host's clients
/// speak HTTP/1.1 only); what reqwest's `rustls` feature builds for each
/// client, made once.
///
/// # Errors
/// The verifier's, when the OS store cannot be read; the caller then lets
/// reqwest build its own configuration, which reports the same error.
#[cfg(any(all(unix, not(target_os = "android")), windows))]
pub fn client_tls(extra: &[Certificate]) -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(
        extra.iter().cloned(),
        provider.clone(),
    )?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Other targets: reqwest builds each client's configuration itself.
#[cfg(not(any(all(unix, not(target_os = "android")), windows)))]
pub fn client_tls(_extra: &[Certificate]) -> Result<rustls::ClientConfig, rustls::Error> {
    Err(rustls::Error::General(
        "no shared TLS configuration on this target".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed CA certificate made for these tests (public data).
    const TEST_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBgzCCASmgAwIBAgIUMCkIWyG9twBuSvBpQJoSHbr/yLYwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLYWhwIHRlc3QgY2EwIBcNMjYxMjA2MDQzMTUyWhgPMjEyNjEx
MTIwNDMxNTJaMBYxFDASBgNVBAMMC2FocCB0ZXN0IGNhMFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEU8CoT3CxEwuw7v/r2sUfmvDzyJerSZKruplCEPR2RTot6NP+
N2QtRmJalXicZLKhYGbr8T8S0bnj2/6+OwqtWqNTMFEwHQYDVR0OBBYEFNumvnE6
MpKcofIAplMtEhci0go0MB8GA1UdIwQYMBaAFNumvnE6MpKcofIAplMtEhci0go0
MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgfI/HOF8/wb8A6pBG
lulaE1eRMNT3SgT8lWkCgYt9NEICIQCYdWb5r2HAJ8szOaKfFHtzk63Ou/ltKNTA
1kByAYgxLg==
-----END CERTIFICATE-----
";
    /// PEM framing around bytes that are no certificate.
    const NOT_A_CERTIFICATE: &str =
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

    fn ca_certificates(pems: &[&str]) -> Result<CaCertificates, String> {
        CaCertificates::try_from(pems.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn a_pem_block_that_is_no_certificate_is_refused_naming_the_entry() {
        // Red team of issue 28, F2: it was accepted, then failed every
        // HTTP client of the host with `internal` (BadEncoding).
        assert_eq!(ca_certificates(&[TEST_CA]).unwrap().certificates().len(), 1);
        let e = ca_certificates(&[TEST_CA, NOT_A_CERTIFICATE]).unwrap_err();
        assert_eq!(
            e,
            "caCertificates[1]: block 1 of 1 is not a valid X.509 certificate (BadEncoding)"
        );
        let both = format!("{TEST_CA}{NOT_A_CERTIFICATE}");
        let e = ca_certificates(&[&both]).unwrap_err();
        assert!(
            e.starts_with("caCertificates[0]: block 2 of 2 is not"),
            "{e}"
        );
        let e = ca_certificates(&["not pem"]).unwrap_err();
        assert_eq!(e, "caCertificates[0]: no PEM certificate");
        // Red team: a key beside a certificate was accepted; a cut block read as no certificate.
        let key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        let e = ca_certificates(&[&format!("{TEST_CA}{key}")]).unwrap_err();
        assert_eq!(
            e,
            "caCertificates[0]: block 2 of 2 is a PrivateKey, not a CERTIFICATE"
        );
        let cut = format!("{TEST_CA}-----BEGIN CERTIFICATE-----\nMIIB\n");
        let e = ca_certificates(&[&cut]).unwrap_err();
        assert_eq!(e, "caCertificates[0]: block 2 has no END line");
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_refused_without_waiting_for_a_writer() {
        // Red team of issue 28, F4: opening it waited for a writer, so
        // `new McpHost()` hung with NODE_EXTRA_CA_CERTS naming a FIFO.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("ca.fifo");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let os = fifo.clone().into_os_string();
        std::thread::spawn(move || tx.send(read_bounded(&os).map(|_| ())));
        let read = rx.recv_timeout(std::time::Duration::from_secs(30));
        let e = read.expect("read_bounded waited on the pipe").unwrap_err();
        assert_eq!(e, "it is a named pipe (FIFO), not a regular file");
    }
}
