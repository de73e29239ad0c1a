//! Hash and lint a spec with the library: `cargo run --example protocol_id -- spec.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use aigenora::spec::{Severity, Spec, lint};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: protocol_id <spec.json>");
        return ExitCode::from(2);
    };
    let spec = match Spec::load(&path) {
        Ok(spec) => spec,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("protocol_id {}", spec.protocol_id());
    let findings = lint(spec.value());
    for finding in &findings {
        println!("{:?}: {finding}", finding.severity);
    }
    if findings.iter().any(|f| f.severity == Severity::Error) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
