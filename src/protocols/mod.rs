//! Built-in protocols shipped inside the binary: our own spec.json + hooks.py pairs,
//! addressable by alias (`aigenora protocol list`, `aigenora protocol path <alias>`); in
//! [`well_known`], our hooks (only) for the network's well-known contracts; and in
//! [`samples`], both written into a library for people to read.

pub mod samples;
pub mod well_known;

/// One built-in protocol: its alias and the two files that define it.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Short stable name, e.g. `rock-paper-scissors`.
    pub alias: &'static str,
    /// The contract (`spec.json`).
    pub spec_json: &'static str,
    /// The local business logic (`hooks.py`).
    pub hooks_py: &'static str,
}

/// Declares a built-in whose files live in `src/protocols/<alias>/`.
macro_rules! builtin {
    ($alias:literal) => {
        Builtin {
            alias: $alias,
            spec_json: include_str!(concat!($alias, "/spec.json")),
            hooks_py: include_str!(concat!($alias, "/hooks.py")),
        }
    };
}

/// Every built-in protocol, in listing order.
pub const BUILTINS: &[Builtin] = &[
    builtin!("rock-paper-scissors"),
    builtin!("coin-flip"),
    builtin!("guess-number"),
    builtin!("chat"),
    builtin!("text-transform"),
    builtin!("hero-duel"),
    builtin!("thirty-one"),
];

/// Finds a built-in by alias.
pub fn find(alias: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.alias == alias)
}

impl Builtin {
    /// The parsed contract (built-ins are checked by the test suite to always parse).
    pub fn spec(&self) -> crate::spec::Spec {
        crate::spec::Spec::from_bytes(self.spec_json.as_bytes()).expect("built-in specs parse")
    }
}

/// Writes a built-in's files into the protocol library of a data dir and returns that dir.
/// Existing files are replaced when their content differs (built-ins stay pristine).
pub fn materialize(
    builtin: &Builtin,
    data_dir: &std::path::Path,
) -> std::io::Result<std::path::PathBuf> {
    let dir = crate::data_dir::DataDir::new(data_dir).protocol_dir(&builtin.spec().protocol_id());
    std::fs::create_dir_all(&dir)?;
    for (name, content) in [
        ("spec.json", builtin.spec_json),
        ("hooks.py", builtin.hooks_py),
    ] {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(content) {
            std::fs::write(&path, content)?;
        }
    }
    Ok(dir)
}

/// A protocol argument: an existing directory, or a built-in alias (materialized into the
/// data dir's library).
pub fn resolve(argument: &str, data_dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let path = std::path::Path::new(argument);
    if path.is_dir() {
        return Ok(path.to_path_buf());
    }
    match find(argument) {
        Some(builtin) => materialize(builtin, data_dir).map_err(|e| {
            format!(
                "cannot write built-in {argument} into {}: {e}",
                data_dir.display()
            )
        }),
        None => {
            let aliases: Vec<&str> = BUILTINS.iter().map(|b| b.alias).collect();
            Err(format!(
                "{argument} is neither a protocol directory nor a built-in ({})",
                aliases.join(", ")
            ))
        }
    }
}
