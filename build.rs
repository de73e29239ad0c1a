//! Links the embedded Python: rpath to the libpython found at build time, records that
//! interpreter's prefix and executable (so the binary runs without PYTHONHOME), and embeds
//! our Python SDK (`src/hooks/python/**.py`) as a generated file list.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
    let config = pyo3_build_config::get();
    let executable = config.executable().map(str::to_string).unwrap_or_default();
    let prefix = python_prefix(&executable).unwrap_or_default();
    println!("cargo:rustc-env=AIGENORA_PYTHON_PREFIX={prefix}");
    println!("cargo:rustc-env=AIGENORA_PYTHON_EXECUTABLE={executable}");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    println!("cargo:rerun-if-changed=build.rs");
    embed_sdk();
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

/// Writes `$OUT_DIR/sdk_files.rs`: every `.py` file under src/hooks/python with its path
/// relative to that directory, included as a string.
fn embed_sdk() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hooks/python");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut code =
        String::from("/// Our Python SDK, as (path relative to the package root, source).\n");
    code.push_str("pub const SDK_FILES: &[(&str, &str)] = &[\n");
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        writeln!(
            code,
            "    ({relative:?}, include_str!({:?})),",
            file.display().to_string()
        )
        .unwrap();
        println!("cargo:rerun-if-changed={}", file.display());
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("sdk_files.rs");
    std::fs::write(out, code).unwrap();
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "py") {
            files.push(path);
        }
    }
}
