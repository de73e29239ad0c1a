//! `aigenora bootstrap` and `aigenora doctor`: what an agent (or a person) checks before
//! playing, each problem printed with the command that fixes it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::GlobalArgs;
use super::remote::print_json;
use crate::doctor::{self, Verdict};
use crate::terminal::escape_control;

#[derive(Debug, Args)]
pub struct BootstrapArgs {
    /// The project directory whose agent guides to look at. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub base: Option<PathBuf>,
    /// Accepted as the reference client spells it; bootstrap never contacts the network.
    #[arg(long)]
    pub offline: bool,
    /// Print one JSON object: ok, version, recommended_entrypoint, skill_md_path,
    /// skill_version, data_dir_default, issues, ...
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Do not contact the community server or a relay.
    #[arg(long)]
    pub offline: bool,
    /// Print {"ok", "checks": [{"check", "verdict", "detail", "fix"?}]}.
    #[arg(long)]
    pub json: bool,
}

/// Exits 1 only when this binary cannot play here (its interpreter does not start).
pub fn bootstrap(args: BootstrapArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let base = args.base.unwrap_or_else(|| PathBuf::from("."));
    let report = doctor::bootstrap::bootstrap(&global.data_dir(), &base, &super::skill::guide());
    if args.json {
        print_json(&report);
    } else {
        println!(
            "aigenora {} ({})",
            report.version, report.recommended_entrypoint
        );
        println!("data dir: {}", report.data_dir.display());
        match &report.python {
            Some(python) => println!("python: {} ({})", python.version, python.home),
            None => println!("python: cannot start"),
        }
        match (&report.skill_md_path, &report.skill_version) {
            (Some(path), version) => println!(
                "guide: {} (version {})",
                path.display(),
                version.as_deref().unwrap_or("unknown")
            ),
            (None, _) => println!("guide: not installed here"),
        }
        for issue in &report.issues {
            println!(
                "to do: {} -> {}",
                escape_control(&issue.problem),
                escape_control(&issue.fix)
            );
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Exits 0 when no check found a problem, 1 otherwise.
pub fn doctor(args: DoctorArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let setup = doctor::Setup {
        data_dir: global.data_dir(),
        server_flag: global.server.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let findings = runtime.block_on(doctor::doctor(&setup, args.offline));
    let ok = findings.iter().all(|f| f.verdict != Verdict::Problem);
    if args.json {
        print_json(&serde_json::json!({"ok": ok, "checks": findings}));
    } else {
        for finding in &findings {
            let verdict: &str = finding.verdict.into();
            println!(
                "{verdict:<8} {:<16} {}",
                finding.check,
                escape_control(&finding.detail)
            );
            if let Some(fix) = &finding.fix {
                println!("{:<25} fix: {}", "", escape_control(fix));
            }
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
