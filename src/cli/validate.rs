//! `aigenora validate`: lint spec files and directories (in parallel, one summary), or
//! validate one message and/or options against a spec. Exit 0 clean, 1 on lint errors (or
//! warnings with `--deny-warnings`), 2 on usage errors.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};

use super::lint_output::{self, Checked};
use crate::spec::{self, Direction, FileReport, Spec};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Spec files, and directories to search for spec.json files (recursively; hidden,
    /// target, node_modules and virtualenv directories are skipped). `validate SPEC
    /// MESSAGE` validates a message instead: a second argument that is `-` (stdin), a JSON
    /// object, or other JSON text that names no file.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The direction the message travels.
    #[arg(long, value_enum)]
    pub direction: Option<Direction>,
    /// Validate against the schema with this name instead of looking it up by action.
    #[arg(long = "message", value_name = "NAME")]
    pub message_name: Option<String>,
    /// Options (a JSON object) to check against each spec's parameters.
    #[arg(long, value_name = "JSON")]
    pub options: Option<String>,
    /// How to print findings: text (file:line:col lines), json (one JSON object per file,
    /// one per line), github (workflow-command annotations), sarif (SARIF 2.1.0).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Github,
    Sarif,
}

/// Exit code for a command line that cannot be carried out as given.
const USAGE: u8 = 2;

pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    if let Some(message) = message_argument(&args) {
        if matches!(format, Format::Github | Format::Sarif) {
            return Ok(usage(
                "--format github and sarif report lint findings, not a message",
            ));
        }
        let spec = Spec::load(&args.paths[0])?;
        return validate_message(&args, format == Format::Json, &spec, message);
    }
    if args.direction.is_some() || args.message_name.is_some() {
        return Ok(usage(
            "--direction and --message apply to a message: validate SPEC MESSAGE",
        ));
    }
    let options = match &args.options {
        Some(text) => match spec::parse_options(Some(text)) {
            Ok(options) => Some(options),
            Err(error) => return Ok(usage(&error.to_string())),
        },
        None => None,
    };
    let files = match spec_files(&args.paths) {
        Ok(files) => files,
        Err(problem) => return Ok(usage(&problem)),
    };
    let single = args.paths.len() == 1 && files.len() == 1 && args.paths[0] == files[0];
    let reports = lint_all(&files, options.as_ref());
    if single && matches!(format, Format::Text | Format::Json) && reports[0].protocol_id.is_none() {
        // One file, as `validate` always took it: a file that is no spec is an error line.
        let problem = &reports[0].diagnostics[0].message;
        anyhow::bail!("{problem} ({})", files[0].display());
    }
    let checked = Checked {
        files: &files,
        reports: &reports,
        single,
        quiet: args.quiet,
    };
    match format {
        Format::Text => lint_output::text(&checked),
        Format::Json => lint_output::json_lines(&checked),
        Format::Github => lint_output::github(&checked),
        Format::Sarif => lint_output::sarif(&checked),
    }
    let failed = reports
        .iter()
        .any(|r| r.errors() > 0 || (args.deny_warnings && r.warnings() > 0));
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("error: {}", crate::terminal::escape_control(problem));
    ExitCode::from(USAGE)
}

/// The message of `validate SPEC MESSAGE`: a second argument that is `-`, a JSON object,
/// or JSON text that names no file (or any second argument when --direction or --message
/// says a message is meant).
fn message_argument(args: &ValidateArgs) -> Option<&str> {
    let [_, second] = args.paths.as_slice() else {
        return None;
    };
    let text = second.to_str()?;
    let looks_like_message = text == "-"
        || text.trim_start().starts_with('{')
        || (!second.exists() && serde_json::from_str::<Value>(text).is_ok());
    (looks_like_message || args.direction.is_some() || args.message_name.is_some()).then_some(text)
}

/// Directories below a search root that never hold a project's own specs.
const SKIPPED_DIRS: [&str; 5] = [
    "target",
    "node_modules",
    "site-packages",
    "venv",
    "__pycache__",
];

/// The files to lint: each path given that is a file, and the `spec.json` files found
/// below each directory (sorted). `Err` is a usage problem: a path that does not exist,
/// or a directory without any spec.json.
fn spec_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path)
            .map_err(|error| format!("{}: {}", path.display(), io_reason(&error)))?;
        if !metadata.is_dir() {
            files.push(path.clone());
            continue;
        }
        let before = files.len();
        search(path, &mut files);
        // `validate .` names the files it finds `games/spec.json`, not `./games/spec.json`.
        for found in &mut files[before..] {
            if let Ok(relative) = found.strip_prefix(".") {
                *found = relative.to_path_buf();
            }
        }
        if files.len() == before {
            return Err(format!("no spec.json found under {}", path.display()));
        }
    }
    Ok(files)
}

fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => error.to_string(),
    }
}

/// Appends every `spec.json` below `dir`, in name order, without following links to
/// directories (no loops) and skipping hidden and [`SKIPPED_DIRS`] directories.
fn search(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if kind.is_dir() {
            let hidden = name.to_string_lossy().starts_with('.');
            if !hidden && !SKIPPED_DIRS.iter().any(|skip| OsStr::new(skip) == name) {
                search(&entry.path(), files);
            }
        } else if name == "spec.json" {
            files.push(entry.path());
        }
    }
}

/// Lints every file, on as many threads as there are cores; reports in file order.
fn lint_all(files: &[PathBuf], options: Option<&Map<String, Value>>) -> Vec<FileReport> {
    let lint_one = |path: &PathBuf| match spec::read_limited(path) {
        Ok(bytes) => spec::lint_bytes(&bytes, options),
        Err(error) => FileReport::unreadable(&error),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    if threads <= 1 {
        return files.iter().map(lint_one).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<FileReport>> = vec![None; files.len()];
    let done: Vec<Vec<(usize, FileReport)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(index) else {
                            return mine;
                        };
                        mine.push((index, lint_one(path)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a lint worker panicked"))
            .collect()
    });
    for (index, report) in done.into_iter().flatten() {
        slots[index] = Some(report);
    }
    slots
        .into_iter()
        .map(|slot| slot.expect("every file was linted"))
        .collect()
}

fn validate_message(
    args: &ValidateArgs,
    as_json: bool,
    spec: &Spec,
    text: &str,
) -> anyhow::Result<ExitCode> {
    spec::check_spec_version(spec.value()).with_context(|| args.paths[0].display().to_string())?;
    if let Some(options) = &args.options {
        let options = spec::parse_options(Some(options))?;
        spec::validate_options(spec.value(), &options).context("options")?;
    }
    let message = read_message(text)?;
    let outcome = spec::validate_message(
        spec.value(),
        &message,
        args.direction,
        args.message_name.as_deref(),
    );
    if as_json {
        let error = outcome.as_ref().err().map(ToString::to_string);
        let answer = json!({"valid": outcome.is_ok(), "error": error});
        println!("{}", crate::terminal::json_line(&answer));
        return Ok(if outcome.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    match outcome {
        Ok(()) => {
            if !args.quiet {
                println!("OK");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => Err(anyhow::anyhow!("invalid message: {error}")),
    }
}

fn read_message(text: &str) -> anyhow::Result<Value> {
    let text = if text == "-" {
        let mut buffer = String::new();
        std::io::stdin()
            .read_to_string(&mut buffer)
            .context("reading the message from stdin")?;
        buffer
    } else {
        text.to_string()
    };
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("the message is not valid JSON: {e}"))
}
