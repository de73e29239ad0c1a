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
    embed_sdk(&executable);
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
/// relative to that directory, its source (for tracebacks), and its bytecode compiled by the
/// build interpreter (the one the binary links; empty if compiling failed, and the module is
/// then compiled at import).
fn embed_sdk(python: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hooks/python");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let relative: Vec<String> = files
        .iter()
        .map(|file| {
            file.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let compiled = compile_sdk(python, &root, &out.join("sdk"), &relative);
    let mut code = String::from(
        "/// Our Python SDK: (path relative to the package root, source, bytecode).\n",
    );
    code.push_str("pub const SDK_FILES: &[(&str, &str, &[u8])] = &[\n");
    for (file, relative) in files.iter().zip(&relative) {
        let bytecode = out.join("sdk").join(format!("{relative}.bin"));
        let bytes = if compiled && bytecode.is_file() {
            format!("include_bytes!({:?})", bytecode.display().to_string())
        } else {
            "&[]".to_string()
        };
        writeln!(
            code,
            "    ({relative:?}, include_str!({:?}), {bytes}),",
            file.display().to_string()
        )
        .unwrap();
        println!("cargo:rerun-if-changed={}", file.display());
    }
    code.push_str("];\n");
    std::fs::write(out.join("sdk_files.rs"), code).unwrap();
}

/// Compiles each SDK file to a marshalled code object named like the runtime importer names
/// it (`<aigenora-sdk>/aigenora/...`). Returns false when the interpreter could not do it.
fn compile_sdk(python: &str, root: &Path, target: &Path, relative: &[String]) -> bool {
    const SCRIPT: &str = "import marshal, os, sys\nroot, target = sys.argv[1], sys.argv[2]\nfor rel in sys.argv[3:]:\n    src = open(os.path.join(root, rel), encoding='utf-8').read()\n    code = compile(src, '<aigenora-sdk>/' + rel, 'exec', dont_inherit=True)\n    out = os.path.join(target, rel + '.bin')\n    os.makedirs(os.path.dirname(out), exist_ok=True)\n    open(out, 'wb').write(marshal.dumps(code))\n";
    if python.is_empty() {
        return false;
    }
    std::process::Command::new(python)
        .args(["-B", "-c", SCRIPT])
        .arg(root)
        .arg(target)
        .args(relative)
        .status()
        .is_ok_and(|status| status.success())
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
