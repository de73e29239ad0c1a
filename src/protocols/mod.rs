//! Built-in protocols shipped inside the binary: our own spec.json + hooks.py pairs,
//! addressable by alias (`aigenora protocol list`, `aigenora protocol path <alias>`).

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
];

/// Finds a built-in by alias.
pub fn find(alias: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.alias == alias)
}
