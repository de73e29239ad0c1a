//! Links the embedded Python: rpath to the libpython found at build time, records that
//! interpreter's prefix and executable (so the binary runs without PYTHONHOME), and embeds
//! our Python SDK (`src/hooks/python/**.py`) as a generated file list, with each file (and
//! the SDK importer, `src/hooks/sdk_importer.py`) also compiled by that interpreter (what a
//! `.pyc` holds), so a process does not compile them again every time it starts. It also
//! links the binary with packed relative relocations where the toolchain can (see
//! [`pack_relative_relocations`]).

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
    pack_relative_relocations();
}

/// `-z pack-relative-relocs` (DT_RELR): the binary's ~50,000 relative relocations take a
/// few kilobytes instead of 1.2 MB that the dynamic loader reads page by page at every
/// start, with ASLR kept. Only when the linker and the C library support it (GNU ld 2.38+
/// or lld, glibc 2.36+): a probe link of an empty C program must succeed without a word.
fn pack_relative_relocations() {
    const FLAG: &str = "-Wl,-z,pack-relative-relocs";
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let source = out.join("relr_probe.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    let probe = std::process::Command::new(linker)
        .arg(&source)
        .arg("-o")
        .arg(out.join("relr_probe"))
        .arg(FLAG)
        .output();
    match probe {
        Ok(output) if output.status.success() && output.stderr.is_empty() => {
            println!("cargo:rustc-link-arg-bins={FLAG}");
        }
        _ => println!("cargo:warning=linking without packed relative relocations (unsupported)"),
    }
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
/// relative to that directory, included as a string, plus its code compiled by the build
/// interpreter (empty if that failed: the runtime then compiles the source).
fn embed_sdk(executable: &str) {
    // Read at run time: a build-script binary may be reused from another checkout.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let root = Path::new(&manifest_dir).join("src/hooks/python");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let relative: Vec<String> = files
        .iter()
        .map(|file| {
            file.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let magic = compile_sdk(executable, &root, &relative, &out);
    let hooks_dir = root.parent().unwrap();
    let importer = hooks_dir.join("sdk_importer.py");
    println!("cargo:rerun-if-changed={}", importer.display());
    let importer_magic = compile_sdk(executable, hooks_dir, &["sdk_importer.py".into()], &out);
    let mut code =
        String::from("/// Our Python SDK, as (path relative to the package root, source, code).\n");
    code.push_str("pub const SDK_FILES: &[(&str, &str, &[u8])] = &[\n");
    for (file, relative) in files.iter().zip(&relative) {
        let compiled = out.join(format!("{}.marshal", relative.replace('/', "__")));
        let compiled = match &magic {
            Some(_) => format!("include_bytes!({:?})", compiled.display().to_string()),
            None => "&[]".to_string(),
        };
        writeln!(
            code,
            "    ({relative:?}, include_str!({:?}), {compiled}),",
            file.display().to_string()
        )
        .unwrap();
        println!("cargo:rerun-if-changed={}", file.display());
    }
    code.push_str("];\n");
    writeln!(
        code,
        "/// `importlib.util.MAGIC_NUMBER` of the interpreter that compiled the code above.\n\
         pub const SDK_MAGIC: &[u8] = &{:?};",
        magic.clone().unwrap_or_default()
    )
    .unwrap();
    let importer_code = match (&magic, importer_magic == magic) {
        (Some(_), true) => format!(
            "include_bytes!({:?})",
            out.join("sdk_importer.py.marshal").display().to_string()
        ),
        _ => "&[]".to_string(),
    };
    writeln!(
        code,
        "/// The SDK importer (`src/hooks/sdk_importer.py`) compiled like the files above.\n\
         pub const IMPORTER_CODE: &[u8] = {importer_code};"
    )
    .unwrap();
    std::fs::write(out.join("sdk_files.rs"), code).unwrap();
}

/// Compiles each SDK file (as `marshal` data, named like the runtime importer names it) into
/// `out` with the build interpreter; returns its bytecode magic number, `None` on failure.
fn compile_sdk(executable: &str, root: &Path, relative: &[String], out: &Path) -> Option<Vec<u8>> {
    const SCRIPT: &str = "import importlib.util, marshal, sys\n\
        root, out = sys.argv[1], sys.argv[2]\n\
        for path in sys.argv[3:]:\n\
        \x20   source = open(root + '/' + path, encoding='utf-8').read()\n\
        \x20   code = compile(source, '<aigenora-sdk>/' + path, 'exec', dont_inherit=True)\n\
        \x20   open(out + '/' + path.replace('/', '__') + '.marshal', 'wb').write(marshal.dumps(code))\n\
        sys.stdout.write(importlib.util.MAGIC_NUMBER.hex())\n";
    if executable.is_empty() {
        return None;
    }
    let output = std::process::Command::new(executable)
        .args(["-c", SCRIPT])
        .arg(root)
        .arg(out)
        .args(relative)
        .output()
        .ok()?;
    if !output.status.success() {
        println!(
            "cargo:warning=the embedded SDK will be compiled at run time: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    hex_bytes(String::from_utf8_lossy(&output.stdout).trim())
}

fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
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
