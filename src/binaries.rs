//! The package's two binaries and how one finds the other. `aigenora` runs every command
//! that needs no interpreter, so it starts without loading libpython; the commands that do
//! (`cli::HookCommand`) it hands to `aigenora-hooks`, installed beside it, which links the
//! embedded interpreter and runs every command.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// The binary users call.
pub const FRONT: &str = "aigenora";
/// The binary with the embedded interpreter, beside [`FRONT`].
pub const HOOKS: &str = "aigenora-hooks";

/// `aigenora` beside the running binary (which may be `aigenora-hooks`).
pub fn front() -> std::io::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name(FRONT))
}

/// Replaces this process by `aigenora-hooks` beside it, with this process's argv (`argv[0]`
/// included): the same pid, stdio, signals and exit code. Returns only when that fails.
pub fn hand_over() -> anyhow::Result<ExitCode> {
    let hooks = std::env::current_exe()
        .map_err(|error| anyhow::anyhow!("cannot find this binary: {error}"))?
        .with_file_name(HOOKS);
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(&hooks);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    let error = command.args(args).exec();
    anyhow::bail!(
        "this command needs the embedded interpreter, which {} holds, and that binary cannot \
         start: {error} (install both binaries: cargo install --path .)",
        hooks.display()
    )
}
