//! `aigenora bootstrap`: the first thing an agent runs on a machine, offline — this binary's
//! version and how to call it, the guide (installed where, which version), the data dir and
//! whether an identity is there, the interpreter for hooks — and every step still to take,
//! each with its command.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::layout::DataDir;
use crate::skill::install::{GuideStatus, Placement, check};
use crate::skill::{GuideFile, Target};

/// One thing still to do, and the command that does it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub problem: String,
    pub fix: String,
}

/// The guide as one agent would find it under the base directory.
#[derive(Debug, Clone, Serialize)]
pub struct InstalledGuide {
    pub target: &'static str,
    pub skill_md: PathBuf,
    pub status: GuideStatus,
    pub installed_version: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bootstrap {
    /// Whether this binary can play here (its interpreter for hooks starts); the issues may
    /// still list first steps.
    pub ok: bool,
    pub version: &'static str,
    /// The command to run: `aigenora` when that is this binary on PATH, else its full path.
    pub recommended_entrypoint: String,
    pub on_path: bool,
    /// The guide's main file for the first agent that has one installed.
    pub skill_md_path: Option<PathBuf>,
    pub skill_version: Option<String>,
    /// The guide this binary installs.
    pub bundled_skill_version: &'static str,
    pub guides: Vec<InstalledGuide>,
    /// The data dir commands use without `--data-dir` (environment, else `./.aigenora`).
    pub data_dir_default: PathBuf,
    /// The data dir this run looked at.
    pub data_dir: PathBuf,
    pub key_present: bool,
    pub python: Option<crate::hooks::interpreter::InterpreterInfo>,
    pub issues: Vec<Issue>,
}

const TARGETS: [Target; 3] = [Target::ClaudeCode, Target::Codex, Target::Opencode];

/// Looks at this install: `data_dir` as the command resolved it, each agent's guide under
/// `base` (the project directory), `guide` as this binary renders it.
pub fn bootstrap(data_dir: &DataDir, base: &Path, guide: &[GuideFile]) -> Bootstrap {
    let mut issues = Vec::new();
    let (recommended_entrypoint, on_path) = entrypoint(&mut issues);
    let guides: Vec<InstalledGuide> = TARGETS
        .iter()
        .map(|&target| {
            let checked = check(&Placement::new(target, base, None), guide);
            InstalledGuide {
                target: target.as_str(),
                skill_md: checked.skill_md,
                status: checked.status,
                installed_version: checked.installed_version,
            }
        })
        .collect();
    guide_issues(&guides, base, &mut issues);
    let installed = guides
        .iter()
        .find(|guide| guide.status != GuideStatus::NotInstalled);
    let key_present = data_dir.key_file().is_file();
    if !key_present {
        issues.push(Issue {
            problem: format!("no identity in {}", data_dir.root().display()),
            fix: "aigenora init".into(),
        });
    }
    let python = match crate::hooks::interpreter::describe() {
        Ok(info) => Some(info),
        Err(error) => {
            issues.push(Issue {
                problem: error,
                fix: "aigenora doctor --offline (it says how to point the binary at its Python)"
                    .into(),
            });
            None
        }
    };
    Bootstrap {
        ok: python.is_some(),
        version: crate::skill::VERSION,
        recommended_entrypoint,
        on_path,
        skill_md_path: installed.map(|guide| guide.skill_md.clone()),
        skill_version: installed.and_then(|guide| guide.installed_version.clone()),
        bundled_skill_version: crate::skill::VERSION,
        guides,
        data_dir_default: absolute(crate::config::resolve_data_dir(None).root()),
        data_dir: absolute(data_dir.root()),
        key_present,
        python,
        issues,
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `aigenora` when the first one on PATH is this very binary; otherwise its full path.
fn entrypoint(issues: &mut Vec<Issue>) -> (String, bool) {
    let Ok(this) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return ("aigenora".into(), false);
    };
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("aigenora"))
            .find(|candidate| candidate.is_file())
    });
    let shown = this.display().to_string();
    match on_path {
        Some(found) if std::fs::canonicalize(&found).ok().as_ref() == Some(&this) => {
            ("aigenora".into(), true)
        }
        Some(found) => {
            issues.push(Issue {
                problem: format!(
                    "`aigenora` on PATH is another binary ({}); this one is {shown}",
                    found.display()
                ),
                fix: format!("call {shown} by its full path, or put its directory first on PATH"),
            });
            (shown, false)
        }
        None => {
            issues.push(Issue {
                problem: "aigenora is not on PATH".into(),
                fix: format!("call {shown} by its full path, or `cargo install --path .`"),
            });
            (shown, false)
        }
    }
}

fn guide_issues(guides: &[InstalledGuide], base: &Path, issues: &mut Vec<Issue>) {
    let base = match base == Path::new(".") {
        true => String::new(),
        false => format!(
            " --base {}",
            crate::terminal::escape_control(&base.display().to_string())
        ),
    };
    let mut any = false;
    for guide in guides {
        let target = guide.target;
        match guide.status {
            GuideStatus::NotInstalled => continue,
            GuideStatus::Current => {}
            status => {
                let status: &str = status.into();
                issues.push(Issue {
                    problem: format!("the guide at {} is {status}", guide.skill_md.display()),
                    fix: format!("aigenora skill update --target {target}{base}"),
                });
            }
        }
        any = true;
    }
    if !any {
        issues.push(Issue {
            problem: "no agent guide installed in this directory".into(),
            fix: format!("aigenora skill install --target claude-code{base} (or codex, opencode)"),
        });
    }
}
