//! The `aigenora` binary: parse the command line and run the command, or hand a command that
//! needs the embedded interpreter to `aigenora-hooks` (see `aigenora::binaries`). It links
//! no Python, so the commands it runs start without loading libpython.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = aigenora::cli::Cli::parse();
    aigenora::cli::run(cli, |_, _| aigenora::binaries::hand_over())
}
