//! Spec benchmarks: hashing and linting every reference built-in protocol (the corpus comes
//! from the reference package; see `corpus()`), plus the shared hash vectors.

use std::path::{Path, PathBuf};

use criterion::{Criterion, black_box, criterion_group, criterion_main};

/// Every spec.json of the reference's built-ins, falling back to our hash vectors.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let package = std::env::var_os("AIGENORA_REFERENCE_PACKAGE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            root.join("target/reference-venv/lib/python3.11/site-packages/aigenora")
        });
    let mut files: Vec<PathBuf> = Vec::new();
    if let Ok(prefixes) = std::fs::read_dir(package.join("protocols")) {
        for prefix in prefixes.flatten().filter(|p| p.file_name().len() == 8) {
            for dir in std::fs::read_dir(prefix.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                files.push(dir.path().join("spec.json"));
            }
        }
    }
    if files.is_empty() {
        eprintln!(
            "reference package not found at {}; benchmarking the hash vectors",
            package.display()
        );
        for entry in std::fs::read_dir(root.join("tests/vectors/hash"))
            .unwrap()
            .flatten()
        {
            if entry.path().extension().is_some_and(|e| e == "json") {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
        .collect()
}

fn bench_spec(c: &mut Criterion) {
    let corpus = corpus();
    eprintln!(
        "corpus: {} specs, {} bytes",
        corpus.len(),
        corpus.iter().map(|(_, b)| b.len()).sum::<usize>()
    );
    c.bench_function("hash all built-ins", |b| {
        b.iter(|| {
            for (_, bytes) in &corpus {
                black_box(aigenora::spec::protocol_id_of_bytes(bytes).unwrap());
            }
        })
    });
    let specs: Vec<_> = corpus
        .iter()
        .map(|(_, bytes)| aigenora::spec::Spec::from_bytes(bytes).unwrap())
        .collect();
    c.bench_function("lint all built-ins", |b| {
        b.iter(|| {
            for spec in &specs {
                black_box(aigenora::spec::lint(spec.value()));
            }
        })
    });
}

criterion_group!(benches, bench_spec);
criterion_main!(benches);
