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

use rustls::pki_types::pem::PemObject;
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

/// The certificates of one PEM text (`None`: not PEM or no certificate).
fn pem_bundle(pem: &[u8]) -> Option<Vec<Certificate>> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .filter(|certs| !certs.is_empty())
}

impl TryFrom<Vec<String>> for CaCertificates {
    type Error = String;

    /// Errors: `caCertificates[i]: no PEM certificate` (surfaced as
    /// `invalid_argument: options: …`).
    fn try_from(pems: Vec<String>) -> Result<Self, String> {
        let mut out = Vec::new();
        for (i, pem) in pems.iter().enumerate() {
            let certs = pem_bundle(pem.as_bytes())
                .ok_or(format!("caCertificates[{i}]: no PEM certificate"))?;
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
/// warning to log when it is set but unreadable (Node warns and goes on).
pub fn node_extra_ca_certs() -> Result<Vec<Certificate>, String> {
    let Some(path) = std::env::var_os("NODE_EXTRA_CA_CERTS").filter(|p| !p.is_empty()) else {
        return Ok(Vec::new());
    };
    let shown = std::path::Path::new(&path).display().to_string();
    let bytes =
        read_bounded(&path).map_err(|e| format!("ignoring NODE_EXTRA_CA_CERTS {shown}: {e}"))?;
    pem_bundle(&bytes).ok_or(format!(
        "ignoring NODE_EXTRA_CA_CERTS {shown}: no PEM certificate"
    ))
}

/// A regular file of at most [`MAX_CA_FILE_BYTES`].
fn read_bounded(path: &std::ffi::OsStr) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CA_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > MAX_CA_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_CA_FILE_BYTES} bytes"
        )));
    }
    Ok(bytes)
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
