//! A copy of the guide on disk: written where an agent looks (`install`), refreshed with a
//! backup of whatever it replaces (`update`), compared with this binary's (`check`). The
//! user's `PERSONAL.md` is created once and never replaced.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::{GuideFile, PERSONAL_FILE, SKILL_FILE, VERSION, frontmatter_version};

/// How many backups of one file `update` keeps (the newest).
pub const KEPT_BACKUPS: usize = 3;

/// Where one copy of the guide lives: its `SKILL.md`, the appendices beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub skill_md: PathBuf,
}

impl Placement {
    /// `--path FILE` when given, else the target's directory under `base`.
    pub fn new(target: super::Target, base: &Path, path: Option<&Path>) -> Placement {
        let skill_md = match path {
            Some(path) => path.to_path_buf(),
            None => base.join(target.relative_dir()).join(SKILL_FILE),
        };
        Placement { skill_md }
    }

    pub fn dir(&self) -> &Path {
        self.skill_md.parent().unwrap_or(Path::new("."))
    }

    /// Where a guide file goes: `SKILL.md` at the placement's path, the others beside it.
    fn file(&self, name: &str) -> PathBuf {
        if name == SKILL_FILE {
            self.skill_md.clone()
        } else {
            self.dir().join(name)
        }
    }

    /// The version the installed `SKILL.md` declares, if it is there and declares one.
    pub fn installed_version(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.skill_md).ok()?;
        frontmatter_version(&text).map(str::to_string)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error(
        "{} already exists (version {}); `aigenora skill update` replaces it keeping a \
         backup, `aigenora skill install --force` overwrites it",
        path.display(), version.as_deref().unwrap_or("unknown")
    )]
    Exists {
        path: PathBuf,
        version: Option<String>,
    },
    #[error("no guide installed at {} (run `aigenora skill install`)", path.display())]
    NotInstalled { path: PathBuf },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SkillError {
    let path = path.to_path_buf();
    move |source| SkillError::Io { what, path, source }
}

/// One file compared with this binary's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Current,
    Differs,
    Missing,
}

/// A whole copy compared with this binary's guide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum GuideStatus {
    /// Every file is this binary's.
    Current,
    /// `SKILL.md` declares another version.
    Outdated,
    /// This version, but a file was edited.
    Modified,
    /// This version, but an appendix is missing.
    Incomplete,
    /// No `SKILL.md` there.
    NotInstalled,
}

#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub skill_md: PathBuf,
    pub status: GuideStatus,
    pub installed_version: Option<String>,
    pub version: &'static str,
    pub files: Vec<CheckedFile>,
    pub personal: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckedFile {
    pub name: String,
    pub status: FileStatus,
}

/// What `install` or `update` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Written {
    pub skill_md: PathBuf,
    pub previous_version: Option<String>,
    pub version: &'static str,
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    pub backups: Vec<PathBuf>,
    pub personal_created: bool,
}

fn status_of(path: &Path, text: &str) -> FileStatus {
    match std::fs::read(path) {
        Ok(bytes) if bytes == text.as_bytes() => FileStatus::Current,
        Ok(_) => FileStatus::Differs,
        Err(_) => FileStatus::Missing,
    }
}

/// Compares the copy at `placement` with `guide`.
pub fn check(placement: &Placement, guide: &[GuideFile]) -> Checked {
    let files: Vec<CheckedFile> = guide
        .iter()
        .map(|file| CheckedFile {
            name: file.name.to_string(),
            status: status_of(&placement.file(file.name), &file.text),
        })
        .collect();
    let installed_version = placement.installed_version();
    let any = |wanted| files.iter().any(|file| file.status == wanted);
    let status = if !placement.skill_md.is_file() {
        GuideStatus::NotInstalled
    } else if installed_version.as_deref() != Some(VERSION) {
        GuideStatus::Outdated
    } else if any(FileStatus::Differs) {
        GuideStatus::Modified
    } else if any(FileStatus::Missing) {
        GuideStatus::Incomplete
    } else {
        GuideStatus::Current
    };
    Checked {
        skill_md: placement.skill_md.clone(),
        status,
        installed_version,
        version: VERSION,
        files,
        personal: placement.file(PERSONAL_FILE).is_file(),
    }
}

/// Writes the guide at `placement`. An existing `SKILL.md` that is not this binary's is
/// refused unless `force`; whatever is replaced is backed up first.
pub fn install(
    placement: &Placement,
    guide: &[GuideFile],
    force: bool,
) -> Result<Written, SkillError> {
    if !force && status_of(&placement.skill_md, &guide[0].text) == FileStatus::Differs {
        return Err(SkillError::Exists {
            path: placement.skill_md.clone(),
            version: placement.installed_version(),
        });
    }
    write_guide(placement, guide)
}

/// Brings an installed copy to this binary's guide, backing up each file it replaces.
pub fn update(placement: &Placement, guide: &[GuideFile]) -> Result<Written, SkillError> {
    if !placement.skill_md.is_file() {
        return Err(SkillError::NotInstalled {
            path: placement.skill_md.clone(),
        });
    }
    write_guide(placement, guide)
}

fn write_guide(placement: &Placement, guide: &[GuideFile]) -> Result<Written, SkillError> {
    let dir = placement.dir();
    std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
    let previous_version = placement.installed_version();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let suffix = format!(
        "bak-{}-{stamp}",
        previous_version.as_deref().unwrap_or("unknown")
    );
    let mut done = Written {
        skill_md: placement.skill_md.clone(),
        previous_version,
        version: VERSION,
        ..Written::default()
    };
    for file in guide {
        let path = placement.file(file.name);
        match status_of(&path, &file.text) {
            FileStatus::Current => {
                done.unchanged.push(file.name.to_string());
                continue;
            }
            FileStatus::Differs => done.backups.push(back_up(&path, &suffix)?),
            FileStatus::Missing => {}
        }
        std::fs::write(&path, &file.text).map_err(io("cannot write", &path))?;
        done.written.push(file.name.to_string());
    }
    let personal = placement.file(PERSONAL_FILE);
    if !personal.exists() {
        std::fs::write(&personal, super::personal_template())
            .map_err(io("cannot write", &personal))?;
        done.personal_created = true;
    }
    Ok(done)
}

/// Copies `path` to `<path>.<suffix>` and keeps only the newest [`KEPT_BACKUPS`] of it.
fn back_up(path: &Path, suffix: &str) -> Result<PathBuf, SkillError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let backup = path.with_file_name(format!("{name}.{suffix}"));
    std::fs::copy(path, &backup).map_err(io("cannot back up", path))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let prefix = format!("{name}.bak-");
    let mut backups: Vec<(u128, PathBuf)> = std::fs::read_dir(dir)
        .map_err(io("cannot list", dir))?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let rest = file_name.strip_prefix(&prefix)?;
            let stamp = rest.rsplit('-').next()?.parse().ok()?;
            Some((stamp, entry.path()))
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(KEPT_BACKUPS);
    for (_, old) in backups.drain(..excess) {
        std::fs::remove_file(&old).map_err(io("cannot remove", &old))?;
    }
    Ok(backup)
}
