//! The relay's TLS: a certificate chain and its private key from PEM files, as any
//! certificate authority (or `certbot`) issues them, made into the rustls configuration the
//! relay's HTTPS and QUIC servers share.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::RelayError;

/// Largest PEM file read (a chain of a few certificates is a few KiB).
const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// Where the relay's certificate chain (leaf first) and private key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A loaded certificate chain and the server configuration that presents it.
pub(super) struct LoadedTls {
    pub chain: Vec<CertificateDer<'static>>,
    pub server_config: rustls::ServerConfig,
}

impl TlsFiles {
    /// Reads and checks both files: the key must match the leaf certificate.
    pub(super) async fn load(&self) -> Result<LoadedTls, RelayError> {
        let files = self.clone();
        tokio::task::spawn_blocking(move || files.load_now())
            .await
            .map_err(|error| RelayError::Failed(error.to_string()))?
    }

    fn load_now(&self) -> Result<LoadedTls, RelayError> {
        let cert_error = |reason: String| RelayError::Tls {
            what: "certificate",
            path: self.cert.clone(),
            reason,
        };
        let key_error = |reason: String| RelayError::Tls {
            what: "key",
            path: self.key.clone(),
            reason,
        };
        let cert_pem = read_bounded(&self.cert).map_err(cert_error)?;
        let chain = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| cert_error(e.to_string()))?;
        if chain.is_empty() {
            return Err(cert_error("no CERTIFICATE block in the file".into()));
        }
        let key_pem = read_bounded(&self.key).map_err(key_error)?;
        let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| key_error(e.to_string()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server_config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| RelayError::Failed(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain.clone(), key)
            .map_err(|e| key_error(format!("does not fit the certificate: {e}")))?;
        Ok(LoadedTls {
            chain,
            server_config,
        })
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!("larger than {MAX_PEM_BYTES} bytes"));
    }
    Ok(bytes)
}
