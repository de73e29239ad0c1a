//! The ways this project writes into a data dir, each written once: directories only their
//! owner can enter, whole files replaced atomically through a temporary file of a unique name
//! (never through a symlink someone left in the way), and JSON lines appended in one write
//! each. Everything is private to the user who runs the agent: other local users may share
//! the machine, and session files hold hidden hands and the controller's token.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of every directory this project creates in a data dir.
pub const PRIVATE_DIR: u32 = 0o700;
/// Mode of every file this project creates in a data dir.
pub const PRIVATE_FILE: u32 = 0o600;

/// From now on, files and directories this process creates (Python's included) are for its
/// user only, whatever the umask it was started with.
pub fn keep_new_files_private() {
    // SAFETY: umask only sets the process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` and any missing parents, each new one mode 0700.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(dir)
}

/// Creates `dir` (mode 0700) and, when it already existed with access for group or others,
/// takes that access away. Returns the mode it had when it was tightened.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<Option<u32>> {
    create_private_dir(dir)?;
    let mode = std::fs::metadata(dir)?.permissions().mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(None);
    }
    std::fs::set_permissions(dir, Permissions::from_mode(mode & PRIVATE_DIR))?;
    Ok(Some(mode))
}

/// Makes sure a data dir (or a directory inside one) exists and only its owner can enter it
/// (one made with a loose umask, `mkdir` of a shell, is tightened: what it holds is this
/// user's sessions and identity).
pub fn ensure_private_data_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(mode) = ensure_private_dir(dir)? {
        tracing::debug!(dir = %dir.display(), "tightened from {mode:03o} to 0700");
    }
    Ok(())
}

/// Creates (or truncates) `path` for writing, mode 0600, never through a symlink.
pub fn create_private_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(PRIVATE_FILE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Writes `bytes` to `path` unless it exists (`AlreadyExists` then): atomically, mode 0600,
/// so a concurrent reader sees no file or the whole of it.
pub fn create_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temporary = temporary_beside(path)?;
    temporary.write_all(bytes)?;
    temporary
        .persist_noclobber(path)
        .map_err(|error| error.error)?;
    Ok(())
}

/// Holds an exclusive lock on `<path>.lock` until dropped, so read-modify-write cycles of
/// `path` by several processes happen one after the other.
pub fn lock_beside(path: &Path) -> std::io::Result<File> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(PRIVATE_FILE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path.with_file_name(name))?;
    lock.lock()?;
    Ok(lock)
}

/// Replaces `path` with `bytes` atomically: readers see the old file or the new one, never
/// half of it. The new file is mode 0600, written to a fresh temporary file beside it
/// (created exclusively, so a symlink planted at a predictable name is never followed) and
/// renamed into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

/// [`write_atomic`], and the data reaches the disk before it returns (`fsync` of the file):
/// for the few files whose loss would cost more than a rewrite (the identity).
pub fn write_atomic_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, true)
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let mut temporary = temporary_beside(path)?;
    temporary.write_all(bytes)?;
    if sync {
        temporary.as_file().sync_all()?;
    }
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// A new, empty, exclusively created 0600 file of a unique name in `path`'s directory (so it
/// can be renamed onto `path`).
fn temporary_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(PRIVATE_FILE))
        .tempfile_in(dir)
}

/// Opens `path` for appending (and reading its last byte; created 0600 when missing, its directory too), refusing to
/// follow a symlink at the last component.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .create(true)
            .append(true)
            .mode(PRIVATE_FILE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    match open() {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                create_private_dir(parent)?;
            }
            open()
        }
        other => other,
    }
}

/// Appends `line` (which must not contain a newline) as one line, in one `write` call, so
/// concurrent appenders never interleave within a line. If the file ends in the middle of a
/// line (a writer that died mid-write), a newline is put first: the torn line stays torn
/// and readers skip it, and this one is read whole.
pub fn append_line(file: &mut File, line: &[u8]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(line.len() + 2);
    if ends_mid_line(file)? {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    file.write_all(&bytes)
}

/// Ends a line an earlier writer left torn (the file's last byte is not a newline), so the
/// next line appended is read whole; see [`append_line`].
pub fn end_torn_line(file: &mut File) -> std::io::Result<()> {
    if ends_mid_line(file)? {
        file.write_all(b"\n")?;
    }
    Ok(())
}

/// Whether the file's last byte is something other than a newline.
fn ends_mid_line(file: &File) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let length = file.metadata()?.len();
    if length == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, length - 1)?;
    Ok(last[0] != b'\n')
}

/// Appends `value` as one compact JSON line to `path` (see [`append_line`]).
pub fn append_json_line(path: &Path, value: &serde_json::Value) -> std::io::Result<()> {
    let line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    append_line(&mut open_append(path)?, &line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_and_dirs_are_private_and_loose_dirs_are_tightened() {
        let base = tempfile::tempdir().unwrap();
        let nested = base.path().join("a/b");
        create_private_dir(&nested).unwrap();
        assert_eq!(mode(&base.path().join("a")), 0o700);
        assert_eq!(mode(&nested), 0o700);
        let loose = base.path().join("loose");
        std::fs::create_dir(&loose).unwrap();
        std::fs::set_permissions(&loose, Permissions::from_mode(0o755)).unwrap();
        assert_eq!(ensure_private_dir(&loose).unwrap(), Some(0o755));
        assert_eq!(mode(&loose), 0o700);
        assert_eq!(ensure_private_dir(&loose).unwrap(), None);

        let file = nested.join("state.json");
        write_atomic(&file, b"{}").unwrap();
        assert_eq!(mode(&file), 0o600);
        append_json_line(&nested.join("log.jsonl"), &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(mode(&nested.join("log.jsonl")), 0o600);
        assert_eq!(
            std::fs::read_dir(&nested).unwrap().count(),
            2,
            "no temporary file is left behind"
        );
    }

    #[test]
    fn a_planted_symlink_is_replaced_never_written_through() {
        let base = tempfile::tempdir().unwrap();
        let victim = base.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = base.path().join("snapshot.json");
        // The old fixed temporary names, and the file itself, pointing elsewhere.
        for name in ["snapshot.tmp", ".snapshot.json.tmp", "snapshot.json.tmp"] {
            std::os::unix::fs::symlink(&victim, base.path().join(name)).unwrap();
        }
        write_atomic(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");

        let log = base.path().join("events.jsonl");
        std::os::unix::fs::symlink(&victim, &log).unwrap();
        assert!(open_append(&log).is_err(), "appends never follow a symlink");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn an_append_after_a_torn_line_starts_a_line_of_its_own() {
        let base = tempfile::tempdir().unwrap();
        let path = base.path().join("decisions.jsonl");
        std::fs::write(&path, "{\"round\":0,\"choice\":\"ro").unwrap();
        append_json_line(&path, &serde_json::json!({"round": 1})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"round\":0,\"choice\":\"ro\n{\"round\":1}\n");
    }
}
