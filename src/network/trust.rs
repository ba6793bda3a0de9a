//! Which certificate authorities a TLS server certificate may chain to:
//! the operating system's trust store (reqwest's `rustls` feature verifies
//! through rustls-platform-verifier: the system store, `SSL_CERT_FILE` /
//! `SSL_CERT_DIR` on Linux), plus the PEM file named by
//! `NODE_EXTRA_CA_CERTS` (as Node reads it, once, when the host is
//! created), plus the host's `caCertificates` option. Host name checks
//! always stay on.

use serde::Deserialize;

use crate::limits::MAX_CA_FILE_BYTES;

/// PEM text of extra trusted CA certificates (the `caCertificates` host
/// option), each entry one or more `-----BEGIN CERTIFICATE-----` blocks.
#[derive(Clone, Default, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct CaCertificates(Vec<reqwest::Certificate>);

impl std::fmt::Debug for CaCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CaCertificates({} certificates)", self.0.len())
    }
}

/// The certificates of one PEM text (`None`: not PEM or no certificate).
fn pem_bundle(pem: &[u8]) -> Option<Vec<reqwest::Certificate>> {
    reqwest::Certificate::from_pem_bundle(pem)
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
    pub fn certificates(&self) -> &[reqwest::Certificate] {
        &self.0
    }
}

/// The certificates of the file named by `NODE_EXTRA_CA_CERTS`, or the
/// warning to log when it is set but unreadable (Node warns and goes on).
pub fn node_extra_ca_certs() -> Result<Vec<reqwest::Certificate>, String> {
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
