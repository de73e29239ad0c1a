//! `aigenora init --samples`: our built-in protocols and our hooks for the well-known
//! contracts, written into the data dir's protocol library for people to read and adapt.

use std::path::PathBuf;

use super::well_known::{self, Installed, WELL_KNOWN};
use super::{BUILTINS, materialize};
use crate::layout::DataDir;

/// What one sample is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum SampleKind {
    /// spec.json and hooks.py of a built-in (rewritten whenever it is used by its alias).
    Builtin,
    /// hooks.py alone for a well-known contract: the spec arrives from the server on the
    /// first `join` or `host --protocol`, and edits to the hooks are kept.
    WellKnown,
}

impl SampleKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One sample in the library.
#[derive(Debug, Clone)]
pub struct Sample {
    pub kind: SampleKind,
    pub alias: &'static str,
    pub dir: PathBuf,
    /// False when a well-known directory already held hooks of the user's own.
    pub written: bool,
}

/// Writes every sample into the library of `data_dir`.
pub fn write_samples(library: &DataDir) -> std::io::Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for builtin in BUILTINS {
        samples.push(Sample {
            kind: SampleKind::Builtin,
            alias: builtin.alias,
            dir: materialize(builtin, library)?,
            written: true,
        });
    }
    for entry in WELL_KNOWN {
        let dir = library.protocol_dir(entry.protocol_id);
        let installed = well_known::install(entry, &dir)?;
        samples.push(Sample {
            kind: SampleKind::WellKnown,
            alias: entry.alias,
            dir,
            written: installed != Installed::KeptOwn,
        });
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_lands_in_the_library_and_edits_to_well_known_hooks_stay() {
        let data = tempfile::tempdir().unwrap();
        let samples = write_samples(&DataDir::new(data.path())).unwrap();
        assert_eq!(samples.len(), BUILTINS.len() + WELL_KNOWN.len());
        for sample in &samples {
            assert!(sample.dir.join("hooks.py").is_file(), "{}", sample.alias);
            let has_spec = sample.dir.join("spec.json").is_file();
            assert_eq!(
                has_spec,
                sample.kind == SampleKind::Builtin,
                "{}",
                sample.alias
            );
        }
        let adapted = samples.last().unwrap().dir.join("hooks.py");
        std::fs::write(&adapted, "class Hooks: pass  # adapted\n").unwrap();
        let again = write_samples(&DataDir::new(data.path())).unwrap();
        assert!(!again.last().unwrap().written);
        assert_eq!(
            std::fs::read_to_string(adapted).unwrap(),
            "class Hooks: pass  # adapted\n"
        );
    }
}
