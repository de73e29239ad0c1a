//! Links the embedded Python: rpath to the libpython found at build time, and records that
//! interpreter's prefix so the binary can set PYTHONHOME without the user's help.
fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
    let config = pyo3_build_config::get();
    let prefix = config
        .executable()
        .and_then(python_prefix)
        .unwrap_or_default();
    println!("cargo:rustc-env=AIGENORA_PYTHON_PREFIX={prefix}");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Asks the build interpreter for `sys.base_prefix` (its standard library home).
fn python_prefix(executable: &str) -> Option<String> {
    let output = std::process::Command::new(executable)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}
