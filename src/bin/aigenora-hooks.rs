//! The `aigenora-hooks` binary: the whole command line with the embedded interpreter linked.
//! `aigenora` hands it the commands that run hooks (see `aigenora::binaries`); it runs any
//! command itself, so `cargo run` runs this one.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = aigenora::cli::Cli::parse();
    aigenora::cli::run(cli, aigenora::cli::HookCommand::run)
}
