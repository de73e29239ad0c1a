//! The `aigenora` binary: parse the command line, run the command, map errors to exit codes.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = aigenora::cli::Cli::parse();
    aigenora::cli::run(cli)
}
