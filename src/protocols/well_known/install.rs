//! Putting our hooks for a well-known contract into a protocol directory, next to the spec
//! fetched from the server, without ever overwriting hooks a user wrote or adapted.
//!
//! Our copy carries a marker (`.aigenora-well-known.json`, the alias and the hash of what we
//! wrote): a hooks.py that still has that hash is ours and is brought up to date; any other
//! hooks.py, except an unfilled skeleton, is the user's and is left alone.

use std::path::Path;

use serde_json::{Value, json};

use super::{WellKnown, by_id};
use crate::canonical::sha256_hex;
use crate::hooks::skeleton;
use crate::spec::Spec;

/// The marker next to a hooks.py we wrote.
pub const HOOKS_MARKER: &str = ".aigenora-well-known.json";

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// There was no hooks.py (or only a skeleton): ours is there now.
    Written,
    /// Ours from another build was there: replaced by this build's.
    Updated,
    /// This build's hooks were there already.
    Current,
    /// A hooks.py of the user's own is there; it stays.
    KeptOwn,
}

/// Writes `entry`'s hooks into `dir` unless the user has hooks of their own there.
pub fn install(entry: &WellKnown, dir: &Path) -> std::io::Result<Installed> {
    let hooks = dir.join("hooks.py");
    let installed = match std::fs::read_to_string(&hooks) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Installed::Written,
        Err(error) => return Err(error),
        Ok(text) if text == entry.hooks_py => Installed::Current,
        Ok(_) if skeleton::detect(dir).pristine => Installed::Written,
        Ok(text) if marked_as_ours(dir, &text) => Installed::Updated,
        Ok(_) => return Ok(Installed::KeptOwn),
    };
    std::fs::create_dir_all(dir)?;
    if installed != Installed::Current {
        std::fs::write(&hooks, entry.hooks_py)?;
    }
    match std::fs::remove_file(dir.join(skeleton::SIDECAR)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    let marker = json!({
        "alias": entry.alias,
        "protocol_id": entry.protocol_id,
        "hooks_sha256": sha256_hex(entry.hooks_py),
    });
    std::fs::write(dir.join(HOOKS_MARKER), marker.to_string())?;
    Ok(installed)
}

/// Whether the marker says we wrote exactly `text`.
fn marked_as_ours(dir: &Path, text: &str) -> bool {
    std::fs::read_to_string(dir.join(HOOKS_MARKER))
        .ok()
        .and_then(|marker| serde_json::from_str::<Value>(&marker).ok())
        .is_some_and(|marker| marker["hooks_sha256"] == sha256_hex(text).as_str())
}

/// What a protocol directory's hooks.py is once its spec is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProvidedHooks {
    /// Ours for a well-known contract (written now or already there).
    WellKnown(&'static WellKnown),
    /// The hooks.py that was already there (the user's own, or a skeleton still to fill in).
    Existing,
    /// A fresh skeleton: this build has no hooks for the contract.
    Skeleton,
}

/// Gives a protocol directory hooks for `spec`: ours for a well-known contract (unless the
/// user has their own there), else a skeleton when there is no hooks.py at all.
pub fn provide_hooks(spec: &Spec, dir: &Path) -> std::io::Result<ProvidedHooks> {
    if let Some(entry) = by_id(&spec.protocol_id()) {
        return Ok(match install(entry, dir)? {
            Installed::KeptOwn => ProvidedHooks::Existing,
            _ => ProvidedHooks::WellKnown(entry),
        });
    }
    Ok(if skeleton::write_scaffold(spec, dir)? {
        ProvidedHooks::Skeleton
    } else {
        ProvidedHooks::Existing
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::well_known::WELL_KNOWN;

    #[test]
    fn ours_are_written_updated_and_never_replace_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let entry = &WELL_KNOWN[0];
        let hooks = dir.path().join("hooks.py");
        assert_eq!(install(entry, dir.path()).unwrap(), Installed::Written);
        assert_eq!(std::fs::read_to_string(&hooks).unwrap(), entry.hooks_py);
        assert_eq!(install(entry, dir.path()).unwrap(), Installed::Current);

        let older = WellKnown {
            hooks_py: "class Hooks: pass  # an older build's\n",
            ..*entry
        };
        std::fs::write(&hooks, older.hooks_py).unwrap();
        install(&older, dir.path()).unwrap();
        assert_eq!(install(entry, dir.path()).unwrap(), Installed::Updated);

        std::fs::write(&hooks, "# my own\nclass Hooks: pass\n").unwrap();
        assert_eq!(install(entry, dir.path()).unwrap(), Installed::KeptOwn);
        assert_eq!(
            std::fs::read_to_string(&hooks).unwrap(),
            "# my own\nclass Hooks: pass\n"
        );
    }

    #[test]
    fn a_skeleton_gives_way_to_our_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let entry = &WELL_KNOWN[0];
        std::fs::write(
            dir.path().join("hooks.py"),
            "AIGENORA_SKELETON = True\nclass Hooks: pass\n",
        )
        .unwrap();
        assert_eq!(install(entry, dir.path()).unwrap(), Installed::Written);
        assert!(!skeleton::detect(dir.path()).pristine);
    }
}
