//! The `aigenora` binary, the one users call: it parses the whole command line, runs the
//! spec commands a CI script calls once per file (`cli::SpecCommand`) itself, and hands
//! every other command to `aigenora-full` (see `aigenora::binaries`). It links only what
//! those commands need, so each such process starts in about a millisecond.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = aigenora::cli::Cli::parse();
    match aigenora::cli::SpecCommand::try_from(cli.command) {
        Ok(command) => command.run(),
        Err(_) => aigenora::cli::exit_code(aigenora::binaries::hand_over()),
    }
}
