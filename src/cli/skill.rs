//! `aigenora skill ...`: the agent guide embedded in this binary, placed where a coding agent
//! (Claude Code, Codex, OpenCode) looks for it, kept current, and checked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use super::GlobalArgs;
use super::remote::print_json;
use crate::skill::install::{self, GuideStatus, Placement};
use crate::skill::installed;
use crate::skill::{self, Target};

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Write the guide (SKILL.md and its appendices) where the agent looks for it; creates
    /// PERSONAL.md once. An existing SKILL.md that differs is refused without --force.
    Install {
        #[command(flatten)]
        place: PlaceArgs,
        /// Overwrite an existing SKILL.md (what is replaced is backed up first).
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Bring an installed guide to this binary's version, backing up each file it replaces
    /// (the newest 3 backups of a file are kept). PERSONAL.md is never touched. Without
    /// --target: every guide `skill install` placed (remembered in the data dir).
    Update {
        #[command(flatten)]
        place: ChosenPlace,
        #[arg(long)]
        json: bool,
    },
    /// Say whether the installed guide is this binary's: exit 0 when current, 1 when it is
    /// outdated, edited, incomplete or not installed. Without --target: every guide `skill
    /// install` placed, exit 0 only when all are current.
    Check {
        #[command(flatten)]
        place: ChosenPlace,
        #[arg(long)]
        json: bool,
    },
    /// Print the version of the guide this binary installs.
    Version {
        #[arg(long)]
        json: bool,
    },
    /// Print where the guide's SKILL.md goes for a target.
    Path {
        #[command(flatten)]
        place: PlaceArgs,
        #[arg(long)]
        json: bool,
    },
}

/// Which agent, and where its project (or home) directory is.
#[derive(Debug, Clone, Args)]
pub struct PlaceArgs {
    /// The coding agent whose skill directory to use.
    #[arg(long, value_enum)]
    pub target: Target,
    /// The directory the agent's skill directory is under (a project, or your home for
    /// every project). Default: the current directory.
    #[arg(long, value_name = "DIR", conflicts_with = "path")]
    pub base: Option<PathBuf>,
    /// Put SKILL.md exactly here instead (the appendices go beside it).
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,
}

/// One guide named by its flags, or (no `--target`) every guide remembered in the data dir.
#[derive(Debug, Clone, Args)]
pub struct ChosenPlace {
    /// The coding agent whose skill directory to use (default: every guide installed).
    #[arg(long, value_enum)]
    pub target: Option<Target>,
    /// The directory the agent's skill directory is under. Default: the current directory.
    #[arg(long, value_name = "DIR", conflicts_with = "path", requires = "target")]
    pub base: Option<PathBuf>,
    /// SKILL.md exactly here (the appendices beside it).
    #[arg(long, value_name = "FILE", requires = "target")]
    pub path: Option<PathBuf>,
}

impl ChosenPlace {
    /// The guides meant: the one the flags name, or every one remembered in `data_dir`.
    fn chosen(&self, data_dir: &crate::layout::DataDir) -> anyhow::Result<Vec<PlaceArgs>> {
        if let Some(target) = self.target {
            return Ok(vec![PlaceArgs {
                target,
                base: self.base.clone(),
                path: self.path.clone(),
            }]);
        }
        let remembered = installed::remembered(data_dir);
        if remembered.is_empty() {
            anyhow::bail!(
                "no guide installed from the data dir {}: name one with --target (and --base or                  --path), or install one with `aigenora skill install --target ...`",
                crate::terminal::escape_control(&data_dir.root().display().to_string())
            );
        }
        Ok(remembered
            .into_iter()
            .map(|known| PlaceArgs {
                target: known.target,
                base: None,
                path: Some(known.skill_md),
            })
            .collect())
    }
}

impl PlaceArgs {
    /// These flags as typed, for the command a message suggests.
    fn flags(&self) -> String {
        let mut flags = format!("--target {}", self.target.as_str());
        for (flag, value) in [("--base", &self.base), ("--path", &self.path)] {
            if let Some(value) = value {
                let shown = value.display().to_string();
                let shown = crate::terminal::escape_control(&shown);
                flags.push_str(&format!(" {flag} {shown}"));
            }
        }
        flags
    }

    pub fn placement(&self) -> Placement {
        let base = self.base.clone().unwrap_or_else(|| PathBuf::from("."));
        Placement::new(self.target, &base, self.path.as_deref())
    }
}

/// The guide as this binary renders it.
pub fn guide() -> Vec<skill::GuideFile> {
    skill::guide(super::reference::commands_markdown())
}

