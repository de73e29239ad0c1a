//! The protocol contract (`spec.json`): loading, the run gate and the typed model it yields,
//! what this build can run, the static linter, runtime message validation, options against
//! parameters, and protocol_id. Pure: no I/O beyond reading the spec file itself.

pub mod diff;
pub mod fields;
pub mod flow;
pub mod lint;
pub mod message;
pub mod model;
pub mod number;
mod offer;
pub mod options;
pub mod protocol_id;
pub mod pyrepr;
mod role;
pub mod schema;
pub mod version;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::canonical::{self, JsonError, MAX_INPUT_BYTES};
pub use flow::FlowMode;
pub use lint::{Check, Diagnostic, FileReport, Severity, lint, lint_bytes};
pub use message::{Direction, MessageError, validate_message};
pub use model::{DecisionRules, FieldType, Flow, Model, ParameterType, TimeoutAction};
pub use offer::InvitationType;
pub use options::{CheckedOptions, OptionsError, parse_options, validate_options};
pub use protocol_id::{HashError, protocol_id_of_bytes};
pub use role::{ControlMode, Role, Winner};
pub use version::{VersionError, check_spec_version};

/// Why a spec cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read: {0}")]
    Io(String),
    #[error("invalid JSON: {0}")]
    Json(#[from] JsonError),
    #[error("the spec must be a JSON object, found {0}")]
    NotAnObject(&'static str),
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Version(#[from] VersionError),
    #[error("{}", invalid_summary(.0))]
    Invalid(Vec<Diagnostic>),
    #[error(
        "this build does not run flow mode {0}: the spec validates and registers, but it cannot be hosted, joined or tested here"
    )]
    NotRunnable(FlowMode),
}

fn invalid_summary(errors: &[Diagnostic]) -> String {
    match errors {
        [only] => format!("invalid spec: {only}"),
        [first, rest @ ..] => format!(
            "invalid spec: {first} (and {} more; run `aigenora validate` for all)",
            rest.len()
        ),
        [] => "invalid spec".to_string(),
    }
}

/// A [`SpecError`] together with the file it came from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error} ({})", path.display())]
pub struct SpecFileError {
    pub path: PathBuf,
    pub error: SpecError,
}

/// A parsed spec: always a JSON object, key order as written, kept unchanged (protocol_id
/// and runtime validation read it); plus its typed [`Model`], built once the spec passes the
/// run gate.
#[derive(Debug, Clone)]
pub struct Spec {
    value: Value,
    model: OnceLock<Model>,
}

/// Two specs are equal when their JSON is (the model follows from it).
impl PartialEq for Spec {
    fn eq(&self, other: &Spec) -> bool {
        self.value == other.value
    }
}

impl Spec {
    /// Wraps a value that must be an object. No other checks (see [`Spec::check`]).
    pub fn from_value(value: Value) -> Result<Spec, SpecError> {
        match value {
            Value::Object(_) => Ok(Spec {
                value,
                model: OnceLock::new(),
            }),
            other => Err(SpecError::NotAnObject(json_kind(&other))),
        }
    }

