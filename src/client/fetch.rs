//! `protocol fetch`: download a spec by id, prove it hashes to that id, pass the run gate,
//! and install it as compact `spec.json` in the local protocol library.

use std::path::PathBuf;

use super::{ClientError, RestClient};
use crate::identity::is_lower_hex_64;
use crate::layout::DataDir;
use crate::spec::{Spec, SpecError};

/// Why a protocol could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("protocol_id must be 64 lowercase hex characters, got {0:?}")]
    BadId(String),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("protocol hash mismatch: requested {requested}, got {got}")]
    HashMismatch { requested: String, got: String },
    #[error("fetched protocol {protocol_id} cannot be used: {error}")]
    Unusable {
        protocol_id: String,
        error: SpecError,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// A protocol now present in the local library.
#[derive(Debug, Clone)]
pub struct FetchedProtocol {
    pub protocol_id: String,
    /// `<data>/protocols/<id[0:8]>/<id[8:]>/`
    pub dir: PathBuf,
    pub spec: Spec,
}

/// Fetches `protocol_id` from the server into `data_dir`'s protocol library.
pub async fn fetch_protocol(
    client: &RestClient,
    data_dir: &DataDir,
    protocol_id: &str,
) -> Result<FetchedProtocol, FetchError> {
    if !is_lower_hex_64(protocol_id) {
        return Err(FetchError::BadId(protocol_id.to_string()));
    }
    let value = client.protocol_spec(protocol_id).await?;
    let unusable = |error| FetchError::Unusable {
        protocol_id: protocol_id.to_string(),
        error,
    };
    let spec = Spec::from_value(value).map_err(unusable)?;
    let got = spec.protocol_id();
    if got != protocol_id {
        return Err(FetchError::HashMismatch {
            requested: protocol_id.to_string(),
            got,
        });
    }
    spec.check().map_err(unusable)?;
    let dir = data_dir.protocol_dir(protocol_id);
    let path = dir.join("spec.json");
    let write = |source| FetchError::Write {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(write)?;
    let compact = serde_json::to_string(spec.value()).expect("a JSON value always serializes");
    std::fs::write(&path, compact).map_err(write)?;
    Ok(FetchedProtocol {
        protocol_id: protocol_id.to_string(),
        dir,
        spec,
    })
}