pub fn run(command: SkillCommand, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let data_dir = global.data_dir();
    match command {
        SkillCommand::Install { place, force, json } => {
            let placement = place.placement();
            let written = install::install(&placement, &guide(), force)?;
            if let Err(error) = installed::remember(&data_dir, place.target, &placement) {
                eprintln!(
                    "warning: the guide is installed, but `skill update` and `skill check`                      without --target will not know it: {error}"
                );
            }
            report_written(&written, json, "installed");
            Ok(ExitCode::SUCCESS)
        }
        SkillCommand::Update { place, json } => {
            let chosen = place.chosen(&data_dir)?;
            if place.target.is_some() {
                let written = install::update(&chosen[0].placement(), &guide())?;
                report_written(&written, json, "updated");
                return Ok(ExitCode::SUCCESS);
            }
            update_all(&chosen, json)
        }
        SkillCommand::Check { place, json } => {
            let chosen = place.chosen(&data_dir)?;
            if place.target.is_some() {
                return check(&chosen[0], json);
            }
            check_all(&chosen, json)
        }
        SkillCommand::Version { json } => {
            if json {
                print_json(&json!({"version": skill::VERSION}));
            } else {
                println!("{}", skill::VERSION);
            }
            Ok(ExitCode::SUCCESS)
        }
        SkillCommand::Path { place, json } => {
            let placement = place.placement();
            if json {
                print_json(&json!({
                    "target": place.target.as_str(),
                    "skill_md": placement.skill_md,
                    "installed_version": placement.installed_version(),
                }));
            } else {
                println!("{}", placement.skill_md.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `skill update` on every remembered guide: each updated (or its one-line reason), exit 1
/// when any could not be.
fn update_all(chosen: &[PlaceArgs], as_json: bool) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    let mut failed = false;
    for place in chosen {
        match install::update(&place.placement(), &guide()) {
            Ok(written) if as_json => results.push(json!(written)),
            Ok(written) => report_written(&written, false, "updated"),
            Err(error) => {
                failed = true;
                let error = error.to_string();
                if as_json {
                    results.push(json!({"skill_md": place.placement().skill_md, "error": error}));
                } else {
                    println!("[FAILED] {error}");
                }
            }
        }
    }
    if as_json {
        print_json(&json!(results));
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `skill check` on every remembered guide: exit 0 only when every one is current.
fn check_all(chosen: &[PlaceArgs], as_json: bool) -> anyhow::Result<ExitCode> {
    let checked: Vec<install::Checked> = chosen
        .iter()
        .map(|place| install::check(&place.placement(), &guide()))
        .collect();
    if as_json {
        print_json(&json!(checked));
    } else {
        for (place, one) in chosen.iter().zip(&checked) {
            print_checked(place, one);
        }
    }
    let current = checked.iter().all(|one| one.status == GuideStatus::Current);
    Ok(if current {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn report_written(written: &install::Written, as_json: bool, verb: &str) {
    if as_json {
        print_json(&json!(written));
        return;
    }
    let path = written.skill_md.display();
    if written.written.is_empty() {
        println!("[OK] {path} is already version {}", written.version);
    } else {
        println!(
            "[OK] {verb} version {} at {path} ({})",
            written.version,
            written.written.join(", ")
        );
    }
    for backup in &written.backups {
        println!("backup: {}", backup.display());
    }
    if written.personal_created {
        println!(
            "created {} for your own notes",
            personal(&written.skill_md).display()
        );
    }
}

fn personal(skill_md: &Path) -> PathBuf {
    skill_md.with_file_name(skill::PERSONAL_FILE)
}

fn check(place: &PlaceArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let checked = install::check(&place.placement(), &guide());
    if as_json {
        print_json(&json!(checked));
    } else {
        print_checked(place, &checked);
    }
    Ok(if checked.status == GuideStatus::Current {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_checked(place: &PlaceArgs, checked: &install::Checked) {
    let path = checked.skill_md.display();
    let flags = place.flags();
    match checked.status {
        GuideStatus::Current => println!("current: {path} is version {}", checked.version),
        GuideStatus::NotInstalled => {
            println!("not installed: no {path} (run `aigenora skill install {flags}`)")
        }
        status => {
            let what: &str = status.into();
            let changed: Vec<&str> = checked
                .files
                .iter()
                .filter(|file| file.status != install::FileStatus::Current)
                .map(|file| file.name.as_str())
                .collect();
            println!(
                "{what}: {path} is version {}, this binary's is {} ({}); run `aigenora \
                 skill update {flags}`",
                checked.installed_version.as_deref().unwrap_or("unknown"),
                checked.version,
                changed.join(", ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// Splits a shell line into words: spaces separate, quotes group, `#` starts a comment,
    /// and a redirection or a pipe ends the command.
    fn words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut quote, mut in_word) =
            (Vec::new(), String::new(), None, false);
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => (quote, in_word) = (Some(c), true),
                (None, '#' | '>' | '|') if !in_word => break,
                (None, ' ') => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                    }
                    in_word = false;
                }
                (None, c) => (in_word, _) = (true, word.push(c)),
            }
        }
        if in_word {
            words.push(word);
        }
        words
    }

    #[test]
    fn every_command_the_guide_shows_parses_with_this_binarys_command_line() {
        let mut checked = 0;
        for file in super::guide() {
            let mut in_shell = false;
            for line in file.text.lines() {
                if line.starts_with("```") {
                    in_shell = line == "```sh";
                    continue;
                }
                if !in_shell || !line.starts_with("aigenora ") {
                    continue;
                }
                let parsed = crate::cli::Cli::try_parse_from(words(line));
                assert!(
                    parsed.is_ok(),
                    "{}: {line}: {}",
                    file.name,
                    parsed.unwrap_err()
                );
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} commands found");
    }

    #[test]
    fn the_word_splitter_handles_quotes_and_comments() {
        assert_eq!(
            words(r#"aigenora x --options '{"a": 1}' "b c"  > out  # note"#),
            ["aigenora", "x", "--options", r#"{"a": 1}"#, "b c"]
        );
    }
}