    /// Parses raw bytes with Python's acceptance rules (clear errors for every bad input).
    pub fn from_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
        Spec::parse(bytes).map(|(spec, _)| spec)
    }

    /// [`Spec::from_bytes`] and the spec's protocol_id, hashed from the parse Python's rules
    /// already made (exactly what `protocol hash` prints for these bytes).
    pub fn from_bytes_with_id(bytes: &[u8]) -> Result<(Spec, String), SpecError> {
        let (spec, python_view) = Spec::parse(bytes)?;
        let protocol_id =
            protocol_id::protocol_id_of_pyjson(&python_view).expect("the document is an object");
        Ok((spec, protocol_id))
    }

    /// The spec, and the document as Python reads it.
    fn parse(bytes: &[u8]) -> Result<(Spec, canonical::PyJson), SpecError> {
        let python_view = canonical::parse(bytes)?;
        if python_view.as_object().is_none() {
            let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            return Err(SpecError::NotAnObject(json_kind(&value)));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|error| {
            SpecError::Unsupported(if error.to_string().contains("recursion limit") {
                "nesting deeper than 128 levels is only accepted by `protocol hash`".to_string()
            } else {
                "NaN and Infinity are not allowed in a spec (they are not standard JSON)"
                    .to_string()
            })
        })?;
        Ok((Spec::from_value(value)?, python_view))
    }

    /// Reads and parses a spec file (size-checked before reading). No contract checks.
    pub fn load(path: &Path) -> Result<Spec, SpecFileError> {
        let at = |error| SpecFileError {
            path: path.to_path_buf(),
            error,
        };
        read_limited(path)
            .map_err(at)
            .and_then(|bytes| Spec::from_bytes(&bytes).map_err(at))
    }

    /// Loads a spec and applies the run gate ([`Spec::check`]): what `protocol test`,
    /// `register`, `fetch`, `host`, `join` and `guest` all require.
    pub fn load_checked(path: &Path) -> Result<Spec, SpecFileError> {
        let spec = Spec::load(path)?;
        spec.check().map_err(|error| SpecFileError {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(spec)
    }

    /// Loads a spec this build can play: the run gate and [`Spec::ensure_runnable`], what
    /// `protocol test`, `host`, `join` and `guest` require before anything starts.
    pub fn load_runnable(path: &Path) -> Result<Spec, SpecFileError> {
        let spec = Spec::load_checked(path)?;
        spec.ensure_runnable().map_err(|error| SpecFileError {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(spec)
    }

    /// The run gate: a supported `spec_version` and no lint errors. It says nothing about
    /// whether this build can play the flow mode (see [`Spec::ensure_runnable`]).
    pub fn check(&self) -> Result<(), SpecError> {
        self.model().map(|_| ())
    }

    /// The typed contract, built (and kept) the first time the spec passes the run gate.
    pub fn model(&self) -> Result<&Model, SpecError> {
        if let Some(model) = self.model.get() {
            return Ok(model);
        }
        check_spec_version(&self.value)?;
        let errors: Vec<Diagnostic> = lint(&self.value)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if !errors.is_empty() {
            return Err(SpecError::Invalid(errors));
        }
        let model = Model::build(&self.value).map_err(|e| SpecError::Invalid(vec![e.into()]))?;
        Ok(self.model.get_or_init(|| model))
    }

    /// The run gate plus: this build's engine can play the spec's flow mode. What
    /// `protocol test`, `host`, `join` and `guest` require before anything starts;
    /// `validate` and registration only need [`Spec::check`].
    pub fn ensure_runnable(&self) -> Result<(), SpecError> {
        let mode = self.model()?.flow.mode();
        if mode.runs() {
            Ok(())
        } else {
            Err(SpecError::NotRunnable(mode))
        }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn object(&self) -> &Map<String, Value> {
        self.value.as_object().expect("a Spec is always an object")
    }

    /// The content address of this spec.
    pub fn protocol_id(&self) -> String {
        protocol_id::protocol_id(&self.value).expect("a Spec is always an object")
    }

    pub fn name(&self) -> &str {
        self.value.get("name").and_then(Value::as_str).unwrap_or("")
    }

    /// The flow mode of a spec that passes the run gate; `Err` says why it does not.
    /// The spec's `decision` rules (read from the model once the spec passed the run gate).
    pub fn decision_rules(&self) -> DecisionRules {
        match self.model() {
            Ok(model) => model.decision,
            Err(_) => DecisionRules::build(&self.value),
        }
    }

    /// What the spec's flow mode is and needs (the default mode's, for a spec that fails the
    /// run gate: callers only ask about specs that passed it).
    pub fn capabilities(&self) -> &'static flow::Capabilities {
        self.flow_mode()
            .unwrap_or(FlowMode::SessionLoop)
            .capabilities()
    }

    pub fn flow_mode(&self) -> Result<FlowMode, String> {
        self.model()
            .map(|model| model.flow.mode())
            .map_err(|error| error.to_string())
    }
}

/// Reads a spec file: a regular file only (a FIFO, a device such as /dev/zero or a socket is
/// refused before a byte is read; opening never waits for a FIFO's writer), and never more
/// than [`MAX_INPUT_BYTES`] (checked on the size first, and again while reading, for a file
/// that grows).
pub fn read_limited(path: &Path) -> Result<Vec<u8>, SpecError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| SpecError::Io(e.to_string());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let metadata = file.metadata().map_err(io)?;
    if metadata.is_dir() {
        return Err(SpecError::Io(
            "is a directory, expected a spec.json file".into(),
        ));
    }
    if !metadata.is_file() {
        return Err(SpecError::Io(
            "is not a regular file (a FIFO, a device or a socket), expected a spec.json file"
                .into(),
        ));
    }
    let too_large = |size: u64| {
        SpecError::Json(JsonError::TooLarge {
            size: usize::try_from(size).unwrap_or(usize::MAX),
            limit: MAX_INPUT_BYTES,
        })
    };
    if metadata.len() > MAX_INPUT_BYTES as u64 {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// "an array", "a string", ... for messages about the wrong kind of JSON value.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_documents_get_clear_errors() {
        assert_eq!(
            Spec::from_bytes(b"[1,2]"),
            Err(SpecError::NotAnObject("an array"))
        );
        assert!(
            matches!(Spec::from_bytes(b"{\"a\": NaN}"), Err(SpecError::Unsupported(m)) if m.contains("NaN"))
        );
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert!(
            matches!(Spec::from_bytes(deep.as_bytes()), Err(SpecError::Unsupported(m)) if m.contains("128"))
        );
        assert_eq!(
            Spec::from_bytes(b""),
            Err(SpecError::Json(JsonError::Empty))
        );
    }

    #[test]
    fn protocol_id_of_a_loaded_spec_matches_the_raw_bytes() {
        let text = br#"{"name":"x","rules":{"f":1e16,"i":-0,"big":123456789012345678901234567890},"messages":[]}"#;
        let spec = Spec::from_bytes(text).unwrap();
        assert_eq!(spec.protocol_id(), protocol_id_of_bytes(text).unwrap());
    }
}
