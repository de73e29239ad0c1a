//! The `aigenora-full` binary: the whole command line, with the embedded interpreter, iroh,
//! the server and the relay linked. `aigenora` hands it every command but the spec commands
//! (see `aigenora::binaries`); it runs any command itself, so `cargo run` runs this one.

use clap::Parser;

fn main() -> std::process::ExitCode {
    aigenora::cli::run(aigenora::cli::Cli::parse())
}
