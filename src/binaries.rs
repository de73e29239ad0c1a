//! The package's two binaries and how one finds the other. `aigenora`, the one users call,
//! runs the spec commands (`cli::SpecCommand`) itself and links nothing more, so a CI
//! script's once-per-file process starts fast; every other command it hands to
//! `aigenora-full`, installed beside it, which links everything (the embedded interpreter,
//! iroh, the server, the relay) and runs every command.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// The binary users call.
pub const FRONT: &str = "aigenora";
/// The binary that runs every command, beside [`FRONT`].
pub const FULL: &str = "aigenora-full";

/// `aigenora` beside the running binary (which may be `aigenora-full`).
pub fn front() -> std::io::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name(FRONT))
}

/// Replaces this process by `aigenora-full` beside it, with this process's argv (`argv[0]`
/// included): the same pid, stdio, signals and exit code. Returns only when that fails.
pub fn hand_over() -> anyhow::Result<ExitCode> {
    let full = std::env::current_exe()
        .map_err(|error| anyhow::anyhow!("cannot find this binary: {error}"))?
        .with_file_name(FULL);
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(&full);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    let error = command.args(args).exec();
    anyhow::bail!(
        "only the spec commands run without {}, and that binary cannot start: {error} \
         (install both binaries: cargo install --path .)",
        full.display()
    )
}
