//! Built-in protocols shipped inside the binary: our own spec.json + hooks.py pairs,
//! addressable by alias (`aigenora protocol list`, `aigenora protocol path <alias>`); in
//! [`well_known`], our hooks (only) for the network's well-known contracts; and in
//! [`samples`], both written into a library for people to read.

pub mod samples;
pub mod well_known;

use crate::layout::DataDir;

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
    builtin!("poll-room"),
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
pub fn materialize(builtin: &Builtin, data_dir: &DataDir) -> std::io::Result<std::path::PathBuf> {
    let dir = data_dir.protocol_dir(&builtin.spec().protocol_id());
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

/// Where a protocol argument points: one of our built-ins, or a directory holding its
/// `spec.json` (the argument itself, or a contract of the library).
#[derive(Debug, Clone)]
pub enum Located {
    Builtin(&'static Builtin),
    Dir(std::path::PathBuf),
}

/// A protocol argument: an existing directory, a built-in alias (materialized into the data
/// dir's library), or a contract already in the library named by its protocol_id or, for the
/// network's well-known contracts, its alias (`rps-v1`). Otherwise one line saying how to
/// get it.
pub fn resolve(argument: &str, data_dir: &DataDir) -> Result<std::path::PathBuf, String> {
    match locate(argument, data_dir)? {
        Located::Dir(dir) => Ok(dir),
        Located::Builtin(builtin) => materialize(builtin, data_dir).map_err(|e| {
            format!(
                "cannot write built-in {argument} into {}: {e}",
                data_dir.root().display()
            )
        }),
    }
}

/// What [`resolve`] finds, without writing a built-in anywhere.
pub fn locate(argument: &str, data_dir: &DataDir) -> Result<Located, String> {
    let path = std::path::Path::new(argument);
    if path.is_dir() {
        return Ok(Located::Dir(path.to_path_buf()));
    }
    if let Some(builtin) = find(argument) {
        return Ok(Located::Builtin(builtin));
    }
    let well_known = well_known::find(argument);
    let protocol_id = match well_known {
        Some(contract) => contract.protocol_id,
        None if crate::identity::is_lower_hex_64(argument) => argument,
        None => {
            let builtins: Vec<&str> = BUILTINS.iter().map(|b| b.alias).collect();
            let network: Vec<&str> = well_known::WELL_KNOWN.iter().map(|w| w.alias).collect();
            return Err(format!(
                "{} is neither a protocol directory, a built-in ({}), a well-known contract \
                 ({}) nor a 64-hex protocol_id",
                crate::terminal::escape_control(argument),
                builtins.join(", "),
                network.join(", ")
            ));
        }
    };
    let dir = data_dir.protocol_dir(protocol_id);
    if dir.join("spec.json").is_file() {
        return Ok(Located::Dir(dir));
    }
    let named = match well_known {
        Some(contract) => format!("{argument} (the network's {})", contract.name),
        None => argument.to_string(),
    };
    let argument = crate::terminal::escape_control(argument);
    Err(format!(
        "{named} is not in the protocol library of {}: get it with `aigenora protocol fetch \
         {argument}` (needs a community server)",
        data_dir.root().display()
    ))
}
