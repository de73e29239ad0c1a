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

/// Every built-in protocol, in listing order.
pub const BUILTINS: &[Builtin] = &[];

/// Finds a built-in by alias.
pub fn find(alias: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.alias == alias)
}
