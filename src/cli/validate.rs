//! `aigenora validate`: lint a whole spec, or validate one message and/or options against it.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use crate::spec::{self, Diagnostic, Direction, Severity, Spec};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Path to spec.json.
    pub spec: PathBuf,
    /// A message to validate (JSON text, or - to read it from stdin). Without it the whole
    /// spec is linted.
    pub message: Option<String>,
    /// The direction the message travels.
    #[arg(long, value_enum)]
    pub direction: Option<Direction>,
    /// Validate against the schema with this name instead of looking it up by action.
    #[arg(long = "message", value_name = "NAME")]
    pub message_name: Option<String>,
    /// Options (a JSON object) to check against the spec's parameters.
    #[arg(long, value_name = "JSON")]
    pub options: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let spec = Spec::load(&args.spec)?;
    match &args.message {
        Some(message) => validate_message(&args, &spec, message),
        None => lint(&args, &spec),
    }
}

fn lint(args: &ValidateArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let mut diagnostics = spec::lint(spec.value());
    diagnostics.extend(options_diagnostics(args, spec)?);
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    let file = args.spec.display();
    if args.json {
        let report = json!({
            "file": file.to_string(),
            "valid": errors == 0,
            "protocol_id": spec.protocol_id(),
            "errors": errors,
            "warnings": warnings,
            "diagnostics": diagnostics,
        });
        println!("{}", crate::terminal::json_line(&report));
    } else {
        for diagnostic in &diagnostics {
            let severity = match diagnostic.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            // Paths and messages quote the spec, which may come from anyone.
            let diagnostic = crate::terminal::escape_control(&diagnostic.to_string()).into_owned();
            println!("{file}: {severity}: {diagnostic}");
        }
        if !args.quiet || errors > 0 {
            let verdict = if errors == 0 { "OK" } else { "INVALID" };
            println!(
                "{file}: {verdict}: {errors} error(s), {warnings} warning(s); protocol_id {}",
                spec.protocol_id()
            );
        }
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `--options` problems as diagnostics under the `options` path.
fn options_diagnostics(args: &ValidateArgs, spec: &Spec) -> anyhow::Result<Vec<Diagnostic>> {
    let Some(text) = &args.options else {
        return Ok(Vec::new());
    };
    let options = spec::parse_options(Some(text))?;
    let problems = spec::validate_options(spec.value(), &options)
        .err()
        .map(|e| e.0)
        .unwrap_or_default();
    Ok(problems
        .into_iter()
        .map(|problem| Diagnostic {
            severity: Severity::Error,
            path: String::new(),
            message: format!("options.{problem}"),
        })
        .collect())
}

fn validate_message(args: &ValidateArgs, spec: &Spec, text: &str) -> anyhow::Result<ExitCode> {
    spec::check_spec_version(spec.value()).with_context(|| args.spec.display().to_string())?;
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
    if args.json {
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
