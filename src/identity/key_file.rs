//! `key.json`: `{"public_key":"<64 hex>","private_key":"<64 hex seed>"}`, compact, mode 0600.
//! `peer_id` is accepted as an alias of `public_key` when reading (as the reference does).

use crate::layout::DataDir;

use serde_json::Value;

use super::{Identity, IdentityError};

/// Loads the identity stored in `<data_dir>/key.json`.
pub fn load_key_file(data_dir: &DataDir) -> Result<Identity, IdentityError> {
    let path = data_dir.key_file();
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => IdentityError::NotFound(shown.clone()),
        _ => IdentityError::Io {
            action: "read",
            path: shown.clone(),
            source,
        },
    })?;
    let malformed = |reason: &str| IdentityError::Malformed {
        path: shown.clone(),
        reason: reason.to_string(),
    };
    let document: Value =
        serde_json::from_str(&text).map_err(|e| malformed(&format!("not JSON: {e}")))?;
    let field = |name: &str| {
        document
            .get(name)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let public = field("public_key")
        .or_else(|| field("peer_id"))
        .filter(|v| v.len() == 64)
        .ok_or_else(|| malformed("public_key must be 64 hex characters"))?
        .to_ascii_lowercase();
    let private = field("private_key")
        .filter(|v| v.len() == 64)
        .ok_or_else(|| malformed("private_key must be 64 hex characters"))?
        .to_ascii_lowercase();
    let identity = Identity::from_seed_hex(&private).map_err(|e| malformed(&e.to_string()))?;
    if identity.public_key() != public {
        return Err(malformed("public_key does not belong to private_key"));
    }
    Ok(identity)
}

/// Creates `<data_dir>/key.json` with a new identity, unless one exists and `force` is off.
/// Returns the identity in the file and whether it was newly written.
pub fn create_key_file(data_dir: &DataDir, force: bool) -> Result<(Identity, bool), IdentityError> {
    let path = data_dir.key_file();
    if path.exists() && !force {
        return Ok((load_key_file(data_dir)?, false));
    }
    let io = |action, source| IdentityError::Io {
        action,
        path: path.display().to_string(),
        source,
    };
    data_dir
        .ensure_private()
        .map_err(|e| io("create the directory of", e))?;
    let identity = Identity::generate();
    let text = format!(
        r#"{{"public_key":"{}","private_key":"{}"}}"#,
        identity.public_key(),
        identity.seed_hex()
    );
    crate::layout::write_atomic_synced(&path, text.as_bytes()).map_err(|e| io("write", e))?;
    Ok((identity, true))
}

#[cfg(test)]
mod tests {
    use super::super::vectors::*;
    use super::*;

    #[test]
    fn create_then_load_round_trips_with_private_permissions() {
        let temp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(temp.path());
        let (created, fresh) = create_key_file(&dir, false).unwrap();
        assert!(fresh);
        let text = std::fs::read_to_string(dir.key_file()).unwrap();
        assert!(text.starts_with(r#"{"public_key":""#) && text.contains(r#"","private_key":""#));
        assert_eq!(
            load_key_file(&dir).unwrap().public_key(),
            created.public_key()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.key_file())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (kept, fresh) = create_key_file(&dir, false).unwrap();
        assert!(!fresh);
        assert_eq!(kept.public_key(), created.public_key());
        let (replaced, fresh) = create_key_file(&dir, true).unwrap();
        assert!(fresh);
        assert_ne!(replaced.public_key(), created.public_key());
    }

    #[test]
    fn accepts_peer_id_and_uppercase_and_rejects_mismatches() {
        let temp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(temp.path());
        let write = |text: String| std::fs::write(dir.key_file(), text).unwrap();
        write(format!(
            r#"{{"peer_id":"{}","private_key":"{}"}}"#,
            ALICE_PUBLIC.to_uppercase(),
            ALICE_SEED
        ));
        assert_eq!(load_key_file(&dir).unwrap().public_key(), ALICE_PUBLIC);
        write(format!(
            r#"{{"public_key":"{BOB_PUBLIC}","private_key":"{ALICE_SEED}"}}"#
        ));
        let error = load_key_file(&dir).unwrap_err().to_string();
        assert!(error.contains("does not belong"), "{error}");
        write("{}".into());
        assert!(
            load_key_file(&dir)
                .unwrap_err()
                .to_string()
                .contains("public_key must be 64")
        );
        let missing = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_key_file(&DataDir::new(missing.path())),
            Err(IdentityError::NotFound(_))
        ));
    }
}
