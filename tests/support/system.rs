//! Programs the tests take from the distribution (Chromium and chromedriver, iproute2 and
//! nftables, PostgreSQL): found on PATH, or installed with apt-get the first time a test needs
//! them, the way the reference client is installed into its venv, so that the test suite works
//! on a fresh machine. Installing needs root or password-less sudo; without either, the test
//! fails and names the packages to install. Nothing here ever skips a test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The first of `names` found on PATH.
pub fn which(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Held until dropped: an exclusive lock on the file at `path` (created if missing), across
/// threads and test processes (under cargo-nextest every test is a process). The kernel
/// releases it when its holder dies, so a killed test never leaves it taken.
pub fn exclusive_lock(path: &Path) -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open the lock file {}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    file
}

/// Makes sure every program in `programs` is on PATH, installing the Debian `packages` that
/// provide them when one is missing. Panics with the reason when it cannot.
pub fn ensure_programs(programs: &[&str], packages: &[&str]) {
    let missing = || programs.iter().any(|program| which(&[program]).is_none());
    if !missing() {
        return;
    }
    install_unless(packages, &format!("{programs:?}"), || !missing());
    assert!(
        !missing(),
        "installed {}, yet {programs:?} are still not on PATH",
        packages.join(" ")
    );
}

/// Installs the Debian `packages` (apt-get, as root or through password-less sudo) unless
/// `present` says another test process installed what is needed while this one waited for
/// its turn; panics naming them when that fails. `needed_for` says what the test was missing.
pub fn install_unless(packages: &[&str], needed_for: &str, present: impl Fn() -> bool) {
    let _one_at_a_time = apt_lock();
    if !present() {
        install_now(packages, needed_for);
    }
}

/// One apt-get at a time on this machine, whichever test process asks.
fn apt_lock() -> std::fs::File {
    exclusive_lock(&std::env::temp_dir().join("aigenora-test-apt.lock"))
}

fn install_now(packages: &[&str], needed_for: &str) {
    let wanted = packages.join(" ");
    let apt = |args: &[&str]| {
        let mut command = if is_root() {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "apt-get"]);
            sudo
        };
        // Waits for another process's install instead of failing on dpkg's lock.
        command
            .args(["-o", "DPkg::Lock::Timeout=900", "-qq"])
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive");
        let out = command.output().unwrap_or_else(|e| {
            panic!("{needed_for} missing and apt-get cannot run ({e}): install {wanted}")
        });
        assert!(
            out.status.success(),
            "{needed_for} missing and `apt-get {}` failed (root or sudo is needed): {} — \
             install {wanted} by hand",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    };
    eprintln!("tests: installing {wanted} from the distribution's packages");
    apt(&["update"]);
    let mut install = vec!["install", "-y"];
    install.extend_from_slice(packages);
    apt(&install);
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}
