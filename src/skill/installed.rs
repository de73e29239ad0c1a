//! The guides `skill install` placed, remembered in the data dir (`skills.json`), so
//! `skill update` and `skill check` without `--target` look after every copy the user
//! installed, wherever it went.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Target;
use super::install::Placement;
use crate::layout::DataDir;

/// Most placements remembered; installing one more forgets the oldest.
pub const MAX_REMEMBERED: usize = 64;

/// Largest record read back (a hand-edited or corrupt file reads as empty beyond it).
const MAX_RECORD_BYTES: u64 = 256 * 1024;

/// One installed copy of the guide: for which agent, and where its `SKILL.md` is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    pub target: Target,
    pub skill_md: PathBuf,
}

impl Installed {
    pub fn placement(&self) -> Placement {
        Placement::new(self.target, Path::new("."), Some(&self.skill_md))
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    installed: Vec<Installed>,
}

/// The copies remembered in `data_dir`, oldest first; none when there is no readable record.
pub fn remembered(data_dir: &DataDir) -> Vec<Installed> {
    let path = data_dir.skills_file();
    let readable = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_RECORD_BYTES);
    if !readable {
        return Vec::new();
    }
    std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
        .map(|record| record.installed)
        .unwrap_or_default()
}

/// Remembers that `target`'s guide is at `placement` (by its absolute path; once per path,
/// the newest last, at most [`MAX_REMEMBERED`]).
pub fn remember(data_dir: &DataDir, target: Target, placement: &Placement) -> std::io::Result<()> {
    let skill_md = std::path::absolute(&placement.skill_md)?;
    let mut installed = remembered(data_dir);
    installed.retain(|known| known.skill_md != skill_md);
    installed.push(Installed { target, skill_md });
    let excess = installed.len().saturating_sub(MAX_REMEMBERED);
    installed.drain(..excess);
    data_dir.ensure_private()?;
    let bytes = serde_json::to_vec_pretty(&Record { installed }).expect("a record serializes");
    crate::layout::write_atomic(&data_dir.skills_file(), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_each_path_once_newest_last_and_at_most_the_cap() {
        let temp = tempfile::tempdir().unwrap();
        let data = DataDir::new(temp.path());
        let at = |n: usize| {
            Placement::new(
                Target::Codex,
                Path::new("/p"),
                Some(Path::new(&format!("/p/{n}/SKILL.md"))),
            )
        };
        assert!(remembered(&data).is_empty());
        remember(&data, Target::Codex, &at(1)).unwrap();
        remember(&data, Target::ClaudeCode, &at(2)).unwrap();
        remember(&data, Target::Codex, &at(1)).unwrap();
        let paths: Vec<PathBuf> = remembered(&data).into_iter().map(|i| i.skill_md).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/p/2/SKILL.md"),
                PathBuf::from("/p/1/SKILL.md")
            ]
        );
        for n in 0..MAX_REMEMBERED + 5 {
            remember(&data, Target::Opencode, &at(100 + n)).unwrap();
        }
        let kept = remembered(&data);
        assert_eq!(kept.len(), MAX_REMEMBERED);
        assert_eq!(
            kept.last().unwrap().skill_md,
            PathBuf::from(format!("/p/{}/SKILL.md", 100 + MAX_REMEMBERED + 4))
        );
    }

    #[test]
    fn a_corrupt_record_reads_as_empty_and_is_replaced() {
        let temp = tempfile::tempdir().unwrap();
        let data = DataDir::new(temp.path());
        std::fs::write(data.skills_file(), b"{not json").unwrap();
        assert!(remembered(&data).is_empty());
        let placement = Placement::new(Target::Codex, Path::new("/q"), None);
        remember(&data, Target::Codex, &placement).unwrap();
        assert_eq!(remembered(&data)[0].target, Target::Codex);
    }
}
